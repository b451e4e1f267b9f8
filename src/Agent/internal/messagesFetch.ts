/**
 * The fast path: the Messages API's requests over `globalThis.fetch` directly, the {@link Send} of
 * `AnthropicMessages.layerFetch`. It does what `messagesHttpClient.ts` does over a fetch `HttpClient`, in fewer
 * steps: the body is read and parsed by a plain loop over its reader, ahead of the consumer, and each pull of the
 * reply takes every event parsed since the last one (one step for a reply that arrives at once), where a response
 * stream pays an Effect per piece of the body. On a turn of two small replies that was most of the backend's cost
 * (`bench/loop.ts`). Reading ahead holds at most one reply in memory, which `max_tokens` bounds.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Scope from "effect/Scope"
import type { ModelError, ModelEvent } from "../ModelBackend.js"
import * as Client from "./messagesClient.js"

const transport = (cause: unknown, what: string): ModelError =>
  cause instanceof Error
    ? Client.transportError(what, cause.message, cause.cause)
    : Client.transportError(what, String(cause), undefined)

/** The first few KB of a body, as text. Reading stops there, and the rest of the body is cancelled. */
const preview = (body: ReadableStream<Uint8Array> | null): Effect.Effect<string, ModelError> =>
  Effect.tryPromise({
    try: async () => {
      if (body === null) return ""
      const reader = body.getReader()
      const decoder = new TextDecoder()
      let text = ""
      while (text.length < Client.bodyPreviewLimit) {
        const { done, value } = await reader.read()
        if (done) return text + decoder.decode()
        text += decoder.decode(value, { stream: true })
      }
      await reader.cancel()
      return text
    },
    catch: (cause) => transport(cause, "the connection broke while reading the response")
  })

/** How far the loop reading the body got: still reading, at its end, or broken. */
type Reading = { readonly _tag: "Reading" } | { readonly _tag: "Done" } | {
  readonly _tag: "Broken"
  readonly cause: unknown
}

const reading: Reading = { _tag: "Reading" }
const done: Reading = { _tag: "Done" }

/**
 * The body's reader: a loop reads the body's pieces as they arrive (each one seen by the watchdog) and feeds them to
 * the parser; the consumer is woken only when they completed events (a `content_block_stop` of text, a
 * `message_delta` or a `ping` gives none) or ended the body. Each look takes every event parsed since the last one,
 * and waits only when there is none.
 */
const read = (
  body: ReadableStream<Uint8Array> | null,
  request: Request,
  parser: Client.BodyParser,
  watch: Client.Watch
): Effect.Effect<Client.Progress> => {
  let parsed: Array<ModelEvent> = []
  let error: ModelError | undefined = undefined
  let state: Reading = body === null ? done : reading
  let wake: (() => void) | undefined = undefined
  const arrived = () => {
    const resume = wake
    wake = undefined
    resume?.()
  }
  if (body !== null) {
    const reader = body.getReader()
    const loop = async () => {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        watch.seen()
        // Once the reply has failed, the rest of the body is not parsed: the consumer ends it.
        if (error !== undefined) continue
        const piece = parser.feed([value])
        for (const event of piece.events) parsed.push(event)
        error = piece.error
        if (parsed.length > 0 || error !== undefined) arrived()
      }
    }
    loop().then(
      () => {
        request.complete = true
        state = done
        arrived()
      },
      (cause: unknown) => {
        state = { _tag: "Broken", cause }
        arrived()
      }
    )
  }
  const next = Effect.async<void>((resume) => {
    wake = () => resume(Effect.void)
    return Effect.sync(() => {
      wake = undefined
    })
  })
  const look: Effect.Effect<Client.Progress> = Effect.suspend(() => {
    if (parsed.length > 0 || error !== undefined) {
      const taken: Client.Parsed = { events: Chunk.unsafeFromArray(parsed), error }
      parsed = []
      return Effect.succeed({ _tag: "Parsed", parsed: taken })
    }
    switch (state._tag) {
      case "Done":
        return Effect.succeed(Client.end)
      case "Broken":
        return Effect.succeed({
          _tag: "Broken",
          cause: Cause.fail(transport(state.cause, Client.brokenWhileStreaming))
        })
      case "Reading":
        return Effect.zipRight(next, look)
    }
  })
  return look
}

/**
 * The request over `globalThis.fetch` (looked up at each request, so a test or a polyfill that replaces it is
 * used), aborted when the request's scope closes.
 */
export const send = (settings: Client.Settings): Client.Send => {
  const headers = { ...settings.headers, "content-type": "application/json" }
  return (body, scope) =>
    Effect.suspend(() => {
      const request = new Request()
      return Effect.zipRight(
        // A body read to its end needs no abort (and an abort costs a DOMException with its stack).
        Scope.addFinalizer(scope, Effect.sync(() => request.complete || request.abort())),
        Effect.tryPromise({
          try: () => globalThis.fetch(settings.url, { method: "POST", headers, body, signal: request.signal }),
          catch: (cause) => transport(cause, "the request to the Messages API failed")
        }).pipe(Effect.map((response): Client.Response => ({
          status: response.status,
          header: (name) => response.headers.get(name) ?? undefined,
          preview: preview(response.body),
          read: (parser, watch) => Effect.sync(() => read(response.body, request, parser, watch))
        })))
      )
    })
}

/** One request's abort, and whether its body was read to the end. */
class Request extends AbortController {
  complete = false
}
