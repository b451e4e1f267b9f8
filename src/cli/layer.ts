/**
 * The layers behind `exec` and `serve`: the session (kept in `--session DIR`, else a temporary one removed at the
 * end), settings (Claude Code's locations by default), workspace, built-in tools with the session's FileState,
 * permission policy with the session's rules, hooks, approver, result store in the session, and the runtime.
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as os from "node:os"
import * as nodePath from "node:path"
import { DiscoveredTools, ToolCatalog } from "../Catalog/ToolCatalog.js"
import type { SearchMode } from "../Catalog/ToolCatalog.js"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import * as Hooks from "../Hooks/Hooks.js"
import type { ToolHooks } from "../Hooks/ToolHooks.js"
import * as LspConfig from "../Lsp/Config.js"
import * as Diagnostics from "../Lsp/Diagnostics.js"
import type { DiagnosticsMode } from "../Lsp/Diagnostics.js"
import { LspClients } from "../Lsp/LspClients.js"
import { McpServers } from "../Mcp/McpServers.js"
import * as ResourceTools from "../Mcp/ResourceTools.js"
import { Approver } from "../Permission/Approver.js"
import type { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import { wholeToolDenial } from "../Permission/RulePolicy.js"
import * as SessionPermissions from "../Permission/SessionPermissions.js"
import { AuditLog } from "../Runtime/AuditLog.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import type { ResultStore } from "../Session/ResultStore.js"
import { Session } from "../Session/Session.js"
import { Workspace } from "../Session/Workspace.js"
import { sandboxConfig } from "../Settings/Sandbox.js"
import { formatSettingsWarning, loadSettings, resolveMode } from "../Settings/Settings.js"
import type { PermissionModeSetting } from "../Settings/Settings.js"
import { BashTool } from "../Tools/Bash.js"
import { builtinSessionLayer, builtinTools } from "../Tools/index.js"
import { withTaskTools } from "../Tools/Tasks.js"
import * as ToolSearch from "../Tools/ToolSearch.js"
import { loadMcpConfig } from "./mcp.js"

/** Everything `exec` and `serve` were told on the command line. */
export interface RuntimeOptions {
  readonly cwd: string
  readonly additionalDirectories: ReadonlyArray<string>
  readonly settingsFiles: ReadonlyArray<string>
  /** Load `~/.claude/settings.json`, `.claude/settings.json`, `.claude/settings.local.json` (default on). */
  readonly claudeSettings: boolean
  readonly mode: PermissionModeSetting | undefined
  /** The person trusts the project's own settings files (`--trust-project`). */
  readonly trustProject: boolean
  /** Where configuration warnings go (one line each). */
  readonly warn: (line: string) => void
  readonly rules: {
    readonly allow: ReadonlyArray<string>
    readonly deny: ReadonlyArray<string>
    readonly ask: ReadonlyArray<string>
  }
  readonly approve: "allow" | "deny" | undefined
  readonly scheduling: "conflict-aware" | "batched"
  /** `--session DIR`: keep the session there; otherwise a temporary session, removed at the end. */
  readonly sessionDir: string | undefined
  /** `--session-wait SECS`: how long to wait for a session another process holds (default 10). */
  readonly sessionWaitSeconds?: number | undefined
  /** `serve --max-line-bytes N`: the longest request line read (default 16 MiB); a longer one is one error line. */
  readonly maxLineBytes?: number
  readonly verbose: boolean
  /** MCP configuration files the person named (trusted). */
  readonly mcpConfigFiles: ReadonlyArray<string>
  /** MCP servers whose annotations inform traits. */
  readonly mcpTrust: ReadonlyArray<string>
  /** `--audit FILE`: every event and outcome as JSON lines (see `AuditLog`). */
  readonly auditFile: string | undefined
  /** Language-server configuration files the person named (trusted); the project's `.lsp.json` needs trust. */
  readonly lspConfigFiles?: ReadonlyArray<string> | undefined
  /** `--diagnostics`: when diagnostics after edits are delivered (default next-turn). */
  readonly diagnostics?: DiagnosticsMode | undefined
  /** `exec --end-session`: after the turn, stop the session's background tasks still running and report them. */
  readonly endSession?: boolean | undefined
  /** `--tool-search MODE` (else `ENABLE_TOOL_SEARCH`, else on): whether deferred tools wait behind ToolSearch. */
  readonly toolSearch: SearchMode
  /** `--context-window N` tokens, for `auto` (default 200,000). */
  readonly contextWindow: number
  /**
   * `--durable [sqlite | postgres://...]`: turns survive the process (needs `--session`), kept in the session
   * directory or, on Postgres, in a database shared by runners.
   */
  readonly durable?: DurableStore | undefined
}

/** The Approver the flags ask for, else `fallback` (the terminal for `exec`, the channel for `serve`). */
export const approverFor = <E, R>(
  options: RuntimeOptions,
  fallback: Layer.Layer<Approver, E, R>
): Layer.Layer<Approver, E, R> =>
  options.approve === "allow" ? Approver.allowAll : options.approve === "deny" ? Approver.denyAll : fallback

/** The session the options name. */
export const sessionLayer = (options: RuntimeOptions) =>
  options.sessionDir === undefined
    ? Session.layerTemp
    : Session.layer({
      directory: options.sessionDir,
      ...(options.sessionWaitSeconds === undefined
        ? {}
        : { lockWait: `${options.sessionWaitSeconds} seconds` as const })
    })

/**
 * The runtime as the CLI configures it, over a Session in context. Fails (before anything runs) on a bad settings
 * file, rule, hook matcher or session state.
 */
export const runtimeLayer = <E, R>(options: RuntimeOptions, approver: Layer.Layer<Approver, E, R>) =>
  ToolRuntime.layer.pipe(Layer.provideMerge(servicesLayer(options, approver))) satisfies Layer.Layer<
    ToolRuntime | ResultStore,
    unknown,
    Session | R | FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
  >

/**
 * Where durable turns are kept: one runner on SQLite in the session directory, or this process as one runner of a
 * cluster on Postgres, reached by the others at `host:port` (no port: one the system picks).
 */
export type DurableStore = "sqlite" | {
  readonly url: string
  readonly host: string
  readonly port: number | undefined
}

/**
 * What the runtime is built from, as the CLI configures it (`serve --mcp` builds a runtime of its own per
 * connection from these).
 */
export const servicesLayer = <E, R>(
  options: RuntimeOptions,
  approver: Layer.Layer<Approver, E, R>,
  /**
   * Deferral behind ToolSearch (default on). `serve --mcp` turns it off: an MCP client gets every tool and searches
   * with its own means.
   */
  { toolSearch = true }: { readonly toolSearch?: boolean } = {}
) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const cwd = nodePath.resolve(options.cwd)
      const home = os.homedir()
      const knownTools = [...builtinTools, ...ResourceTools.tools].map((tool) => tool.definition.name)
      const settings = yield* loadSettings({
        claudeSettings: options.claudeSettings,
        files: options.settingsFiles,
        cwd,
        home,
        trustProject: options.trustProject,
        knownTools
      })
      const hookOptions = Hooks.optionsFromSettings(settings)
      const sandbox = sandboxConfig(settings, { cwd, home, extraRules: options.rules })
      const { mode, warnings: modeWarnings } = resolveMode(
        settings,
        options.mode === undefined ? {} : { requested: options.mode }
      )
      for (
        const line of [
          ...settings.flatMap((loaded) => loaded.warnings.map(formatSettingsWarning)),
          ...modeWarnings,
          ...Hooks.hookWarnings(hookOptions),
          ...sandbox.warnings.map(formatSettingsWarning)
        ]
      ) {
        options.warn(line)
      }
      const additionalDirectories = [
        ...settings.flatMap((loaded) => loaded.settings.permissions?.additionalDirectories ?? []),
        ...options.additionalDirectories
      ]
      const workspace = Workspace.layer({ cwd, additionalDirectories, home })
      const policy = SessionPermissions.policy({ settings, cliRules: options.rules, mode })
      // MCP servers' tools join the built-ins; a bad server entry is reported and the others still start.
      const mcp = yield* loadMcpConfig({ ...options, cwd })
      for (const error of mcp.errors) options.warn(`MCP configuration: ${error.message}`)
      // Language servers: the project's .lsp.json once trusted, then the files named (they win on a shared name).
      const lspConfig = LspConfig.merge(
        yield* Effect.all([
          LspConfig.loadFile(nodePath.join(cwd, ".lsp.json"), { trusted: options.trustProject }),
          ...(options.lspConfigFiles ?? []).map((file) => LspConfig.loadNamedFile(nodePath.resolve(cwd, file)))
        ])
      )
      for (const error of lspConfig.errors) options.warn(`LSP configuration: ${error.message}`)
      // One set of clients for the LSP tool and the diagnostics after edits.
      const lsp = LspClients.layer(lspConfig).pipe(Layer.provide(workspace))
      // One set of servers (a layer is built once however often it is provided) for their tools and resources.
      const servers = McpServers.layer(mcp)
      const plainRegistry = McpServers.extendRegistry.pipe(
        Layer.provide(
          ToolRegistry.layer([...builtinTools, ...ResourceTools.tools]).pipe(
            Layer.provide(builtinSessionLayer({ bash: { sandbox: { ...sandbox.config, warn: options.warn } } })),
            Layer.provide(ResourceTools.layer.pipe(Layer.provide(servers))),
            Layer.provide(lsp)
          )
        ),
        Layer.provide(servers)
      )
      // Deferred tools (MCP tools, by default) wait behind ToolSearch, as with the library; what the model loaded is
      // kept in the session, so a later `exec --session` can call it.
      const denies = withTaskTools(wholeToolDenial({ settings, cliRules: options.rules }), BashTool.definition)
      const catalog = toolSearch
        ? ToolSearch.catalogLayerFromRegistry({
          mode: options.toolSearch,
          contextWindow: options.contextWindow,
          denies
        })
          .pipe(Layer.provide(plainRegistry), Layer.provide(DiscoveredTools.layerSession))
        : ToolCatalog.layerFromRegistry({ mode: "off", denies }).pipe(
          Layer.provideMerge(plainRegistry),
          Layer.provide(DiscoveredTools.layer())
        )
      // The registry lets hooks' `if` conditions ask the tools how their rules match.
      const settingsHooks = Hooks.layer({ ...hookOptions, cwd, home }).pipe(Layer.provide(catalog))
      // Without language servers there are no diagnostics after edits: no decorator to build (a Layer costs a cold
      // start; see `Tools/internal/service.ts`).
      const hooks = lspConfig.servers.length === 0 ? settingsHooks : Diagnostics.layer({
        mode: options.diagnostics ?? "next-turn"
      }).pipe(Layer.provide(Layer.mergeAll(settingsHooks, lsp, workspace)))
      // The session's directory names it in the audit log (a temporary session's is unique too).
      const session = yield* Session
      const audit = options.auditFile === undefined
        ? Layer.empty
        : AuditLog.layerFile({
          path: nodePath.resolve(cwd, options.auditFile),
          sessionId: nodePath.basename(session.directory)
        })
      return Layer.mergeAll(catalog, policy, hooks, SessionPermissions.approvals(approver)).pipe(
        Layer.provideMerge(Session.resultStore),
        Layer.provide(workspace),
        Layer.provideMerge(audit)
      )
    })
  ) satisfies Layer.Layer<
    ToolRegistry | ToolCatalog | PermissionPolicy | ToolHooks | Approver | ResultStore,
    unknown,
    Session | R | FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
  >
