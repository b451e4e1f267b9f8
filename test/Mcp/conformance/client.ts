/**
 * The MCP conformance suite's client under test: this library's MCP client, driven through the runtime. The suite
 * appends the scenario server's URL and names the scenario in MCP_CONFORMANCE_SCENARIO.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import * as McpConfig from "../../../src/Mcp/Config.js"
import { McpServers } from "../../../src/Mcp/McpServers.js"
import { Approver } from "../../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"

const url = process.argv[process.argv.length - 1]!
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "initialize"
const config = McpConfig.fromJson("conformance", { mcpServers: { conformance: { type: "http", url } } }, {
  trusted: true
})

const layer = ToolRuntime.layer.pipe(
  Layer.provide(
    Layer.mergeAll(PermissionPolicy.toolOnly, ToolHooks.none, Approver.allowAll, ResultStore.layerMemory())
  ),
  Layer.provideMerge(McpServers.extendRegistry.pipe(Layer.provide(ToolRegistry.layer([])))),
  Layer.provideMerge(McpServers.layer(config, { maxRestarts: 0 })),
  Layer.provide(NodeContext.layer)
)

const program = Effect.gen(function*() {
  const status = yield* (yield* McpServers).status
  const state = status[0]?.state
  if (state?._tag !== "Connected") return yield* Effect.fail(new Error(`not connected: ${JSON.stringify(state)}`))
  if (scenario === "tools_call") {
    const [outcome] = yield* ToolRuntime.execute([{
      type: "tool_use",
      id: "toolu_conformance",
      name: "mcp__conformance__add_numbers",
      input: { a: 2, b: 3 }
    }])
    if (outcome?.status !== "success") {
      return yield* Effect.fail(new Error(`add_numbers: ${JSON.stringify(outcome?.result)}`))
    }
    process.stdout.write(`${JSON.stringify(outcome.result.content)}\n`)
  }
})

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(layer))).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`)
    process.exit(1)
  }
)
