/**
 * MCP tools are deferred: ToolSearch finds them, and a found tool then runs through permissions like any other
 * (server-everything over stdio, the catalogue and the gated registry from the catalog module).
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { DiscoveredTools, ToolCatalog } from "../../src/Catalog/ToolCatalog.js"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { layer as ToolSearchLive, ToolSearch } from "../../src/Tools/ToolSearch.js"
import { config, everythingEntry, resultText, tempDir, use } from "./helpers.js"

const ECHO = "mcp__everything__echo"

/** A session: MCP servers, their tools plus ToolSearch in a gated registry and a catalogue, rules and an approver. */
const session = (
  asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>,
  answer: ApprovalAnswer,
  deny: ReadonlyArray<string> = []
) => {
  const servers = McpServers.layer(config({ everything: everythingEntry() }))
  // The catalogue is built from the tools the servers listed at start-up.
  const catalog = Layer.unwrapEffect(
    Effect.map(McpServers, (mcp) =>
      ToolCatalog.layer([...mcp.tools(), ToolSearch], {
        mode: "on",
        searchToolName: ToolSearch.definition.name,
        denies: RulePolicy.wholeToolDenial({ cliRules: { allow: [], deny, ask: [] } })
      }))
  )
  const registry = McpServers.extendRegistry.pipe(
    Layer.provide(ToolRegistry.layer([ToolSearch])),
    Layer.provide(ToolSearchLive)
  )
  const tools = ToolCatalog.gate.pipe(Layer.provide(registry), Layer.provideMerge(catalog))
  const policy = RulePolicy.layer({ cliRules: { allow: [], deny, ask: [] } }).pipe(
    Layer.provide(Workspace.layer({ cwd: tempDir("mcp-search") })),
    Layer.orDie
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(policy, ToolHooks.none, Approver.scripted(() => Effect.succeed(answer), asked))),
    Layer.provideMerge(tools),
    Layer.provide(Layer.mergeAll(DiscoveredTools.layer(), ResultStore.layerMemory())),
    Layer.provide(servers),
    Layer.provide(NodeContext.layer)
  )
}

describe("ToolSearch and MCP tools", () => {
  it.live("ToolSearch finds an MCP tool and it then runs through permissions", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const run = Effect.gen(function*() {
        const request = yield* ToolCatalog.request("anthropic")
        // Deferred: not sent before it is found, only announced under its server's prefix.
        expect(request.included).not.toContain(ECHO)
        expect(request.announcement).toContain("mcp__everything__")

        const [early] = yield* ToolRuntime.execute([use(ECHO, { message: "too soon" })])
        expect(resultText(early?.result.content)).toContain(`${ECHO} is a deferred tool that has not been loaded`)

        const [search] = yield* ToolRuntime.execute([use("ToolSearch", { query: "echo back the input" })])
        expect(search?.result.content).toEqual(expect.arrayContaining([{ type: "tool_reference", tool_name: ECHO }]))
        expect((yield* ToolCatalog.request("anthropic")).included).toContain(ECHO)

        const [call] = yield* ToolRuntime.execute([use(ECHO, { message: "found" })])
        return call
      })

      // No rule allows it: the person is asked, with the tool's own rule suggested; their "no" is a denial.
      const denied = yield* run.pipe(
        Effect.provide(session(asked, ApprovalAnswer.Deny({ message: "not now", cancelRun: false })))
      )
      expect(denied?.status).toBe("denied")
      const requests = yield* Ref.get(asked)
      expect(requests.map((r) => [r.toolName, r.suggestions])).toEqual([[ECHO, [ECHO]]])

      // Allowed by the person, it runs.
      const allowed = yield* run.pipe(Effect.provide(session(asked, ApprovalAnswer.AllowOnce())))
      expect(allowed?.status).toBe("success")
      expect(resultText(allowed?.result.content)).toBe("Echo: found")

      // A deny rule on the server: the tool is not even found, and a call is denied by the rule.
      const [hidden, call] = yield* Effect.gen(function*() {
        const [search] = yield* ToolRuntime.execute([use("ToolSearch", { query: `select:${ECHO}` })])
        const [call] = yield* ToolRuntime.execute([use(ECHO, { message: "denied" })])
        return [resultText(search?.result.content), call] as const
      }).pipe(Effect.provide(session(asked, ApprovalAnswer.AllowOnce(), ["mcp__everything"])))
      expect(hidden).toContain(`No tools matched "select:${ECHO}"`)
      expect(call?.status).toBe("denied")
      expect(resultText(call?.result.content)).toContain("mcp__everything")
    }), 60_000)
})
