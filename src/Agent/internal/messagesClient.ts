/**
 * The Messages API over @effect/platform's HttpClient: one POST with `stream: true`, the response checked (status,
 * content type), its body parsed as server-sent events by @effect/experimental's `Sse`, and the events turned into
 * `ModelEvent`s by the reply's state machine. Every failure is a `ModelError`.
 *
 * @internal
 */
import * as Sse from "@effect/experimental/Sse"
import type * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import type { ModelEvent, ModelRequest } from "../ModelBackend.js"
import { ModelError } from "../ModelBackend.js"
import { decodeEvent, quote, Reply } from "./messagesEvents.js"
import * as Wire from "./messagesWire.js"

/** What one backend sends with every request. */
export interface Settings {
  readonly model: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** The longest wait for the next piece of the body. */
  readonly idleTimeout: Duration.Duration
  readonly ignoreUnknownEvents: boolean
}

/** At most this much of an error body or a non-SSE body is read (the rest is not needed for the message). */
const bodyPreviewLimit = 4096

/** The wire request for one model request (`stream` as given). */
export const toWire = (model: string, request: ModelRequest, stream: boolean): typeof Wire.MessagesRequest.Encoded => ({
  model,
  max_tokens: request.maxTokens,
  ...(request.system === undefined ? {} : { system: request.system }),
  messages: request.messages,
  ...(request.tools.length === 0 ? {} : { tools: request.tools }),
  stream
})

const transport = (error: HttpClientError.HttpClientError, what: string): ModelError => {
  const cause = error.cause instanceof Error
    ? `: ${error.cause.message}${error.cause.cause instanceof Error ? ` (${error.cause.cause.message})` : ""}`
    : ""
  return new ModelError({ reason: "Transport", message: `${what}: ${error.message}${cause}` })
}

/** The first few KB of a body, as text. Reading stops there, which also closes the connection. */
const preview = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string, ModelError> =>
  response.stream.pipe(
    Stream.decodeText(),
    Stream.scan("", (text, piece) => text + piece),
    Stream.takeUntil((text) => text.length >= bodyPreviewLimit),
    Stream.runLast,
    Effect.map(Option.getOrElse(() => "")),
    Effect.mapError((error) => transport(error, "the connection broke while reading the response"))
  )

const decodeErrorBody = Schema.decodeUnknownEither(Schema.parseJson(Wire.ErrorResponse))

const statusError = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<never, ModelError> =>
  Effect.flatMap(preview(response), (body) => {
    const requestId = response.headers["request-id"]
    const suffix = requestId === undefined ? "" : ` (request-id ${requestId})`
    const decoded = decodeErrorBody(body)
    const message = Either.isRight(decoded)
      ? `the Messages API answered ${response.status} ${decoded.right.error.type}: ` +
        `${decoded.right.error.message}${suffix}`
      : `the Messages API answered ${response.status} with a body that is not an API error: ${quote(body)}${suffix}`
    return Effect.fail(new ModelError({ reason: "Status", status: response.status, message }))
  })

/** The SSE parser dies (rather than fails) on an oversized event: that is a malformed response, not a defect. */
const sseTooLarge = <E>(cause: Cause.Cause<E>): Option.Option<Stream.Stream<never, ModelError>> =>
  Option.flatMap(Cause.dieOption(cause), (defect) =>
    defect instanceof Sse.SseError
      ? Option.some(
        Stream.fail(
          new ModelError({ reason: "Malformed", message: `the event stream is malformed: ${defect.message}` })
        )
      )
      : Option.none())

/** How long the body may go on after `message_stop` before it is cut (the reply is complete by then). */
const afterStopGrace = Duration.seconds(2)

/**
 * The reply's events, parsed from the body. The body is read to its end (the API ends it right after
 * `message_stop`) rather than cut at `Stop`: a body read to the end leaves the connection to be reused, a cut one
 * closes it.
 */
const parse = (
  response: HttpClientResponse.HttpClientResponse,
  settings: Settings,
  seen: () => void
): Stream.Stream<ModelEvent, ModelError> =>
  Stream.suspend(() => {
    const reply = new Reply()
    return response.stream.pipe(
      Stream.mapError((error) => transport(error, "the connection broke while streaming the reply")),
      Stream.mapChunks((chunk) => {
        seen()
        return chunk
      }),
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.makeChannel<ModelError, unknown>()),
      Stream.catchSomeCause(sseTooLarge),
      Stream.mapConcatEffect((event) =>
        Either.flatMap(decodeEvent(event.data, settings.ignoreUnknownEvents), (wire) => reply.step(wire))
      ),
      Stream.concat(Stream.suspend(() => {
        const early = reply.finish()
        return early === undefined ? Stream.empty : Stream.fail(early)
      }))
    )
  })

/**
 * The parsed events, bounded in time: nothing from the body for `idleTimeout` fails the stream (`Transport`), and a
 * body that goes on after `message_stop` is cut after {@link afterStopGrace}. One watchdog per reply rather than a
 * timer per piece: a timer per piece costs more than the parsing (`bench/messages.ts`).
 */
const events = (
  response: HttpClientResponse.HttpClientResponse,
  settings: Settings
): Stream.Stream<ModelEvent, ModelError> =>
  Stream.asyncScoped<ModelEvent, ModelError>((emit) =>
    Effect.gen(function*() {
      const clock = yield* Effect.clock
      const idleMillis = Duration.toMillis(settings.idleTimeout)
      let lastSeen = clock.unsafeCurrentTimeMillis()
      const stopped = yield* Deferred.make<void>()
      const body = parse(response, settings, () => {
        lastSeen = clock.unsafeCurrentTimeMillis()
      })
      yield* body.pipe(
        Stream.runForEachChunk((chunk) =>
          Effect.zipRight(
            Chunk.some(chunk, (event) => event._tag === "Stop") ? Deferred.succeed(stopped, undefined) : Effect.void,
            Effect.promise(() => emit.chunk(chunk))
          )
        ),
        Effect.matchCauseEffect({
          onSuccess: () => Effect.promise(() => emit.end()),
          onFailure: (cause) => Effect.promise(() => emit.halt(cause))
        }),
        Effect.forkScoped
      )
      const idle: Effect.Effect<void> = Effect.suspend(() => {
        const left = lastSeen + idleMillis - clock.unsafeCurrentTimeMillis()
        return left > 0
          ? Effect.zipRight(Effect.sleep(left), idle)
          : Effect.promise(() =>
            emit.fail(
              new ModelError({
                reason: "Transport",
                message: `the Messages API sent nothing for ${Duration.format(settings.idleTimeout)} (the idle timeout)`
              })
            )
          )
      })
      const grace = Deferred.await(stopped).pipe(
        Effect.zipRight(Effect.sleep(afterStopGrace)),
        Effect.zipRight(Effect.promise(() => emit.end()))
      )
      yield* Effect.forkScoped(Effect.raceFirst(idle, grace))
    }), 16)

/** One request's reply, as it streams; interrupting the stream aborts the request. */
export const stream = (
  client: HttpClient.HttpClient,
  settings: Settings,
  request: ModelRequest
): Stream.Stream<ModelEvent, ModelError> =>
  Stream.unwrap(
    Effect.gen(function*() {
      const response = yield* client.execute(
        HttpClientRequest.post(settings.url).pipe(
          HttpClientRequest.setHeaders(settings.headers),
          HttpClientRequest.bodyText(JSON.stringify(toWire(settings.model, request, true)), "application/json")
        )
      ).pipe(Effect.mapError((error) => transport(error, "the request to the Messages API failed")))
      if (response.status < 200 || response.status >= 300) return yield* statusError(response)
      const contentType = response.headers["content-type"] ?? ""
      if (!contentType.toLowerCase().startsWith("text/event-stream")) {
        const body = yield* preview(response)
        return yield* new ModelError({
          reason: "Malformed",
          message: `the Messages API answered ${response.status} with ${
            contentType === "" ? "no content type" : `"${contentType}"`
          }, not an event stream: ${quote(body)}`
        })
      }
      return events(response, settings)
    })
  ).pipe(
    Stream.withSpan("AnthropicMessages.stream", {
      attributes: {
        "gen_ai.request.model": settings.model,
        messages: request.messages.length,
        tools: request.tools.length
      }
    })
  )
