import { Effect, Layer, Schema } from "effect"
import {
  Approver,
  DiscoveredTools,
  PermissionPolicy,
  ResultStore,
  Tool,
  ToolCatalog,
  ToolHooks,
  ToolRuntime
} from "effect-tool-runtime"
import { Search } from "effect-tool-runtime/tools"

// A deferred tool: the model sees only its name until ToolSearch loads it.
const Forecast = Tool.make("mcp__weather__get_forecast", {
  description: "Weather forecast for a city, for the next days.",
  input: Schema.Struct({ city: Schema.String }),
  output: Schema.String,
  loading: "deferred",
  touchesEnvironment: false
})
const ForecastLive = Forecast.implement({ call: ({ city }) => Effect.succeed(`${city}: sunny`) })

// The session: registry (with ToolSearch, gated), catalogue, and the discovered set the session owns.
const SessionLive = ToolRuntime.layer.pipe(
  Layer.provideMerge(Search.catalogLayer([Forecast]).pipe(Layer.provide([ForecastLive, DiscoveredTools.layer()]))),
  Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
)

export const program = Effect.gen(function*() {
  // 1. The first request: `tools` for the Messages API, and a reminder naming the deferred tools.
  const first = yield* ToolCatalog.request("anthropic") // or "openai-chat", "openai-responses", "gemini"
  // POST /v1/messages { tools: first.tools, system: first.announcement, messages }

  // 2. The model answers with a ToolSearch call; its result is tool_reference blocks.
  const [search] = yield* ToolRuntime.execute([
    { type: "tool_use", id: "toolu_1", name: "ToolSearch", input: { query: "weather forecast" } }
  ])

  // 3. The next request carries the found tool (Anthropic: defer_loading, expanded by the reference)...
  const next = yield* ToolCatalog.request("anthropic")
  // ...and the model can call it.
  const [forecast] = yield* ToolRuntime.execute([
    { type: "tool_use", id: "toolu_2", name: "mcp__weather__get_forecast", input: { city: "Oslo" } }
  ])
  return {
    first: first.included,
    announced: first.deferred,
    search: search!.result,
    next: next.included,
    forecast: forecast!.result
  }
}).pipe(Effect.provide(SessionLive))
