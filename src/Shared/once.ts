/**
 * An effect run at most once, on first demand, whatever happens to the callers that wait for it.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"

/**
 * `effect`, run once on first demand in a fiber of `scope` (interrupted when the scope closes); every caller waits for
 * that one run. A caller interrupted while it runs only stops waiting: `Effect.cached` runs the effect in its first
 * caller's fiber, so that caller's interruption became the outcome every later caller got.
 */
export const onceInScope = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  scope: Scope.Scope
): Effect.Effect<Effect.Effect<A, E>, never, R> =>
  Effect.map(Effect.context<R>(), (context) => {
    let result: Deferred.Deferred<A, E> | undefined
    // Uninterruptible between the claim and the fork: a claimed run that never started would keep every caller
    // waiting.
    return Effect.uninterruptibleMask((restore) =>
      Effect.suspend(() => {
        if (result !== undefined) return restore(Deferred.await(result))
        const deferred = Deferred.unsafeMake<A, E>(FiberId.none)
        result = deferred
        return Effect.zipRight(
          Effect.forkIn(Effect.interruptible(Effect.intoDeferred(Effect.provide(effect, context), deferred)), scope),
          restore(Deferred.await(deferred))
        )
      })
    )
  })
