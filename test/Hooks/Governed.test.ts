/**
 * Hooks' `if` conditions and `Invocation.governedAs`: a condition covers exactly the calls the same rule, as a deny
 * rule, would govern in the permission policy, the subjects a call is governed as included (the MCP resource tools
 * are governed by their server's rules). Pinned against the real policy through the runtime, with real command hooks.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../src/Hooks/Hooks.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import * as ResourceTools from "../../src/Mcp/ResourceTools.js"
import { Approver } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "etr-hooks-governed-"))
const blocker = path.join(root, "block.sh")
fs.writeFileSync(blocker, "#!/bin/sh\ncat > /dev/null; echo 'guarded' >&2; exit 2\n", { mode: 0o755 })

// The real servers service with no server configured, claiming that fs and git offer resources so the tools are
// enabled: the calls are planned, hooked and decided as for connected servers; an allowed one then fails to reach
// its server, after its decision.
const servers = Layer.effect(
  McpServers,
  Effect.map(McpServers, (real) => ({ ...real, resourceServers: () => ["fs", "git"] }))
).pipe(Layer.provide(McpServers.layer({ servers: [], errors: [] })))
const registry = ToolRegistry.layer(ResourceTools.tools).pipe(
  Layer.provide(ResourceTools.layer),
  Layer.provide(servers)
)

const runtimeWith = (options: { readonly deny?: string; readonly hookIf?: string }) => {
  const hooks = options.hookIf === undefined
    ? ToolHooks.none
    : Hooks.layer({
      cwd: root,
      settingsFiles: [{
        path: "/proj/.claude/settings.json",
        hooks: { PreToolUse: [{ hooks: [{ type: "command", if: options.hookIf, command: blocker }] }] }
      }]
    }).pipe(Layer.provide(registry))
  const policy = RulePolicy.layer({
    cliRules: { allow: [], deny: options.deny === undefined ? [] : [options.deny], ask: [] }
  }).pipe(Layer.provide(Workspace.layer({ cwd: root })))
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(policy, hooks, Approver.allowAll, ResultStore.layerMemory())),
    Layer.provide(registry),
    Layer.provide(NodeContext.layer),
    Layer.orDie
  )
}

let next = 0
const decision = (options: Parameters<typeof runtimeWith>[0], name: string, input: unknown) =>
  Effect.gen(function*() {
    const [outcome] = yield* ToolRuntime.execute([{ type: "tool_use", id: `toolu_g${++next}`, name, input }])
    return outcome?.decision
  }).pipe(Effect.provide(runtimeWith(options)))

const readFs = { server: "fs", uri: "file:///a.txt" }
const readGit = { server: "git", uri: "git://HEAD" }

describe("if conditions and the subjects a call is governed as", () => {
  it.live("a hook with `if: mcp__fs` runs for a resource read from fs, not for one from another server", () =>
    Effect.gen(function*() {
      const fromFs = yield* decision({ hookIf: "mcp__fs" }, "ReadMcpResourceTool", readFs)
      expect(fromFs?._tag).toBe("Deny")
      expect(fromFs?.reason).toMatchObject({ _tag: "Hook" })
      expect(fromFs?._tag === "Deny" ? fromFs.message : "").toContain("guarded")
      const fromGit = yield* decision({ hookIf: "mcp__fs" }, "ReadMcpResourceTool", readGit)
      expect(fromGit?._tag).toBe("Allow")
      // Listing one server's resources is governed as that server too.
      expect((yield* decision({ hookIf: "mcp__fs" }, "ListMcpResourcesTool", { server: "fs" }))?._tag).toBe("Deny")
      expect((yield* decision({ hookIf: "mcp__fs" }, "ListMcpResourcesTool", { server: "git" }))?._tag).toBe("Allow")
    }))

  const conditions = [
    "mcp__fs",
    "mcp__fs__*",
    "mcp__fs__resources",
    "mcp__fs__read_file",
    "mcp__git",
    "ReadMcpResourceTool",
    "ReadMcpResourceTool(fs)",
    "ListMcpResourcesTool",
    "Bash"
  ]
  const calls: ReadonlyArray<readonly [string, unknown]> = [
    ["ReadMcpResourceTool", readFs],
    ["ReadMcpResourceTool", readGit],
    ["ListMcpResourcesTool", { server: "fs" }]
  ]

  it.live(
    "a condition holds for exactly the calls the same rule, as a deny rule, denies",
    () =>
      Effect.gen(function*() {
        const disagreements: Array<string> = []
        let governed = 0
        for (const rule of conditions) {
          for (const [name, input] of calls) {
            const denied = (yield* decision({ deny: rule }, name, input))?._tag === "Deny"
            const hooked = (yield* decision({ hookIf: rule }, name, input))?._tag === "Deny"
            if (denied) governed++
            if (denied !== hooked) {
              disagreements.push(`${rule} on ${name} ${JSON.stringify(input)}: rule ${denied}, hook ${hooked}`)
            }
          }
        }
        expect(disagreements).toEqual([])
        // The table reaches both answers: some rules govern some calls, others none.
        expect(governed).toBeGreaterThan(3)
        expect(governed).toBeLessThan(conditions.length * calls.length)
      }),
    30_000
  )
})
