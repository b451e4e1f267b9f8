/**
 * The Messages API client, whichever way the request goes out: one POST with `stream: true`, the response checked
 * (status, content type), back-pressure retried, its body parsed as server-sent events by `eventsource-parser`
 * (linear: each character is looked at a bounded number of times, whatever the size of the chunks the body arrives
 * in), and the events turned into `ModelEvent`s by the reply's state machine. Every failure is a `ModelError`.
 *
 * How a request is sent and its body read is a {@link Send}: over @effect/platform's HttpClient
 * (`messagesHttpClient.ts`, the one a user swaps by providing another HttpClient) or straight over `fetch`
 * (`messagesFetch.ts`, the fast path of `AnthropicMessages.layerFetch`). Everything else is here, once.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createParser } from "eventsource-parser"
import { isTracing } from "../../Shared/tracing.js"
import type { ModelRequest } from "../ModelBackend.js"
import { ModelError, ModelEvent } from "../ModelBackend.js"
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
  readonly retry: RetrySettings
}

/** How back-pressure (429, 529) is retried. */
export interface RetrySettings {
  /** Retries after the first try; 0: none. */
  readonly maxRetries: number
  /** The first backoff, doubled each time, when the API does not say how long to wait. */
  readonly initialDelayMillis: number
  readonly maxDelayMillis: number
  /** A `retry-after` longer than this is not waited for: the error is returned. */
  readonly maxRetryAfterMillis: number
}

/** The statuses that mean "later": rate limited, overloaded. */
const retryableStatuses: ReadonlySet<number> = new Set([429, 529])

/**
 * How long the API asked to wait: `retry-after-ms`, else `retry-after` (seconds, or an HTTP date); undefined when it
 * says nothing usable.
 */
export const retryAfterMillis = (
  headers: Readonly<Record<string, string | undefined>>,
  now: number
): number | undefined => {
  const ms = headers["retry-after-ms"]
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms)
  const after = headers["retry-after"]
  if (after === undefined || after.trim() === "") return undefined
  const seconds = Number(after)
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** At most this much of an error body or a non-SSE body is read (the rest is not needed for the message). */
export const bodyPreviewLimit = 4096

/** The wire request for one model request (`stream` as given). */
export const toWire = (model: string, request: ModelRequest, stream: boolean): typeof Wire.MessagesRequest.Encoded => ({
  model,
  max_tokens: request.maxTokens,
  ...(request.system === undefined ? {} : { system: request.system }),
  messages: request.messages,
  ...(request.tools.length === 0 ? {} : { tools: request.tools }),
  stream
})

// ---------------------------------------------------------------------------------------------------------------
// how a request is sent
// ---------------------------------------------------------------------------------------------------------------

/** The response to the POST, however it was sent. */
export interface Response {
  readonly status: number
  /** A header's value (the name in lower case). */
  readonly header: (name: string) => string | undefined
  /** The first few KB of the body, as text ({@link bodyPreviewLimit}); reading stops there. */
  readonly preview: Effect.Effect<string, ModelError>
  /**
   * The body's reader: each piece of the body fed to the parser as it arrives (`watch.seen`), and what it gave since
   * the last look handed to {@link pullOf} (waiting when there is nothing yet).
   */
  readonly read: (parser: BodyParser, watch: Watch) => Effect.Effect<Effect.Effect<Progress>, never, Scope.Scope>
}

/** Sends one request's body; the request belongs to `scope`: closing it aborts the request. */
export type Send = (body: string, scope: Scope.Scope) => Effect.Effect<Response, ModelError>

/** A `Transport` error: what failed, then the cause's message and its own cause's (e.g. `ECONNREFUSED`). */
export const transportError = (what: string, message: string, cause: unknown): ModelError => {
  const detail = cause instanceof Error
    ? `: ${cause.message}${cause.cause instanceof Error ? ` (${cause.cause.message})` : ""}`
    : ""
  return new ModelError({ reason: "Transport", message: `${what}: ${message}${detail}` })
}

const decodeErrorBody = Schema.decodeUnknownEither(Schema.parseJson(Wire.ErrorResponse))

const statusErrorOf = (response: Response): Effect.Effect<ModelError, ModelError> =>
  Effect.map(response.preview, (body) => {
    const requestId = response.header("request-id")
    const suffix = requestId === undefined ? "" : ` (request-id ${requestId})`
    const decoded = decodeErrorBody(body)
    const message = Either.isRight(decoded)
      ? `the Messages API answered ${response.status} ${decoded.right.error.type}: ` +
        `${decoded.right.error.message}${suffix}`
      : `the Messages API answered ${response.status} with a body that is not an API error: ${quote(body)}${suffix}`
    return new ModelError({ reason: "Status", status: response.status, message })
  })

/** The largest event (or unfinished line) the parser keeps: a reply's events are far smaller. */
const maxEventChars = 10 * 1024 * 1024

/**
 * The body's bytes to the reply's events, synchronously, piece by piece: text decoding, server-sent events
 * (`eventsource-parser` keeps only the unfinished line and event between pieces, so a reply arriving in one piece
 * costs what it costs in many), each event's data decoded, and the reply's state machine. No Effect per event: a
 * piece of the body is one step of the stream.
 */
export class BodyParser {
  private readonly decoder = new TextDecoder()
  private readonly reply = new Reply()
  private out: Array<ModelEvent> = []
  private error: ModelError | undefined
  private endsInCr = false
  private readonly parser = createParser({
    onEvent: (event) => {
      if (this.error !== undefined) return
      const step = Either.flatMap(decodeEvent(event.data, this.ignoreUnknownEvents), (wire) => this.reply.step(wire))
      if (Either.isLeft(step)) this.error = step.left
      else for (const modelEvent of step.right) this.out.push(modelEvent)
    },
    onError: (cause) => {
      this.error ??= new ModelError({
        reason: "Malformed",
        message: `the event stream is malformed: ${
          cause.type === "max-buffer-size-exceeded"
            ? `an event exceeded the maximum size of ${maxEventChars} characters`
            : cause.message
        }`
      })
    },
    maxBufferSize: maxEventChars
  })

  constructor(private readonly ignoreUnknownEvents: boolean) {}

  private feedText(text: string): void {
    if (text.length === 0 || this.error !== undefined) return
    this.parser.feed(text)
    this.endsInCr = text.endsWith("\r")
  }

  /** The events so far, and the error that ends the reply, if any. */
  private taken(): Parsed {
    const events = Chunk.unsafeFromArray(this.out)
    this.out = []
    return { events, error: this.error }
  }

  /** The events completed by these pieces of the body. */
  feed(pieces: Iterable<Uint8Array>): Parsed {
    for (const bytes of pieces) this.feedText(this.decoder.decode(bytes, { stream: true }))
    return this.taken()
  }

  /** The body ended: the last events, and why the reply is incomplete, if it is. */
  end(): Parsed {
    this.feedText(this.decoder.decode())
    // A body ending in `\r` leaves the parser waiting for a `\n` that may follow: at the end, nothing follows.
    if (this.endsInCr) this.feedText("\n")
    if (this.error === undefined) this.error = this.reply.finish()
    return this.taken()
  }
}

/** What some pieces of the body gave: the reply's events, then the error that ends it, if any. */
export interface Parsed {
  readonly events: Chunk.Chunk<ModelEvent>
  readonly error: ModelError | undefined
}

/** How long the body may go on after `message_stop` before it is cut (the reply is complete by then). */
const afterStopGrace = Duration.seconds(2)

/** Why the watchdog cut a reply's body: nothing came for the idle timeout, or it went on after `message_stop`. */
export type Cut = "idle" | "afterStop"

/** What the parser tells the watchdog, and asks it. */
export interface Watch {
  /** A piece of the body arrived. */
  readonly seen: () => void
  /** The reply's `Stop` was parsed: the rest of the body has {@link afterStopGrace}. */
  readonly stopped: Effect.Effect<void>
  /** Whether (and why) the body was cut. */
  readonly cut: () => Cut | undefined
}

const idleError = (settings: Settings) =>
  new ModelError({
    reason: "Transport",
    message: `the Messages API sent nothing for ${Duration.format(settings.idleTimeout)} (the idle timeout)`
  })

/** How far the body's reader got since the last look: pieces parsed, the body's end, or a break. */
export type Progress =
  | { readonly _tag: "Parsed"; readonly parsed: Parsed }
  | { readonly _tag: "End" }
  | { readonly _tag: "Broken"; readonly cause: Cause.Cause<ModelError> }

/** The body's end (also after a cut by the watchdog). */
export const end: Progress = { _tag: "End" }

/**
 * The reply's pull over the body's reader (`read` waits for the next {@link Progress}): each pull gives the events
 * that piece gave, and the pull after them fails with the error that ends the reply, if any. The reply's `Stop` starts
 * the watchdog's grace for the rest of the body. At the body's end, or at its cut: an idle body fails; otherwise the
 * parser's last events, and why the reply is incomplete if it is. The body is read to its end (the API ends it right
 * after `message_stop`) rather than cut at `Stop`: a body read to the end leaves the connection to be reused, a cut
 * one closes it. A body that broke is a `Transport` error, unless the watchdog cut it (then it ends as the cut says).
 */
export const pullOf = (read: Effect.Effect<Progress>, parser: BodyParser, watch: Watch, settings: Settings): Pull => {
  // What the next pull ends with, once the reply is over: `None` at its end, else its error.
  let over: Option.Option<ModelError> | undefined = undefined
  const taken = (parsed: Parsed, last: boolean): Pull => {
    const after = parsed.error !== undefined ? Option.some(parsed.error) : last ? Option.none() : undefined
    if (Chunk.isEmpty(parsed.events)) return after === undefined ? pull : Effect.fail(after)
    over = after
    const events = Effect.succeed(parsed.events)
    return Chunk.some(parsed.events, (event) => event._tag === "Stop") ? Effect.zipRight(watch.stopped, events) : events
  }
  const ended = (): Pull =>
    watch.cut() === "idle" ? Effect.fail(Option.some(idleError(settings))) : taken(parser.end(), true)
  const pull: Pull = Effect.suspend(() =>
    over !== undefined ? Effect.fail(over) : Effect.flatMap(read, (progress): Pull => {
      switch (progress._tag) {
        case "Parsed":
          return taken(progress.parsed, false)
        case "End":
          return ended()
        case "Broken":
          return watch.cut() === undefined ? Effect.failCause(Cause.map(progress.cause, Option.some)) : ended()
      }
    })
  )
  return pull
}

/** What a body that broke while streaming is. */
export const brokenWhileStreaming = "the connection broke while streaming the reply"

/**
 * The parsed events, bounded in time: nothing from the body for `idleTimeout` fails the stream (`Transport`), and a
 * body that goes on after `message_stop` is cut after {@link afterStopGrace}. The stream's consumer reads the body
 * itself; one watchdog per reply cuts it by closing the request's scope, which aborts the request. (A timer per
 * piece costs more than the parsing, and a second fiber reading the body into a queue for the consumer costs more
 * than the rest of the reply: `bench/messages.ts`, `bench/loop.ts`.)
 */
const events = (
  response: Response,
  settings: Settings,
  request: Scope.CloseableScope
): Effect.Effect<Pull, never, Scope.Scope> =>
  Effect.gen(function*() {
    const clock = yield* Effect.clock
    const scope = yield* Effect.scope
    const idleMillis = Duration.toMillis(settings.idleTimeout)
    let lastSeen = clock.unsafeCurrentTimeMillis()
    let cut: Cut | undefined = undefined
    const cutBody = (why: Cut) =>
      Effect.suspend(() => {
        cut ??= why
        return Scope.close(request, Exit.void)
      })
    const idle: Effect.Effect<void> = Effect.suspend(() => {
      const left = lastSeen + idleMillis - clock.unsafeCurrentTimeMillis()
      return left > 0 ? Effect.zipRight(Effect.sleep(left), idle) : cutBody("idle")
    })
    yield* Effect.forkScoped(idle)
    const parser = new BodyParser(settings.ignoreUnknownEvents)
    const watch: Watch = {
      seen: () => {
        lastSeen = clock.unsafeCurrentTimeMillis()
      },
      stopped: Effect.asVoid(Effect.forkIn(Effect.zipRight(Effect.sleep(afterStopGrace), cutBody("afterStop")), scope)),
      cut: () => cut
    }
    return pullOf(yield* response.read(parser, watch), parser, watch, settings)
  })

/** A reply being read, in `Stream.toPull`'s shape: the events since the last pull; `None` at the end. */
export type Pull = Effect.Effect<Chunk.Chunk<ModelEvent>, Option.Option<ModelError>>

/**
 * One request's reply as a pull, in the Scope (closing it aborts the request); a request that fails before the reply
 * begins fails the first pull. With a tracer installed, the reply is one `AnthropicMessages.stream` span, ended with
 * the Scope.
 */
export const pull = (send: Send, settings: Settings, request: ModelRequest): Effect.Effect<Pull, never, Scope.Scope> =>
  Effect.flatMap(isTracing, (traced) => {
    const opened = Effect.catchAll(
      attempt(send, settings, request, 0),
      (error): Effect.Effect<Pull> => Effect.succeed(Effect.fail(Option.some(error)))
    )
    return traced
      ? Effect.withSpanScoped(opened, "AnthropicMessages.stream", {
        attributes: {
          "gen_ai.request.model": settings.model,
          messages: request.messages.length,
          tools: request.tools.length
        }
      })
      : opened
  })

/** One request's reply, as it streams ({@link pull} as a stream); interrupting the stream aborts the request. */
export const stream = (
  send: Send,
  settings: Settings,
  request: ModelRequest
): Stream.Stream<ModelEvent, ModelError> => Stream.fromPull(pull(send, settings, request))

/**
 * One try of a request. Back-pressure before the reply begins (429, 529) is tried again, up to `maxRetries` times,
 * after what the API's `retry-after` asks (else a doubling backoff), each retry announced by a `Retrying` event; a
 * reply that began and then failed is never sent again (its calls are answered by the loop).
 */
const attempt = (
  send: Send,
  settings: Settings,
  request: ModelRequest,
  retries: number
): Effect.Effect<Pull, ModelError, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    // The request lives in a scope of its own, closed with the reply's: closing it early aborts the request.
    const requestScope = yield* Scope.fork(scope, ExecutionStrategy.sequential)
    const response = yield* send(JSON.stringify(toWire(settings.model, request, true)), requestScope)
    if (response.status < 200 || response.status >= 300) {
      const error = yield* statusErrorOf(response)
      // The rest of the body is not needed: the connection is closed rather than read.
      yield* Scope.close(requestScope, Exit.void)
      const retry = settings.retry
      if (!retryableStatuses.has(response.status) || retries >= retry.maxRetries) return yield* error
      const asked = retryAfterMillis({
        "retry-after-ms": response.header("retry-after-ms"),
        "retry-after": response.header("retry-after")
      }, yield* Clock.currentTimeMillis)
      if (asked !== undefined && asked > retry.maxRetryAfterMillis) return yield* error
      const delayMillis = asked ??
        Math.min(retry.maxDelayMillis, retry.initialDelayMillis * 2 ** retries)
      const retrying = Chunk.of(ModelEvent.Retrying({
        attempt: retries + 1,
        maxRetries: retry.maxRetries,
        status: response.status,
        delayMillis,
        message: error.message
      }))
      // The first pull announces the retry; the next one waits, sends again and goes on with that try's pull.
      let announced = false
      let next: Pull | undefined = undefined
      const retried: Pull = Effect.suspend(() => {
        if (next !== undefined) return next
        if (!announced) {
          announced = true
          return Effect.succeed(retrying)
        }
        return Effect.zipRight(
          Effect.sleep(Duration.millis(delayMillis)),
          attempt(send, settings, request, retries + 1)
        )
          .pipe(
            Scope.extend(scope),
            Effect.mapError(Option.some),
            Effect.flatMap((opened) => {
              next = opened
              return opened
            })
          )
      })
      return retried
    }
    const contentType = response.header("content-type") ?? ""
    if (!contentType.toLowerCase().startsWith("text/event-stream")) {
      const body = yield* response.preview
      return yield* new ModelError({
        reason: "Malformed",
        message: `the Messages API answered ${response.status} with ${
          contentType === "" ? "no content type" : `"${contentType}"`
        }, not an event stream: ${quote(body)}`
      })
    }
    return yield* events(response, settings, requestScope)
  })
