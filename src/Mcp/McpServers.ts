/**
 * The MCP servers of a session, as one scoped service: one supervised connection per configured server, whose tools
 * enter the registry as ordinary tools named `mcp__<server>__<tool>`.
 *
 * ```ts
 * const config = yield* McpConfig.loadFile(".mcp.json", { trusted: true })
 * const registry = McpServers.extendRegistry.pipe(
 *   Layer.provide(ToolRegistry.layer(builtinTools)),
 *   Layer.provideMerge(McpServers.layer(config))
 * )
 * ```
 *
 * - The servers connect in parallel; building the layer waits for them at most `startupTimeout` (default 5 s), so a
 *   server that never answers `initialize` does not delay the built-in tools: it goes on connecting in the background.
 * - Each server connects with a timeout (default 30 s) and lists its tools (paginated); `tools/list_changed`
 *   refreshes them. A run of the runtime works on one snapshot of the registry.
 * - Supervised: a server that dies fails its pending calls at once with an error that says so, is restarted with
 *   backoff (bounded: then it is reported as down), and the next call waits for the new connection.
 * - Closing the scope stops every server.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import { makeDynamicRegistry, ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { RegisteredTool, Registry } from "../Catalog/ToolRegistry.js"
import * as Tool from "../Tool/Tool.js"
import { Availability } from "../Tool/Tool.js"
import type { LoadedConfig, McpConfigError, ServerConfig } from "./Config.js"
import { McpError } from "./Errors.js"
import { adapt } from "./internal/adapt.js"
import type { Caller } from "./internal/adapt.js"
import type * as ConnectionModule from "./internal/connection.js"
import { assignNames, sanitize } from "./internal/names.js"
import type { Renamed } from "./internal/names.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * Where a server stands.
 *
 * @since 0.2.0
 * @category models
 */
export type ServerState =
  | { readonly _tag: "Disabled"; readonly reason: string }
  | { readonly _tag: "Connecting"; readonly attempt: number; readonly lastError: string | undefined }
  | { readonly _tag: "Connected"; readonly pid: number | undefined }
  | { readonly _tag: "Down"; readonly reason: string }

/**
 * A server as `mcp list` shows it.
 *
 * @since 0.2.0
 * @category models
 */
export interface ServerStatus {
  readonly name: string
  readonly source: string
  readonly transport: "stdio" | "http" | "sse"
  readonly state: ServerState
  /** The model-facing names of its tools. */
  readonly tools: ReadonlyArray<string>
  /** Tools whose names had to be shortened or disambiguated. */
  readonly renamed: ReadonlyArray<Renamed>
}

/**
 * One resource a server offers (`resources/list`), with the server's name.
 *
 * @since 0.3.0
 * @category models
 */
export interface ServerResource {
  readonly server: string
  readonly uri: string
  readonly name: string
  readonly mimeType?: string | undefined
  readonly description?: string | undefined
}

/**
 * One part of a resource's contents (`resources/read`): text, or binary data in base64.
 *
 * @since 0.3.0
 * @category models
 */
export type ResourceContents =
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly text: string }
  | { readonly uri: string; readonly mimeType?: string | undefined; readonly blob: string }

/**
 * @since 0.2.0
 * @category models
 */
export interface McpServersOptions {
  /** How long connecting (and each tools/list) may take. Default 30 s. */
  readonly connectTimeout?: Duration.DurationInput | undefined
  /** How many restarts in a row before a server is reported as down. Default 5. */
  readonly maxRestarts?: number | undefined
  /** The first delay between restarts (doubling, at most 10 s); the first restart is immediate. Default 200 ms. */
  readonly restartDelay?: Duration.DurationInput | undefined
  /** Whether building the layer waits for every server's first connection attempt. Default true. */
  readonly awaitStartup?: boolean | undefined
  /**
   * How long building the layer waits for the servers' first connection attempts, all at once (they connect in
   * parallel). A server still starting after it goes on connecting in the background: the built-in tools are not
   * delayed, and its tools appear when it is up. Default 5 s.
   */
  readonly startupTimeout?: Duration.DurationInput | undefined
}

/**
 * The McpServers service.
 *
 * @since 0.2.0
 * @category tags
 */
export class McpServers extends Context.Tag("effect-tool-runtime/McpServers")<
  McpServers,
  {
    /** The servers now. */
    readonly status: Effect.Effect<ReadonlyArray<ServerStatus>>
    /** The servers, every time one changes (the current value first). */
    readonly changes: Stream.Stream<ReadonlyArray<ServerStatus>>
    /** The tools of every running (or restarting) server; the same array until something changes. */
    readonly tools: () => ReadonlyArray<RegisteredTool>
    /** Entries of the configuration that could not be used. */
    readonly configErrors: ReadonlyArray<McpConfigError>
    /**
     * Why a tool name of a server (`mcp__<server>__...`) has no tool now: "server X is not connected: <reason>"
     * while that server is down, starting, or not started; undefined when the name is no server's, or its server is
     * connected (the tool is then simply not one of its tools).
     */
    readonly unavailable: (toolName: string) => string | undefined
    /**
     * The names of the servers that offer resources now (connected, with the `resources` capability).
     *
     * @since 0.3.0
     */
    readonly resourceServers: () => ReadonlyArray<string>
    /**
     * The name a call made for a server (its resources) is governed as: `mcp__<server>__resources`, with the server's
     * part as its tools' names have it, so the rules `mcp__<server>` and `mcp__<server>__*` cover it.
     *
     * @since 0.3.0
     */
    readonly ruleSubject: (server: string) => string
    /**
     * The resources of one server, or of every server that offers them. Naming a server that is not configured, is
     * not connected, or offers no resources fails with the reason.
     *
     * @since 0.3.0
     */
    readonly listResources: (server?: string | undefined) => Effect.Effect<ReadonlyArray<ServerResource>, McpError>
    /**
     * A resource's contents, read from its server.
     *
     * @since 0.3.0
     */
    readonly readResource: (server: string, uri: string) => Effect.Effect<ReadonlyArray<ResourceContents>, McpError>
  }
>() {
  /**
   * Starts the configured servers; they stop when the layer's scope closes.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (config: LoadedConfig, options: McpServersOptions = {}): Layer.Layer<McpServers> =>
    Layer.scoped(McpServers, make(config, options))

  /**
   * Starts the configured servers; they stop when the scope closes (what {@link layer} provides, as an Effect).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly make = (
    config: LoadedConfig,
    options: McpServersOptions = {}
  ): Effect.Effect<McpServers["Type"], never, Scope.Scope> => make(config, options)

  /**
   * The ToolRegistry in context, plus the MCP servers' tools: a dynamic registry whose runs each work on one
   * snapshot. A built-in tool keeps its name if an MCP tool would take it.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly extendedRegistry: Effect.Effect<ToolRegistry["Type"], never, ToolRegistry | McpServers> = Effect
    .gen(function*() {
      const base = yield* ToolRegistry
      const servers = yield* McpServers
      let lastMcp: ReadonlyArray<RegisteredTool> | undefined
      let all: ReadonlyArray<RegisteredTool> = base.tools
      const registry = makeDynamicRegistry(() => {
        const mcp = servers.tools()
        if (mcp !== lastMcp) {
          lastMcp = mcp
          all = [...base.tools, ...mcp.filter((tool) => Option.isNone(base.lookup(tool.definition.name)))]
        }
        return all
      })
      // A tool of a server that is not connected is found, disabled with the reason: the model learns that the
      // server is down rather than that no such tool exists.
      const withStandIns = (inner: Registry): Registry => {
        // Every run takes a snapshot: the same one until the tools change.
        let snapshot: readonly [Registry, Registry] | undefined
        return {
          get tools() {
            return inner.tools
          },
          lookup: (name) => {
            const found = inner.lookup(name)
            if (Option.isSome(found)) return found
            const reason = servers.unavailable(name)
            return reason === undefined ? found : Option.some(standIn(name, reason))
          },
          suggest: (name) => inner.suggest(name),
          snapshot: () => {
            const current = inner.snapshot()
            if (snapshot?.[0] !== current) snapshot = [current, withStandIns(current)]
            return snapshot[1]
          }
        }
      }
      return withStandIns(registry)
    })

  /**
   * {@link extendedRegistry} as a Layer: the ToolRegistry in context, plus the MCP servers' tools.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly extendRegistry: Layer.Layer<ToolRegistry, never, ToolRegistry | McpServers> = Layer.effect(
    ToolRegistry,
    McpServers.extendedRegistry
  )
}

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** A tool of a server that is not connected: found by name, always disabled with the reason. */
const standIn = (name: string, reason: string): RegisteredTool => {
  const tool = Tool.make(name, {
    description: `A tool of an MCP server that is not connected (${reason}).`,
    input: Schema.Unknown,
    touchesEnvironment: false,
    loading: "deferred"
  })
  const service = tool.service({
    isEnabled: Effect.succeed(Availability.disabled(reason)),
    call: () => Effect.die(`${name}: ${reason}`)
  })
  return { definition: tool.definition, service: service as Tool.AnyService }
}

/** One server's supervision state. */
interface Supervised {
  readonly config: ServerConfig
  /** The server's part of its tools' names (sanitised, unique among servers). */
  readonly prefix: string
  state: ServerState
  connection: ConnectionModule.Connection | undefined
  tools: ReadonlyArray<RegisteredTool>
  renamed: ReadonlyArray<Renamed>
  /** Serialises tools/list refreshes. */
  readonly refreshLock: Effect.Semaphore
  /** Completes after the first connection attempt, whatever its result. */
  readonly started: Deferred.Deferred<void>
}

/**
 * The connection module (and with it the MCP SDK), loaded when the first server connects: a session without MCP
 * servers never loads it. Every use but `connect` follows a connection, so the module is there by then.
 */
let connectionModule: typeof ConnectionModule | undefined
const loadConnections = Effect.promise(() => import("./internal/connection.js")).pipe(
  Effect.tap((module) => Effect.sync(() => void (connectionModule = module)))
)
const Connection = (): typeof ConnectionModule => connectionModule!

/** A connection that lived this long counts as healthy: its restart counter starts again. */
const HEALTHY = Duration.seconds(30)
const MAX_RESTART_DELAY = Duration.seconds(10)

const make = (config: LoadedConfig, options: McpServersOptions) =>
  Effect.gen(function*() {
    const connectTimeout = Duration.decode(options.connectTimeout ?? Duration.seconds(30))
    const maxRestarts = options.maxRestarts ?? 5
    const restartDelay = Duration.decode(options.restartDelay ?? Duration.millis(200))
    const runtime = yield* Effect.runtime<never>()

    // Server names that sanitise alike would give their tools the same names: the later one gets a suffix.
    const prefixes = new Set<string>()
    const servers: Array<Supervised> = []
    for (const server of config.servers) {
      let prefix = sanitize(server.name)
      for (let n = 2; prefixes.has(prefix); n++) prefix = `${sanitize(server.name)}_${n}`
      prefixes.add(prefix)
      servers.push({
        config: server,
        prefix,
        state: server.enabled
          ? { _tag: "Connecting", attempt: 0, lastError: undefined }
          : { _tag: "Disabled", reason: `${server.source} is not trusted: trust the folder to start its servers` },
        connection: undefined,
        tools: [],
        renamed: [],
        refreshLock: yield* Effect.makeSemaphore(1),
        started: yield* Deferred.make<void>()
      })
    }

    const statusOf = (s: Supervised): ServerStatus => ({
      name: s.config.name,
      source: s.config.source,
      transport: s.config.transport._tag,
      state: s.state,
      tools: s.tools.map((tool) => tool.definition.name),
      renamed: s.renamed
    })
    const statuses = yield* SubscriptionRef.make<ReadonlyArray<ServerStatus>>(servers.map(statusOf))
    let tools: ReadonlyArray<RegisteredTool> = []
    /** Recomputes the tool list and tells the subscribers; called after every change of a server's record. */
    const publish = Effect.suspend(() => {
      tools = servers.flatMap((s) => (s.state._tag === "Connected" || s.state._tag === "Connecting" ? s.tools : []))
      return SubscriptionRef.set(statuses, servers.map(statusOf))
    })

    /**
     * The connection a call can use now: the server is connected and its connection has not ended. A connection
     * that ended (a call just reset it) but is not yet seen by the supervisor is not live.
     */
    const liveConnection = (s: Supervised): ConnectionModule.Connection | undefined => {
      const current = s.connection
      return current !== undefined && s.state._tag === "Connected" && current.isOpen() ? current : undefined
    }

    /** The live connection, waiting (bounded) while the server restarts. */
    const connectionOf = (s: Supervised): Effect.Effect<ConnectionModule.Connection, McpError> =>
      Effect.suspend(() => {
        const down = (reason: string) =>
          Effect.fail(
            new McpError({
              server: s.config.name,
              reason: "Down",
              message: `MCP server "${s.config.name}" is not running: ${reason}`
            })
          )
        if (s.state._tag === "Disabled" || s.state._tag === "Down") return down(s.state.reason)
        const live = liveConnection(s)
        // Starting, restarting, or a connection that just ended: wait for the one that replaces it.
        return live === undefined ? restarted(s, s.connection, down) : Effect.succeed(live)
      })

    const restarted = (
      s: Supervised,
      stale: ConnectionModule.Connection | undefined,
      down: (reason: string) => Effect.Effect<never, McpError>
    ): Effect.Effect<ConnectionModule.Connection, McpError> =>
      Effect.suspend(() =>
        statuses.changes.pipe(
          Stream.filter(() =>
            s.state._tag !== "Connecting" && !(s.state._tag === "Connected" && s.connection === stale)
          ),
          Stream.runHead,
          Effect.timeoutFail({
            duration: connectTimeout,
            onTimeout: () =>
              new McpError({
                server: s.config.name,
                reason: "Down",
                message: `MCP server "${s.config.name}" is restarting and did not come back within ${
                  Duration.format(connectTimeout)
                }`
              })
          }),
          Effect.flatMap(() => (s.connection !== undefined && s.state._tag === "Connected"
            ? Effect.succeed(s.connection)
            : down(s.state._tag === "Down" || s.state._tag === "Disabled" ? s.state.reason : "it is restarting"))
          )
        )
      )

    const callerOf = (s: Supervised): Caller => (tool, args, { context, timeout }) => {
      const options: ConnectionModule.CallOptions = {
        timeout,
        // Progress is asked of the server only when something receives it (a run's events, the audit log): the
        // token costs the request a progress handler, and the raw SDK client sends none.
        onProgress: context.progressWanted === false ? undefined : ({ message, progress, total }) => {
          const update = {
            message: message ?? (total === undefined ? `${progress}` : `${progress}/${total}`),
            ...(total === undefined || total <= 0 ? {} : { fraction: Math.min(1, progress / total) })
          }
          Runtime.runFork(runtime)(context.progress(update))
        }
      }
      // A connected server is called at once; otherwise the call waits for its connection.
      return Effect.suspend(() => {
        const live = liveConnection(s)
        return live === undefined
          ? Effect.flatMap(
            connectionOf(s),
            (connection) => Connection().callTool(connection, s.config.name, tool, args, options)
          )
          : Connection().callTool(live, s.config.name, tool, args, options)
      })
    }

    const refresh = (s: Supervised): Effect.Effect<void, McpError> =>
      s.refreshLock.withPermits(1)(Effect.gen(function*() {
        const connection = s.connection
        if (connection === undefined) return
        const listed = yield* Connection().listTools(connection, s.config.name, connectTimeout)
        const taken = new Set(
          servers.filter((other) => other !== s).flatMap((other) => other.tools.map((tool) => tool.definition.name))
        )
        const { names, renamed } = assignNames(s.prefix, listed.map((tool) => tool.name), taken)
        const caller = callerOf(s)
        // A name shortened for length answers to its full name too (for rules written with it); a collision does not.
        const collided = new Set(renamed.filter((r) => r.reason === "collision").map((r) => r.tool))
        const fullNames = new Map(
          renamed.filter((r) => r.reason === "too long" && !collided.has(r.tool)).map((
            r
          ) => [r.tool, `mcp__${s.prefix}__${sanitize(r.tool)}`])
        )
        const availability = Effect.sync(() =>
          s.state._tag === "Down" || s.state._tag === "Disabled"
            ? Availability.disabled(`the MCP server ${s.config.name} is down: ${s.state.reason}`)
            : Availability.enabled
        )
        s.tools = listed.map((definition) => {
          const full = fullNames.get(definition.name)
          const name = names.get(definition.name)!
          return adapt(
            s.config,
            definition,
            name,
            caller,
            full === undefined || full === name ? [] : [full],
            availability
          )
        })
        s.renamed = renamed
        if (renamed.length > 0) {
          yield* Effect.logWarning(
            `MCP server "${s.config.name}": ${renamed.map((r) => `${r.tool} is ${r.name} (${r.reason})`).join("; ")}`
          )
        }
        yield* publish
      }))

    const supervise = (s: Supervised) =>
      Effect.gen(function*() {
        let restarts = 0
        let lastError: string | undefined
        while (true) {
          s.state = { _tag: "Connecting", attempt: restarts, lastError }
          yield* publish
          const connectedAt = yield* Clock.currentTimeMillis
          const ended = yield* Effect.either(Effect.scoped(Effect.gen(function*() {
            const connection = yield* (yield* loadConnections).connect(
              s.config,
              connectTimeout,
              Effect.ignoreLogged(Effect.suspend(() => refresh(s)))
            )
            s.connection = connection
            yield* refresh(s)
            s.state = { _tag: "Connected", pid: connection.pid }
            yield* publish
            yield* Deferred.succeed(s.started, undefined)
            const closed = yield* Deferred.await(connection.closed)
            // Fail-fast for the calls still waiting happens in the SDK (it rejects them on close); from here on,
            // new calls wait for the next connection.
            s.connection = undefined
            s.state = { _tag: "Connecting", attempt: restarts + 1, lastError: closed.reason }
            yield* publish
            return closed
          })))
          s.connection = undefined
          yield* Deferred.succeed(s.started, undefined)
          lastError = Either.isLeft(ended) ? ended.left.message : ended.right.reason
          const lived = (yield* Clock.currentTimeMillis) - connectedAt
          restarts = Either.isRight(ended) && lived >= Duration.toMillis(HEALTHY) ? 1 : restarts + 1
          if (restarts > maxRestarts) {
            s.state = { _tag: "Down", reason: `${lastError} (gave up after ${maxRestarts} restarts)` }
            yield* publish
            yield* Effect.logWarning(`MCP server "${s.config.name}" is down: ${lastError}`)
            return
          }
          if (restarts > 1) {
            yield* Effect.sleep(Duration.min(Duration.times(restartDelay, 2 ** (restarts - 2)), MAX_RESTART_DELAY))
          }
        }
      })

    for (const s of servers) {
      if (s.config.enabled) yield* Effect.forkScoped(supervise(s))
      else yield* Deferred.succeed(s.started, undefined)
    }
    yield* publish
    if (options.awaitStartup !== false) {
      const startupTimeout = Duration.decode(options.startupTimeout ?? Duration.seconds(5))
      yield* Effect.forEach(servers, (s) =>
        Deferred.await(s.started).pipe(
          Effect.timeout(startupTimeout),
          Effect.catchAll(() =>
            Effect.logWarning(
              `MCP server "${s.config.name}" did not finish starting within ${Duration.format(startupTimeout)}${
                s.state._tag === "Connecting" && s.state.lastError !== undefined ? ` (${s.state.lastError})` : ""
              }; it goes on connecting, and its tools appear when it is up`
            )
          )
        ), { concurrency: "unbounded", discard: true })
    }

    const offersResources = (s: Supervised): boolean =>
      s.state._tag === "Connected" && s.connection !== undefined && Connection().hasResources(s.connection)
    /** The connection of a server named for its resources, or why there is none. */
    const resourceConnection = (name: string): Effect.Effect<ConnectionModule.Connection, McpError> =>
      Effect.suspend(() => {
        const s = servers.find((server) => server.config.name === name)
        if (s === undefined) {
          const known = servers.map((server) => server.config.name)
          return Effect.fail(
            new McpError({
              server: name,
              reason: "Down",
              message: `No MCP server named "${name}" is configured${
                known.length === 0 ? "" : ` (the servers: ${known.join(", ")})`
              }.`
            })
          )
        }
        return Effect.flatMap(connectionOf(s), (connection) =>
          Connection().hasResources(connection) ? Effect.succeed(connection) : Effect.fail(
            new McpError({
              server: name,
              reason: "Protocol",
              message: `MCP server "${name}" offers no resources.`
            })
          ))
      })
    const listOf = (name: string) =>
      Effect.flatMap(resourceConnection(name), (connection) =>
        Effect.map(
          Connection().listResources(connection, name, connectTimeout),
          (listed) =>
            listed.map((resource): ServerResource => ({
              server: name,
              uri: resource.uri,
              name: resource.name,
              ...(resource.mimeType === undefined ? {} : { mimeType: resource.mimeType }),
              ...(resource.description === undefined ? {} : { description: resource.description })
            }))
        ))

    /** Why a server has no tools to call, in words the model can act on. */
    return {
      resourceServers: () => servers.filter(offersResources).map((s) => s.config.name),
      ruleSubject: (server) =>
        `mcp__${servers.find((s) => s.config.name === server)?.prefix ?? sanitize(server)}__resources`,
      listResources: (server) =>
        server !== undefined
          ? listOf(server)
          : Effect.map(
            Effect.forEach(servers.filter(offersResources), (s) => listOf(s.config.name), { concurrency: "unbounded" }),
            (all) => all.flat()
          ),
      readResource: (server, uri) =>
        Effect.flatMap(resourceConnection(server), (connection) =>
          Effect.map(Connection().readResource(connection, server, uri, connectTimeout), (result) =>
            result.contents.map((part): ResourceContents => {
              const mime = part.mimeType === undefined ? {} : { mimeType: part.mimeType }
              return "text" in part && typeof part.text === "string"
                ? { uri: part.uri, ...mime, text: part.text }
                : { uri: part.uri, ...mime, blob: "blob" in part && typeof part.blob === "string" ? part.blob : "" }
            }))),
      status: SubscriptionRef.get(statuses),
      changes: statuses.changes,
      tools: () =>
        tools,
      configErrors: config.errors,
      unavailable: (toolName) => {
        const server = servers.find((s) =>
          toolName.startsWith(`mcp__${s.prefix}__`)
        )
        if (server === undefined) return undefined
        const state = server.state
        switch (state._tag) {
          case "Connected":
            return undefined
          case "Connecting":
            return `server ${server.config.name} is not connected: ${
              state.lastError === undefined ? "it is still starting" : `it is restarting (${state.lastError})`
            }`
          case "Down":
          case "Disabled":
            return `server ${server.config.name} is not connected: ${state.reason}`
        }
      }
    } satisfies McpServers["Type"]
  })

/**
 * The servers' status, for the person.
 *
 * @since 0.2.0
 * @category accessors
 */
export const status: Effect.Effect<ReadonlyArray<ServerStatus>, never, McpServers> = Effect.flatMap(
  McpServers,
  (servers) => servers.status
)
