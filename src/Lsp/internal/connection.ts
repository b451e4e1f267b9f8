/**
 * One incarnation of a language server: the process (through `Subprocess.spawn`), the JSON-RPC connection over its
 * stdio (`vscode-jsonrpc`), `initialize`/`initialized` with the workspace folder, the server-to-client requests a
 * client must answer, and the graceful end (`shutdown`, `exit`) before the Scope terminates the process tree.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { pathToFileURL } from "node:url"
import {
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter
} from "vscode-jsonrpc/node"
import type { MessageConnection } from "vscode-jsonrpc/node"
import {
  ConfigurationRequest,
  DidChangeConfigurationNotification,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  PublishDiagnosticsNotification,
  RegistrationRequest,
  ShutdownRequest,
  UnregistrationRequest,
  WorkDoneProgressCreateRequest
} from "vscode-languageserver-protocol"
import type { ClientCapabilities, Diagnostic, ServerCapabilities } from "vscode-languageserver-protocol"
import * as Subprocess from "../../Process/Subprocess.js"
import { realSleep } from "../../Shared/realTime.js"
import type { ServerConfig } from "../Config.js"
import { LspError } from "../Errors.js"

export interface Connection {
  readonly pid: number
  readonly marker: string
  readonly capabilities: ServerCapabilities
  readonly request: <R>(method: string, params: unknown, timeoutMs?: number) => Effect.Effect<R, LspError>
  readonly notify: (method: string, params: unknown) => Effect.Effect<void>
  /** Completes with the reason once the process exited or the connection closed. */
  readonly closed: Effect.Effect<string>
  readonly isClosed: () => boolean
}

export interface Listeners {
  readonly diagnostics: (uri: string, version: number | undefined, items: ReadonlyArray<Diagnostic>) => void
}

/** The codes `vscode-jsonrpc` itself rejects with when the connection, not the server, failed. */
const connectionCodes: ReadonlySet<number> = new Set([
  ErrorCodes.MessageWriteError,
  ErrorCodes.MessageReadError,
  ErrorCodes.PendingResponseRejected,
  ErrorCodes.ConnectionInactive
])

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

const clientCapabilities: ClientCapabilities = {
  workspace: {
    configuration: true,
    workspaceFolders: true,
    didChangeConfiguration: { dynamicRegistration: false },
    symbol: { dynamicRegistration: false }
  },
  textDocument: {
    synchronization: { dynamicRegistration: false, didSave: false, willSave: false },
    definition: { linkSupport: true },
    implementation: { linkSupport: true },
    references: {},
    hover: { contentFormat: ["markdown", "plaintext"] },
    documentSymbol: { hierarchicalDocumentSymbolSupport: true },
    callHierarchy: { dynamicRegistration: false },
    publishDiagnostics: { relatedInformation: false, versionSupport: true },
    diagnostic: { dynamicRegistration: false, relatedDocumentSupport: false }
  },
  window: { workDoneProgress: true },
  general: { positionEncodings: ["utf-16"] }
}

/** The value of a dotted section of the settings (`python.analysis`), as `workspace/configuration` asks for it. */
const section = (settings: unknown, name: string | undefined): unknown => {
  if (name === undefined || name === "") return settings ?? null
  let value: unknown = settings
  for (const part of name.split(".")) {
    if (typeof value !== "object" || value === null) return null
    value = (value as Record<string, unknown>)[part]
  }
  return value ?? null
}

/** The environment of a server: the usual minimal one, plus the entry's `env`. */
const serverEnv = (server: ServerConfig): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  USER: process.env.USER,
  LANG: process.env.LANG,
  TMPDIR: process.env.TMPDIR,
  ...server.env
})

export const start = (
  server: ServerConfig,
  root: string,
  listeners: Listeners
): Effect.Effect<Connection, LspError, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = (reason: LspError["reason"], message: string) => new LspError({ server: server.name, reason, message })
    const running = yield* Subprocess.spawn({ argv: server.argv, cwd: root, env: serverEnv(server) }).pipe(
      Effect.mapError((error) => fail("Start", `cannot start the ${server.name} language server: ${error.message}`))
    )
    const tail: Array<string> = []
    running.stderr.on("data", (chunk: Buffer) => {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") tail.push(line.slice(0, 300))
      if (tail.length > 10) tail.splice(0, tail.length - 10)
    })
    const runtime = yield* Effect.runtime<never>()
    const closed = yield* Deferred.make<string>()
    let isClosed = false
    const close = (reason: string) => {
      isClosed = true
      Runtime.runFork(runtime)(Deferred.succeed(closed, reason))
    }
    const connection: MessageConnection = createMessageConnection(
      new StreamMessageReader(running.stdout),
      new StreamMessageWriter(running.stdin)
    )
    connection.onClose(() => close("the connection closed"))
    connection.onError(() => {})
    yield* Effect.forkScoped(
      Effect.flatMap(running.exit, (exit) =>
        Effect.sync(() =>
          close(
            `the ${server.name} language server exited (${
              exit._tag === "Exited" ? `code ${exit.code}` : exit._tag === "Signaled" ? exit.signal : exit._tag
            })${tail.length === 0 ? "" : `: ${tail.slice(-2).join(" | ")}`}`
          )
        ))
    )
    connection.onRequest(ConfigurationRequest.type, (params) =>
      params.items.map((item) => section(server.settings, item.section)))
    connection.onRequest(WorkDoneProgressCreateRequest.type, () =>
      undefined)
    connection.onRequest(RegistrationRequest.type, () => undefined)
    connection.onRequest(UnregistrationRequest.type, () => undefined)
    connection.onRequest("workspace/workspaceFolders", () => [{ uri: pathToFileURL(root).href, name: root }])
    connection.onNotification(PublishDiagnosticsNotification.type, (params) =>
      listeners.diagnostics(params.uri, params.version, params.diagnostics))
    // Log messages, progress and telemetry are not the model's business.
    connection.onNotification(() => {})
    connection.listen()
    // Registered before `initialize`, so a scope closed while the server starts still ends it: shutdown/exit when
    // it still answers, then the process tree goes with the Scope.
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        if (!isClosed) {
          yield* Effect.promise(() =>
            connection.sendRequest(ShutdownRequest.type).then(() =>
              true, () => false)
          ).pipe(
            Effect.raceFirst(Effect.as(realSleep(server.shutdownTimeoutMs), false)),
            Effect.flatMap((answered) =>
              answered
                ? Effect.zipRight(
                  Effect.sync(() => connection.sendNotification(ExitNotification.type).catch(() => undefined)),
                  Effect.raceFirst(Effect.asVoid(running.exit), realSleep(1_000))
                )
                : Effect.void
            ),
            Effect.interruptible
          )
        }
        connection.dispose()
      })
    )

    const request = <R>(method: string, params: unknown, timeoutMs = server.requestTimeoutMs) =>
      Effect.suspend(() => {
        if (isClosed) return Effect.fail(fail("Crashed", `the ${server.name} language server is not running`))
        const source = new CancellationTokenSource()
        return Effect.tryPromise({
          try: () => connection.sendRequest<R>(method, params, source.token),
          catch: (error) => {
            // Only an error response is the server's answer; anything else (the request could not be written,
            // the connection closed or was disposed) means this incarnation is gone, even before its exit is seen.
            if (error instanceof ResponseError && !connectionCodes.has(error.code) && !isClosed) {
              return fail("Protocol", `the ${server.name} language server failed ${method}: ${errorText(error)}`)
            }
            if (!isClosed) close(`the connection to the ${server.name} language server failed: ${errorText(error)}`)
            return fail("Crashed", `the ${server.name} language server stopped during ${method}`)
          }
        }).pipe(
          Effect.raceFirst(
            Effect.flatMap(
              Deferred.await(closed),
              (reason) => Effect.fail(fail("Crashed", `${reason} during ${method}`))
            )
          ),
          Effect.timeoutFail({
            duration: timeoutMs,
            onTimeout: () =>
              fail("Timeout", `the ${server.name} language server did not answer ${method} within ${timeoutMs} ms`)
          }),
          // `$/cancelRequest` only to a connection that is still there (vscode-jsonrpc throws, and logs, otherwise).
          Effect.onInterrupt(() => Effect.sync(() => isClosed || source.cancel())),
          Effect.tapError(() => Effect.sync(() => isClosed || source.cancel())),
          Effect.ensuring(Effect.sync(() => source.dispose()))
        )
      })

    const rootUri = pathToFileURL(root).href
    const initialized = yield* request<{ capabilities: ServerCapabilities }>(InitializeRequest.method, {
      processId: process.pid,
      clientInfo: { name: "effect-tool-runtime" },
      rootUri,
      rootPath: root,
      workspaceFolders: [{ uri: rootUri, name: root }],
      capabilities: clientCapabilities,
      initializationOptions: server.initializationOptions ?? null
    }, server.startupTimeoutMs).pipe(
      Effect.catchAll((error) =>
        Effect.flatMap(
          // A server that died at start says why on stderr: give its last words a moment to arrive.
          error.reason === "Timeout" ? Effect.void : Effect.raceFirst(Effect.asVoid(running.exit), realSleep(500)),
          () =>
            Effect.fail(fail(
              "Start",
              error.reason === "Timeout"
                ? `the ${server.name} language server did not answer initialize within ${server.startupTimeoutMs} ms`
                : `the ${server.name} language server did not start: ${error.message}${
                  tail.length === 0 ? "" : ` (stderr: ${tail.slice(-3).join(" | ")})`
                }`
            ))
        )
      )
    )
    yield* Effect.promise(() => connection.sendNotification(InitializedNotification.type, {}))
    if (server.settings !== undefined) {
      yield* Effect.promise(() =>
        connection.sendNotification(DidChangeConfigurationNotification.type, { settings: server.settings })
      )
    }
    return {
      pid: running.pid,
      marker: running.marker,
      capabilities: initialized.capabilities,
      request,
      notify: (method, params) =>
        Effect.promise(() => isClosed ? Promise.resolve() : connection.sendNotification(method, params)).pipe(
          Effect.catchAllDefect(() => Effect.void)
        ),
      closed: Deferred.await(closed),
      isClosed: () => isClosed
    } satisfies Connection
  })
