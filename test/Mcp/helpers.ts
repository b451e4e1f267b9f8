/**
 * Shared fixtures of the MCP tests: configurations of the real reference servers (installed from npm), a runtime
 * over them, and process checks.
 */
import type { CommandExecutor } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Option, Stream } from "effect"
import { createRequire } from "node:module"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import * as McpConfig from "../../src/Mcp/Config.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import type { McpServersOptions, ServerStatus } from "../../src/Mcp/McpServers.js"
import { Approver } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { tempDir } from "../support/index.js"

const require = createRequire(import.meta.url)
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`))

/** Entry points of the reference servers. */
export const EVERYTHING = path.join(packageDir("@modelcontextprotocol/server-everything"), "dist/index.js")
export const FILESYSTEM = path.join(packageDir("@modelcontextprotocol/server-filesystem"), "dist/index.js")
export const MEMORY = path.join(packageDir("@modelcontextprotocol/server-memory"), "dist/index.js")
/** A small server of our own for what the reference servers cannot show (tools appearing, huge messages). */
export const FIXTURE = path.join(import.meta.dirname, "fixtures/server.mjs")

/** A fresh empty directory under the system's temporary directory. */
export { tempDir }

/** server-everything over stdio, as a `.mcp.json` entry. */
export const everythingEntry = (env: Record<string, string> = {}) => ({
  command: process.execPath,
  args: [EVERYTHING, "stdio"],
  env
})

/** The fixture server, as a `.mcp.json` entry. */
export const fixtureEntry = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [FIXTURE], env })

/** A configuration from `.mcp.json`-shaped JSON, trusted. */
export const config = (
  mcpServers: Record<string, unknown>,
  options: Partial<McpConfig.LoadOptions> = {}
): McpConfig.LoadedConfig => McpConfig.fromJson("test/.mcp.json", { mcpServers }, { trusted: true, ...options })

/** The runtime over the servers of `loaded`, with rules from the command line and a scripted approver. */
export const runtimeLayer = (
  loaded: McpConfig.LoadedConfig,
  options: {
    readonly allow?: ReadonlyArray<string>
    readonly deny?: ReadonlyArray<string>
    readonly approver?: Layer.Layer<Approver>
    readonly hooks?: Layer.Layer<ToolHooks, unknown, CommandExecutor.CommandExecutor>
    readonly store?: string
    readonly servers?: McpServersOptions
  } = {}
) => {
  const cwd = tempDir("mcp-cwd")
  const servers = McpServers.layer(loaded, { connectTimeout: "20 seconds", ...options.servers })
  const registry = McpServers.extendRegistry.pipe(Layer.provide(ToolRegistry.layer([])))
  const policy = RulePolicy.layer({ cliRules: { allow: options.allow ?? [], deny: options.deny ?? [], ask: [] } }).pipe(
    Layer.provide(Workspace.layer({ cwd })),
    Layer.orDie
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(
      Layer.mergeAll(policy, Layer.orDie(options.hooks ?? ToolHooks.none), options.approver ?? Approver.denyAll)
    ),
    Layer.provideMerge(registry),
    Layer.provide(ResultStore.layer(options.store ?? tempDir("mcp-store"))),
    Layer.provideMerge(servers),
    Layer.provide(NodeContext.layer)
  )
}

let next = 0
/** A tool_use block. */
export const use = (name: string, input: unknown): ToolUseBlock => ({
  type: "tool_use",
  id: `toolu_mcp_${++next}`,
  name,
  input
})

/** The text of a tool_result. */
export const resultText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
    ? content.map((b: { type: string; text?: string }) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n")
    : String(content)

/** Whether a process runs (zombies count as dead): the Bash tests' own check. */
export { isAlive } from "../Tools/Bash/helpers.js"

/** The pid of a connected server. */
export const pidOf = (name: string) =>
  Effect.flatMap(McpServers, (servers) =>
    Effect.map(servers.status, (all) => {
      const state = all.find((s) => s.name === name)?.state
      return state?._tag === "Connected" ? state.pid : undefined
    }))

/** The first value of the servers' status that satisfies `predicate` (bounded: the test fails after `ms`). */
export const awaitStatus = <A>(select: (status: ReadonlyArray<ServerStatus>) => A | undefined, ms = 20_000) =>
  Effect.flatMap(McpServers, (servers) =>
    servers.changes.pipe(
      Stream.map(select),
      Stream.filter((a): a is A => a !== undefined),
      Stream.runHead,
      Effect.flatMap(Option.match({ onNone: () => Effect.die("the status stream ended"), onSome: Effect.succeed })),
      Effect.timeoutFail({ duration: ms, onTimeout: () => new Error(`no such status within ${ms} ms`) }),
      Effect.orDie
    ))

/** Polls `read` until it returns a value (for files another process writes). */
export { pollFor } from "../Tools/Bash/helpers.js"
