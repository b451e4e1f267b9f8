import { Effect, Layer, Schema } from "effect"
import {
  Approver,
  PermissionPolicy,
  ResultStore,
  Tool,
  ToolHooks,
  ToolRegistry,
  ToolRuntime
} from "effect-tool-runtime"

const Echo = Tool.make("Echo", {
  description: "Repeats the text back.",
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})
const EchoLive = Echo.implement({
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  call: ({ text }) => Effect.succeed(text)
})

// The runtime over a registry, a policy, an approver for what the policy asks about, hooks and a result store.
const Runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.mergeAll(
    ToolRegistry.layer([Echo]).pipe(Layer.provide(EchoLive)),
    PermissionPolicy.toolOnly,
    Approver.denyAll,
    ToolHooks.none,
    ResultStore.layerMemory()
  ))
)

// One model turn's tool_use blocks in, one Outcome per tool_use out, in model order.
export const program = ToolRuntime.execute([
  { type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hello" } },
  { type: "tool_use", id: "toolu_2", name: "Ecko", input: { text: "hello" } }
]).pipe(
  // ["success", "error"]: no tool is named Ecko
  Effect.map((outcomes) => outcomes.map((outcome) => outcome.status)),
  Effect.provide(Runtime)
)
