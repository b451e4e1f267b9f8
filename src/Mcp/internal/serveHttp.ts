/**
 * Streamable HTTP for the MCP server: one node `http` server, one MCP session per `Mcp-Session-Id` (each with the
 * session services built from its own layer, and its own connection), a bearer token when one is configured, and
 * Host/Origin checks against DNS rebinding when the server listens on a loopback address.
 *
 * @internal
 */
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Scope from "effect/Scope"
import { randomUUID, timingSafeEqual } from "node:crypto"
import * as http from "node:http"
import type { ConnectionOptions, ConnectionServices } from "./serveConnection.js"
import { serveConnection } from "./serveConnection.js"

/** How the HTTP server listens. */
export interface HttpOptions extends ConnectionOptions {
  readonly port: number
  /** Default `127.0.0.1`. */
  readonly host?: string | undefined
  /** `Authorization: Bearer <token>` required on every request. */
  readonly token?: string | undefined
  /** The path of the endpoint; default `/mcp`. */
  readonly path?: string | undefined
  /** The largest request body accepted; default 4 MiB. */
  readonly maxBodyBytes?: number | undefined
}

/** A listening server. */
export interface Listening {
  readonly port: number
  readonly url: string
  /** The MCP sessions open now. */
  readonly sessions: () => number
}

const LOOPBACK = new Set(["127.0.0.1", "localhost", "::1", "[::1]"])

export const isLoopback = (host: string): boolean => LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)

/** The host part of a Host header or an Origin's authority. */
const hostnameOf = (authority: string): string => {
  if (authority.startsWith("[")) return authority.slice(0, authority.indexOf("]") + 1)
  const colon = authority.lastIndexOf(":")
  return colon === -1 ? authority : authority.slice(0, colon)
}

const reply = (res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}) => {
  if (res.headersSent) return void res.end()
  res.writeHead(status, { "content-type": "application/json", ...headers })
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }))
}

const sameToken = (given: string, expected: string): boolean => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

const readBody = (req: http.IncomingMessage, limit: number): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    let size = 0
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        resolve(undefined)
        req.destroy()
      } else chunks.push(chunk)
    })
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

interface Open {
  readonly transport: StreamableHTTPServerTransport
  readonly scope: Scope.CloseableScope
}

/** Listens until the scope closes; every session's services come from `session`, built per MCP session. */
export const listen = <E>(
  options: HttpOptions,
  session: (sessionId: string) => Layer.Layer<ConnectionServices, E>
): Effect.Effect<Listening, Error, Scope.Scope> =>
  Effect.gen(function*() {
    const host = options.host ?? "127.0.0.1"
    const endpoint = options.path ?? "/mcp"
    const loopback = isLoopback(host)
    const runtime = yield* Effect.runtime<never>()
    const sessions = new Map<string, Open>()
    const outer = yield* Effect.scope

    /** Builds a session's services and connection; the transport then handles the initialize request. */
    const open = (id: string): Effect.Effect<StreamableHTTPServerTransport, E> =>
      Effect.gen(function*() {
        const scope = yield* Scope.fork(outer, ExecutionStrategy.sequential)
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => id })
        const built = yield* Effect.exit(Layer.buildWithScope(session(id), scope))
        if (Exit.isFailure(built)) {
          yield* Scope.close(scope, built)
          return yield* Effect.failCause(built.cause)
        }
        sessions.set(id, { transport, scope })
        yield* Effect.addFinalizer(() => Effect.sync(() => void sessions.delete(id))).pipe(
          Effect.provideService(Scope.Scope, scope)
        )
        const served = serveConnection(transport, options).pipe(
          Effect.provideService(Scope.Scope, scope),
          Effect.provide(built.value)
        )
        // The connection ends when its transport closes (DELETE, or the server stopping): the session goes with it.
        yield* Effect.forkIn(Effect.ensuring(served, Scope.close(scope, Exit.void)), outer)
        // The handlers are set and the server connected before the initialize request is handled.
        yield* Effect.yieldNow()
        return transport
      })

    const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
      const url = new URL(req.url ?? "/", "http://localhost")
      if (url.pathname !== endpoint) return reply(res, 404, `Not found: the MCP endpoint is ${endpoint}`)
      if (loopback) {
        const hostHeader = req.headers.host
        const origin = req.headers.origin
        if (hostHeader === undefined || !isLoopback(hostnameOf(hostHeader))) {
          return reply(res, 403, "Forbidden: the Host header must name a loopback address")
        }
        if (origin !== undefined) {
          let originHost: string | undefined
          try {
            originHost = new URL(origin).hostname
          } catch {
            originHost = undefined
          }
          if (originHost === undefined || !isLoopback(originHost)) {
            return reply(res, 403, "Forbidden: the Origin must be a loopback address")
          }
        }
      }
      if (options.token !== undefined) {
        const auth = req.headers.authorization ?? ""
        const given = auth.startsWith("Bearer ") ? auth.slice(7) : ""
        if (!sameToken(given, options.token)) {
          return reply(res, 401, "Unauthorized: a bearer token is required", { "www-authenticate": "Bearer" })
        }
      }
      let body: unknown = undefined
      if (req.method === "POST") {
        const text = await readBody(req, options.maxBodyBytes ?? 4 * 1024 * 1024)
        if (text === undefined) return reply(res, 413, "Request body too large")
        try {
          body = JSON.parse(text)
        } catch {
          res.writeHead(400, { "content-type": "application/json" })
          return void res.end(
            JSON.stringify({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error" }, id: null })
          )
        }
      }
      const sessionId = req.headers["mcp-session-id"]
      if (typeof sessionId === "string") {
        const known = sessions.get(sessionId)
        if (known === undefined) return reply(res, 404, "Session not found")
        return known.transport.handleRequest(req, res, body)
      }
      const initialize = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body)
      if (req.method !== "POST" || !initialize) {
        return reply(res, 400, "Bad Request: no valid session ID provided (send initialize first)")
      }
      const opened = await Runtime.runPromiseExit(runtime)(open(randomUUID()))
      if (Exit.isFailure(opened)) return reply(res, 500, "The session could not be started")
      return opened.value.handleRequest(req, res, body)
    }

    const server = http.createServer((req, res) => {
      handle(req, res).catch(() => reply(res, 500, "Internal error"))
    })
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(options.port, host, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : options.port
    const shown = host.includes(":") ? `[${host}]` : host
    return { port, url: `http://${shown}:${port}${endpoint}`, sessions: () => sessions.size }
  })
