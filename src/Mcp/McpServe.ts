/**
 * Serving the governed tools over MCP, so any MCP client (Claude Desktop, Claude Code, Cursor, Codex, the SDK's own
 * `Client`) uses them with this runtime's rules, modes, hooks, sandbox, audit and result store.
 *
 * ```ts
 * // stdio: one connection, the services in context are its session
 * yield* McpServe.stdio({ name: "my-tools", version: "1.0.0" })
 * // Streamable HTTP on 127.0.0.1: one session (its own services, from the layer) per MCP session id
 * const { url } = yield* McpServe.http({ port: 0, session: () => SessionServices })
 * ```
 *
 * - **Tools**: the registry's enabled tools (deferred ones too: MCP clients have their own search), each with its
 *   input's JSON Schema (2020-12, as `Definitions.inputSchema` makes it) and annotations. Traits depend on the input,
 *   so the static hints claim only what holds for every input (see `annotationsOf`): read-only for tools that do not
 *   touch the environment and for file tools that only read; the spec's pessimistic defaults for the rest. The
 *   client is told `notifications/tools/list_changed` when the set changes (checked every second).
 * - **Calls**: every `tools/call` of a connection goes into one run of a ToolRuntime built for the connection: the
 *   same pipeline (decode, validate, hooks, rules, modes, the approver, the sandbox, the audit log in context) and the
 *   same scheduler as a turn, so two parallel writes to one file never overlap while reads run together. Results
 *   are the tool_result's content (text, images; a large result's preview names its stored file, also in
 *   `_meta["effect-tool-runtime/persistedPath"]`), errors have `isError`; an unknown tool is a JSON-RPC error.
 * - **Approvals**: an "ask" goes to the person through `elicitation/create` (a form with one choice: allow once,
 *   allow for this session when the call suggests rules, deny) when the client declared form elicitation; else to
 *   the Approver in context. A form never asks for anything but that choice (no secrets in a form).
 * - **Durable calls** (`durable`, e.g. `DurableTurns.servedCalls` of `effect-tool-runtime/durable`; stdio and
 *   {@link connection} only): each call is a durable turn of its own, keyed by the id the client names it with in
 *   `_meta` (Claude Code sends `claudecode/toolUseId`; others may send `effect-tool-runtime/toolUseId`). A client
 *   that sends the call again after the server restarted attaches to it: a completed call gives its recorded
 *   outcome (it is not run again), an unanswered question is asked again (its token in the form's
 *   `_meta["effect-tool-runtime/approvalToken"]`), a call that was running is run again when idempotent and otherwise
 *   reported "unknown". Durable calls run one at a time; a question open when the connection closes is not denied.
 * - **Progress and cancellation**: a call with a `progressToken` gets `notifications/progress` from the tool's
 *   progress events; `notifications/cancelled`, or the connection closing, interrupts the call (its Scope closes,
 *   its process tree with it). Log messages (`notifications/message`: a call started, its progress, hooks' notices)
 *   are sent once the client set a level with `logging/setLevel`.
 *
 * Requires the services of a session: `ToolRegistry`, `PermissionPolicy`, `Approver`, `ToolHooks`, `ResultStore`
 * (and whatever `AuditLog`/`RuntimeConfig` is in context). May import the Catalog, Permission, Hooks, Runtime,
 * Session and Tool rooms; nothing imports it but the CLI and the package root.
 *
 * @since 0.3.0
 */
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Readable, Writable } from "node:stream"
import type {
  ConnectionOptions,
  ConnectionServices,
  DurableCallRunner as DurableCallRunner_,
  DurableCalls as DurableCalls_
} from "./internal/serveConnection.js"
import { serveConnection } from "./internal/serveConnection.js"
import { annotationsOf as annotationsOf_, listingOf as listingOf_ } from "./internal/serveContent.js"
import type { HttpOptions, Listening } from "./internal/serveHttp.js"
import { isLoopback as isLoopback_, listen } from "./internal/serveHttp.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * What the server says about itself and how it schedules.
 *
 * @since 0.3.0
 * @category models
 */
export interface ServeOptions {
  /** The server's name in `initialize` (default `effect-tool-runtime`). */
  readonly name?: string | undefined
  readonly version?: string | undefined
  readonly instructions?: string | undefined
  /** Tools left out of `tools/list` (e.g. `RulePolicy.wholeToolDenial(...)`); a call to one is still governed. */
  readonly exclude?: ConnectionOptions["exclude"] | undefined
  /** The run's scheduling mode; default `"conflict-aware"`. */
  readonly scheduling?: ConnectionOptions["scheduling"] | undefined
  /** How long a person has to answer an approval form; default 10 minutes. */
  readonly approvalTimeoutMs?: number | undefined
  /** How often the tool set is checked for changes; default 1 second. */
  readonly listCheckMs?: number | undefined
  /** Run after every call's outcome (e.g. `Session.checkpoint`); its failure is ignored. */
  readonly afterCall?: Effect.Effect<void, unknown> | undefined
  /** Each call a durable turn of its own (see the module doc); default: not durable. */
  readonly durable?: DurableCalls | undefined
}

/**
 * Builds, for one connection, the runner of its durable calls over the connection's services (its tools, wrapped
 * for cancellation, and its approver); e.g. `DurableTurns.servedCalls({ directory })`.
 *
 * @since 0.3.0
 * @category models
 */
export type DurableCalls = DurableCalls_

/**
 * Runs one call as a durable turn of its own.
 *
 * @since 0.3.0
 * @category models
 */
export type DurableCallRunner = DurableCallRunner_

/**
 * The services one MCP session runs on.
 *
 * @since 0.3.0
 * @category models
 */
export type SessionServices = ConnectionServices

/**
 * Options of {@link http}.
 *
 * @since 0.3.0
 * @category models
 */
export interface HttpServeOptions<E> extends Omit<ServeOptions, "durable"> {
  /** The port; 0 picks a free one. */
  readonly port: number
  /**
   * The address to listen on; default `127.0.0.1`. Any other than a loopback address requires a `token` (a server
   * others can reach must not run tools for anyone who asks).
   */
  readonly host?: string | undefined
  /** A bearer token every request must carry (`Authorization: Bearer ...`). */
  readonly token?: string | undefined
  /** The endpoint's path; default `/mcp`. */
  readonly path?: string | undefined
  /** The services of one MCP session, built when it starts and released when it ends. */
  readonly session: (sessionId: string) => Layer.Layer<SessionServices, E>
}

/**
 * A listening HTTP server.
 *
 * @since 0.3.0
 * @category models
 */
export type HttpServer = Listening

/**
 * The HTTP server could not start: a bad address, a non-loopback address without a token, a port in use.
 *
 * @since 0.3.0
 * @category errors
 */
export class McpServeError extends Schema.TaggedError<McpServeError>("effect-tool-runtime/Mcp/McpServeError")(
  "McpServeError",
  { message: Schema.String }
) {}

// ---------------------------------------------------------------------------------------------------------------
// serving
// ---------------------------------------------------------------------------------------------------------------

const connectionOptions = (options: ServeOptions): ConnectionOptions => ({
  name: options.name ?? "effect-tool-runtime",
  version: options.version ?? "0.3.0",
  instructions: options.instructions,
  exclude: options.exclude,
  scheduling: options.scheduling,
  approvalTimeoutMs: options.approvalTimeoutMs,
  listCheckMs: options.listCheckMs,
  afterCall: options.afterCall,
  durable: options.durable
})

/**
 * Serves one connection on an SDK transport, with the services in context as its session, until the transport
 * closes. Closing the scope ends the connection and interrupts its calls.
 *
 * @since 0.3.0
 * @category serving
 */
export const connection: (
  transport: Transport,
  options?: ServeOptions
) => Effect.Effect<void, never, Scope.Scope | SessionServices> = Effect.fn("McpServe.connection")(function*(
  transport: Transport,
  options: ServeOptions = {}
) {
  return yield* serveConnection(transport, connectionOptions(options))
})

/**
 * Serves over standard input and output (or the given streams) until the input ends; the process is the session.
 *
 * @since 0.3.0
 * @category serving
 */
export const stdio: (
  options?: ServeOptions & { readonly input?: Readable | undefined; readonly output?: Writable | undefined }
) => Effect.Effect<void, never, SessionServices> = Effect.fn("McpServe.stdio")(function*(
  options: ServeOptions & { readonly input?: Readable | undefined; readonly output?: Writable | undefined } = {}
) {
  const input = options.input ?? process.stdin
  const transport = new StdioServerTransport(input, options.output ?? process.stdout)
  // The SDK's stdio transport does not notice the end of its input: the client closing it ends the connection.
  const onEnd = () => void transport.close()
  input.once("end", onEnd)
  return yield* Effect.scoped(serveConnection(transport, connectionOptions(options))).pipe(
    Effect.ensuring(Effect.sync(() => input.off("end", onEnd)))
  )
})

/**
 * Serves Streamable HTTP until the scope closes: one MCP session per `Mcp-Session-Id`, each with the services its
 * `session` layer builds. On a loopback address (the default) Host and Origin are checked against DNS rebinding;
 * any other address requires a bearer token.
 *
 * @since 0.3.0
 * @category serving
 */
export const http: <E>(options: HttpServeOptions<E>) => Effect.Effect<HttpServer, McpServeError, Scope.Scope> = Effect
  .fn("McpServe.http")(function*<E>(options: HttpServeOptions<E>) {
    const host = options.host ?? "127.0.0.1"
    if (!isLoopback_(host) && (options.token === undefined || options.token === "")) {
      return yield* Effect.fail(
        new McpServeError({ message: `serving MCP on ${host} (not a loopback address) requires a bearer token` })
      )
    }
    const httpOptions: HttpOptions = {
      ...connectionOptions(options),
      port: options.port,
      host,
      token: options.token,
      path: options.path
    }
    return yield* listen(httpOptions, options.session).pipe(
      Effect.mapError((error) =>
        new McpServeError({ message: `cannot listen on ${host}:${options.port}: ${error.message}` })
      )
    )
  })

/**
 * {@link stdio} as a layer: serving starts when the layer is built and stops when its scope closes.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerStdio = (options: ServeOptions = {}): Layer.Layer<never, never, SessionServices> =>
  Layer.scopedDiscard(Effect.forkScoped(stdio(options)))

/**
 * {@link http} as a layer: listening while the layer lives.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerHttp = <E>(options: HttpServeOptions<E>): Layer.Layer<never, McpServeError> =>
  Layer.scopedDiscard(http(options))

// ---------------------------------------------------------------------------------------------------------------
// utilities
// ---------------------------------------------------------------------------------------------------------------

/**
 * A tool's MCP annotations, from what holds for every input (see the module doc).
 *
 * @since 0.3.0
 * @category utilities
 */
export const annotationsOf = annotationsOf_

/**
 * A tool as `tools/list` shows it.
 *
 * @since 0.3.0
 * @category utilities
 */
export const listingOf = listingOf_

/**
 * Whether an address is a loopback one (`127.0.0.0/8`, `::1`, `localhost`).
 *
 * @since 0.3.0
 * @category utilities
 */
export const isLoopback = isLoopback_
