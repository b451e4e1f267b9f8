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
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { ModelError } from "../ModelBackend.js"
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

/** The body's reader: each pull of the response stream is one look, its pieces fed to the parser at once. */
const read = (
  response: HttpClientResponse.HttpClientResponse,
  parser: Client.BodyParser,
  watch: Client.Watch
): Effect.Effect<Effect.Effect<Client.Progress>, never, Scope.Scope> =>
  Effect.map(Stream.toPull(response.stream), (pieces) =>
    Effect.matchCause(pieces, {
      onSuccess: (chunk): Client.Progress => {
        watch.seen()
        return { _tag: "Parsed", parsed: parser.feed(chunk) }
      },
      // `None`: the body ended.
      onFailure: (cause): Client.Progress =>
        Option.match(Cause.flipCauseOption(cause), {
          onNone: () => Client.end,
          onSome: (broken) => ({
            _tag: "Broken",
            cause: Cause.map(broken, (error) => transport(error, Client.brokenWhileStreaming))
          })
        })
    }))

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
        read: (parser, watch) => read(response, parser, watch)
      })),
      Scope.extend(scope)
    )
}
