/**
 * The @effect/ai model backend over the real @effect/ai-anthropic provider, against a scripted Messages API server
 * on 127.0.0.1: what goes over the wire for a conversation (tool results JSON-stringified, tool_references as text,
 * no defer_loading, max_tokens from the request) and the events a streamed reply becomes.
 */
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Redacted, Stream } from "effect"
import type { Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import type { Message, ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend, ModelEvent } from "../../src/Agent/ModelBackend.js"
import type * as Definitions from "../../src/Catalog/Definitions.js"
import * as EffectAiModel from "../../src/Integrations/EffectAiModel.js"

/** A server speaking the Messages API's streaming format: each request gets the next scripted event list. */
const messagesServer = (
  replies: ReadonlyArray<ReadonlyArray<object>>
): Effect.Effect<{ readonly url: string; readonly bodies: Array<unknown> }, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.async<{ server: http.Server; url: string; bodies: Array<unknown> }>((resume) => {
      const bodies: Array<unknown> = []
      const server = http.createServer((request, response) => {
        let text = ""
        request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
        request.on("end", () => {
          const reply = replies[bodies.length]
          bodies.push(JSON.parse(text))
          if (request.url !== "/v1/messages" || reply === undefined) {
            response.writeHead(404, { "content-type": "application/json" })
            response.end(
              JSON.stringify({ type: "error", error: { type: "not_found_error", message: "no such reply" } })
            )
            return
          }
          response.writeHead(200, { "content-type": "text/event-stream" })
          for (const event of reply) {
            response.write(`event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`)
          }
          response.end()
        })
      })
      server.listen(
        0,
        "127.0.0.1",
        () =>
          resume(Effect.succeed({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodies }))
      )
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  )

const usage = { input_tokens: 20, output_tokens: 1, cache_creation_input_tokens: null, cache_read_input_tokens: null }
const messageStart = {
  type: "message_start",
  message: {
    id: "msg_1",
    type: "message",
    role: "assistant",
    model: "claude-test",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage
  }
}
const stop = (reason: string, outputTokens: number) => [
  {
    type: "message_delta",
    delta: { stop_reason: reason, stop_sequence: null },
    usage: { output_tokens: outputTokens }
  },
  { type: "message_stop" }
]

const toolUseReply = [
  messageStart,
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Reading " } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "it." } },
  { type: "content_block_stop", index: 0 },
  {
    type: "content_block_start",
    index: 1,
    content_block: { type: "tool_use", id: "toolu_1", name: "ReadFile", input: {} }
  },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"path\":" } },
  { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: " \"/a\"}" } },
  { type: "content_block_stop", index: 1 },
  ...stop("tool_use", 9)
]
const textReply = [
  messageStart,
  { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Done." } },
  { type: "content_block_stop", index: 0 },
  ...stop("end_turn", 2)
]

const schema = (field: string) =>
  ({
    type: "object",
    properties: { [field]: { type: "string" } },
    required: [field],
    additionalProperties: false
  }) as unknown as Definitions.JsonSchema
const tools: ReadonlyArray<Definitions.AnthropicTool> = [
  { name: "ReadFile", description: "Reads a file.", input_schema: schema("path") },
  { name: "ToolSearch", description: "Finds tools.", input_schema: schema("query") },
  { name: "DbQuery", description: "Runs a query.", input_schema: schema("sql"), defer_loading: true }
]

const backend = (url: string) =>
  EffectAiModel.layerWith({
    configure: (request) => Stream.provideService(AnthropicLanguageModel.Config, { max_tokens: request.maxTokens })
  }).pipe(
    Layer.provide(AnthropicLanguageModel.layer({ model: "claude-test" })),
    Layer.provide(AnthropicClient.layer({ apiUrl: url, apiKey: Redacted.make("test-key") })),
    Layer.provide(FetchHttpClient.layer)
  )

const collect = (request: ModelRequest) =>
  Effect.flatMap(ModelBackend, (b) => Stream.runCollect(b.stream(request))).pipe(Effect.map(Chunk.toReadonlyArray))

describe("EffectAiModel over @effect/ai-anthropic", () => {
  it.scoped("a streamed tool_use reply becomes events; the next request carries the results as the Messages API wants them", () =>
    Effect.gen(function*() {
      const server = yield* messagesServer([toolUseReply, textReply])
      const first: ModelRequest = {
        system: "Be terse.",
        messages: [{ role: "user", content: "Read /a." }],
        tools,
        maxTokens: 777
      }
      const { reply, followUp } = yield* Effect.gen(function*() {
        const reply = yield* collect(first)
        const messages: ReadonlyArray<Message> = [
          ...first.messages,
          {
            role: "assistant",
            content: [
              { type: "text", text: "Reading it." },
              { type: "tool_use", id: "toolu_1", name: "ReadFile", input: { path: "/a" } },
              { type: "tool_use", id: "toolu_2", name: "ToolSearch", input: { query: "db" } }
            ]
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_1",
                content: "<tool_use_error>File does not exist.</tool_use_error>",
                is_error: true
              },
              {
                type: "tool_result",
                tool_use_id: "toolu_2",
                content: [{ type: "tool_reference", tool_name: "DbQuery" }]
              }
            ]
          }
        ]
        const followUp = yield* collect({ ...first, messages })
        return { reply, followUp }
      }).pipe(Effect.provide(backend(server.url)))

      expect(reply).toEqual([
        ModelEvent.TextDelta({ text: "Reading " }),
        ModelEvent.TextDelta({ text: "it." }),
        ModelEvent.ToolUseStart({ id: "toolu_1", name: "ReadFile" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "{\"path\":" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: " \"/a\"}" }),
        ModelEvent.ToolUseEnd({ id: "toolu_1" }),
        ModelEvent.Stop({ reason: "tool_use", usage: { inputTokens: 20, outputTokens: 9 } })
      ])
      expect(followUp).toEqual([
        ModelEvent.TextDelta({ text: "Done." }),
        ModelEvent.Stop({ reason: "end_turn", usage: { inputTokens: 20, outputTokens: 2 } })
      ])

      const wire = server.bodies[1] as Record<string, unknown>
      const { messages: _messages, tools: _tools, ...rest } = wire
      expect(rest).toEqual({
        model: "claude-test",
        max_tokens: 777,
        system: [{ type: "text", text: "Be terse." }],
        tool_choice: { type: "auto" },
        stream: true
      })
      // Every tool in full: @effect/ai sends no defer_loading.
      expect(wire["tools"]).toEqual(
        tools.map(({ name, description, input_schema }) => ({ name, description, input_schema }))
      )
      expect(wire["messages"]).toEqual([
        { role: "user", content: [{ type: "text", text: "Read /a." }] },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Reading it." },
            { type: "tool_use", id: "toolu_1", name: "ReadFile", input: { path: "/a" } },
            { type: "tool_use", id: "toolu_2", name: "ToolSearch", input: { query: "db" } }
          ]
        },
        {
          role: "user",
          content: [
            // @effect/ai-anthropic JSON-stringifies each result.
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: "\"<tool_use_error>File does not exist.</tool_use_error>\"",
              is_error: true
            },
            { type: "tool_result", tool_use_id: "toolu_2", content: "\"Loaded tools: DbQuery\"", is_error: false }
          ]
        }
      ])
    }))

  it.scoped("an error status from the API is a Status ModelError with the status", () =>
    Effect.gen(function*() {
      // A server with no scripted reply answers 404.
      const server = yield* messagesServer([])
      const error = yield* collect({
        system: undefined,
        messages: [{ role: "user", content: "hi" }],
        tools,
        maxTokens: 10
      }).pipe(
        Effect.provide(backend(server.url)),
        Effect.flip
      )
      expect([error.reason, error.status]).toEqual(["Status", 404])
    }))
})
