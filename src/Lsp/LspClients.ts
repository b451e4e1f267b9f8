/**
 * The language servers of a session, as one scoped service: one client per (server, project root), started on first
 * use, over `vscode-jsonrpc` and the protocol's own types (`vscode-languageserver-protocol`).
 *
 * ```ts
 * const config = yield* LspConfig.loadNamedFile("lsp.json")
 * const layer = LspClients.layer(config) // needs a Workspace
 * ```
 *
 * - **Choosing**: a file's server by its extension (`extensionToLanguage`), its root by the nearest marker file
 *   (`rootMarkers`, up to the working directory holding it); `initialize` names that root as the workspace folder.
 * - **Documents**: before a request about a file, the file is read from disk and opened (`didOpen`) or, when it
 *   changed, sent again (`didChange`, whole text); the least recently used are closed (`didClose`) past 64 open.
 * - **Time**: `initialize` within `startupTimeout`; each request within `requestTimeout` (then `$/cancelRequest`).
 * - **Crashes**: a request the server dies during fails (`Crashed`) and is tried once more on a new server; a dead
 *   server is restarted on next use after a backoff (100 ms, doubling, at most 5 s), at most `maxRestarts` times
 *   (and not at all without `restartOnCrash`); then it is `Unavailable` for the rest of the session.
 * - **Diagnostics**: what servers publish is kept per file; {@link LspClients} `diagnosticsAfterEdit` syncs a file a
 *   running server handles and waits, within a budget, for its new diagnostics (pulled with 3.17's
 *   `textDocument/diagnostic` when the server offers it, else the next `publishDiagnostics`). It never fails.
 * - **End**: closing the scope sends `shutdown` and `exit` to every server that still answers (within
 *   `shutdownTimeout`), then terminates each process tree (`Subprocess.spawn`): no server outlives the scope.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { pathToFileURL } from "node:url"
import type {
  Diagnostic,
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentDiagnosticReport,
  DocumentDiagnosticRequest,
  ServerCapabilities
} from "vscode-languageserver-protocol"
import { Workspace } from "../Session/Workspace.js"
import { realSleep } from "../Shared/realTime.js"
import * as LspConfig from "./Config.js"
import type { LoadedConfig, ServerConfig } from "./Config.js"
import { LspError } from "./Errors.js"
import type { Connection } from "./internal/connection.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A file as a running server sees it, for one operation.
 *
 * @since 0.3.0
 * @category models
 */
export interface FileSession {
  readonly server: ServerConfig
  readonly root: string
  readonly path: string
  readonly uri: string
  readonly capabilities: ServerCapabilities
  /** A request to the server (bounded by its `requestTimeout`). */
  readonly request: <R>(method: string, params: unknown) => Effect.Effect<R, LspError>
}

/**
 * A file's diagnostics after an edit: those the server reported before it (`before`, when it had), and now.
 *
 * @since 0.3.0
 * @category models
 */
export interface DiagnosticsReport {
  readonly server: string
  readonly path: string
  readonly before: ReadonlyArray<Diagnostic> | undefined
  readonly after: ReadonlyArray<Diagnostic>
}

/**
 * One client's state, for a status line.
 *
 * @since 0.3.0
 * @category models
 */
export interface ClientStatus {
  readonly server: string
  readonly root: string
  readonly pid: number | undefined
  readonly marker: string | undefined
  readonly restarts: number
  readonly unavailable: string | undefined
}

/**
 * Options of {@link LspClients.layer}.
 *
 * @since 0.3.0
 * @category models
 */
export interface LspClientsOptions {
  /** The first restart's delay, doubling after each (default 100 ms, at most 5 s). */
  readonly restartBackoffMs?: number | undefined
  /**
   * After a server published a file's diagnostics, how long to wait for more before taking the last (servers publish
   * in steps: tsserver's syntax diagnostics come before its semantic ones). Default 500 ms, within the budget.
   */
  readonly diagnosticsSettleMs?: number | undefined
  /** Documents kept open per server (default 64). */
  readonly maxOpenDocuments?: number | undefined
}

/**
 * The LspClients service.
 *
 * @since 0.3.0
 * @category tags
 */
export class LspClients extends Context.Tag("effect-tool-runtime/LspClients")<
  LspClients,
  {
    readonly config: LoadedConfig
    /** The configured server for a file (enabled or not), by extension. */
    readonly serverFor: (absolutePath: string) => ServerConfig | undefined
    /** Syncs the file to its server (started on first use) and runs `use` against it. */
    readonly withFile: <A>(
      absolutePath: string,
      use: (session: FileSession) => Effect.Effect<A, LspError>
    ) => Effect.Effect<A, LspError>
    /** Whether a server for this file is running now. */
    readonly isRunning: (absolutePath: string) => boolean
    /**
     * After an edit of a file a running server handles: syncs it and waits at most `budgetMs` for its new
     * diagnostics. None when no running server handles it or nothing came in time. Never fails.
     */
    readonly diagnosticsAfterEdit: (
      absolutePath: string,
      budgetMs: number
    ) => Effect.Effect<Option.Option<DiagnosticsReport>>
    readonly status: Effect.Effect<ReadonlyArray<ClientStatus>>
  }
>() {
  /**
   * The clients of a configuration; servers start on first use and stop when the scope closes.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layer = (
    config: LoadedConfig,
    options: LspClientsOptions = {}
  ): Layer.Layer<LspClients, never, Workspace> => Layer.scoped(LspClients, make(config, options))

  /**
   * No servers: the LSP tool says so, edits get no diagnostics.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly none: Layer.Layer<LspClients> = Layer.suspend(() =>
    Layer.scoped(
      LspClients,
      make(LspConfig.empty, {}).pipe(Effect.provideService(Workspace, {
        cwd: "/",
        home: "/",
        roots: [],
        resolve: () => Effect.die("no workspace"),
        contains: () => false
      }))
    )
  )
}

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/**
 * The connection's module, with `vscode-jsonrpc` and the protocol's, loads when the first server starts: a session
 * that never asks a language server (an `exec` of one Read) does not pay for them.
 */
const loadConnection = Effect.promise(() => import("./internal/connection.js"))

/** The methods this module sends, as the protocol spells them (checked against its types, not loaded with it). */
const methods: {
  readonly didOpen: typeof DidOpenTextDocumentNotification.method
  readonly didChange: typeof DidChangeTextDocumentNotification.method
  readonly didClose: typeof DidCloseTextDocumentNotification.method
  readonly diagnostic: typeof DocumentDiagnosticRequest.method
} = {
  didOpen: "textDocument/didOpen",
  didChange: "textDocument/didChange",
  didClose: "textDocument/didClose",
  diagnostic: "textDocument/diagnostic"
}

interface OpenDocument {
  version: number
  text: string
}

interface Client {
  readonly server: ServerConfig
  readonly root: string
  readonly lock: Effect.Semaphore
  connection: Connection | undefined
  scope: Scope.CloseableScope | undefined
  restarts: number
  unavailable: string | undefined
  readonly documents: Map<string, OpenDocument>
  readonly diagnostics: Map<
    string,
    { readonly items: ReadonlyArray<Diagnostic>; readonly seq: number; readonly version: number | undefined }
  >
  readonly waiters: Set<() => void>
  seq: number
}

const make = (config: LoadedConfig, options: LspClientsOptions) =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const layerScope = yield* Effect.scope
    const backoff = options.restartBackoffMs ?? 100
    const maxOpen = options.maxOpenDocuments ?? 64
    const settleMs = options.diagnosticsSettleMs ?? 500
    const clients = new Map<string, Client>()
    let closing = false

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        return Effect.forEach(
          clients.values(),
          (client) => client.scope === undefined ? Effect.void : Scope.close(client.scope, Exit.void),
          { concurrency: "unbounded", discard: true }
        )
      })
    )

    const serverFor = (absolutePath: string) => LspConfig.serverFor(config.servers, absolutePath)

    const clientFor = (server: ServerConfig, absolutePath: string): Client => {
      const root = LspConfig.rootFor(server, absolutePath, workspace.roots)
      const key = `${server.name}\0${root}`
      const existing = clients.get(key)
      if (existing !== undefined) return existing
      const client: Client = {
        server,
        root,
        lock: Effect.unsafeMakeSemaphore(1),
        connection: undefined,
        scope: undefined,
        restarts: 0,
        unavailable: server.disabled === undefined
          ? undefined
          : `The ${server.name} language server ${server.disabled}.`,
        documents: new Map(),
        diagnostics: new Map(),
        waiters: new Set(),
        seq: 0
      }
      clients.set(key, client)
      return client
    }

    const unavailable = (client: Client) =>
      new LspError({ server: client.server.name, reason: "Unavailable", message: client.unavailable! })

    /** The live connection, starting or restarting the server when it is not running. */
    const connect = (client: Client): Effect.Effect<Connection, LspError> =>
      client.lock.withPermits(1)(Effect.suspend(() => {
        if (client.connection !== undefined && !client.connection.isClosed()) return Effect.succeed(client.connection)
        if (closing) {
          return Effect.fail(
            new LspError({ server: client.server.name, reason: "Unavailable", message: "the session is closing" })
          )
        }
        if (client.unavailable !== undefined) return Effect.fail(unavailable(client))
        const previous = client.scope
        const crashed = previous !== undefined
        return Effect.gen(function*() {
          if (crashed) {
            client.connection = undefined
            client.scope = undefined
            client.documents.clear()
            yield* Scope.close(previous, Exit.void)
            if (!client.server.restartOnCrash || client.restarts >= client.server.maxRestarts) {
              client.unavailable = `The ${client.server.name} language server is unavailable: it stopped ${
                client.restarts + 1
              } time${client.restarts === 0 ? "" : "s"} and ${
                client.server.restartOnCrash
                  ? `its ${client.server.maxRestarts} restarts are used up`
                  : "restartOnCrash is off"
              }.`
              return yield* Effect.fail(unavailable(client))
            }
            client.restarts++
            yield* realSleep(Math.min(5_000, backoff * 2 ** (client.restarts - 1)))
          }
          const scope = yield* Scope.fork(layerScope, ExecutionStrategy.sequential)
          client.scope = scope
          const connection = yield* Effect.flatMap(loadConnection, ({ start }) =>
            Scope.extend(
              start(client.server, client.root, {
                diagnostics: (uri, version, items) => {
                  client.seq++
                  client.diagnostics.set(uri, { items, seq: client.seq, version })
                  for (const wake of client.waiters) wake()
                }
              }),
              scope
            )).pipe(
              // The caller interrupted while the server started (a person's Esc): that start is abandoned and its
              // process ended, but it is no crash, which would count a restart or, without restarts, end the server.
              Effect.onInterrupt(() =>
                Effect.suspend(() => {
                  if (client.scope === scope) client.scope = undefined
                  return Scope.close(scope, Exit.void)
                })
              )
            )
          client.connection = connection
          return connection
        })
      }))

    /** Opens the file, or sends its new text when it changed since; closes the oldest past the limit. */
    const sync = (client: Client, connection: Connection, absolutePath: string, uri: string) =>
      Effect.gen(function*() {
        const text = yield* Effect.promise(() => fs.promises.readFile(absolutePath, "utf8").catch(() => undefined))
        const open = client.documents.get(uri)
        if (text === undefined) {
          if (open !== undefined) {
            client.documents.delete(uri)
            yield* connection.notify(methods.didClose, { textDocument: { uri } })
          }
          return
        }
        if (open === undefined) {
          client.documents.set(uri, { version: 1, text })
          yield* connection.notify(methods.didOpen, {
            textDocument: { uri, languageId: LspConfig.languageOf(client.server, absolutePath), version: 1, text }
          })
        } else {
          client.documents.delete(uri)
          client.documents.set(uri, open)
          if (open.text !== text) {
            open.version++
            open.text = text
            yield* connection.notify(methods.didChange, {
              textDocument: { uri, version: open.version },
              contentChanges: [{ text }]
            })
          }
        }
        while (client.documents.size > maxOpen) {
          const oldest = client.documents.keys().next().value!
          client.documents.delete(oldest)
          yield* connection.notify(methods.didClose, { textDocument: { uri: oldest } })
        }
      })

    const withFile = <A>(absolutePath: string, use: (session: FileSession) => Effect.Effect<A, LspError>) =>
      Effect.suspend(() => {
        const server = serverFor(absolutePath)
        if (server === undefined) {
          return Effect.fail(
            new LspError({
              server: "none",
              reason: "Unavailable",
              message: `No language server is configured for ${absolutePath}.`
            })
          )
        }
        const client = clientFor(server, absolutePath)
        const uri = pathToFileURL(absolutePath).href
        const once = Effect.flatMap(connect(client), (connection) =>
          Effect.zipRight(
            sync(client, connection, absolutePath, uri),
            use({
              server,
              root: client.root,
              path: absolutePath,
              uri,
              capabilities: connection.capabilities,
              request: (method, params) => connection.request(method, params)
            })
          ))
        // A server that died under the request (or before it, unnoticed) gets one new start for it.
        return Effect.catchIf(once, (error) => error.reason === "Crashed", () => once)
      })

    const runningClient = (absolutePath: string): Client | undefined => {
      const server = serverFor(absolutePath)
      if (server === undefined) return undefined
      const client = clients.get(`${server.name}\0${LspConfig.rootFor(server, absolutePath, workspace.roots)}`)
      return client?.connection !== undefined && !client.connection.isClosed() ? client : undefined
    }

    /** Waits until the server publishes for `uri` after `seq`, then a little longer for a follow-up, within budget. */
    const published = (client: Client, uri: string, seq: number, deadline: number) =>
      Effect.async<boolean>((resume) => {
        let settle: ReturnType<typeof setTimeout> | undefined
        const done = (value: boolean) => {
          client.waiters.delete(check)
          clearTimeout(timer)
          clearTimeout(settle)
          resume(Effect.succeed(value))
        }
        const check = () => {
          const entry = client.diagnostics.get(uri)
          if (entry === undefined || entry.seq <= seq) return
          // A server that says which version it checked: only the edited version counts.
          const version = client.documents.get(uri)?.version
          if (entry.version !== undefined && version !== undefined && entry.version < version) return
          // Servers publish in steps (syntax, then semantics): take the last within the settle time.
          clearTimeout(settle)
          settle = setTimeout(() => done(true), Math.max(0, Math.min(settleMs, deadline - Date.now())))
        }
        const timer = setTimeout(() =>
          done(
            client.diagnostics.get(uri)?.seq !== undefined &&
              client.diagnostics.get(uri)!.seq > seq
          ), Math.max(0, deadline - Date.now()))
        client.waiters.add(check)
        check()
        return Effect.sync(() => {
          client.waiters.delete(check)
          clearTimeout(timer)
          clearTimeout(settle)
        })
      })

    const diagnosticsAfterEdit = (absolutePath: string, budgetMs: number) =>
      Effect.suspend(() => {
        const client = runningClient(absolutePath)
        if (client === undefined) return Effect.succeedNone
        const connection = client.connection!
        const deadline = Date.now() + budgetMs
        const uri = pathToFileURL(absolutePath).href
        const before = client.diagnostics.get(uri)?.items
        const seq = client.seq
        const report = (after: ReadonlyArray<Diagnostic>): Option.Option<DiagnosticsReport> =>
          Option.some({ server: client.server.name, path: absolutePath, before, after })
        return Effect.gen(function*() {
          yield* sync(client, connection, absolutePath, uri)
          if (connection.capabilities.diagnosticProvider !== undefined) {
            const pulled = yield* connection.request<DocumentDiagnosticReport>(
              methods.diagnostic,
              { textDocument: { uri } },
              Math.max(1, deadline - Date.now())
            )
            const items = pulled.kind === "full" ? pulled.items : (before ?? [])
            client.seq++
            client.diagnostics.set(uri, { items, seq: client.seq, version: undefined })
            return report(items)
          }
          const arrived = yield* published(client, uri, seq, deadline)
          return arrived ? report(client.diagnostics.get(uri)!.items) : Option.none()
        }).pipe(Effect.catchAll(() => Effect.succeedNone))
      })

    return LspClients.of({
      config,
      serverFor,
      withFile,
      isRunning: (absolutePath) => runningClient(absolutePath) !== undefined,
      diagnosticsAfterEdit,
      status: Effect.sync(() =>
        [...clients.values()].map((client) => ({
          server: client.server.name,
          root: client.root,
          pid: client.connection?.isClosed() === false ? client.connection.pid : undefined,
          marker: client.connection?.marker,
          restarts: client.restarts,
          unavailable: client.unavailable
        }))
      )
    })
  })
