/**
 * The layers behind `exec` and `serve`: the session (kept in `--session DIR`, else a temporary one removed at the
 * end), settings (Claude Code's locations by default), workspace, built-in tools with the session's FileState,
 * permission policy with the session's rules, hooks, approver, result store in the session, and the runtime.
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as os from "node:os"
import * as nodePath from "node:path"
import { DiscoveredTools, ToolCatalog } from "../Catalog/ToolCatalog.js"
import type { SearchMode } from "../Catalog/ToolCatalog.js"
import { makeRegistry, ToolRegistry } from "../Catalog/ToolRegistry.js"
import * as Hooks from "../Hooks/Hooks.js"
import { ToolHooks } from "../Hooks/ToolHooks.js"
import * as LspConfig from "../Lsp/Config.js"
import * as Diagnostics from "../Lsp/Diagnostics.js"
import type { DiagnosticsMode } from "../Lsp/Diagnostics.js"
import { LspClients } from "../Lsp/LspClients.js"
import { McpServers } from "../Mcp/McpServers.js"
import * as ResourceTools from "../Mcp/ResourceTools.js"
import { Approver } from "../Permission/Approver.js"
import { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import { wholeToolDenial } from "../Permission/RulePolicy.js"
import * as SessionPermissions from "../Permission/SessionPermissions.js"
import { AuditLog } from "../Runtime/AuditLog.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { ResultStore } from "../Session/ResultStore.js"
import { Session } from "../Session/Session.js"
import type { SessionError } from "../Session/Session.js"
import { make as makeWorkspace, Workspace } from "../Session/Workspace.js"
import { sandboxConfig } from "../Settings/Sandbox.js"
import { formatSettingsWarning, loadSettings, resolveMode } from "../Settings/Settings.js"
import type { PermissionModeSetting } from "../Settings/Settings.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type { TaskRegistryOptions } from "../Tasks/TaskRegistry.js"
import type { AnyService } from "../Tool/Tool.js"
import { BashTool } from "../Tools/Bash.js"
import { builtinTools, makeBuiltinSession } from "../Tools/index.js"
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

/** The session the options name, for the scope. */
const makeSession = (options: RuntimeOptions) =>
  options.sessionDir === undefined
    ? Session.makeTemp
    : Session.make({
      directory: options.sessionDir,
      ...(options.sessionWaitSeconds === undefined
        ? {}
        : { lockWait: `${options.sessionWaitSeconds} seconds` as const })
    })

/** The session the options name. */
export const sessionLayer = (options: RuntimeOptions): Layer.Layer<Session, SessionError> =>
  Layer.scoped(Session, makeSession(options))

/**
 * `exec`'s whole context in one Layer (see {@link servicesLayer} for why): the session the options name, its
 * background tasks' registry (`tasks`), and the runtime over both.
 */
export const sessionRuntimeLayer = <E, R>(
  options: RuntimeOptions,
  approver: Layer.Layer<Approver, E, R>,
  tasks: Omit<TaskRegistryOptions, "directory">
) =>
  Layer.scopedContext(Effect.gen(function*() {
    const session = yield* makeSession(options)
    const registry = yield* Effect.provideService(TaskRegistry.makeSession(tasks), Session, session)
    const context = Context.make(Session, session).pipe(Context.add(TaskRegistry, registry))
    // The services built here, not as a Layer (see servicesLayer); the runtime over them is the one Layer left.
    const services = Context.merge(context, yield* Effect.provide(makeServices(options, approver), context))
    const runtime = yield* Effect.provide(
      Layer.buildWithMemoMap(ToolRuntime.layer, yield* Layer.CurrentMemoMap, yield* Effect.scope),
      services
    )
    return Context.merge(services, runtime)
  }))

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
) => Layer.scopedContext(makeServices(options, approver, { toolSearch }))

/** What {@link servicesLayer} provides, built in the scope. */
const makeServices = <E, R>(
  options: RuntimeOptions,
  approver: Layer.Layer<Approver, E, R>,
  { toolSearch = true }: { readonly toolSearch?: boolean } = {}
) =>
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
    // The services are built here, one after the other, in this one Layer's scope: a Layer of its own for each
    // (provided to the next) costs a cold start more than building them does. Layers built here share the memo map,
    // so a Layer one of them provides again inside is still built once.
    const memoMap = yield* Layer.CurrentMemoMap
    const scope = yield* Effect.scope
    // What is built so far, over what the Layer is given (typed `unknown`: it grows with every service).
    let context = (yield* Effect.context<
      Session | R | FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor
    >()) as Context.Context<unknown>
    /** Builds `layer` over what is built so far, and adds what it provides. */
    const add = <A, E2, R2>(layer: Layer.Layer<A, E2, R2>) =>
      Effect.map(
        Effect.provide(Layer.buildWithMemoMap(layer, memoMap, scope), context),
        (built) => (context = Context.merge(context, built))
      )
    /** Runs `make` over what is built so far, and adds the services it makes (a constructor costs less than a Layer). */
    const addContext = <A, E2, R2>(make: Effect.Effect<Context.Context<A>, E2, R2>) =>
      Effect.map(
        Effect.provide(make, context),
        (built) => (context = Context.merge(context, built))
      )
    const addService = <I, S>(tag: Context.Tag<I, S>, service: S) => (context = Context.add(context, tag, service))
    const session = Context.unsafeGet(context, Session)
    // The session's directory names it in the audit log (a temporary session's is unique too).
    const audit = options.auditFile === undefined
      ? Context.empty()
      : yield* Layer.buildWithMemoMap(
        AuditLog.layerFile({
          path: nodePath.resolve(cwd, options.auditFile),
          sessionId: nodePath.basename(session.directory)
        }),
        memoMap,
        scope
      )
    context = Context.merge(context, audit)
    addService(
      Workspace,
      yield* Effect.provide(makeWorkspace({ cwd, additionalDirectories, home }), context)
    )
    addService(
      ResultStore,
      yield* Effect.provide(ResultStore.make(session.resultsDirectory, session.resultLimits), context)
    )
    // One set of clients for the LSP tool and the diagnostics after edits.
    yield* add(LspClients.layer(lspConfig))
    // One set of servers for their tools and resources.
    addService(McpServers, yield* McpServers.make(mcp))
    yield* addContext(makeBuiltinSession({ bash: { sandbox: { ...sandbox.config, warn: options.warn } } }))
    yield* addContext(ResourceTools.make)
    const tools = [...builtinTools, ...ResourceTools.tools]
    addService(
      ToolRegistry,
      makeRegistry(tools.map((tool) => ({
        definition: tool.definition,
        service: Context.unsafeGet(context, tool as unknown as Context.Tag<unknown, AnyService>)
      })))
    )
    addService(ToolRegistry, yield* Effect.provide(McpServers.extendedRegistry, context))
    // Deferred tools (MCP tools, by default) wait behind ToolSearch, as with the library; what the model loaded is
    // kept in the session, so a later `exec --session` can call it.
    const denies = withTaskTools(wholeToolDenial({ settings, cliRules: options.rules }), BashTool.definition)
    if (toolSearch) {
      addService(DiscoveredTools, yield* Effect.provide(DiscoveredTools.makeSession, context))
      yield* addContext(ToolSearch.makeCatalogFromRegistry({
        mode: options.toolSearch,
        contextWindow: options.contextWindow,
        denies
      }))
    } else {
      addService(DiscoveredTools, DiscoveredTools.fromRef(yield* Ref.make<ReadonlySet<string>>(new Set())))
      addService(ToolCatalog, yield* Effect.provide(ToolCatalog.makeFromRegistry({ mode: "off", denies }), context))
    }
    const catalogContext = context
    const policy = yield* Effect.provide(
      SessionPermissions.makePolicy({ settings, cliRules: options.rules, mode }),
      context
    )
    // The registry lets hooks' `if` conditions ask the tools how their rules match.
    const settingsHooks = yield* Effect.provide(Hooks.make({ ...hookOptions, cwd, home }), context)
    addService(ToolHooks, settingsHooks)
    // Without language servers there are no diagnostics after edits: no decorator to build.
    if (lspConfig.servers.length > 0) {
      yield* add(Diagnostics.layer({ mode: options.diagnostics ?? "next-turn" }))
    }
    const hooks = Context.unsafeGet(context, ToolHooks)
    const inner = yield* Effect.provide(Layer.buildWithMemoMap(approver, memoMap, scope), context)
    const approvals = yield* Effect.provide(
      SessionPermissions.makeApprovals(Context.unsafeGet(inner, Approver)),
      context
    )
    return Context.make(ToolRegistry, Context.unsafeGet(catalogContext, ToolRegistry)).pipe(
      Context.add(ToolCatalog, Context.unsafeGet(catalogContext, ToolCatalog)),
      Context.add(PermissionPolicy, policy),
      Context.add(ToolHooks, hooks),
      Context.add(Approver, approvals),
      Context.add(ResultStore, Context.unsafeGet(context, ResultStore)),
      Context.merge(audit)
    )
  }) satisfies Effect.Effect<
    Context.Context<ToolRegistry | ToolCatalog | PermissionPolicy | ToolHooks | Approver | ResultStore>,
    unknown,
    Session | R | FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor | Scope.Scope
  >
