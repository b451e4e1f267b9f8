/**
 * The Messages API backend against the scripted MessagesServer on 127.0.0.1, over a real HttpClient (fetch): a
 * streamed reply decodes to the loop's events, the request goes out exactly as given, every bad response is a typed
 * ModelError naming the problem, and interrupting the stream closes the connection.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import { describe, expect, it } from "@effect/vitest"
import {
  Chunk,
  ConfigProvider,
  Deferred,
  Effect,
  Fiber,
  Layer,
  Option,
  Redacted,
  Schema,
  Stream,
  TestClock
} from "effect"
import { MessagesServer } from "effect-tool-runtime/testing"
import * as fc from "effect/FastCheck"
import * as AnthropicMessages from "../../src/Agent/AnthropicMessages.js"
import type { ModelError, ModelEvent, ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend } from "../../src/Agent/ModelBackend.js"
import { recordingTracer } from "../support/index.js"

const { Reply, text, toolUse } = MessagesServer

type Backend = (url: string, options?: Partial<Omit<AnthropicMessages.Options, "apiKey">>) => Layer.Layer<ModelBackend>

/** Every case runs against both ways of sending: through the HttpClient in context, and straight over fetch. */
const backends: ReadonlyArray<readonly [string, Backend]> = [
  [
    "layer, over FetchHttpClient",
    (url, options = {}) =>
      AnthropicMessages.layer({ model: "claude-test", apiKey: Redacted.make("sk-test-key"), baseUrl: url, ...options })
        .pipe(Layer.provide(FetchHttpClient.layer))
  ],
  [
    "layerFetch",
    (url, options = {}) =>
      AnthropicMessages.layerFetch({
        model: "claude-test",
        apiKey: Redacted.make("sk-test-key"),
        baseUrl: url,
        ...options
      })
  ]
]

const ask = (request: ModelRequest) => Stream.unwrap(Effect.map(ModelBackend, (model) => model.stream(request)))

const hello: ModelRequest = {
  system: undefined,
  messages: [{ role: "user", content: "hello" }],
  tools: [{
    name: "Read",
    description: "Reads a file.",
    input_schema: { type: "object", properties: { file_path: { type: "string" } } }
  }],
  maxTokens: 1024
}

// Raw events for the out-of-order cases.
const start = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "m",
    content: [],
    stop_reason: null,
    usage: { input_tokens: 3, output_tokens: 1 }
  }
}
const textStart = (index: number) => ({ type: "content_block_start", index, content_block: { type: "text", text: "" } })
const toolStart = (index: number, id: string) => ({
  type: "content_block_start",
  index,
  content_block: { type: "tool_use", id, name: "Read", input: {} }
})
const stopDelta = { type: "message_delta", delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }
const emptyConfig = ConfigProvider.fromMap(new Map())

for (const [via, backend] of backends) {
  /** The events of one reply to `hello` from a server with this script (no retries: these tests want the error). */
  const replyTo = (script: MessagesServer.Script, request: ModelRequest = hello) =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make(script)
      const events = yield* Stream.runCollect(ask(request)).pipe(Effect.provide(backend(server.url, { retry: false })))
      return { server, events: Chunk.toReadonlyArray(events) }
    })

  const failureOf = (script: MessagesServer.Script, request: ModelRequest = hello): Effect.Effect<ModelError> =>
    replyTo(script, request).pipe(
      Effect.flatMap(({ events }) => Effect.dieMessage(`expected a ModelError, got ${events.length} events`)),
      Effect.flip,
      Effect.scoped
    )

  /** The input JSON of each tool_use, as the pieces add up. */
  const inputsOf = (events: ReadonlyArray<ModelEvent>): Record<string, string> => {
    const inputs: Record<string, string> = {}
    for (const event of events) {
      if (event._tag === "ToolUseStart") inputs[event.id] = ""
      if (event._tag === "ToolUseDelta") inputs[event.id] += event.partialJson
    }
    return inputs
  }

  describe(`AnthropicMessages (${via}): a streamed reply`, () => {
    it.scoped("text and two tool_uses decode to the loop's events in order, each input in several pieces adding up to its JSON", () =>
      Effect.gen(function*() {
        const first = { file_path: "src/a.ts", offset: 10 }
        const second = { pattern: "TODO", glob: "**/*.ts", flags: ["-i", "-n"] }
        const { events } = yield* replyTo([
          Reply.Message({
            content: [
              text("Let me look at both files."),
              toolUse("toolu_1", "Read", first),
              toolUse("toolu_2", "Grep", second)
            ]
          })
        ])
        const shape = events.map((
          event
        ) => (event._tag === "ToolUseStart" || event._tag === "ToolUseEnd" ? `${event._tag}:${event.id}` : event._tag))
        const squeezed = shape.filter((tag, i) => tag !== shape[i - 1])
        expect(squeezed).toEqual([
          "TextDelta",
          "ToolUseStart:toolu_1",
          "ToolUseDelta",
          "ToolUseEnd:toolu_1",
          "ToolUseStart:toolu_2",
          "ToolUseDelta",
          "ToolUseEnd:toolu_2",
          "Stop"
        ])
        expect(events.filter((event) => event._tag === "TextDelta").length).toBeGreaterThan(1)
        expect(events.filter((event) => event._tag === "TextDelta").map((event) => event.text).join("")).toBe(
          "Let me look at both files."
        )
        expect(events.filter((event) => event._tag === "ToolUseDelta" && event.id === "toolu_1").length)
          .toBeGreaterThan(
            1
          )
        expect(events.find((event) => event._tag === "ToolUseStart" && event.id === "toolu_2")).toMatchObject({
          name: "Grep"
        })
        const inputs = inputsOf(events)
        expect(JSON.parse(inputs["toolu_1"]!)).toEqual(first)
        expect(JSON.parse(inputs["toolu_2"]!)).toEqual(second)
        const stop = events.at(-1)
        expect(stop).toMatchObject({ _tag: "Stop", reason: "tool_use" })
        expect(
          stop?._tag === "Stop" && stop.usage !== undefined && stop.usage.inputTokens > 0 && stop.usage.outputTokens > 0
        ).toBe(true)
      }))

    it.scoped("a text-only reply stops with end_turn; a tool_use whose input never arrives in pieces gets its start input, {}", () =>
      Effect.gen(function*() {
        const { events } = yield* replyTo([
          Reply.Message({ content: [text("Done."), toolUse("toolu_9", "Now", {}, [])], stopReason: "end_turn" })
        ])
        expect(inputsOf(events)).toEqual({ toolu_9: "{}" })
        expect(events.at(-1)).toMatchObject({ _tag: "Stop", reason: "end_turn" })
      }))

    it.scoped("a reply read to its end leaves the connection for later requests (the client's pool reuses it)", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make(() => Reply.Message({ content: [text("again")] }))
        yield* Effect.repeatN(Stream.runDrain(ask(hello)), 5).pipe(Effect.provide(backend(server.url)))
        const connections = (yield* server.received).map((request) => request.connection)
        expect(connections.length).toBe(6)
        expect(new Set(connections).size).toBeLessThanOrEqual(2)
        expect(yield* server.disconnects).toBe(0)
      }))

    it.scoped("with a tracer installed, a reply is one AnthropicMessages.stream span (model, messages, tools), ended with it", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make(() => Reply.Message({ content: [text("traced")] }))
        const { spans, tracer } = recordingTracer()
        yield* Stream.runDrain(ask(hello)).pipe(Effect.provide(backend(server.url)), Effect.withTracer(tracer))
        const streamed = spans.filter((span) => span.name === "AnthropicMessages.stream")
        expect(streamed.length).toBe(1)
        expect(Object.fromEntries(streamed[0]!.attributes)).toEqual({
          "gen_ai.request.model": "claude-test",
          messages: 1,
          tools: 1
        })
        expect(streamed[0]!.status._tag).toBe("Ended")
      }))

    it.scoped("the request carries the tools (defer_loading) and the tool_result's tool_reference blocks exactly as given, and the headers", () =>
      Effect.gen(function*() {
        const request: ModelRequest = {
          system: "You are terse.",
          messages: [
            { role: "user", content: "fetch the page" },
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "toolu_s", name: "ToolSearch", input: { query: "select:WebFetch" } }]
            },
            {
              role: "user",
              content: [{
                type: "tool_result",
                tool_use_id: "toolu_s",
                content: [{ type: "tool_reference", tool_name: "WebFetch" }]
              }]
            }
          ],
          tools: [
            {
              name: "ToolSearch",
              description: "Finds tools.",
              input_schema: { type: "object", properties: { query: { type: "string" } }, required: ["query"] }
            },
            {
              name: "WebFetch",
              description: "Fetches a URL.",
              input_schema: { type: "object", properties: { url: { type: "string" } } },
              defer_loading: true
            }
          ],
          maxTokens: 2048
        }
        const server = yield* MessagesServer.make([Reply.Message({ content: [text("ok")] })])
        yield* Stream.runDrain(ask(request)).pipe(
          Effect.provide(
            backend(server.url, { betas: ["advanced-tool-use-2025-11-20", "other-beta"], headers: { "x-trace": "t1" } })
          )
        )
        expect(yield* server.requests).toEqual([{
          model: "claude-test",
          max_tokens: 2048,
          system: "You are terse.",
          messages: request.messages,
          tools: request.tools,
          stream: true
        }])
        const [received] = yield* server.received
        expect(received).toMatchObject({ method: "POST", path: "/v1/messages" })
        expect(received!.headers).toMatchObject({
          "x-api-key": "sk-test-key",
          "anthropic-version": "2023-06-01",
          "anthropic-beta": "advanced-tool-use-2025-11-20,other-beta",
          "content-type": "application/json",
          "x-trace": "t1"
        })
      }))
  })

  describe(`AnthropicMessages (${via}): bad responses are typed ModelErrors naming the problem`, () => {
    const cases: ReadonlyArray<readonly [string, MessagesServer.Reply, ModelError["reason"], RegExp, number?]> = [
      [
        "a 429",
        Reply.HttpError({
          status: 429,
          errorType: "rate_limit_error",
          message: "Number of request tokens has exceeded your per-minute rate limit"
        }),
        "Status",
        /answered 429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit \(request-id req_/,
        429
      ],
      [
        "a 529",
        Reply.HttpError({ status: 529, errorType: "overloaded_error", message: "Overloaded" }),
        "Status",
        /answered 529 overloaded_error: Overloaded/,
        529
      ],
      [
        "an error status whose body is not an API error",
        Reply.Raw({ status: 502, contentType: "text/html", body: "<html>Bad Gateway</html>" }),
        "Status",
        /answered 502 with a body that is not an API error: "<html>Bad Gateway<\/html>"/,
        502
      ],
      [
        "a body that is not an event stream",
        Reply.Raw({ status: 200, contentType: "application/json", body: "{\"type\":\"message\"}" }),
        "Malformed",
        /answered 200 with "application\/json", not an event stream: "\{\\"type\\":\\"message\\"\}"/
      ],
      [
        "an event that is not JSON",
        Reply.MalformedEvent(),
        "Malformed",
        /an event's data is not JSON: "\{\\"type\\": \\"content_block_start\\"/
      ],
      [
        "an unknown content block type",
        Reply.UnknownBlock({ blockType: "thinking" }),
        "UnknownBlock",
        /^unknown content block type "thinking" at index 0$/
      ],
      [
        "an unknown event type",
        Reply.Events({ events: [{ type: "mystery_event" }] }),
        "UnknownBlock",
        /^unknown event type "mystery_event"$/
      ],
      [
        "an unknown delta type",
        Reply.Events({
          events: [{ type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "hm" } }]
        }),
        "UnknownBlock",
        /^unknown delta type "thinking_delta" at index 0$/
      ],
      [
        "a tool_use with no id",
        Reply.ToolUseWithoutId({ name: "Read" }),
        "Malformed",
        /content_block_start event: content_block\.id: a tool_use block needs an id/
      ],
      [
        "a tool_use with an empty id",
        Reply.ToolUseWithoutId({ name: "Read", id: "" }),
        "Malformed",
        /content_block\.id: a tool_use block needs a non-empty id/
      ],
      [
        "a stream that ends before message_stop",
        Reply.Truncated({ content: [text("partial")] }),
        "Malformed",
        /^the stream ended before message_stop$/
      ],
      [
        "a stream that ends mid-block",
        Reply.Truncated({ content: [toolUse("toolu_1", "Read", { file_path: "a" })], keep: 4 }),
        "Malformed",
        /^the stream ended before message_stop$/
      ],
      ["an empty event stream", Reply.Events({ events: [] }), "Malformed", /^the stream ended before message_start$/],
      [
        "an event before message_start",
        Reply.Events({
          events: [{ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }]
        }),
        "Malformed",
        /^a content_block_start event before message_start$/
      ],
      [
        "a delta for a block that never started",
        Reply.Events({
          events: [start, { type: "content_block_delta", index: 3, delta: { type: "text_delta", text: "x" } }]
        }),
        "Malformed",
        /^a content_block_delta for content block 3, which never started$/
      ],
      [
        "an input_json_delta for a text block",
        Reply.Events({
          events: [start, textStart(0), {
            type: "content_block_delta",
            index: 0,
            delta: { type: "input_json_delta", partial_json: "{" }
          }]
        }),
        "Malformed",
        /^an input_json_delta for the text block at index 0$/
      ],
      [
        "a block stopped twice",
        Reply.Events({
          events: [start, textStart(0), { type: "content_block_stop", index: 0 }, {
            type: "content_block_stop",
            index: 0
          }]
        }),
        "Malformed",
        /which had already stopped$/
      ],
      [
        "message_stop with a block still open",
        Reply.Events({ events: [start, textStart(0), stopDelta, { type: "message_stop" }] }),
        "Malformed",
        /^message_stop while content block 0 is still open$/
      ],
      [
        "message_stop without a stop_reason",
        Reply.Events({ events: [start, { type: "message_stop" }] }),
        "Malformed",
        /^message_stop before a message_delta gave the stop_reason$/
      ],
      [
        "an event after message_stop",
        Reply.Events({ events: [start, stopDelta, { type: "message_stop" }, { type: "ping" }, textStart(0)] }),
        "Malformed",
        /^a content_block_start event after message_stop$/
      ],
      [
        "two tool_uses with one id",
        Reply.Events({
          events: [start, toolStart(0, "toolu_x"), { type: "content_block_stop", index: 0 }, toolStart(1, "toolu_x")]
        }),
        "Malformed",
        /two tool_use blocks share the id "toolu_x"/
      ],
      [
        "an error event",
        Reply.ErrorEvent({ errorType: "overloaded_error", message: "Overloaded" }),
        "Api",
        /^the Messages API sent an error event: overloaded_error: Overloaded$/
      ]
    ]

    for (const [name, reply, reason, message, status] of cases) {
      it.effect(`${name}: ${reason}`, () =>
        Effect.gen(function*() {
          const error = yield* failureOf([reply])
          expect(error._tag).toBe("ModelError")
          expect(error.reason).toBe(reason)
          expect(error.message).toMatch(message)
          expect(error.status).toBe(status)
        }))
    }

    it.effect("a request the API refuses (a tool_reference to a tool not in tools) is a Status 400 with the API's message", () =>
      Effect.gen(function*() {
        const error = yield* failureOf([Reply.Message({ content: [text("never sent")] })], {
          ...hello,
          messages: [
            { role: "user", content: "find a tool" },
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "toolu_s", name: "ToolSearch", input: { query: "x" } }]
            },
            {
              role: "user",
              content: [{
                type: "tool_result",
                tool_use_id: "toolu_s",
                content: [{ type: "tool_reference", tool_name: "Missing" }]
              }]
            }
          ]
        })
        expect(error).toMatchObject({ reason: "Status", status: 400 })
        expect(error.message).toMatch(
          /answered 400 invalid_request_error: Tool reference 'Missing' not found in available tools/
        )
      }))

    it.scoped("with unknownEvents: \"ignore\", an unknown event type is skipped; an unknown block type still fails", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([
          Reply.Events({
            events: [
              start,
              { type: "brand_new_event", detail: 1 },
              textStart(0),
              { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "hi" } },
              { type: "content_block_stop", index: 0 },
              stopDelta,
              { type: "message_stop" }
            ]
          }),
          Reply.UnknownBlock({ blockType: "thinking" })
        ])
        const layer = backend(server.url, { unknownEvents: "ignore" })
        const events = yield* Stream.runCollect(ask(hello)).pipe(Effect.provide(layer))
        expect(Chunk.toReadonlyArray(events).map((event) => event._tag)).toEqual(["TextDelta", "Stop"])
        const error = yield* Stream.runCollect(ask(hello)).pipe(Effect.provide(layer), Effect.flip)
        expect(error.reason).toBe("UnknownBlock")
      }))

    it.effect("nothing listening is a Transport error naming the request", () =>
      Effect.gen(function*() {
        const error = yield* Stream.runDrain(ask(hello)).pipe(
          Effect.provide(backend("http://127.0.0.1:1")),
          Effect.flip
        )
        expect(error.reason).toBe("Transport")
        expect(error.message).toMatch(/^the request to the Messages API failed: /)
      }))

    it.effect("without an apiKey and without ANTHROPIC_API_KEY the layer fails with a ConfigError naming the variable", () =>
      Effect.gen(function*() {
        const error = yield* Layer.build(
          AnthropicMessages.layer({ model: "m" }).pipe(Layer.provide(FetchHttpClient.layer))
        ).pipe(Effect.scoped, Effect.withConfigProvider(emptyConfig), Effect.flip)
        expect(String(error)).toMatch(/ANTHROPIC_API_KEY/)
      }))
  })

  describe(`AnthropicMessages (${via}): the reply as a pull`, () => {
    /** Every chunk of `pull` until it ends: the events, and how it ended (`None`, or the error). */
    const pulledFrom = (
      url: string,
      request: ModelRequest,
      options: Partial<Omit<AnthropicMessages.Options, "apiKey">>
    ) =>
      Effect.scoped(Effect.gen(function*() {
        const model = yield* ModelBackend
        const pull = yield* model.pull!(request)
        const events: Array<ModelEvent> = []
        for (;;) {
          const step = yield* Effect.either(pull)
          if (step._tag === "Left") return { events, end: step.left }
          events.push(...step.right)
        }
      })).pipe(Effect.provide(backend(url, options)))

    it.scoped("pull gives the stream's events in the same order, then ends with None", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make(() =>
          Reply.Message({ content: [text("Reading it."), toolUse("toolu_1", "Read", { file_path: "a.ts" })] })
        )
        const streamed = Chunk.toReadonlyArray(
          yield* Stream.runCollect(ask(hello)).pipe(Effect.provide(backend(server.url)))
        )
        const pulled = yield* pulledFrom(server.url, hello, {})
        expect(pulled.end).toEqual(Option.none())
        expect(pulled.events).toEqual(streamed)
        expect(pulled.events.map((event) => event._tag)).toContain("ToolUseEnd")
        expect(pulled.events.at(-1)?._tag).toBe("Stop")
      }))

    it.scoped("a request the API refuses fails the first pull with its Status error", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([
          Reply.HttpError({ status: 400, errorType: "invalid_request_error", message: "max_tokens: too large" })
        ])
        const pulled = yield* pulledFrom(server.url, hello, { retry: false })
        expect(pulled.events).toEqual([])
        expect(Option.getOrUndefined(pulled.end)).toMatchObject({ reason: "Status", status: 400 })
      }))

    it.scopedLive("a 429 is retried through the pull: its Retrying event, then the reply", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([
          Reply.HttpError({ status: 429, errorType: "rate_limit_error", message: "slow down", retryAfterMs: "1" }),
          Reply.Message({ content: [text("after the wait")] })
        ])
        const pulled = yield* pulledFrom(server.url, hello, {})
        expect(pulled.end).toEqual(Option.none())
        expect(pulled.events[0]).toMatchObject({ _tag: "Retrying", attempt: 1, status: 429, delayMillis: 1 })
        const rest = pulled.events.slice(1)
        expect(rest.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")).toBe(
          "after the wait"
        )
        expect(rest.at(-1)?._tag).toBe("Stop")
      }))
  })

  describe(`AnthropicMessages (${via}): cancellation`, () => {
    it.scoped("interrupting the stream mid-reply closes the connection: the server sees the client leave and finishes the reply", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([
          Reply.Hold({ content: [toolUse("toolu_1", "Read", { file_path: "a.txt" })] })
        ])
        const first = yield* Deferred.make<ModelEvent>()
        const fiber = yield* Stream.runForEach(ask(hello), (event) => Deferred.succeed(first, event)).pipe(
          Effect.provide(backend(server.url)),
          Effect.fork
        )
        expect(yield* Deferred.await(first)).toMatchObject({ _tag: "ToolUseStart", id: "toolu_1" })
        expect(yield* server.inFlight).toBe(1)
        yield* Fiber.interrupt(fiber)
        yield* server.awaitDisconnects(1)
        expect(yield* server.disconnects).toBe(1)
        expect(yield* server.inFlight).toBe(0)
      }))

    it.scoped("a body that goes on after message_stop is cut after a grace period: the reply ends complete, without an error", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([
          Reply.Events({
            events: [start, textStart(0), { type: "content_block_stop", index: 0 }, stopDelta, {
              type: "message_stop"
            }],
            end: false
          })
        ])
        const fiber = yield* Stream.runCollect(ask(hello)).pipe(Effect.provide(backend(server.url)), Effect.fork)
        for (let step = 0; step < 20 && Option.isNone(yield* Fiber.poll(fiber)); step++) {
          yield* TestClock.adjust("1 second")
        }
        expect(Option.isSome(yield* Fiber.poll(fiber))).toBe(true)
        const events = Chunk.toReadonlyArray(yield* Fiber.join(fiber))
        expect(events.map((event) => event._tag)).toEqual(["Stop"])
        yield* server.awaitDisconnects(1)
      }))

    it.scoped("a reply that stalls past the idle timeout fails with Transport naming the timeout, and the request is aborted", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([Reply.Hold({ content: [text("thinking...")] })])
        const first = yield* Deferred.make<void>()
        const fiber = yield* Stream.runForEach(ask(hello), () => Deferred.succeed(first, undefined)).pipe(
          Effect.provide(backend(server.url, { idleTimeout: "30 seconds" })),
          Effect.flip,
          Effect.fork
        )
        yield* Deferred.await(first)
        for (let step = 0; step < 40 && Option.isNone(yield* Fiber.poll(fiber)); step++) {
          yield* TestClock.adjust("1 second")
        }
        expect(Option.isSome(yield* Fiber.poll(fiber))).toBe(true)
        const error = yield* Fiber.join(fiber)
        expect(error).toMatchObject({
          reason: "Transport",
          message: "the Messages API sent nothing for 30s (the idle timeout)"
        })
        yield* server.awaitDisconnects(1)
      }))

    it.scoped("taking the first events of a held reply ends the request too", () =>
      Effect.gen(function*() {
        const server = yield* MessagesServer.make([Reply.Hold({ content: [text("one two three four")] })])
        const events = yield* Stream.runCollect(Stream.take(ask(hello), 1)).pipe(Effect.provide(backend(server.url)))
        expect(Chunk.toReadonlyArray(events)).toMatchObject([{ _tag: "TextDelta" }])
        yield* server.awaitDisconnects(1)
        expect(yield* server.inFlight).toBe(0)
      }))
  })

  describe(`AnthropicMessages (${via}): input pieces`, () => {
    const key = fc.string({ maxLength: 8 }).filter((k) => k !== "__proto__")
    const inputAndPieces = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 6 }).chain((input) => {
      const json = JSON.stringify(input)
      return fc.uniqueArray(fc.integer({ min: 0, max: json.length }), { maxLength: 12 }).map((cuts) => {
        const points = [0, ...[...cuts].sort((a, b) => a - b), json.length]
        return { input, pieces: points.slice(1).map((end, i) => json.slice(points[i], end)) }
      })
    })

    it.effect.prop(
      "any split of a tool_use input's JSON into deltas arrives piece by piece and adds up to the same input",
      [inputAndPieces],
      ([{ input, pieces }]) =>
        Effect.gen(function*() {
          const { events } = yield* replyTo([Reply.Message({ content: [toolUse("toolu_p", "Tool", input, pieces)] })])
          const received = events.flatMap((event) => (event._tag === "ToolUseDelta" ? [event.partialJson] : []))
          // Oracle: the non-empty pieces, in order; together they are the JSON the server sent for the input.
          expect(received).toEqual(pieces.filter((piece) => piece !== ""))
          expect(JSON.parse(received.join(""))).toEqual(JSON.parse(JSON.stringify(input)))
        }).pipe(Effect.scoped),
      { fastCheck: { numRuns: 50 }, timeout: 60_000 }
    )
  })
}

describe("AnthropicMessages: which way a request goes", () => {
  // The user's own HttpClient: the fetch one with a header of its own on every request, and a count of them.
  const swapped = (sent: Array<string>) =>
    Layer.effect(
      HttpClient.HttpClient,
      Effect.map(HttpClient.HttpClient, (client) =>
        client.pipe(HttpClient.mapRequest((request) => {
          sent.push(request.url)
          return HttpClientRequest.setHeader(request, "x-through", "my-client")
        })))
    ).pipe(Layer.provide(FetchHttpClient.layer))
  const options = { model: "claude-test", apiKey: Redacted.make("sk-test-key") }

  it.scoped("layer sends every request through the HttpClient in context: a swapped client's middleware runs", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make(() => Reply.Message({ content: [text("through")] }))
      const sent: Array<string> = []
      const events = yield* Stream.runCollect(ask(hello)).pipe(
        Effect.provide(AnthropicMessages.layer({ ...options, baseUrl: server.url }).pipe(Layer.provide(swapped(sent))))
      )
      expect(Chunk.toReadonlyArray(events).at(-1)?._tag).toBe("Stop")
      expect(sent).toEqual([`${server.url}/v1/messages`])
      const [received] = yield* server.received
      expect(received!.headers).toMatchObject({ "x-through": "my-client", "x-api-key": "sk-test-key" })
    }))

  it.scoped("layerFetch sends over fetch itself: an HttpClient in context is not used", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make(() => Reply.Message({ content: [text("direct")] }))
      const sent: Array<string> = []
      const events = yield* Stream.runCollect(ask(hello)).pipe(
        Effect.provide(AnthropicMessages.layerFetch({ ...options, baseUrl: server.url })),
        Effect.provide(swapped(sent))
      )
      expect(Chunk.toReadonlyArray(events).at(-1)?._tag).toBe("Stop")
      expect(sent).toEqual([])
      const [received] = yield* server.received
      expect(received!.headers["x-through"]).toBeUndefined()
      expect(received!.headers).toMatchObject({ "x-api-key": "sk-test-key", "content-type": "application/json" })
    }))

  it.effect("layerFetch without an apiKey and without ANTHROPIC_API_KEY fails with a ConfigError naming the variable", () =>
    Effect.gen(function*() {
      const error = yield* Layer.build(AnthropicMessages.layerFetch({ model: "m" })).pipe(
        Effect.scoped,
        Effect.withConfigProvider(emptyConfig),
        Effect.flip
      )
      expect(String(error)).toMatch(/ANTHROPIC_API_KEY/)
    }))
})

describe("AnthropicMessages: the non-streamed Message", () => {
  it.scoped("the server's JSON Message for a request without stream decodes with MessageResponse", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([
        Reply.Message({ content: [text("hi"), toolUse("toolu_1", "Read", { file_path: "a" })] })
      ])
      const body = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/messages`, {
          method: "POST",
          headers: { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" },
          body: JSON.stringify({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
        }).then((response) => response.json())
      )
      const message = yield* Schema.decodeUnknown(AnthropicMessages.MessageResponse)(body)
      expect(message).toMatchObject({
        role: "assistant",
        stop_reason: "tool_use",
        content: [{ type: "text", text: "hi" }, { type: "tool_use", id: "toolu_1", input: { file_path: "a" } }]
      })
    }))
})

describe("AnthropicMessages: the real API", () => {
  it.effect.skipIf(!process.env["ANTHROPIC_API_KEY"])(
    "one tiny request streams text and stops",
    () =>
      Effect.gen(function*() {
        const events = yield* Stream.runCollect(
          ask({
            system: undefined,
            messages: [{ role: "user", content: "Say hi in one word." }],
            tools: [],
            maxTokens: 16
          })
        ).pipe(
          Effect.provide(
            AnthropicMessages.layer({ model: process.env["ANTHROPIC_MODEL"] ?? "claude-haiku-4-5" }).pipe(
              Layer.provide(FetchHttpClient.layer)
            )
          )
        )
        const all = Chunk.toReadonlyArray(events)
        expect(all.some((event) => event._tag === "TextDelta")).toBe(true)
        expect(all.at(-1)?._tag).toBe("Stop")
      }),
    30_000
  )
})
