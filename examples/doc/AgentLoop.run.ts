import { Effect, Layer, Schema, Stream } from "effect"
import {
  AgentLoop,
  Approver,
  ModelBackend,
  ModelEvent,
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

// A model that calls Echo once, then answers (`AnthropicMessages.layer` is the real one).
const Model = Layer.succeed(ModelBackend, {
  stream: (request) =>
    request.messages.length === 1
      ? Stream.make(
        ModelEvent.ToolUseStart({ id: "toolu_1", name: "Echo" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: `{"text": "hello"}` }),
        ModelEvent.ToolUseEnd({ id: "toolu_1" }),
        ModelEvent.Stop({ reason: "tool_use", usage: undefined })
      )
      : Stream.make(
        ModelEvent.TextDelta({ text: "Done." }),
        ModelEvent.Stop({ reason: "end_turn", usage: undefined })
      )
})

const Registry = ToolRegistry.layer([Echo]).pipe(
  Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))
)
const Runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.mergeAll(Registry, PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none)),
  Layer.provide(ResultStore.layerMemory())
)

// The conversation runs until the model ends its turn without calling a tool.
export const program = AgentLoop.run({ messages: [{ role: "user", content: "Say hello." }] }).pipe(
  Effect.map((result) => [result.stopReason, result.turns, result.text]), // ["end_turn", 2, "Done."]
  Effect.provide(Layer.mergeAll(Model, Runtime, Registry))
)
