/**
 * Back-pressure from the Messages API (429 rate limit, 529 overloaded), against the scripted MessagesServer on
 * 127.0.0.1: retried as the API asks (`retry-after-ms`, `retry-after`), else with a doubling backoff, a bounded
 * number of times, each retry a `Retrying` event; never when the wait asked is too long, the status is not
 * back-pressure, or the reply had begun. Waits are a few milliseconds (asked by the server), so these run live.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream } from "effect"
import { MessagesServer } from "effect-tool-runtime/testing"
import * as fc from "effect/FastCheck"
import * as AnthropicMessages from "../../src/Agent/AnthropicMessages.js"
import { retryAfterMillis } from "../../src/Agent/internal/messagesClient.js"
import type { ModelEvent, ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend } from "../../src/Agent/ModelBackend.js"

const { Reply, text } = MessagesServer

const request: ModelRequest = {
  system: undefined,
  messages: [{ role: "user", content: "hello" }],
  tools: [],
  maxTokens: 64
}

const retrying = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((event) => (event._tag === "Retrying" ? [event] : []))

const limited = (retryAfterMs?: string) =>
  Reply.HttpError({ status: 429, errorType: "rate_limit_error", message: "slow down", retryAfterMs })
const overloaded = Reply.HttpError({ status: 529, errorType: "overloaded_error", message: "Overloaded" })

/** Both ways of sending: through the HttpClient in context, and straight over fetch. */
const backends: ReadonlyArray<readonly [string, (options: AnthropicMessages.Options) => Layer.Layer<ModelBackend>]> = [
  [
    "layer, over FetchHttpClient",
    (options) =>
      AnthropicMessages.layer({ ...options, apiKey: Redacted.make("k") }).pipe(Layer.provide(FetchHttpClient.layer))
  ],
  ["layerFetch", (options) => AnthropicMessages.layerFetch({ ...options, apiKey: Redacted.make("k") })]
]

for (const [via, backend] of backends) {
  const run = (script: ReadonlyArray<MessagesServer.Reply>, retry: AnthropicMessages.Options["retry"]) =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* MessagesServer.make(script)
      const result = yield* Effect.flatMap(ModelBackend, (model) => Stream.runCollect(model.stream(request))).pipe(
        Effect.map(Chunk.toReadonlyArray),
        Effect.either,
        Effect.provide(backend({ model: "m", baseUrl: server.url, retry }))
      )
      return { result, requests: (yield* server.requests).length }
    }))

  describe(`429 and 529 are retried as the API asks (${via})`, () => {
    it.live("a 429 (retry-after-ms) and a 529 (backoff), then the reply: two Retrying events, then the reply", () =>
      Effect.gen(function*() {
        const { requests, result } = yield* run(
          [limited("20"), overloaded, Reply.Message({ content: [text("ok")] })],
          { initialDelay: "10 millis" }
        )
        expect(requests).toBe(3)
        const events = result._tag === "Right" ? result.right : []
        expect(
          retrying(events).map(({ attempt, delayMillis, maxRetries, status }) => ({
            attempt,
            delayMillis,
            maxRetries,
            status
          }))
        ).toEqual([
          { attempt: 1, delayMillis: 20, maxRetries: 2, status: 429 },
          // No retry-after: the backoff, doubled for the second retry.
          { attempt: 2, delayMillis: 20, maxRetries: 2, status: 529 }
        ])
        expect(retrying(events)[0]!.message).toMatch(/answered 429 rate_limit_error: slow down/)
        expect(events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")).toBe("ok")
        expect(events.at(-1)?._tag).toBe("Stop")
        // Retrying comes before anything of the reply.
        expect(events.findIndex((event) => event._tag !== "Retrying")).toBe(2)
      }))

    it.live("after maxRetries the last 429 is the error; 0 retries: the first is", () =>
      Effect.gen(function*() {
        const three = yield* run([limited("1"), limited("1"), limited("1")], { maxRetries: 2 })
        expect(three.requests).toBe(3)
        expect(three.result._tag === "Left" && three.result.left.status).toBe(429)
        const none = yield* run([limited("1"), Reply.Message({ content: [text("never")] })], false)
        expect(none.requests).toBe(1)
        expect(none.result._tag === "Left" && none.result.left.reason).toBe("Status")
      }))

    it.live("a wait longer than maxRetryAfter is not waited for: the error at once", () =>
      Effect.gen(function*() {
        const { requests, result } = yield* run(
          [
            Reply.HttpError({ status: 429, errorType: "rate_limit_error", message: "later", retryAfter: "120" }),
            Reply.Message({ content: [text("never")] })
          ],
          {}
        )
        expect(requests).toBe(1)
        expect(result._tag === "Left" && result.left.status).toBe(429)
      }))

    it.live("not back-pressure (400, 500) and errors once the reply began are not retried", () =>
      Effect.gen(function*() {
        for (const status of [400, 500]) {
          const { requests, result } = yield* run(
            [
              Reply.HttpError({ status, errorType: "api_error", message: "no" }),
              Reply.Message({ content: [text("x")] })
            ],
            { initialDelay: "1 millis" }
          )
          expect(requests).toBe(1)
          expect(result._tag === "Left" && result.left.status).toBe(status)
        }
        // An overloaded_error event in the middle of a reply: the reply had begun, it is not sent again.
        const midStream = yield* run(
          [Reply.ErrorEvent({ errorType: "overloaded_error", message: "Overloaded" }), Reply.Message({ content: [] })],
          { initialDelay: "1 millis" }
        )
        expect(midStream.requests).toBe(1)
        expect(midStream.result._tag === "Left" && midStream.result.left.reason).toBe("Api")
      }))
  })
}

describe("retryAfterMillis reads the headers as the API sends them", () => {
  it.prop("retry-after-ms wins; retry-after in seconds; an HTTP date relative to now; garbage is nothing", [
    fc.nat({ max: 100_000 }),
    fc.nat({ max: 3_600 }),
    fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }),
    fc.nat({ max: 3_600 })
  ], ([ms, seconds, nowSeconds, ahead]) => {
    const now = nowSeconds * 1000
    expect(retryAfterMillis({ "retry-after-ms": String(ms), "retry-after": String(seconds) }, now)).toBe(ms)
    expect(retryAfterMillis({ "retry-after": String(seconds) }, now)).toBe(seconds * 1000)
    const date = new Date(now + ahead * 1000).toUTCString()
    expect(retryAfterMillis({ "retry-after": date }, now)).toBe(ahead * 1000)
    expect(retryAfterMillis({ "retry-after": "soon" }, now)).toBeUndefined()
    expect(retryAfterMillis({}, now)).toBeUndefined()
  })
})
