import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import {
  Approver,
  McpConfig,
  McpServers,
  ResultStore,
  RulePolicy,
  ToolHooks,
  ToolRegistry,
  ToolRuntime
} from "effect-tool-runtime"
import { Workspace } from "effect-tool-runtime/tools"

// A .mcp.json, as Claude Code reads it (`${VAR:-default}` is expanded). Usually: `McpConfig.loadFile(".mcp.json",
// { trusted })`, where `trusted` is whether the person trusts the folder the file came from.
const config = McpConfig.fromJson(".mcp.json", {
  mcpServers: {
    everything: {
      command: "node",
      args: ["node_modules/@modelcontextprotocol/server-everything/dist/index.js", "${TRANSPORT:-stdio}"]
    }
  }
}, { trusted: true })

// The servers' tools join the registry as mcp__everything__echo, ...; rules govern them like any tool.
const RuntimeLive = ToolRuntime.layer.pipe(
  Layer.provide(McpServers.extendRegistry.pipe(Layer.provide(ToolRegistry.layer([])))),
  Layer.provide(RulePolicy.layer({ cliRules: { allow: ["mcp__everything__echo"], deny: [], ask: [] } })),
  Layer.provide([ToolHooks.none, Approver.denyAll, ResultStore.layerMemory()]),
  Layer.provideMerge(McpServers.layer(config)),
  Layer.provide(Workspace.layer({ cwd: process.cwd() })),
  Layer.provide(NodeContext.layer)
)

export const program = Effect.gen(function*() {
  const [echo, sum] = yield* ToolRuntime.execute([
    { type: "tool_use", id: "toolu_1", name: "mcp__everything__echo", input: { message: "hi" } },
    { type: "tool_use", id: "toolu_2", name: "mcp__everything__get-sum", input: { a: 1 } }
  ])
  const servers = yield* McpServers.pipe(Effect.flatMap((mcp) => mcp.status))
  return { echo: echo!.result, sum: sum!.result, state: servers[0]!.state._tag }
}).pipe(Effect.scoped, Effect.provide(RuntimeLive))
