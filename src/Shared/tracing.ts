/**
 * Spans only for a program that installed a tracer. Effect's built-in tracer exports nothing, and a span costs more
 * than a trivial call (`bench/pipeline`) and a seventh of a streamed reply (`bench/loop`): without a tracer of the
 * program's own, the runtime's calls and the Messages backend's streams run bare.
 *
 * @internal
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Tracer from "effect/Tracer"

const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Whether work traced by this tracer gets spans: any tracer but Effect's built-in one. */
export const tracesCalls = (tracer: Tracer.Tracer): boolean => tracer !== nativeTracer

/** Whether the program installed a tracer. */
export const isTracing: Effect.Effect<boolean> = Effect.map(Effect.tracer, tracesCalls)

/** `Stream.withSpan`, when the program installed a tracer. */
export const streamWithSpan = <A, E, R>(
  self: Stream.Stream<A, E, R>,
  name: string,
  options: Tracer.SpanOptions
): Stream.Stream<A, E, R> =>
  Stream.unwrap(Effect.map(isTracing, (traced) => traced ? Stream.withSpan(self, name, options) : self))

/** `Effect.withSpan`, when the program installed a tracer. */
export const withSpan = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  name: string,
  options?: Tracer.SpanOptions
): Effect.Effect<A, E, R> => Effect.flatMap(isTracing, (traced) => traced ? Effect.withSpan(self, name, options) : self)
