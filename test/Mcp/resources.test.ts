/**
 * ListMcpResourcesTool and ReadMcpResourceTool over the real reference servers (server-everything and server-memory
 * offer resources; our fixture server none): listing across servers and for one, reading text, refusals named for the model, the
 * server's rules governing its resources, and a server the person has not enabled showing nothing.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import type { McpConfig } from "../../src/index.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import * as ResourceTools from "../../src/Mcp/ResourceTools.js"
import { Approver } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { config, everythingEntry, fixtureEntry, MEMORY, resultText, tempDir, use } from "./helpers.js"

const layerOf = (
  loaded: McpConfig.LoadedConfig,
  rules: { readonly deny?: ReadonlyArray<string>; readonly ask?: ReadonlyArray<string> } = {},
  mode: "default" | "plan" = "default"
) => {
  const servers = McpServers.layer(loaded, { connectTimeout: "20 seconds" })
  const registry = McpServers.extendRegistry.pipe(
    Layer.provide(ToolRegistry.layer(ResourceTools.tools)),
    Layer.provide(ResourceTools.layer)
  )
  const policy = RulePolicy.layer({
    cliRules: { allow: [], deny: rules.deny ?? [], ask: rules.ask ?? [] },
    mode
  }).pipe(Layer.provide(Workspace.layer({ cwd: tempDir("mcp-resources") })), Layer.orDie)
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(policy, ToolHooks.none, Approver.denyAll)),
    Layer.provideMerge(registry),
    Layer.provide(ResultStore.layer(tempDir("mcp-resources-store"))),
    Layer.provideMerge(servers),
    Layer.provide(NodeContext.layer)
  )
}

const memoryEntry = () => ({
  command: process.execPath,
  args: [MEMORY],
  env: { MEMORY_FILE_PATH: `${tempDir("mcp-memory")}/memory.json` }
})
const servers = () => config({ everything: everythingEntry(), memory: memoryEntry(), fixture: fixtureEntry() })
const DOC = "demo://resource/static/document/architecture.md"

describe("MCP resources", () => {
  it.live(
    "lists every server's resources (each naming its server), one server's, and reads one as text",
    () =>
      Effect.gen(function*() {
        const [all, one, read] = yield* ToolRuntime.execute([
          use("ListMcpResourcesTool", {}),
          use("ListMcpResourcesTool", { server: "everything" }),
          use("ReadMcpResourceTool", { server: "everything", uri: DOC })
        ])
        expect(all?.status).toBe("success")
        const listed = JSON.parse(resultText(all?.result.content)) as ReadonlyArray<Record<string, unknown>>
        expect(listed.length).toBeGreaterThan(0)
        // The fixture server offers none.
        expect(new Set(listed.map((r) => r.server))).toEqual(new Set(["everything", "memory"]))
        expect(listed).toContainEqual(
          expect.objectContaining({ server: "everything", uri: DOC, name: "architecture.md" })
        )
        expect(listed).toContainEqual(expect.objectContaining({ server: "memory", uri: "memory://knowledge-graph" }))
        expect(JSON.parse(resultText(one?.result.content))).toEqual(listed.filter((r) => r.server === "everything"))
        expect(read?.status).toBe("success")
        expect(resultText(read?.result.content)).toMatch(
          /^\[resource demo:\/\/resource\/static\/document\/architecture\.md \(text\/markdown\)\]\n# Everything Server/
        )
        // Read-only: allowed by the tools' own view, no person asked (the approver here denies everything).
        expect(read?.decision?._tag).toBe("Allow")
      }).pipe(Effect.provide(layerOf(servers()))),
    60_000
  )

  it.live(
    "a server that offers none, one not configured, an unknown uri: a failure naming what is wrong",
    () =>
      Effect.gen(function*() {
        const [none, unknown, badUri] = yield* ToolRuntime.execute([
          use("ListMcpResourcesTool", { server: "fixture" }),
          use("ReadMcpResourceTool", { server: "elsewhere", uri: DOC }),
          use("ReadMcpResourceTool", { server: "everything", uri: "demo://resource/no/such/thing" })
        ])
        expect(none?.status).toBe("error")
        expect(resultText(none?.result.content)).toContain("MCP server \"fixture\" offers no resources.")
        expect(resultText(unknown?.result.content)).toContain(
          "No MCP server named \"elsewhere\" is configured (the servers: everything, memory, fixture)."
        )
        expect(badUri?.status).toBe("error")
        expect(resultText(badUri?.result.content)).toMatch(
          /MCP server "everything" rejected the call to resources\/read/
        )
      }).pipe(Effect.provide(layerOf(servers()))),
    60_000
  )

  it.live(
    "the server's rules govern its resources: mcp__everything denies reading and listing it",
    () =>
      Effect.gen(function*() {
        const [read, listAll, listMemory] = yield* ToolRuntime.execute([
          use("ReadMcpResourceTool", { server: "everything", uri: DOC }),
          use("ListMcpResourcesTool", {}),
          use("ListMcpResourcesTool", { server: "memory" })
        ])
        expect(read?.decision?._tag).toBe("Deny")
        expect(resultText(read?.result.content)).toContain("mcp__everything")
        // A listing of every server includes the denied one: denied too.
        expect(listAll?.decision?._tag).toBe("Deny")
        // Another server's listing is not touched by the rule.
        expect(listMemory?.decision?._tag).toBe("Allow")
        expect(resultText(listMemory?.result.content)).toContain("memory://knowledge-graph")
      }).pipe(Effect.provide(layerOf(servers(), { deny: ["mcp__everything"] }))),
    60_000
  )

  it.live(
    "an ask rule for the server's tools (mcp__everything__*) asks; a content rule names one server",
    () =>
      Effect.gen(function*() {
        const [asked, byContent] = yield* ToolRuntime.execute([
          use("ListMcpResourcesTool", { server: "everything" }),
          use("ReadMcpResourceTool", { server: "memory", uri: "x://y" })
        ])
        // Asked, and the approver (deny-all) refused.
        expect(asked?.decision?._tag).toBe("Deny")
        expect(asked?.decision?.reason._tag).toBe("User")
        expect(byContent?.decision?._tag).toBe("Deny")
        expect(resultText(byContent?.result.content)).toContain("ReadMcpResourceTool(memory)")
      }).pipe(
        Effect.provide(layerOf(servers(), { ask: ["mcp__everything__*"], deny: ["ReadMcpResourceTool(memory)"] }))
      ),
    60_000
  )

  it.live("read-only: plan mode reads resources", () =>
    Effect.gen(function*() {
      const [read] = yield* ToolRuntime.execute([use("ReadMcpResourceTool", { server: "everything", uri: DOC })])
      expect(read?.status).toBe("success")
    }).pipe(Effect.provide(layerOf(config({ everything: everythingEntry() }), {}, "plan"))), 60_000)

  it.live(
    "a server the person has not enabled: the tools are disabled, nothing is listed or read",
    () =>
      Effect.gen(function*() {
        const [list, read] = yield* ToolRuntime.execute([
          use("ListMcpResourcesTool", {}),
          use("ReadMcpResourceTool", { server: "everything", uri: DOC })
        ])
        for (const outcome of [list, read]) {
          expect(outcome?.status).toBe("error")
          expect(resultText(outcome?.result.content)).toContain("no connected MCP server offers resources")
        }
      }).pipe(Effect.provide(layerOf(config({ everything: everythingEntry() }, { trusted: false })))),
    60_000
  )
})
