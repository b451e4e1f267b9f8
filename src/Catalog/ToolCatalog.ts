/**
 * What the model sees, request by request: the tools with full definitions (`always`, `eager`, and the `deferred`
 * ones a tool search has found), the names of the deferred tools not loaded yet, and the text that announces them.
 *
 * ```ts
 * const request = yield* ToolCatalog.request("anthropic")
 * // request.tools: the `tools` of the next request; request.announcement: a system reminder naming deferred tools
 * ```
 *
 * - **Deferred tools** are not sent until found (`loading: "deferred"` in their definition). The search mode decides
 *   whether deferral happens at all: `"on"` (always), `"off"` (never: every tool is sent), or `{ auto: N }` (only
 *   when the deferred candidates' definitions would take more than N% of the context window, estimated with
 *   `Definitions.estimateTokens`).
 * - **The discovered set** ({@link DiscoveredTools}) belongs to the session: a Ref-backed service the session owns
 *   (and may persist and restore); every ToolSearch result adds to it. The next request's tools are always + eager +
 *   discovered; with Anthropic, discovered tools carry `defer_loading: true` (the API expands them where a
 *   tool_reference names them).
 * - **A call to a deferred tool never loaded** gets a model-readable error telling the model to load it first
 *   (`select:<name>`): {@link ToolCatalog.gate} wraps the registry so that such a call stops before its input is
 *   decoded (the model has not seen the schema) and never runs.
 * - **Deny rules** that remove a whole tool (`Bash`, `mcp__server`) remove it here too: it is neither sent, nor
 *   announced, nor searchable (`RulePolicy.wholeToolDenial`).
 *
 * Deferral is not a permission boundary: a found tool goes through the whole pipeline (decode, validate, hooks,
 * permission rules, the approver) like any other.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Session } from "../Session/Session.js"
import type { SessionError } from "../Session/Session.js"
import { UiBlock } from "../Tool/Presentation.js"
import { filterEnabled, InputRejected, serviceFrom } from "../Tool/Tool.js"
import type { AnyService, Definition } from "../Tool/Tool.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import * as Definitions from "./Definitions.js"
import * as CatalogState from "./internal/catalogState.js"
import { ToolRegistry } from "./ToolRegistry.js"
import type { RegisteredTool } from "./ToolRegistry.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * When deferred tools are held back: always, never, or above N% of the context window.
 *
 * @since 0.2.0
 * @category models
 */
export type SearchMode = "on" | "off" | { readonly auto: number }

/**
 * Parses a search mode as Claude Code's `ENABLE_TOOL_SEARCH` spells it: `on`/`true`/empty = on, `off`/`false` =
 * off, `auto` = auto at 10%, `auto:N` = auto at N%.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseSearchMode = (text: string): Either.Either<SearchMode, string> => {
  const value = text.trim().toLowerCase()
  if (value === "" || value === "on" || value === "true") return Either.right("on")
  if (value === "off" || value === "false") return Either.right("off")
  if (value === "auto") return Either.right({ auto: 10 })
  const match = /^auto:(\d+(?:\.\d+)?)$/.exec(value)
  if (match !== null) {
    const percent = Number(match[1])
    if (percent >= 0 && percent <= 100) return Either.right({ auto: percent })
  }
  return Either.left(`tool search mode must be on, off, auto or auto:N (0-100), got ${JSON.stringify(text)}`)
}

/**
 * Options of the catalogue.
 *
 * @since 0.2.0
 * @category models
 */
export interface CatalogOptions {
  /** Default `"on"`. */
  readonly mode?: SearchMode | undefined
  /** The model's context window in tokens, for `auto`. Default 200,000. */
  readonly contextWindow?: number | undefined
  /** Whether rules remove a whole tool (see `RulePolicy.wholeToolDenial`). Default: none does. */
  readonly denies?: ((definition: Definition.Any) => boolean) | undefined
  /** The name of the search tool, announced to the model and never deferred. Default `"ToolSearch"`. */
  readonly searchToolName?: string | undefined
}

/**
 * What to send with the next request.
 *
 * @since 0.2.0
 * @category models
 */
export interface CatalogRequest {
  /** The `tools` value in the provider's shape. */
  readonly tools: ReadonlyArray<unknown>
  /** Names of the tools in `tools`, in order. */
  readonly included: ReadonlyArray<string>
  /** Deferred tools not loaded yet (announced by name only). */
  readonly deferred: ReadonlyArray<string>
  /** The text announcing the deferred tools (for a system reminder), when there are any. */
  readonly announcement: string | undefined
  /** `Definitions.estimateTokens` of `tools` plus the announcement. */
  readonly estimatedTokens: number
}

// ---------------------------------------------------------------------------------------------------------------
// discovered tools
// ---------------------------------------------------------------------------------------------------------------

/**
 * The deferred tools a session has loaded. Its state is a Ref the session owns: {@link DiscoveredTools.layer} makes
 * a fresh one (or one restored from saved names), {@link DiscoveredTools.fromRef} wraps a Ref the session keeps.
 *
 * @since 0.2.0
 * @category tags
 */
export class DiscoveredTools extends Context.Tag("effect-tool-runtime/DiscoveredTools")<
  DiscoveredTools,
  {
    /** The state itself, for a session to persist. */
    readonly ref: Ref.Ref<ReadonlySet<string>>
    readonly get: Effect.Effect<ReadonlySet<string>>
    readonly add: (names: Iterable<string>) => Effect.Effect<void>
  }
>() {
  /**
   * A service over an existing Ref.
   *
   * @since 0.2.0
   * @category constructors
   */
  static readonly fromRef = (ref: Ref.Ref<ReadonlySet<string>>): DiscoveredTools["Type"] => ({
    ref,
    get: Ref.get(ref),
    add: (names) =>
      Ref.update(ref, (current) => {
        const next = new Set(current)
        for (const name of names) next.add(name)
        return next.size === current.size ? current : next
      })
  })

  /**
   * A fresh discovered set, optionally restored from saved names.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (initial: Iterable<string> = []): Layer.Layer<DiscoveredTools> =>
    Layer.effect(DiscoveredTools, Effect.map(Ref.make<ReadonlySet<string>>(new Set(initial)), DiscoveredTools.fromRef))

  /**
   * The discovered set kept in the {@link Session} in context (as `discoveredTools`): a later run on the same
   * session can call what an earlier one loaded.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerSession: Layer.Layer<DiscoveredTools, SessionError, Session> = Layer.effect(
    DiscoveredTools,
    Effect.suspend(() => DiscoveredTools.makeSession)
  )

  /**
   * The service {@link DiscoveredTools.layerSession} provides, as an Effect: for a program that builds its services
   * in one Layer (each Layer costs a cold start its own construction; see the CLI's `servicesLayer`).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly makeSession: Effect.Effect<DiscoveredTools["Type"], SessionError, Session> = Effect.map(
    Effect.suspend(() => Session.ref("discoveredTools", Schema.ReadonlySet(Schema.String), () => new Set<string>())),
    DiscoveredTools.fromRef
  )
}

// ---------------------------------------------------------------------------------------------------------------
// the catalogue
// ---------------------------------------------------------------------------------------------------------------

/**
 * The ToolCatalog service: which tools the model sees.
 *
 * @since 0.2.0
 * @category tags
 */
export class ToolCatalog extends Context.Tag("effect-tool-runtime/ToolCatalog")<
  ToolCatalog,
  {
    /**
     * Every tool not removed by a deny rule, in registration order; the search tool only while tools are deferred.
     */
    readonly tools: ReadonlyArray<Definition.Any>
    /** The tools a search may find: {@link tools} without the search tool itself. */
    readonly searchable: ReadonlyArray<Definition.Any>
    readonly mode: SearchMode
    /** Whether deferred tools are held back under the mode (for `auto`: whether they exceed the threshold). */
    readonly deferring: boolean
    /** The estimated tokens of the deferred candidates' definitions (what `auto` compares). */
    readonly deferredTokens: number
    /** Whether a tool is held back until discovered (ignoring whether it has been). */
    readonly isDeferred: (name: string) => boolean
    /** Whether the rules remove this tool (by name or alias). */
    readonly isDenied: (name: string) => boolean
    /**
     * The tools, announcement and estimate for the next request. `enabled` leaves out the tools that cannot work now
     * (see {@link requestEnabled}, which asks each tool's `isEnabled`).
     */
    readonly request: (
      provider: Definitions.Provider,
      options?: { readonly strict?: boolean | undefined; readonly enabled?: ((name: string) => boolean) | undefined }
    ) => Effect.Effect<CatalogRequest>
    /** The discovered set. */
    readonly discovered: DiscoveredTools["Type"]
    /**
     * Which tools could work at the last request that said so (`request` with `enabled`): ToolSearch finds only those,
     * so a tool left out of the definitions is not found either. Every tool until then.
     */
    readonly enabledNow: Effect.Effect<(name: string) => boolean>
    /** The name of the search tool. */
    readonly searchTool: string
    /**
     * A tool_use from a model that was sent strict OpenAI definitions, with the `null`s it sent for optional
     * parameters turned back into absent ones (`Definitions.restoreOmitted`); other tool_uses are returned as they are.
     */
    readonly restoreOmitted: (toolUse: ToolUseBlock) => ToolUseBlock
  }
>() {
  /**
   * A catalogue of the given tools (the same ones the registry holds); needs the session's {@link DiscoveredTools}.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (
    tools: ReadonlyArray<{ readonly definition: Definition.Any }>,
    options: CatalogOptions = {}
  ): Layer.Layer<ToolCatalog, never, DiscoveredTools> =>
    Layer.effect(
      ToolCatalog,
      Effect.map(DiscoveredTools, (discovered) => {
        const definitions = tools.map((tool) => tool.definition)
        return makeCatalog(() => definitions, discovered, options)
      })
    )

  /**
   * A catalogue of the registry's tools as they are at each request (an MCP server's tools join it when the server
   * has connected, and change when it says so); needs the plain (ungated) registry and the session's
   * {@link DiscoveredTools}. What is derived from the tools (deferral, the estimate, denied names) is recomputed only
   * when they change.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly makeFromRegistry = (
    options: CatalogOptions & {
      /** Tools that are not in that registry but will be sent (the search tool, whose behaviour needs this catalogue). */
      readonly extra?: ReadonlyArray<{ readonly definition: Definition.Any }> | undefined
    } = {}
  ): Effect.Effect<ToolCatalog["Type"], never, ToolRegistry | DiscoveredTools> =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const discovered = yield* DiscoveredTools
      let last: ReadonlyArray<RegisteredTool> | undefined
      let definitions: ReadonlyArray<Definition.Any> = []
      return makeCatalog(
        () => {
          const tools = registry.tools
          if (tools !== last) {
            last = tools
            definitions = [...tools, ...(options.extra ?? [])].map((tool) => tool.definition)
          }
          return definitions
        },
        discovered,
        options
      )
    })

  /**
   * {@link makeFromRegistry} as a Layer.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerFromRegistry = (
    options: CatalogOptions & {
      /** Tools that are not in that registry but will be sent (the search tool, whose behaviour needs this catalogue). */
      readonly extra?: ReadonlyArray<{ readonly definition: Definition.Any }> | undefined
    } = {}
  ): Layer.Layer<ToolCatalog, never, ToolRegistry | DiscoveredTools> =>
    Layer.effect(ToolCatalog, ToolCatalog.makeFromRegistry(options))

  /**
   * The registry, gated: a call to a deferred tool that was never discovered fails with {@link notLoadedMessage}
   * (before its input is decoded: the model has not seen the schema); a call to a tool the rules remove goes on to
   * the pipeline, whose policy denies it with the rule's reason.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly gateRegistry = (registry: ToolRegistry["Type"], catalog: ToolCatalog["Type"]): ToolRegistry["Type"] =>
    gateRegistry(registry, catalog)

  /**
   * {@link gateRegistry} as a Layer: provide the plain registry to it.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly gate: Layer.Layer<ToolRegistry, never, ToolRegistry | ToolCatalog> = Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const catalog = yield* ToolCatalog
      return gateRegistry(registry, catalog)
    })
  )

  /**
   * The next request's tools, with the catalogue in context.
   *
   * @since 0.2.0
   * @category accessors
   */
  static readonly request = (
    provider: Definitions.Provider,
    options?: { readonly strict?: boolean | undefined }
  ): Effect.Effect<CatalogRequest, never, ToolCatalog> =>
    Effect.flatMap(ToolCatalog, (catalog) => catalog.request(provider, options))
}

/**
 * The model-facing text for a call to a deferred tool that was never loaded.
 *
 * @since 0.2.0
 * @category messages
 */
export const notLoadedMessage = (name: string, searchTool = "ToolSearch"): string =>
  `${name} is a deferred tool that has not been loaded: its definition is not in your tool list yet. ` +
  `Load it first by calling ${searchTool} with query "select:${name}", then call ${name} again.`

/**
 * The text announcing deferred tools by name, for a system reminder. An MCP server's tools are listed once under
 * the server's prefix (`mcp__github__: create_issue, list_repositories`), which keeps a catalogue of thousands of
 * names compact; other names are listed in full.
 *
 * @since 0.2.0
 * @category messages
 */
export const announcement = (names: ReadonlyArray<string>, searchTool = "ToolSearch"): string => {
  const announcer = CatalogState.makeAnnouncer()
  return CatalogState.announce(announcer, names.map((name) => CatalogState.announced(announcer, name)), searchTool)
}

/**
 * The next request's tools without those that cannot work now: every registered tool's `isEnabled` is asked (once
 * per request; tools that never say otherwise cost nothing), and a disabled tool is neither sent nor announced.
 *
 * @since 0.2.0
 * @category accessors
 */
export const requestEnabled = (
  provider: Definitions.Provider,
  options: { readonly strict?: boolean | undefined } = {}
): Effect.Effect<CatalogRequest, never, ToolCatalog | ToolRegistry> =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const catalog = yield* ToolCatalog
    const enabled = namesOf(yield* filterEnabled(registry.tools))
    return yield* catalog.request(provider, { ...options, enabled: (name) => enabled.has(name) })
  })

/** The names and aliases of a list of tools, made once per list (the registry's, while nothing is disabled). */
const namesOf = (tools: ReadonlyArray<RegisteredTool>): ReadonlySet<string> => {
  let names = namesCache.get(tools)
  if (names === undefined) {
    names = new Set(tools.flatMap((tool) => [tool.definition.name, ...tool.definition.aliases]))
    namesCache.set(tools, names)
  }
  return names
}
const namesCache = new WeakMap<ReadonlyArray<RegisteredTool>, ReadonlySet<string>>()

/** The last request's inputs and answer: a request whose inputs are all unchanged is answered from here. */
interface CachedRequest {
  readonly state: CatalogState.State
  readonly found: ReadonlySet<string>
  readonly provider: Definitions.Provider
  readonly strict: boolean | undefined
  readonly available: ReadonlyArray<CatalogState.Entry>
  readonly answer: CatalogRequest
}

/**
 * The catalogue over a source of tools that may change (an MCP server's tools arrive or change). What it knows of the
 * tools is kept between requests and updated when the source returns a different array, for the tools that arrived
 * and left (`internal/catalogState.ts`); a request whose inputs (the tools, the discovered set, what is enabled, the
 * provider) are unchanged is answered from the last one.
 */
const makeCatalog = (
  source: () => ReadonlyArray<Definition.Any>,
  discovered: DiscoveredTools["Type"],
  options: CatalogOptions
): ToolCatalog["Type"] => {
  const mode = options.mode ?? "on"
  const searchTool = options.searchToolName ?? "ToolSearch"
  const entries = CatalogState.makeEntries(options)
  let state: CatalogState.State | undefined
  const current = (): CatalogState.State => {
    const all = source()
    if (state === undefined) state = CatalogState.derive(entries, all)
    else if (state.all !== all) state = CatalogState.update(entries, state, all)
    return state
  }

  let lastEnabled: (name: string) => boolean = () => true
  let cached: CachedRequest | undefined
  const request = (
    provider: Definitions.Provider,
    requestOptions: {
      readonly strict?: boolean | undefined
      readonly enabled?: ((name: string) => boolean) | undefined
    } = {}
  ) =>
    Effect.map(discovered.get, (found): CatalogRequest => {
      if (requestOptions.enabled !== undefined) lastEnabled = requestOptions.enabled
      const enabled = requestOptions.enabled ?? lastEnabled
      const now = current()
      const available = now.sendable.filter((entry) => enabled(entry.name))
      const strict = requestOptions.strict
      if (
        cached !== undefined && cached.state === now && cached.found === found && cached.provider === provider &&
        cached.strict === strict && CatalogState.sameItems(cached.available, available)
      ) return cached.answer
      const answer = CatalogState.assemble(entries, now, found, available, provider, strict)
      cached = { state: now, found, provider, strict, available, answer }
      return answer
    }).pipe(Effect.withSpan("ToolCatalog.request", { attributes: { provider } }))

  const restoreOmitted = (toolUse: ToolUseBlock): ToolUseBlock => {
    const definition = current().lookup(toolUse.name)?.definition
    if (definition === undefined) return toolUse
    const input = Definitions.restoreOmitted(definition, toolUse.input)
    return input === toolUse.input ? toolUse : { ...toolUse, input }
  }

  return {
    restoreOmitted,
    get tools() {
      return current().tools
    },
    get searchable() {
      return current().searchable
    },
    mode,
    get deferring() {
      return current().deferring
    },
    get deferredTokens() {
      return current().deferredTokens()
    },
    isDeferred: (name) => current().isDeferred(name),
    isDenied: (name) => current().isDenied(name),
    request,
    discovered,
    enabledNow: Effect.sync(() => lastEnabled),
    searchTool
  }
}

/** A stand-in for a deferred tool that was never loaded: takes any input, claims nothing, never runs. */
const notLoaded = (tool: RegisteredTool, searchTool: string): RegisteredTool => {
  const message = notLoadedMessage(tool.definition.name, searchTool)
  const service: AnyService = serviceFrom(tool.definition.name, {
    validate: () => Effect.fail(new InputRejected({ message })),
    checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
    traits: () => ({ readOnly: true, concurrencySafe: true }),
    claims: () => [],
    call: () => Effect.dieMessage(`${tool.definition.name} ran without being loaded`),
    // Not the tool's own renderer: the input was never decoded.
    renderUse: () => [UiBlock.Title({ text: tool.definition.name })],
    renderResult: () => [],
    toModel: () => "",
    renderFailure: () => message
  })
  return { definition: { ...tool.definition, input: Schema.Unknown }, service }
}

const gateRegistry = (registry: ToolRegistry["Type"], catalog: ToolCatalog["Type"]): ToolRegistry["Type"] => {
  const searchTool = catalog.searchTool
  const standIns = new Map<string, RegisteredTool>()
  const gated: ToolRegistry["Type"] = {
    ...registry,
    // A run works on a snapshot: the snapshot is gated too (a dynamic registry's snapshot is a new registry).
    snapshot: () => {
      const inner = registry.snapshot()
      return inner === registry ? gated : gateRegistry(inner, catalog)
    },
    lookup: (name) => {
      const found = registry.lookup(name)
      if (Option.isNone(found) || !catalog.isDeferred(found.value.definition.name)) return found
      // Reading a Ref is synchronous; only deferred tools pay for it.
      const loaded = Effect.runSync(catalog.discovered.get).has(found.value.definition.name)
      if (loaded) return found
      let standIn = standIns.get(found.value.definition.name)
      if (standIn === undefined) {
        standIn = notLoaded(found.value, searchTool)
        standIns.set(found.value.definition.name, standIn)
      }
      return Option.some(standIn)
    }
  }
  return gated
}
