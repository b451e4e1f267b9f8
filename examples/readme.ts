import { Effect, Layer, Schema } from "effect"
import { Approver, PermissionPolicy, ResultStore, Tool, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"

// 1. Define a tool: the model's contract (name, description, input schema)...
const Weather = Tool.make("Weather", {
  description: "Current temperature in a city, in °C.",
  input: Schema.Struct({ city: Schema.String }),
  output: Schema.Number,
  touchesEnvironment: false // a pure tool; one that touches the environment must define checkPermissions
})

// ...and its behaviour, as a Layer (swap it for a test double with Layer.succeed(Weather, Weather.service(...))).
const WeatherLive = Weather.implement({
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  call: ({ city }) => Effect.succeed(city === "Oslo" ? -3 : 21)
})

// 2. Compose the runtime: registry, policy, approver, hooks, result store.
const RuntimeLive = ToolRuntime.layer.pipe(
  Layer.provide(ToolRegistry.layer([Weather]).pipe(Layer.provide(WeatherLive))),
  Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
)

// 3. Run the tool_use blocks of one model turn: one Outcome per tool_use, in model order.
export const program = Effect.gen(function*() {
  const outcomes = yield* ToolRuntime.execute([
    { type: "tool_use", id: "toolu_1", name: "Weather", input: { city: "Oslo" } },
    { type: "tool_use", id: "toolu_2", name: "Weather", input: { town: "Rome" } }
  ])
  return outcomes.map((outcome) => outcome.result) // tool_result blocks for the next user message
}).pipe(Effect.provide(RuntimeLive))
