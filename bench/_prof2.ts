import { Effect, Layer, Schema } from "effect"
import { Approver } from "../dist/Runtime/Approver.js"
import { PermissionPolicy } from "../dist/Runtime/PermissionPolicy.js"
import { ResultStore } from "../dist/Runtime/ResultStore.js"
import { ToolHooks } from "../dist/Runtime/ToolHooks.js"
import { ToolRegistry } from "../dist/Runtime/ToolRegistry.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import * as Tool from "../dist/Tool/Tool.js"
const Work = Tool.make("Work", { description: "w", input: Schema.Struct({ file: Schema.String }), output: Schema.String, touchesEnvironment: false })
const WorkLive = Work.implement({ traits: () => ({ readOnly: true, concurrencySafe: true }), claims: ({ file }) => [Tool.Claim.read(`file:/w/${file}`)], call: () => Effect.succeed("ok") })
const layer = ToolRuntime.layer.pipe(Layer.provide(Layer.provide(ToolRegistry.layer([Work]), WorkLive)), Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()]))
const calls = Array.from({ length: 10000 }, (_, i) => ({ type: "tool_use" as const, id: `t${i}`, name: "Work", input: { file: `f${i % 20}` } }))
await Effect.runPromise(Effect.flatMap(ToolRuntime, (rt) => Effect.gen(function*() {
  for (let r = 0; r < 8; r++) { const s = performance.now(); yield* rt.execute(calls); console.log(((performance.now() - s) * 1000 / 10000).toFixed(1), "us") }
})).pipe(Effect.provide(layer)))
