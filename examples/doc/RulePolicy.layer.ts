import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { Approver, ResultStore, RulePolicy, Tool, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"
import { Workspace } from "effect-tool-runtime/tools"

const Echo = Tool.make("Echo", {
  description: "Repeats the text back.",
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})

// Claude Code's rules (these from the command line; `settings` takes loaded settings files) over a workspace.
const Policy = RulePolicy.layer({ cliRules: { deny: ["Echo"] }, mode: "default" }).pipe(
  Layer.provide(Workspace.layer({ cwd: process.cwd() })),
  Layer.provide(NodeContext.layer)
)

export const program = ToolRuntime.execute([
  { type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hello" } }
]).pipe(
  // ["denied"]: the deny rule names Echo
  Effect.map((outcomes) => outcomes.map((outcome) => outcome.status)),
  Effect.provide(ToolRuntime.layer.pipe(Layer.provide(Layer.mergeAll(
    ToolRegistry.layer([Echo]).pipe(Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))),
    Policy,
    Approver.denyAll,
    ToolHooks.none,
    ResultStore.layerMemory()
  ))))
)
