/**
 * Spans for a program that installed a tracer. Effect's built-in tracer exports nothing, and a span around a reply's
 * stream costs a seventh of the reply (`bench/loop.ts`): without a tracer the stream runs bare. The runtime follows
 * the same rule (`Runtime/internal/stages/env.ts`, `tracesCalls`).
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"

const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** `Stream.withSpan`, when the program installed a tracer. */
export const streamWithSpan = <A, E, R>(
  self: Stream.Stream<A, E, R>,
  name: string,
  options: Tracer.SpanOptions
): Stream.Stream<A, E, R> =>
  Stream.unwrap(
    Effect.map(Effect.tracer, (tracer) => tracer === nativeTracer ? self : Stream.withSpan(self, name, options))
  )
