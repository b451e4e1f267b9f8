/**
 * `effect-tool-runtime serve --mcp` (stdio: the process is the session) and `serve --mcp-http PORT` (Streamable
 * HTTP: one session per MCP session id, kept in `DIR/<session id>` with `--session DIR`), on `McpServe`. The
 * runtime is the one `exec` and `serve` configure (settings, rules, modes, hooks, MCP servers, audit); an approval
 * is asked through the client's elicitation form, else answered by `--approve`, else denied with the reason.
 * A signal ends the connections (their calls are interrupted, process trees included) and the process exits 130/143.
 * `serve --mcp --durable --session DIR`: each call is a durable turn of its own on SQLite in DIR (see `McpServe`).
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as nodePath from "node:path"
import * as McpServe from "../Mcp/McpServe.js"
import { ApprovalAnswer, Approver } from "../Permission/Approver.js"
import * as RulePolicy from "../Permission/RulePolicy.js"
import { Session } from "../Session/Session.js"
import type { McpServeCli } from "./args.js"
import { forgetOnForcedExit } from "./exec.js"
import { approverFor, servicesLayer, sessionLayer } from "./layer.js"
import type { RuntimeOptions } from "./layer.js"
import { writeJsonLine } from "./output.js"
import { onFirstSignal } from "./signals.js"

/** Without elicitation and without `--approve`: denied, saying why and what to do. */
const noOneToAsk = Layer.succeed(Approver, {
  ask: (request) =>
    Effect.succeed(ApprovalAnswer.Deny({
      message: `${request.toolName} needs approval, and this MCP client cannot be asked (it did not declare the ` +
        "elicitation capability); it was denied. Allow it with a rule (--allow), or start the server with --approve.",
      cancelRun: false
    }))
})

const serveOptions = (options: RuntimeOptions): McpServe.ServeOptions => ({
  scheduling: options.scheduling,
  // Tools a deny rule of the command line removes whole are not listed (calls to them are still denied).
  exclude: RulePolicy.wholeToolDenial({ cliRules: options.rules })
})

/** Waits for the first signal. */
const signalled = Effect.gen(function*() {
  const signal = yield* Deferred.make<void>()
  const unregister = onFirstSignal(() => Deferred.unsafeDone(signal, Exit.void))
  return yield* Deferred.await(signal).pipe(Effect.ensuring(Effect.sync(unregister)))
})

/** Runs `serve --mcp` or `serve --mcp-http`. */
export const serveMcp = (options: RuntimeOptions, mcp: McpServeCli) =>
  mcp.transport === "stdio" ? serveStdio(options) : serveHttp(options, mcp)

const serveStdio = (options: RuntimeOptions) =>
  Effect.scoped(
    Effect.gen(function*() {
      yield* forgetOnForcedExit
      const session = yield* Session
      const durable = options.durable === undefined
        ? undefined
        // Loaded only here: the durable dependencies stay out of every other start.
        : (yield* Effect.promise(() => import("./durable.js"))).servedCalls(session.directory)
      // The connection ends when the client closes standard input, or at a signal.
      // Saved after every call, as `serve` saves after every turn.
      yield* Effect.raceFirst(
        McpServe.stdio({ ...serveOptions(options), afterCall: session.checkpoint, durable }),
        signalled
      )
      yield* session.checkpoint
    }).pipe(
      Effect.provide(servicesLayer(options, approverFor(options, noOneToAsk), { toolSearch: false })),
      Effect.provide(sessionLayer(options))
    )
  )

const serveHttp = (options: RuntimeOptions, mcp: Extract<McpServeCli, { transport: "http" }>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path | CommandExecutor.CommandExecutor>()
      const sessionFor = (id: string) =>
        options.sessionDir === undefined
          ? Session.layerTemp
          : Session.layer({ directory: nodePath.join(options.sessionDir, id) })
      // Saved when the MCP session ends (before its lock is released).
      const checkpointAtEnd = Layer.scopedDiscard(
        Effect.addFinalizer(() => Effect.ignore(Session.checkpoint))
      )
      const listening = yield* McpServe.http({
        ...serveOptions(options),
        port: mcp.port,
        host: mcp.host,
        token: mcp.token,
        session: (id) =>
          Layer.mergeAll(
            servicesLayer(options, approverFor(options, noOneToAsk), { toolSearch: false }),
            checkpointAtEnd
          ).pipe(
            Layer.provide(sessionFor(id)),
            Layer.provide(Layer.succeedContext(platform))
          )
      })
      yield* writeJsonLine({ type: "ready", url: listening.url, port: listening.port })
      yield* signalled
    })
  )
