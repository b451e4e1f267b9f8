import { Effect, Layer, Option, Schema } from "effect"
import { Tool, ToolRegistry } from "effect-tool-runtime"

const Echo = Tool.make("Echo", {
  aliases: ["Say"],
  description: "Repeats the text back.",
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})

// The tools a session offers, each provided by its implementation's Layer.
const Registry = ToolRegistry.layer([Echo]).pipe(
  Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))
)

export const program = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const found = registry.lookup("Say") // by name or alias
  return Option.map(found, (tool) => tool.definition.name) // Option.some("Echo")
}).pipe(Effect.provide(Registry))
