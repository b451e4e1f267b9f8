/**
 * The Messages API's requests over @effect/platform's `HttpClient`: whatever client is in context (fetch, Node's
 * http, one a user wrapped with middleware) sends the POST, and its response stream is the body the client parses.
 * This is `AnthropicMessages.layer`'s {@link Send}; `messagesFetch.ts` is the same over `fetch` directly.
 *
 * @internal
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Channel from "effect/Channel"
import type * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ModelError, ModelEvent } from "../ModelBackend.js"
import * as Client from "./messagesClient.js"

const transport = (error: HttpClientError.HttpClientError, what: string): ModelError =>
  Client.transportError(what, error.message, error.cause)

/** The first few KB of a body, as text. Reading stops there, which also closes the connection. */
const preview = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string, ModelError> =>
  response.stream.pipe(
    Stream.decodeText(),
    Stream.scan("", (text, piece) => text + piece),
    Stream.takeUntil((text) => text.length >= Client.bodyPreviewLimit),
    Stream.runLast,
    Effect.map(Option.getOrElse(() => "")),
    Effect.mapError((error) => transport(error, "the connection broke while reading the response"))
  )

/**
 * The reply's events, parsed from the response stream by one channel: each piece of the body is one step, its
 * events written as one chunk.
 */
const events = (
  response: HttpClientResponse.HttpClientResponse,
  settings: Client.Settings,
  parser: Client.BodyParser,
  watch: Client.Watch
): Stream.Stream<ModelEvent, ModelError> => {
  const read: Channel.Channel<
    Chunk.Chunk<ModelEvent>,
    Chunk.Chunk<Uint8Array>,
    ModelError,
    HttpClientError.ResponseError,
    void,
    unknown
  > = Channel.readWithCause({
    onInput: (pieces: Chunk.Chunk<Uint8Array>) => {
      watch.seen()
      return Client.written(parser.feed(pieces), watch, read)
    },
    onFailure: (cause) =>
      Client.broken(
        cause,
        (error) => transport(error, Client.brokenWhileStreaming),
        parser,
        watch,
        settings
      ),
    onDone: () => Client.ended(parser, watch, settings)
  })
  return Stream.pipeThroughChannel(response.stream, read)
}

/** The request through `client`, in the request's scope (closing it aborts the request). */
export const send = (client: HttpClient.HttpClient, settings: Client.Settings): Client.Send => {
  const scoped = HttpClient.withScope(client)
  return (body, scope) =>
    scoped.execute(
      HttpClientRequest.post(settings.url).pipe(
        HttpClientRequest.setHeaders(settings.headers),
        HttpClientRequest.bodyText(body, "application/json")
      )
    ).pipe(
      Effect.mapError((error) => transport(error, "the request to the Messages API failed")),
      Effect.map((response): Client.Response => ({
        status: response.status,
        header: (name) => response.headers[name],
        preview: preview(response),
        events: (parser, watch) => events(response, settings, parser, watch)
      })),
      Scope.extend(scope)
    )
}
