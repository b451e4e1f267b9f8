/**
 * Per-call cost of the whole one-call pipeline for a trivial tool, side by side in one process with @effect/ai's
 * Toolkit `handle` and a bare decode + handler loop; and a one-call turn through `execute` (what a turn costs on top
 * of its call: the scheduler, the run's scope, its span). Median per call over batches, after warm-up.
 */
import * as AiTool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { Effect, Layer, ParseResult, Schema } from "effect"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import { PermissionPolicy } from "../dist/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import * as Tool from "../dist/Tool/Tool.js"
import { median, report } from "./stats.js"

const CALLS = 120_000
const BATCH = 1_000
const WARMUP = 20_000

const input = Schema.Struct({ text: Schema.String })
const Echo = Tool.make("Echo", { description: "Echo", input, output: Schema.String, touchesEnvironment: false })
const EchoLive = Echo.implement({ call: ({ text }) => Effect.succeed(text) })

const AiEcho = AiTool.make("Echo", { parameters: { text: Schema.String }, success: Schema.String })
const AiToolkit = Toolkit.make(AiEcho)
const AiToolkitLayer = AiToolkit.toLayer({ Echo: ({ text }) => Effect.succeed(text) })

/**
 * Median microseconds of CPU time per call, for each contender, measured over batches. CPU time (user + system of
 * this process) rather than wall time, and batches of the contenders interleaved, so that other load on the
 * machine skews them alike.
 */
const measureAll = (contenders: ReadonlyArray<Effect.Effect<unknown>>): Effect.Effect<ReadonlyArray<number>> =>
  Effect.gen(function*() {
    for (const call of contenders) for (let i = 0; i < WARMUP; i++) yield* call
    const samples = contenders.map((): Array<number> => [])
    for (let b = 0; b < CALLS / BATCH; b++) {
      for (const [c, call] of contenders.entries()) {
        const start = process.cpuUsage()
        for (let i = 0; i < BATCH; i++) yield* call
        const used = process.cpuUsage(start)
        samples[c]!.push((used.user + used.system) / BATCH)
      }
    }
    return samples.map(median)
  })

export const run = async (): Promise<void> => {
  const runtimeLayer = ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Echo]), EchoLive)),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )
  const decode = ParseResult.decodeUnknownEither(input)
  const handler = ({ text }: { readonly text: string }) => Effect.succeed(text)
  const raw: unknown = { text: "hi" }
  const bare = Effect.suspend(() => {
    const decoded = decode(raw)
    return decoded._tag === "Right" ? handler(decoded.right) : Effect.fail(decoded.left)
  })
  const [ours, turn, ai, bareCost] = await Effect.runPromise(
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const toolkit = yield* AiToolkit
      return yield* measureAll([
        rt.executeOne({ type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hi" } }),
        rt.execute([{ type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hi" } }]),
        Effect.orDie(toolkit.handle("Echo", { text: "hi" })),
        Effect.orDie(bare)
      ])
    }).pipe(Effect.provide(Layer.merge(runtimeLayer, AiToolkitLayer)))
  ) as [number, number, number, number]
  report(
    "pipeline: per-call CPU time, trivial tool (median of interleaved batches of 1,000; 120k calls each after 20k warm-up)",
    [
      ["effect-tool-runtime executeOne", `${ours.toFixed(2)} us`, "target <= 10 us"],
      [
        "effect-tool-runtime execute, one-call turn",
        `${turn.toFixed(2)} us`,
        `${(turn / ai).toFixed(2)}x Toolkit.handle (target <= 2x)`
      ],
      ["@effect/ai Toolkit.handle", `${ai.toFixed(2)} us`, `ours is ${(ai / ours).toFixed(1)}x faster (target >= 5x)`],
      ["bare decode + handler", `${bareCost.toFixed(2)} us`, ""]
    ]
  )
}
