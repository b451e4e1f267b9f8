/**
 * One live connection to one MCP server over the SDK client: connect (bounded), list tools (paginated, bounded),
 * call, close. The Scope owns the connection: closing it closes the client, which stops a stdio server: its input
 * is closed, it gets a moment to exit, then its whole tree is ended (a stdio server is started through
 * `Process/Subprocess.spawnService`: a marker, so what it forked, an `npx`-launched server's real process say, goes
 * with it).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import type {
  CallToolResult,
  ReadResourceResult,
  Resource,
  Tool as McpToolDefinition
} from "@modelcontextprotocol/sdk/types.js"
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Runtime from "effect/Runtime"
import type * as Scope from "effect/Scope"
import { spawnService } from "../../Process/Subprocess.js"
import type { Service } from "../../Process/Subprocess.js"
import type { ServerConfig } from "../Config.js"
import { McpError as McpCallError } from "../Errors.js"
import { CallSignal } from "./callSignal.js"

/** The SDK's stdio read buffer; one larger message closes the connection. */
export const STDIO_BUFFER_BYTES = 10 * 1024 * 1024
/** At most this many pages of tools/list. */
const MAX_PAGES = 100
/** The longest timer Node accepts (setTimeout's limit), for "no limit". */
const NO_LIMIT_MS = 2_147_483_647

/** What a client says about itself in `initialize`. */
export const CLIENT_INFO = { name: "effect-tool-runtime", version: "0.2.0" }

/** How the connection ended, once it has. */
export interface Closed {
  readonly reason: string
}

/** A live connection. */
export interface Connection {
  readonly client: Client
  /** The server's process id (stdio), for supervision and tests. */
  readonly pid: number | undefined
  /** Whether the server is remote (HTTP, SSE): its failures show as failed requests, not as a closed pipe. */
  readonly remote: boolean
  readonly serverName: string | undefined
  /** Completes when the connection ends: the transport closed (the process exited, the session ended), or {@link end}. */
  readonly closed: Deferred.Deferred<Closed>
  /** Whether the connection has not ended: what `closed` says, without waiting (a call reads it before it is made). */
  readonly isOpen: () => boolean
  /** Ends the connection (once; later reasons are ignored), so that its supervisor restores it. */
  readonly end: (reason: string) => void
  /** The last transport error, to explain a closed connection. */
  readonly lastError: () => Error | undefined
  /** The last lines the server wrote to stderr (stdio). */
  readonly stderrTail: () => ReadonlyArray<string>
  /**
   * Calls `listener` when the server sends a line that is not a JSON-RPC message (stdio); gives the unsubscribe.
   * A call running then has lost its answer, maybe: it fails with that reason rather than waiting out its timeout.
   */
  readonly onMalformed: (listener: (reason: string) => void) => () => void
}

const isOverflow = (error: Error): boolean => /ReadBuffer exceeded/.test(error.message)

/** A line from a stdio server that is not a JSON-RPC message (what it said, as the parser saw it). */
class MalformedMessage extends Error {}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** How long a stdio server has to exit by itself once its input is closed, before its tree is ended. */
const EXIT_GRACE_MS = 2_000

/**
 * The stdio transport, over a process started by `Subprocess.spawnService` (the SDK's own spawns a bare child,
 * whose children outlive it). Speaks what the SDK's does: one JSON-RPC message per line.
 */
class TreeStdioTransport implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage) => void
  private service: Service | undefined
  private readonly buffer = new ReadBuffer()
  private exited = false

  constructor(
    private readonly params: {
      readonly command: string
      readonly args: ReadonlyArray<string>
      readonly env: Readonly<Record<string, string>>
      readonly cwd: string | undefined
    },
    private readonly stderr: (chunk: string) => void
  ) {}

  get pid(): number | undefined {
    return this.service?.child.pid
  }

  start(): Promise<void> {
    if (this.service !== undefined) return Promise.reject(new Error("the stdio transport was started already"))
    return new Promise((resolve, reject) => {
      let service: Service
      try {
        // The SDK's documented minimal environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) and the server's `env`:
        // nothing else of this process's environment reaches the server.
        service = spawnService({
          argv: [this.params.command, ...this.params.args],
          cwd: this.params.cwd,
          env: { ...getDefaultEnvironment(), ...this.params.env }
        })
      } catch (error) {
        reject(error)
        return
      }
      this.service = service
      const { child } = service
      child.on("error", (error) => {
        reject(error)
        this.onerror?.(error)
      })
      child.once("spawn", () => resolve())
      child.once("exit", () => (this.exited = true))
      child.once("close", () => this.onclose?.())
      child.stdin.on("error", (error) => this.onerror?.(error))
      child.stdout.on("error", (error) => this.onerror?.(error))
      child.stderr.on("data", (chunk: Buffer) => this.stderr(chunk.toString("utf8")))
      child.stdout.on("data", (chunk: Buffer) => {
        try {
          this.buffer.append(chunk)
        } catch (error) {
          this.onerror?.(error as Error)
          void this.close()
          return
        }
        for (;;) {
          let message: JSONRPCMessage | null
          try {
            message = this.buffer.readMessage()
          } catch (error) {
            // A line that is not a JSON-RPC message: whatever answer it carried is lost.
            this.onerror?.(new MalformedMessage(errorText(error)))
            continue
          }
          if (message === null) break
          this.onmessage?.(message)
        }
      })
    })
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.service?.child.stdin
      if (stdin === undefined || stdin.destroyed) {
        reject(new Error("Not connected"))
        return
      }
      if (stdin.write(serializeMessage(message))) resolve()
      else stdin.once("drain", () => resolve())
    })
  }

  async close(): Promise<void> {
    const service = this.service
    if (service === undefined) return
    const { child } = service
    if (!this.exited) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      try {
        child.stdin.end()
      } catch {
        // Gone already.
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, EXIT_GRACE_MS).unref())])
    }
    // Whether or not it exited by itself: what it forked goes too.
    await Effect.runPromise(service.stop)
    this.buffer.clear()
  }
}

const makeTransport = (config: ServerConfig, stderr: (chunk: string) => void): Transport => {
  const transport = config.transport
  switch (transport._tag) {
    case "stdio":
      return new TreeStdioTransport({
        command: transport.command,
        args: transport.args,
        env: transport.env,
        cwd: transport.cwd
      }, stderr)
    case "http":
      return new StreamableHTTPClientTransport(new URL(transport.url), {
        requestInit: { headers: { ...transport.headers } }
      })
    case "sse":
      return new SSEClientTransport(new URL(transport.url), { requestInit: { headers: { ...transport.headers } } })
  }
}

/**
 * Connects, within `timeout`. `onToolsChanged` runs when the server says its tools changed. The connection belongs
 * to the Scope.
 */
export const connect = (
  config: ServerConfig,
  timeout: Duration.Duration,
  onToolsChanged: Effect.Effect<void>
): Effect.Effect<Connection, McpCallError, Scope.Scope> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const closed = yield* Deferred.make<Closed>()
    let open = true
    const end = (reason: string) => {
      if (!open) return
      open = false
      Deferred.unsafeDone(closed, Exit.succeed({ reason }))
    }
    const tail: Array<string> = []
    let lastError: Error | undefined
    const transport = makeTransport(config, (chunk) => {
      for (const line of chunk.split("\n")) if (line.trim() !== "") tail.push(line.slice(0, 500))
      if (tail.length > 20) tail.splice(0, tail.length - 20)
    })
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    const malformedListeners = new Set<(reason: string) => void>()
    client.onerror = (error) => {
      if (error instanceof MalformedMessage) { for (const listener of [...malformedListeners]) listener(error.message) }
      // After an overflow the SDK drops its buffer and chokes on the rest of the line: the overflow is the news.
      if (lastError === undefined || !isOverflow(lastError)) lastError = error
    }
    client.onclose = () => end(lastError === undefined ? "the connection closed" : lastError.message)
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      Runtime.runFork(runtime)(onToolsChanged)
    })
    const connectMs = Duration.toMillis(timeout)
    // The close is registered before connecting, and connecting stays interruptible: closing the scope while a
    // server has not answered `initialize` stops it now (acquireRelease would wait out the whole connect timeout).
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close().catch(() => undefined)))
    yield* Effect.tryPromise({
      try: (signal) => client.connect(transport, { signal, timeout: connectMs }),
      catch: (error) =>
        new McpCallError({
          server: config.name,
          reason: "Connect",
          message: `could not connect to MCP server "${config.name}": ${errorText(error)}${
            tail.length > 0 ? ` (stderr: ${tail.slice(-3).join(" | ")})` : ""
          }`
        })
    }).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () =>
          new McpCallError({
            server: config.name,
            reason: "Connect",
            message: `MCP server "${config.name}" did not answer initialize within ${Duration.format(timeout)}`
          })
      }),
      // A connection attempt that failed half-way may still hold a process: close whatever was started.
      Effect.tapError(() => Effect.promise(() => client.close().catch(() => undefined)))
    )
    return {
      client,
      pid: transport instanceof TreeStdioTransport ? transport.pid : undefined,
      remote: config.transport._tag !== "stdio",
      serverName: client.getServerVersion()?.name,
      closed,
      isOpen: () => open,
      end,
      lastError: () => lastError,
      stderrTail: () => tail,
      onMalformed: (listener) => {
        malformedListeners.add(listener)
        return () => void malformedListeners.delete(listener)
      }
    } satisfies Connection
  })

/** Every item of a paginated list, following `nextCursor` for at most {@link MAX_PAGES} pages. */
const allPages = async <A>(
  page: (
    cursor: string | undefined
  ) => Promise<{ readonly items: ReadonlyArray<A>; readonly next?: string | undefined }>
): Promise<ReadonlyArray<A>> => {
  const items: Array<A> = []
  let cursor: string | undefined
  for (let n = 0; n < MAX_PAGES; n++) {
    const result = await page(cursor)
    items.push(...result.items)
    cursor = result.next
    if (cursor === undefined) break
  }
  return items
}

/** Every tool the server lists, following `nextCursor` (bounded). */
export const listTools = (
  connection: Connection,
  server: string,
  timeout: Duration.Duration
): Effect.Effect<ReadonlyArray<McpToolDefinition>, McpCallError> =>
  Effect.tryPromise({
    try: (signal) =>
      allPages((cursor) =>
        connection.client.listTools(cursor === undefined ? {} : { cursor }, {
          signal,
          timeout: Duration.toMillis(timeout)
        }).then((result) => ({ items: result.tools, next: result.nextCursor }))
      ),
    catch: (error) =>
      new McpCallError({
        server,
        reason: "Protocol",
        message: `MCP server "${server}" failed to list its tools: ${errorText(error)}`
      })
  })

/** Whether the server offers resources (its `initialize` answer has the `resources` capability). */
export const hasResources = (connection: Connection): boolean =>
  connection.client.getServerCapabilities()?.resources !== undefined

/**
 * The server's resources (`resources/list`, paginated: at most {@link MAX_PAGES} pages), bounded by `timeout` each.
 */
export const listResources = (
  connection: Connection,
  server: string,
  timeout: Duration.Duration
): Effect.Effect<ReadonlyArray<Resource>, McpCallError> =>
  Effect.tryPromise({
    try: (signal) =>
      allPages((cursor) =>
        connection.client.listResources(cursor === undefined ? {} : { cursor }, {
          signal,
          timeout: Duration.toMillis(timeout)
        }).then((result) => ({ items: result.resources, next: result.nextCursor }))
      ),
    catch: (error) => callFailure(connection, server, "resources/list", error)
  })

/** One resource's contents (`resources/read`); interruption aborts the request. */
export const readResource = (
  connection: Connection,
  server: string,
  uri: string,
  timeout: Duration.Duration
): Effect.Effect<ReadResourceResult, McpCallError> =>
  Effect.tryPromise({
    try: (signal) => connection.client.readResource({ uri }, { signal, timeout: Duration.toMillis(timeout) }),
    catch: (error) => callFailure(connection, server, `resources/read of ${uri}`, error)
  })

/** What a call hears of the server's progress notifications. */
export type ProgressListener = (
  progress: { readonly progress: number; readonly total?: number | undefined; readonly message?: string | undefined }
) => void

/** Options of one call. */
export interface CallOptions {
  readonly timeout: Duration.Duration
  /** When absent the request carries no progress token, so the server sends no progress. */
  readonly onProgress: ProgressListener | undefined
}

/**
 * Calls a tool. Interruption aborts the request, and the SDK sends `notifications/cancelled`. A failure says what
 * happened in words for the model: the server closed the connection, sent a message too large, timed out. A failure
 * that means the connection is gone ends it: a remote server gone away does not close anything by itself, and a
 * stdio connection past a message too large is out of step.
 */
export const callTool = (
  connection: Connection,
  server: string,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  options: CallOptions
): Effect.Effect<CallToolResult, McpCallError> =>
  // One signal for both ends (Effect.tryPromise would add its own AbortController and listener per call): the
  // runtime's interruption and a broken answer abort it, and the SDK then cancels the request.
  Effect.async<CallToolResult, McpCallError>((resume) => {
    const controller = new CallSignal()
    let settled = false
    const finish = (outcome: Effect.Effect<CallToolResult, McpCallError>) => {
      if (settled) return
      settled = true
      off()
      resume(outcome)
    }
    const failWith = (error: unknown) => {
      const failure = callFailure(connection, server, tool, error)
      if (failure.reason === "Disconnected" || failure.reason === "MessageTooLarge") connection.end(failure.message)
      finish(Effect.fail(failure))
    }
    const off = connection.onMalformed((reason) => {
      failWith(new MalformedMessage(reason))
      controller.abort(new MalformedMessage(reason))
    })
    // The runtime's own timer (the tool's timeout) stops the call first; the SDK's is only a backstop.
    const timeout = Duration.isFinite(options.timeout) ? Duration.toMillis(options.timeout) + 1_000 : NO_LIMIT_MS
    // Without onprogress the SDK sends no progress token (and registers no handler for it).
    const requestOptions = options.onProgress === undefined
      ? { signal: controller.signal, timeout }
      : { signal: controller.signal, onprogress: options.onProgress, timeout }
    ;(connection.client.callTool({ name: tool, arguments: { ...args } }, undefined, requestOptions) as Promise<
      CallToolResult
    >).then(
      (result) => finish(Effect.succeed(result)),
      failWith
    )
    return Effect.sync(() => {
      if (settled) return
      settled = true
      off()
      controller.abort()
    })
  })

const callFailure = (connection: Connection, server: string, tool: string, error: unknown): McpCallError => {
  const code = error instanceof McpError ? error.code : undefined
  const last = connection.lastError()
  if (last !== undefined && isOverflow(last)) {
    return new McpCallError({
      server,
      reason: "MessageTooLarge",
      message: `MCP server "${server}" answered ${tool} with a message larger than the ${
        STDIO_BUFFER_BYTES / 1024 / 1024
      } MiB stdio limit, so the connection was reset (it is being restored). Ask for less output.`
    })
  }
  if (error instanceof MalformedMessage) {
    return new McpCallError({
      server,
      reason: "Protocol",
      message: `MCP server "${server}" sent a message that is not valid JSON-RPC while ${tool} was running ` +
        `(${error.message}), so its answer was lost; the call was abandoned and may have had effects.`
    })
  }
  // A remote server that went away fails the request itself (fetch failed, unknown session): the connection is gone.
  const remoteGone = connection.remote && (!(error instanceof McpError) || code === ErrorCode.ConnectionClosed)
  if (code === ErrorCode.ConnectionClosed || remoteGone || /Not connected/.test(errorText(error))) {
    return new McpCallError({
      server,
      reason: "Disconnected",
      message:
        `MCP server "${server}" closed the connection while ${tool} was running (the server exited or crashed); it ` +
        `is being restarted. The call may have had effects: check before retrying.`
    })
  }
  if (code === ErrorCode.RequestTimeout) {
    return new McpCallError({
      server,
      reason: "Timeout",
      message: `MCP server "${server}" did not answer ${tool} in time; the request was cancelled.`
    })
  }
  return new McpCallError({
    server,
    reason: "Protocol",
    message: `MCP server "${server}" rejected the call to ${tool}: ${errorText(error)}`
  })
}
