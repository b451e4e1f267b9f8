/**
 * The Anthropic Messages API as a {@link ModelBackend}: wire Schemas for the request, the streamed events, a whole
 * Message and an error body, and layers that stream each reply, over @effect/platform's `HttpClient` (`layer`) or
 * over `fetch` itself (`layerFetch`, the cheaper).
 *
 * ```ts
 * const backend = AnthropicMessages.layer({ model: "claude-sonnet-4-5" }).pipe(Layer.provide(FetchHttpClient.layer))
 * const direct = AnthropicMessages.layerFetch({ model: "claude-sonnet-4-5" }) // over fetch, no HttpClient: faster
 * ```
 *
 * What comes back is checked as it streams: an HTTP error status is a `Status` error with the API's own message; a
 * body that is not an event stream, an event that is not JSON, a tool_use without an id, events out of order or a
 * stream that ends before `message_stop` are `Malformed`; an event, content block or delta type this client does not
 * know is `UnknownBlock`; an `error` event is `Api`; a connection that fails is `Transport`. Interrupting the stream
 * aborts the HTTP request.
 *
 * @since 0.2.0
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Client from "./internal/messagesClient.js"
import * as FetchSend from "./internal/messagesFetch.js"
import * as HttpSend from "./internal/messagesHttpClient.js"
import * as Wire from "./internal/messagesWire.js"
import type { ModelRequest } from "./ModelBackend.js"
import { ModelBackend } from "./ModelBackend.js"

// ---------------------------------------------------------------------------------------------------------------
// the request
// ---------------------------------------------------------------------------------------------------------------

/**
 * A tool in the request's `tools`: a client tool, optionally deferred (`defer_loading`: loaded only where a
 * `tool_reference` block in a tool_result names it).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ToolDefinition = Wire.ToolDefinition

/**
 * @since 0.2.0
 * @category schemas
 */
export type ToolDefinition = typeof ToolDefinition.Type

/**
 * The body of `POST /v1/messages`: the model, `max_tokens`, the system prompt, the conversation (text, tool_use and
 * tool_result blocks; a tool_result's content may hold text, image and `tool_reference` blocks), the tools and
 * whether to stream.
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessagesRequest = Wire.MessagesRequest

/**
 * @since 0.2.0
 * @category schemas
 */
export type MessagesRequest = typeof MessagesRequest.Type

// ---------------------------------------------------------------------------------------------------------------
// what comes back
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why the model stopped, as the API says it.
 *
 * @since 0.2.0
 * @category schemas
 */
export const StopReason = Wire.StopReason

/**
 * Token counts of a reply.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Usage = Wire.Usage

/**
 * A whole (non-streamed) Message: the reply to a request without `stream: true`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessageResponse = Wire.MessageResponse

/**
 * @since 0.2.0
 * @category schemas
 */
export type MessageResponse = typeof MessageResponse.Type

/**
 * The body of an HTTP error answer: `{type: "error", error: {type, message}}` (e.g. `invalid_request_error`,
 * `rate_limit_error` with 429, `overloaded_error` with 529).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ErrorResponse = Wire.ErrorResponse

/**
 * @since 0.2.0
 * @category schemas
 */
export type ErrorResponse = typeof ErrorResponse.Type

// ---------------------------------------------------------------------------------------------------------------
// streamed events
// ---------------------------------------------------------------------------------------------------------------

/**
 * The first event: the message with empty content and the input token count.
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessageStartEvent = Wire.MessageStart

/**
 * A content block begins at `index`: a text block or a tool_use block (with its id and name; its input follows in
 * `input_json_delta` pieces).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ContentBlockStartEvent = Wire.ContentBlockStart

/**
 * More of the block at `index`: a `text_delta` or an `input_json_delta` (a piece of the tool_use input's JSON).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ContentBlockDeltaEvent = Wire.ContentBlockDelta

/**
 * The block at `index` is complete.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ContentBlockStopEvent = Wire.ContentBlockStop

/**
 * The stop_reason and the output token count (sent once, before `message_stop`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessageDeltaEvent = Wire.MessageDelta

/**
 * The reply is complete.
 *
 * @since 0.2.0
 * @category schemas
 */
export const MessageStopEvent = Wire.MessageStop

/**
 * Keeps the connection alive; carries nothing.
 *
 * @since 0.2.0
 * @category schemas
 */
export const PingEvent = Wire.Ping

/**
 * An error in the middle of a stream (e.g. `overloaded_error`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const ErrorEvent = Wire.ErrorEvent

/**
 * Any event of a streamed reply (the `data` of one server-sent event).
 *
 * @since 0.2.0
 * @category schemas
 */
export const StreamEvent = Wire.StreamEvent

/**
 * @since 0.2.0
 * @category schemas
 */
export type StreamEvent = typeof StreamEvent.Type

// ---------------------------------------------------------------------------------------------------------------
// the backend
// ---------------------------------------------------------------------------------------------------------------

/**
 * How to reach the API.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** The model, e.g. `"claude-sonnet-4-5"`. */
  readonly model: string
  /** Default: the `ANTHROPIC_API_KEY` config (environment variable). */
  readonly apiKey?: Redacted.Redacted<string> | undefined
  /** Default `https://api.anthropic.com`; requests go to `${baseUrl}/v1/messages`. */
  readonly baseUrl?: string | undefined
  /** The `anthropic-version` header; default `"2023-06-01"`. */
  readonly anthropicVersion?: string | undefined
  /** Sent as the `anthropic-beta` header, comma-separated (e.g. `advanced-tool-use-2025-11-20` on older gateways). */
  readonly betas?: ReadonlyArray<string> | undefined
  /** More headers for every request (they win over the ones above). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /**
   * The longest wait for the next piece of a streamed reply (the API sends `ping`s while it thinks); default 10
   * minutes. Past it the stream fails with a `Transport` error and the request is aborted.
   */
  readonly idleTimeout?: Duration.DurationInput | undefined
  /**
   * An event type this client does not know: `"fail"` (the default) ends the stream with an `UnknownBlock` error;
   * `"ignore"` skips it, as Anthropic's versioning policy asks of clients (new event types may be added). Unknown
   * content block and delta types always fail: skipping them would lose part of the reply.
   */
  readonly unknownEvents?: "fail" | "ignore" | undefined
  /**
   * Back-pressure from the API (429 rate limit, 529 overloaded) before a reply begins is retried: `maxRetries`
   * times (default 2; 0 or `false`: never), after what `retry-after` / `retry-after-ms` asks (a wait longer than
   * `maxRetryAfter`, default 60 s, is not waited for: the error is returned), else after `initialDelay` (default
   * 0.5 s) doubled each time up to `maxDelay` (default 8 s). Each retry is a `Retrying` event (the agent loop shows
   * it). A reply that began and then broke is never sent again.
   */
  readonly retry?:
    | false
    | {
      readonly maxRetries?: number | undefined
      readonly initialDelay?: Duration.DurationInput | undefined
      readonly maxDelay?: Duration.DurationInput | undefined
      readonly maxRetryAfter?: Duration.DurationInput | undefined
    }
    | undefined
}

/**
 * The wire request for a {@link ModelRequest} (the body the backend sends, with `stream: true`).
 *
 * @since 0.2.0
 * @category utilities
 */
export const toRequest = (model: string, request: ModelRequest): typeof MessagesRequest.Encoded =>
  Client.toWire(model, request, true)

/** What every request of a backend sends, from the options (the API key from config when not given). */
const settingsOf = Effect.fnUntraced(function*(options: Options) {
  const apiKey = options.apiKey ?? (yield* Config.redacted("ANTHROPIC_API_KEY"))
  const retry = options.retry === false ? { maxRetries: 0 } : options.retry ?? {}
  const settings: Client.Settings = {
    model: options.model,
    url: `${(options.baseUrl ?? "https://api.anthropic.com").replace(/\/+$/, "")}/v1/messages`,
    headers: {
      "x-api-key": Redacted.value(apiKey),
      "anthropic-version": options.anthropicVersion ?? "2023-06-01",
      ...(options.betas === undefined || options.betas.length === 0
        ? {}
        : { "anthropic-beta": options.betas.join(",") }),
      ...options.headers
    },
    idleTimeout: Duration.decode(options.idleTimeout ?? "10 minutes"),
    ignoreUnknownEvents: options.unknownEvents === "ignore",
    retry: {
      maxRetries: Math.max(0, Math.floor(retry.maxRetries ?? 2)),
      initialDelayMillis: Duration.toMillis(Duration.decode(retry.initialDelay ?? "500 millis")),
      maxDelayMillis: Duration.toMillis(Duration.decode(retry.maxDelay ?? "8 seconds")),
      maxRetryAfterMillis: Duration.toMillis(Duration.decode(retry.maxRetryAfter ?? "60 seconds"))
    }
  }
  return settings
})

/**
 * The backend's service, built from the options and the `HttpClient` in context.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = Effect.fn("AnthropicMessages.make")(function*(options: Options) {
  const client = yield* HttpClient.HttpClient
  const settings = yield* settingsOf(options)
  const send = HttpSend.send(client, settings)
  return ModelBackend.fromPull((request) => Client.pull(send, settings, request))
})

/**
 * The backend's service over `globalThis.fetch` directly, with no `HttpClient`: the same requests, replies, errors,
 * retries and timeouts as {@link make}, in fewer steps per reply (see {@link layerFetch}).
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeFetch = Effect.fn("AnthropicMessages.makeFetch")(function*(options: Options) {
  const settings = yield* settingsOf(options)
  const send = FetchSend.send(settings)
  return ModelBackend.fromPull((request) => Client.pull(send, settings, request))
})

/**
 * `ModelBackend` over the Messages API. Needs an `HttpClient` (`FetchHttpClient.layer`, `NodeHttpClient.layer`, or
 * one with middleware of your own: every request goes through it). Without an `apiKey` it reads
 * `ANTHROPIC_API_KEY`, and fails with a `ConfigError` when that is not set. {@link layerFetch} is the same over
 * `fetch` without an `HttpClient`, and cheaper.
 *
 * @since 0.2.0
 * @category layers
 */
export function layer(
  options: Options & { readonly apiKey: Redacted.Redacted<string> }
): Layer.Layer<ModelBackend, never, HttpClient.HttpClient>
export function layer(options: Options): Layer.Layer<ModelBackend, ConfigError.ConfigError, HttpClient.HttpClient>
export function layer(options: Options): Layer.Layer<ModelBackend, ConfigError.ConfigError, HttpClient.HttpClient> {
  return Layer.effect(ModelBackend, make(options))
}

/**
 * `ModelBackend` over the Messages API, sent with `globalThis.fetch` directly: no `HttpClient` is needed or used
 * (an `HttpClient` in context is ignored; use {@link layer} to send through one). The replies, errors, retries and
 * timeouts are {@link layer}'s; each reply costs about half the CPU time, because the body is read by a plain loop
 * rather than as an Effect stream (`bench/loop.ts`). Without an `apiKey` it reads `ANTHROPIC_API_KEY`.
 *
 * ```ts
 * const backend = AnthropicMessages.layerFetch({ model: "claude-sonnet-4-5" })
 * ```
 *
 * @since 0.3.0
 * @category layers
 */
export function layerFetch(options: Options & { readonly apiKey: Redacted.Redacted<string> }): Layer.Layer<ModelBackend>
export function layerFetch(options: Options): Layer.Layer<ModelBackend, ConfigError.ConfigError>
export function layerFetch(options: Options): Layer.Layer<ModelBackend, ConfigError.ConfigError> {
  return Layer.effect(ModelBackend, makeFetch(options))
}

/**
 * The Messages API's wire format as Schemas (requests, stream events, content blocks): what the client sends and
 * decodes, for servers and tests that speak it too.
 *
 * @since 0.3.0
 * @category wire
 */
export * as Wire from "./internal/messagesWire.js"

/**
 * One line of text for a wire value that did not decode: each issue with its path.
 *
 * @since 0.3.0
 * @category wire
 */
export { describeParseError } from "./internal/messagesEvents.js"
