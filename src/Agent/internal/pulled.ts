/**
 * `Stream.runForEach`, by pulling: the fast path the loop consumes its streams with (a model's reply, a run's
 * events). The same elements in the same order, each handled before the next is pulled; a failure of the stream or
 * of `f` ends it with that failure; the stream's resources (a reply's HTTP request) are released when it ends, fails
 * or is interrupted, as with `Stream.runForEach(stream, f)`, which is what this does. Running a stream into a sink
 * costs about three times as much as pulling it (a few hundred microseconds of CPU per stream: three streams per
 * turn of `bench/loop.ts`).
 *
 * @internal
 */
import type * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

/** Every chunk of a pull (`Stream.toPull`'s shape, opened in a Scope of its own), each element handled by `f`. */
export const forEach = <A, E, R, E2, R2>(
  open: Effect.Effect<Effect.Effect<Chunk.Chunk<A>, Option.Option<E>, R>, never, R | Scope.Scope>,
  f: (element: A) => Effect.Effect<unknown, E2, R2>
): Effect.Effect<void, E | E2, R | R2> =>
  Effect.scoped(Effect.flatMap(open, (pull) => {
    const loop: Effect.Effect<void, E | E2, R | R2> = Effect.matchEffect(pull, {
      // `None`: the stream ended.
      onFailure: (error) => Option.isNone(error) ? Effect.void : Effect.fail(error.value),
      onSuccess: (chunk) => Effect.zipRight(Effect.forEach(chunk, f, { discard: true }), loop)
    })
    return loop
  }))

/** `Stream.runForEach(stream, f)`, by pulling chunks. */
export const runForEach = <A, E, R, E2, R2>(
  stream: Stream.Stream<A, E, R>,
  f: (element: A) => Effect.Effect<unknown, E2, R2>
): Effect.Effect<void, E | E2, R | R2> => forEach(Stream.toPull(stream), f)
