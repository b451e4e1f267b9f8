/**
 * One model request over HTTP against the scripted Messages server on 127.0.0.1 (a reply of text and one tool_use,
 * streamed), side by side in one process: a bare `fetch` reading the body, our `AnthropicMessages` backend turning
 * the stream into ModelEvents, and @effect/ai-anthropic's `streamText` (the peer) over the same server. Then a whole
 * loop turn: the request, the tool call through the governed runtime, the tool_result sent in a second request and
 * the model's answer. Median wall time of interleaved rounds, after warm-up.
 */
import { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import * as AiTool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Redacted, Schema, Stream } from "effect"
import * as AgentLoop from "../dist/Agent/AgentLoop.js"
import * as AnthropicMessages from "../dist/Agent/AnthropicMessages.js"
import { ModelBackend, ModelEvent } from "../dist/Agent/ModelBackend.js"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import { PermissionPolicy } from "../dist/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import * as MessagesServer from "../dist/testing/MessagesServer.js"
import * as Tool from "../dist/Tool/Tool.js"
import { median, report } from "./stats.js"

const ROUNDS = 300
const WARMUP = 50

const Echo = Tool.make("Echo", {
  description: "Echoes its text.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const runtime = ToolRuntime.layer.pipe(
  Layer.provideMerge(
    ToolRegistry.layer([Echo]).pipe(Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) })))
  ),
  Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
)

const reply = MessagesServer.Reply.Message({
  content: [
    MessagesServer.text("Let me echo that for you."),
    MessagesServer.toolUse("toolu_1", "Echo", { text: "hello" })
  ]
})
const answer = MessagesServer.Reply.Message({ content: [MessagesServer.text("It said hello.")] })

const request = {
  system: undefined,
  messages: [{ role: "user" as const, content: "Echo hello." }],
  tools: [{
    name: "Echo",
    description: "Echoes its text.",
    input_schema: { type: "object" as const, properties: { text: { type: "string" } }, required: ["text"] }
  }],
  maxTokens: 1024
}

const AiEcho = AiTool.make("Echo", {
  description: "Echoes its text.",
  parameters: { text: Schema.String },
  success: Schema.String
})
const aiToolkit = Toolkit.make(AiEcho)
const aiHandlers = aiToolkit.toLayer({ Echo: ({ text }) => Effect.succeed(text) })

/** The same two replies as events, with no HTTP: what the loop and the runtime cost on their own. */
const inProcess = ModelBackend.of({
  stream: (request) =>
    Stream.fromIterable(
      request.messages.length === 1
        ? [
          ModelEvent.TextDelta({ text: "Let me echo that for you." }),
          ModelEvent.ToolUseStart({ id: "toolu_1", name: "Echo" }),
          ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "{\"text\": \"hello\"}" }),
          ModelEvent.ToolUseEnd({ id: "toolu_1" }),
          ModelEvent.Stop({ reason: "tool_use", usage: undefined })
        ]
        : [ModelEvent.TextDelta({ text: "It said hello." }), ModelEvent.Stop({ reason: "end_turn", usage: undefined })]
    )
})

const time = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<number, E, R> =>
  Effect.suspend(() => {
    const start = performance.now()
    return Effect.map(effect, () => performance.now() - start)
  })

export const run = (): Promise<void> =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      // Odd requests get the tool_use reply, even ones (the loop's second request) the answer.
      const server = yield* MessagesServer.make((body) => (body.messages.length === 1 ? reply : answer))
      const ours = yield* Effect.provide(
        ModelBackend,
        AnthropicMessages.layer({ model: "bench", baseUrl: server.url, apiKey: Redacted.make("bench") }).pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      )
      const peerLayer = AnthropicLanguageModel.layer({ model: "bench" }).pipe(
        Layer.provide(AnthropicClient.layer({ apiUrl: server.url, apiKey: Redacted.make("bench") })),
        Layer.provide(FetchHttpClient.layer)
      )
      const peer = yield* Layer.build(peerLayer)
      // One runtime for every loop, as a session would hold it.
      const tools = yield* Layer.build(runtime)
      const wire = JSON.stringify({
        model: "bench",
        max_tokens: 1024,
        stream: true,
        messages: request.messages,
        tools: request.tools
      })

      const contenders: ReadonlyArray<readonly [string, Effect.Effect<unknown, unknown>]> = [
        [
          "fetch + read the body",
          Effect.promise(() =>
            fetch(`${server.url}/v1/messages`, {
              method: "POST",
              headers: { "content-type": "application/json", "x-api-key": "bench", "anthropic-version": "2023-06-01" },
              body: wire
            })
              .then((response) => response.text())
          )
        ],
        ["AnthropicMessages.stream", Stream.runDrain(ours.stream(request))],
        [
          "@effect/ai-anthropic streamText",
          LanguageModel.streamText({ prompt: "Echo hello.", toolkit: aiToolkit, disableToolCallResolution: true }).pipe(
            Stream.runDrain,
            Effect.provide(aiHandlers),
            Effect.provide(peer)
          )
        ],
        [
          "AgentLoop turn (2 requests + call)",
          AgentLoop.run({ messages: request.messages }).pipe(
            Effect.provide(tools),
            Effect.provideService(ModelBackend, ours)
          )
        ],
        [
          "AgentLoop turn, model in process",
          AgentLoop.run({ messages: request.messages }).pipe(
            Effect.provide(tools),
            Effect.provideService(ModelBackend, inProcess)
          )
        ]
      ]
      for (const [, effect] of contenders) for (let i = 0; i < WARMUP; i++) yield* effect
      const samples = contenders.map((): Array<number> => [])
      for (let round = 0; round < ROUNDS; round++) {
        for (const [c, [, effect]] of contenders.entries()) samples[c]!.push(yield* time(effect))
      }
      const [raw, backend, peerMs, loop, local] = samples.map(median) as [number, number, number, number, number]
      report(
        `loop: one streamed request to the scripted Messages server on 127.0.0.1 (median of ${ROUNDS} interleaved rounds)`,
        [
          ["fetch + read the body", `${raw.toFixed(2)} ms`, "no parsing"],
          [
            "AnthropicMessages.stream",
            `${backend.toFixed(2)} ms`,
            `SSE -> checked ModelEvents; ${(backend / peerMs).toFixed(2)}x the peer`
          ],
          ["@effect/ai-anthropic streamText", `${peerMs.toFixed(2)} ms`, "the peer, tool calls not resolved"],
          ["AgentLoop turn", `${loop.toFixed(2)} ms`, "two requests, one governed call, the answer"],
          [
            "AgentLoop turn, model in process",
            `${local.toFixed(2)} ms`,
            "the same without HTTP: the loop and the runtime alone"
          ]
        ]
      )
    })).pipe(Effect.orDie)
  )
