/**
 * The layers behind `exec`: settings, workspace, built-in tools, permission policy, hooks, approver, result store
 * and the runtime, from the command line's options.
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as os from "node:os"
import * as nodePath from "node:path"
import { Approver } from "../Runtime/Approver.js"
import * as Hooks from "../Runtime/Hooks.js"
import * as Permissions from "../Runtime/Permissions.js"
import type { PermissionMode } from "../Runtime/Permission/Settings.js"
import { ResultStore } from "../Runtime/ResultStore.js"
import * as TerminalApprover from "../Runtime/TerminalApprover.js"
import { ToolRegistry } from "../Runtime/ToolRegistry.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { builtinLayer, builtinTools } from "../Tools/index.js"
import { Workspace } from "../Tools/Workspace.js"
import { McpServers } from "../Mcp/McpServers.js"
import { loadMcpConfig } from "./mcp.js"

/** Everything `exec` was told on its command line. */
export interface ExecOptions {
  readonly cwd: string
  readonly additionalDirectories: ReadonlyArray<string>
  readonly settingsFiles: ReadonlyArray<string>
  readonly claudeSettings: boolean
  readonly mode: PermissionMode | undefined
  readonly rules: { readonly allow: ReadonlyArray<string>; readonly deny: ReadonlyArray<string>; readonly ask: ReadonlyArray<string> }
  readonly approve: "allow" | "deny" | undefined
  readonly scheduling: "conflict-aware" | "batched"
  readonly sessionDir: string | undefined
  readonly verbose: boolean
  /** MCP configuration files the person named (trusted). */
  readonly mcpConfigFiles: ReadonlyArray<string>
  /** Whether the working directory is trusted: its `.mcp.json` servers start. */
  readonly trustProject: boolean
  /** MCP servers whose annotations inform traits. */
  readonly mcpTrust: ReadonlyArray<string>
}

/** The runtime as `exec` configures it. Fails (before anything runs) on a bad settings file, rule or hook matcher. */
export const execLayer = (options: ExecOptions) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const cwd = nodePath.resolve(options.cwd)
      const home = os.homedir()
      const settings = yield* Permissions.loadSettings({ claudeSettings: options.claudeSettings, files: options.settingsFiles, cwd, home })
      const additionalDirectories = [
        ...settings.flatMap((loaded) => loaded.settings.permissions?.additionalDirectories ?? []),
        ...options.additionalDirectories
      ]
      const workspace = Workspace.layer({ cwd, additionalDirectories, home })
      const store = options.sessionDir === undefined ? ResultStore.layerTemp : ResultStore.layer(options.sessionDir)
      const approver = options.approve === "allow" ? Approver.allowAll : options.approve === "deny" ? Approver.denyAll : TerminalApprover.layerAuto()
      const policy = Permissions.layer({ settings, cliRules: options.rules, ...(options.mode === undefined ? {} : { mode: options.mode }) })
      const hooks = Hooks.layer({ settingsHooks: settings.map((loaded) => loaded.settings.hooks), cwd })
      // MCP servers' tools join the built-ins; a bad server entry is reported and the others still start.
      const mcp = yield* loadMcpConfig({ ...options, cwd })
      for (const error of mcp.errors) yield* Effect.logWarning(`MCP configuration: ${error.message}`)
      const registry = McpServers.extendRegistry.pipe(
        Layer.provide(ToolRegistry.layer(builtinTools).pipe(Layer.provide(builtinLayer()))),
        Layer.provide(McpServers.layer(mcp))
      )
      return ToolRuntime.layer.pipe(
        Layer.provide(Layer.mergeAll(registry, policy, hooks, approver)),
        Layer.provideMerge(store),
        Layer.provide(workspace)
      )
    })
  ) satisfies Layer.Layer<ToolRuntime, unknown, FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor>
