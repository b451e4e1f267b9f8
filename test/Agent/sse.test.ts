/**
 * The Messages API client's event-stream parsing, from a raw HTTP server on 127.0.0.1 that writes a body built here
 * (the test's own SSE encoding) in the pieces a property chooses: split anywhere (inside a line, between `\r` and
 * `\n`, inside a multi-byte character), the reply is the same; all in one piece too; an oversized event is a
 * `Malformed` error, not a defect.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream } from "effect"
import * as fc from "effect/FastCheck"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as AnthropicMessages from "../../src/Agent/AnthropicMessages.js"
import type { ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend } from "../../src/Agent/ModelBackend.js"

const request: ModelRequest = {
  system: undefined,
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  maxTokens: 1024
}

/** The SSE body of a reply of text in `deltas`, then a tool_use whose input JSON arrives in `jsonPieces`. */
const body = (deltas: ReadonlyArray<string>, jsonPieces: ReadonlyArray<string>, newline: string): string => {
  const event = (data: unknown) => {
    const type = (data as { type: string }).type
    return `event: ${type}${newline}data: ${JSON.stringify(data)}${newline}${newline}`
  }
  return [
    event({
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [],
        stop_reason: null,
        usage: { input_tokens: 1, output_tokens: 1 }
      }
    }),
    // A comment line and a ping, as the API sends while it thinks.
    `: keep-alive${newline}${newline}`,
    event({ type: "ping" }),
    event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
    ...deltas.map((text) => event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } })),
    event({ type: "content_block_stop", index: 0 }),
    event({
      type: "content_block_start",
      index: 1,
      content_block: { type: "tool_use", id: "toolu_1", name: "Write", input: {} }
    }),
    ...jsonPieces.map((partial_json) =>
      event({ type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json } })
    ),
    event({ type: "content_block_stop", index: 1 }),
    event({ type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 5 } }),
    event({ type: "message_stop" })
  ].join("")
}

/** A server that answers every request with `bytes` written in the pieces `cuts` (byte offsets) make. */
const serve = (bytes: Buffer, cuts: ReadonlyArray<number>) =>
  Effect.acquireRelease(
    Effect.async<{ readonly url: string; readonly server: http.Server }>((resume) => {
      const server = http.createServer((req, res) => {
        req.resume()
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" })
          let at = 0
          for (const cut of [...cuts, bytes.length]) {
            if (cut > at) res.write(bytes.subarray(at, cut))
            at = Math.max(at, cut)
          }
          res.end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        resume(Effect.succeed({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.close(() => resume(Effect.void))
        server.closeAllConnections()
      })
  )

/** Both ways of sending: through the HttpClient in context, and straight over fetch (the body read ahead). */
const backends: ReadonlyArray<readonly [string, (url: string) => Layer.Layer<ModelBackend>]> = [
  [
    "layer, over FetchHttpClient",
    (url) =>
      AnthropicMessages.layer({ model: "m", apiKey: Redacted.make("k"), baseUrl: url }).pipe(
        Layer.provide(FetchHttpClient.layer)
      )
  ],
  ["layerFetch", (url) => AnthropicMessages.layerFetch({ model: "m", apiKey: Redacted.make("k"), baseUrl: url })]
]

const textPiece = fc.string({
  unit: fc.constantFrom("a", "é", "€", "😀", "\n", "\r", ":", " ", "\"", "\\"),
  maxLength: 6
})

for (const [via, backend] of backends) {
  const reply = (url: string) =>
    Effect.flatMap(ModelBackend, (model) => Stream.runCollect(model.stream(request))).pipe(
      Effect.map(Chunk.toReadonlyArray),
      Effect.provide(backend(url))
    )

  describe(`the event stream, however it is cut (${via})`, () => {
    it.effect.prop(
      "split at any byte: the same text and tool input, in order",
      [
        fc.array(textPiece, { minLength: 1, maxLength: 30 }),
        fc.array(textPiece, { maxLength: 10 }),
        fc.constantFrom("\n", "\r\n", "\r"),
        fc.array(fc.nat(), { maxLength: 12 })
      ],
      ([deltas, values, newline, rawCuts]) =>
        Effect.scoped(Effect.gen(function*() {
          const input = { content: values.join("") }
          const json = JSON.stringify(input)
          const pieces = [json.slice(0, 3), json.slice(3, 10), json.slice(10)]
          const bytes = Buffer.from(body(deltas, pieces, newline), "utf8")
          const cuts = rawCuts.map((cut) => cut % (bytes.length + 1)).sort((a, b) => a - b)
          const { url } = yield* serve(bytes, cuts)
          const events = yield* reply(url)
          const text = events.flatMap((event) => event._tag === "TextDelta" ? [event.text] : []).join("")
          const partial = events.flatMap((event) => event._tag === "ToolUseDelta" ? [event.partialJson] : []).join("")
          expect(text).toBe(deltas.join(""))
          expect(JSON.parse(partial)).toEqual(input)
          expect(events.at(-1)?._tag).toBe("Stop")
          expect(events.filter((event) => event._tag === "ToolUseStart")).toHaveLength(1)
        })),
      { fastCheck: { numRuns: 60 }, timeout: 120_000 }
    )

    it.effect("10,000 deltas in one piece: every one arrives", () =>
      Effect.scoped(Effect.gen(function*() {
        const deltas = Array.from({ length: 10_000 }, (_, i) => `${i} `)
        const bytes = Buffer.from(body(deltas, ["{}"], "\n"), "utf8")
        const { url } = yield* serve(bytes, [])
        const events = yield* reply(url)
        expect(events.filter((event) => event._tag === "TextDelta")).toHaveLength(10_000)
        expect(events.flatMap((event) => event._tag === "TextDelta" ? [event.text] : []).join("")).toBe(deltas.join(""))
      })), 60_000)

    it.effect("an event larger than 10 MiB is a Malformed error", () =>
      Effect.scoped(Effect.gen(function*() {
        const huge = `data: ${"x".repeat(11 * 1024 * 1024)}`
        const { url } = yield* serve(Buffer.from(`${body(["a"], ["{}"], "\n").slice(0, 200)}${huge}`), [])
        const error = yield* Effect.flip(reply(url))
        expect(error.reason).toBe("Malformed")
        expect(error.message).toMatch(/maximum size/)
      })), 60_000)
  })
}
