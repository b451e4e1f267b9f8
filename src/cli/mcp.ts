/**
 * MCP on the command line: the configuration `exec` and `mcp list` read (the project's `.mcp.json` once the folder
 * is trusted, then every `--mcp-config FILE`), and `effect-tool-runtime mcp list`, which starts the servers and shows
 * each one's state and tools.
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import * as McpConfig from "../Mcp/Config.js"
import { McpServers } from "../Mcp/McpServers.js"
import type { ServerStatus } from "../Mcp/McpServers.js"

/** What the command line says about MCP. */
export interface McpCliOptions {
  readonly cwd: string
  /** Files the person named: trusted. */
  readonly mcpConfigFiles: ReadonlyArray<string>
  /** Whether the person trusts the folder, so its `.mcp.json` servers may start. */
  readonly trustProject: boolean
  /** Servers whose annotations the person trusts. */
  readonly mcpTrust: ReadonlyArray<string>
}

/** The merged configuration: the project's `.mcp.json` first, the named files after (they win on a shared name). */
export const loadMcpConfig = (
  options: McpCliOptions
): Effect.Effect<McpConfig.LoadedConfig, never, FileSystem.FileSystem> =>
  Effect.map(
    Effect.all([
      McpConfig.loadFile(nodePath.join(options.cwd, ".mcp.json"), {
        trusted: options.trustProject,
        trustAnnotations: options.mcpTrust
      }),
      ...options.mcpConfigFiles.map((file) =>
        McpConfig.loadFile(nodePath.resolve(options.cwd, file), { trusted: true, trustAnnotations: options.mcpTrust })
      )
    ]),
    McpConfig.merge
  )

const stateText = (status: ServerStatus): string => {
  const state = status.state
  switch (state._tag) {
    case "Connected":
      return state.pid === undefined ? "connected" : `connected (pid ${state.pid})`
    case "Connecting":
      return `restarting (attempt ${state.attempt})${state.lastError === undefined ? "" : `: ${state.lastError}`}`
    case "Down":
      return `down: ${state.reason}`
    case "Disabled":
      return `not started: ${state.reason}`
  }
}

/** The text `mcp list` prints. */
export const renderList = (
  statuses: ReadonlyArray<ServerStatus>,
  errors: ReadonlyArray<McpConfig.McpConfigError>
): string => {
  const lines: Array<string> = []
  if (statuses.length === 0 && errors.length === 0) {
    lines.push("No MCP servers configured (.mcp.json in the working directory, or --mcp-config FILE).")
  }
  for (const status of statuses) {
    lines.push(`${status.name}  ${status.transport}  ${stateText(status)}  (${status.source})`)
    for (const tool of status.tools) lines.push(`  ${tool}`)
    for (const renamed of status.renamed) {
      lines.push(`  note: ${renamed.tool} is named ${renamed.name} (${renamed.reason})`)
    }
  }
  for (const error of errors) lines.push(`error: ${error.message}`)
  return lines.join("\n")
}

/** `mcp list`: starts the servers, waits for their first connection, prints them, stops them. */
export const list = (options: McpCliOptions): Effect.Effect<string, never, FileSystem.FileSystem> =>
  Effect.flatMap(loadMcpConfig(options), (config) =>
    Effect.scoped(
      Effect.flatMap(McpServers, (servers) =>
        Effect.map(servers.status, (statuses) => renderList(statuses, servers.configErrors))).pipe(
          Effect.provide(McpServers.layer(config))
        )
    ))
