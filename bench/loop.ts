/**
 * One model request over HTTP against the scripted Messages server on 127.0.0.1 (a reply of text and one tool_use,
 * streamed; the server runs in a child process, so this process's CPU time is the client's), side by side in one
 * process: a bare `fetch` reading the body, our `AnthropicMessages` backend turning the stream into ModelEvents (over
 * fetch with `layerFetch`, also read as the `ModelBackend.pull` the loop reads, and through @effect/platform's fetch
 * HttpClient with `layer`), and @effect/ai-anthropic's `streamText` (the peer) over the same server. Then a whole loop turn: the request, the tool
 * call through the governed runtime, the tool_result sent in a second request and the model's answer; its peer is
 * the loop a user writes by hand on the official `@anthropic-ai/sdk` (both requests streamed, the tool a plain
 * function). Median wall and CPU time (`process.cpuUsage`) of interleaved rounds, after warm-up: the machine is
 * shared, so read the ratios.
 */
import Anthropic from "@anthropic-ai/sdk"
import { LanguageModel } from "@effect/ai"
import { AnthropicClient, AnthropicLanguageModel } from "@effect/ai-anthropic"
import * as AiTool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Option, Redacted, Schema, Stream } from "effect"
import * as childProcess from "node:child_process"
import * as path from "node:path"
import * as AgentLoop from "../dist/Agent/AgentLoop.js"
import * as AnthropicMessages from "../dist/Agent/AnthropicMessages.js"
import type { ModelError, ReplyPull } from "../dist/Agent/ModelBackend.js"
import { ModelBackend, ModelEvent } from "../dist/Agent/ModelBackend.js"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import { PermissionPolicy } from "../dist/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
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

/** Every chunk of a reply's pull, until it ends. */
const drain = (pull: ReplyPull): Effect.Effect<void, ModelError> =>
  Effect.matchEffect(pull, {
    onFailure: (error) => Option.isNone(error) ? Effect.void : Effect.fail(error.value),
    onSuccess: () => drain(pull)
  })

/** The Echo tool as a hand-written loop runs it: a plain function of the model's input. */
const echo = (input: unknown): string => (input as { readonly text: string }).text

/**
 * The whole turn as a user writes it on the official SDK: stream a request, answer its tool_uses, send the results,
 * until the model answers without a tool call.
 */
const handLoop = async (client: Anthropic): Promise<string> => {
  const messages: Array<Anthropic.MessageParam> = [{ role: "user", content: "Echo hello." }]
  for (;;) {
    const message = await client.messages.stream({
      model: "bench",
      max_tokens: 1024,
      messages,
      tools: request.tools
    }).finalMessage()
    messages.push({ role: "assistant", content: message.content })
    const toolUses = message.content.filter((block) => block.type === "tool_use")
    if (toolUses.length === 0) {
      return message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")
    }
    messages.push({
      role: "user",
      content: toolUses.map((use) => ({ type: "tool_result" as const, tool_use_id: use.id, content: echo(use.input) }))
    })
  }
}

/** The scripted server in a child process (`fixtures/loop-server.ts`), closed with the Scope. */
const serverUrl = Effect.acquireRelease(
  Effect.async<{ readonly url: string; readonly child: childProcess.ChildProcess }>((resume) => {
    const child = childProcess.spawn(process.execPath, [
      "--import",
      "tsx",
      path.join(import.meta.dirname, "fixtures", "loop-server.ts")
    ], { stdio: ["pipe", "pipe", "inherit"] })
    child.on("error", (error) => resume(Effect.die(error)))
    child.stdout.setEncoding("utf8")
    child.stdout.once("data", (line: string) => resume(Effect.succeed({ url: line.trim(), child })))
  }),
  ({ child }) => Effect.sync(() => child.stdin?.end())
).pipe(Effect.map(({ url }) => url))

interface Sample {
  readonly wall: number
  readonly cpu: number
}

/** Wall and CPU milliseconds of one run. */
const time = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Sample, E, R> =>
  Effect.suspend(() => {
    const cpu = process.cpuUsage()
    const start = performance.now()
    return Effect.map(effect, () => {
      const wall = performance.now() - start
      const used = process.cpuUsage(cpu)
      return { wall, cpu: (used.user + used.system) / 1000 }
    })
  })

export const run = (): Promise<void> =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function*() {
      // A first request gets the tool_use reply, the loop's second one the answer.
      const server = { url: yield* serverUrl }
      const sdk = new Anthropic({
        apiKey: "bench",
        baseURL: server.url,
        maxRetries: 0,
        defaultHeaders: { "x-api-key": "bench" }
      })
      const options = { model: "bench", baseUrl: server.url, apiKey: Redacted.make("bench") }
      const overHttpClient = yield* Effect.provide(
        ModelBackend,
        AnthropicMessages.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
      )
      const ours = yield* Effect.provide(ModelBackend, AnthropicMessages.layerFetch(options))
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
        ["AnthropicMessages.stream (layerFetch)", Stream.runDrain(ours.stream(request))],
        ["AnthropicMessages pull (layerFetch)", Effect.scoped(Effect.flatMap(ours.pull!(request), drain))],
        ["AnthropicMessages.stream (layer, FetchHttpClient)", Stream.runDrain(overHttpClient.stream(request))],
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
        ["hand loop on @anthropic-ai/sdk", Effect.promise(() => handLoop(sdk))],
        [
          "AgentLoop turn, layer (FetchHttpClient)",
          AgentLoop.run({ messages: request.messages }).pipe(
            Effect.provide(tools),
            Effect.provideService(ModelBackend, overHttpClient)
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
      const samples = contenders.map((): Array<Sample> => [])
      for (let round = 0; round < ROUNDS; round++) {
        for (const [c, [, effect]] of contenders.entries()) samples[c]!.push(yield* time(effect))
      }
      const [raw, backend, pulled, backendHttp, streamText, loop, hand, loopHttp, local] = samples.map((measured) => ({
        wall: median(measured.map((sample) => sample.wall)),
        cpu: median(measured.map((sample) => sample.cpu))
      })) as [Sample, Sample, Sample, Sample, Sample, Sample, Sample, Sample, Sample]
      const ms = (sample: Sample) => `${sample.wall.toFixed(2)} ms`
      const cpu = (sample: Sample) => `${sample.cpu.toFixed(2)} ms CPU`
      report(
        `loop: streamed requests to the scripted Messages server on 127.0.0.1, in a child process (median wall and CPU of ${ROUNDS} interleaved rounds)`,
        [
          ["fetch + read the body", ms(raw), `${cpu(raw)}; no parsing`],
          [
            "AnthropicMessages.stream",
            ms(backend),
            `${cpu(backend)}; layerFetch: SSE -> checked ModelEvents; ${
              (backend.wall / streamText.wall).toFixed(2)
            }x the peer (CPU ${(backend.cpu / streamText.cpu).toFixed(2)}x)`
          ],
          ["  as a pull", ms(pulled), `${cpu(pulled)}; ModelBackend.pull, what the loop reads`],
          [
            "  over an HttpClient",
            ms(backendHttp),
            `${cpu(backendHttp)}; layer + FetchHttpClient.layer: the same through @effect/platform`
          ],
          ["@effect/ai-anthropic streamText", ms(streamText), `${cpu(streamText)}; the peer, tool calls not resolved`],
          [
            "AgentLoop turn",
            ms(loop),
            `${cpu(loop)}; layerFetch: two requests, one governed call, the answer; ${
              (loop.wall / hand.wall).toFixed(2)
            }x the hand loop (CPU ${(loop.cpu / hand.cpu).toFixed(2)}x; target <= 1.5x)`
          ],
          [
            "hand loop on @anthropic-ai/sdk",
            ms(hand),
            `${cpu(hand)}; the same turn, messages.stream + a plain function`
          ],
          [
            "  over an HttpClient",
            ms(loopHttp),
            `${cpu(loopHttp)}; the same turn with layer + FetchHttpClient.layer`
          ],
          [
            "AgentLoop turn, model in process",
            ms(local),
            `${cpu(local)}; the same without HTTP: the loop and the runtime alone`
          ]
        ]
      )
    })).pipe(Effect.orDie)
  )
