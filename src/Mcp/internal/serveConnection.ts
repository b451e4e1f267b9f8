/**
 * One MCP connection served: an SDK `Server` on a transport, whose `tools/call` requests all feed one long-lived run
 * of a ToolRuntime built for the connection, so parallel calls of one client are scheduled as the calls of one turn
 * (conflicting claims wait, the rest run together), and every call goes through the whole pipeline.
 *
 * - **Cancellation of one call** (`notifications/cancelled`, or the connection closing): the run cannot cancel one of
 *   its calls, so every tool's call is wrapped: it races the call against the request's cancellation, and a cancelled
 *   call interrupts itself (its Scope closes: its process tree is killed) and ends as `interrupted`. A call cancelled
 *   while it waits for approval is denied.
 * - **Approvals**: through `elicitation/create` (a form: allow once / allow for the session / deny) when the client
 *   declared form elicitation, else the Approver in context. No answer ever stops the other calls (`cancelRun` is
 *   dropped: an MCP call is a turn of its own).
 * - **A run that stopped** (a hook's `continue: false` stops the whole run): the next call starts a new run.
 * - **Durable calls** (`durable` given): each call is a durable turn of its own instead, keyed by the id the client
 *   gives it in `_meta` (Claude Code's `claudecode/toolUseId`, or `effect-tool-runtime/toolUseId`), so a client that
 *   sends the call again after the server restarted attaches to it: a completed call gives its recorded outcome, an
 *   unanswered question is asked again (its token in the form's `_meta`), a call that was running is run again when it
 *   is idempotent and otherwise reported unknown. A session's durable calls run one at a time, as `serve`'s turns do
 *   (each is its own run, so one run's scheduler cannot order them). A question left open when the connection closes
 *   stays open for the next process (it is not denied).
 *
 * @internal
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  SetLevelRequestSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { CallToolResult, LoggingLevel, ProgressToken, RequestId } from "@modelcontextprotocol/sdk/types.js"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Runtime from "effect/Runtime"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import { makeDynamicRegistry, ToolRegistry } from "../../Catalog/ToolRegistry.js"
import type { RegisteredTool, Registry } from "../../Catalog/ToolRegistry.js"
import type { ToolHooks } from "../../Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../Permission/Approver.js"
import type { ApprovalRequest } from "../../Permission/Approver.js"
import type { PermissionPolicy } from "../../Permission/PermissionPolicy.js"
import type { ToolEvent } from "../../Runtime/Events.js"
import { ToolRuntime } from "../../Runtime/ToolRuntime.js"
import type { RunHandle, SchedulingMode } from "../../Runtime/ToolRuntime.js"
import type { ResultStore } from "../../Session/ResultStore.js"
import type { Outcome } from "../../Tool/Outcome.js"
import { filterEnabled } from "../../Tool/Tool.js"
import type { AnyService, Definition } from "../../Tool/Tool.js"
import type { ToolUseBlock } from "../../Tool/Wire.js"
import { approvalForm, listingOf, resultOf } from "./serveContent.js"
import type { FormDecision } from "./serveContent.js"

/** What a connection is served with. */
export interface ConnectionOptions {
  readonly name: string
  readonly version: string
  readonly instructions?: string | undefined
  /** Tools left out of `tools/list` (e.g. those a deny rule removes whole); a call to one is still governed. */
  readonly exclude?: ((definition: Definition.Any) => boolean) | undefined
  readonly scheduling?: SchedulingMode | undefined
  /** How long a person has to answer an approval form; default 10 minutes. */
  readonly approvalTimeoutMs?: number | undefined
  /** How often the tool set is checked for changes (`notifications/tools/list_changed`); default 1 second. */
  readonly listCheckMs?: number | undefined
  /** Run after every call's outcome (e.g. saving the session); its failure is ignored. */
  readonly afterCall?: Effect.Effect<void, unknown> | undefined
  /** Runs each call as a durable turn of its own (see the module doc); default: one run for every call. */
  readonly durable?: DurableCalls | undefined
}

/** The services a connection's runtime is built from. */
export type ConnectionServices = ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore

/** Runs one call as a durable turn of its own: its Outcome, its events to `onEvent` while it runs here. */
export type DurableCallRunner = (
  toolUse: ToolUseBlock,
  onEvent: (event: ToolEvent) => Effect.Effect<void>
) => Effect.Effect<Outcome>

/**
 * Builds, for one connection, the runner of its durable calls over the connection's services (its tools wrapped for
 * cancellation, its approver); released with the connection.
 */
export type DurableCalls = (
  services: Context.Context<ConnectionServices>
) => Effect.Effect<DurableCallRunner, never, Scope.Scope>

/** The `_meta` keys a client names its call with, first found first. */
export const CALL_ID_KEYS: ReadonlyArray<string> = ["claudecode/toolUseId", "effect-tool-runtime/toolUseId"]

/** What a call id may be: the model's tool_use ids and the like (it names records and the audit log). */
const CALL_ID = /^[A-Za-z0-9_.:-]{1,128}$/

/** The id a client gave its call in `_meta`; a malformed one is an error, none is `undefined`. */
export const callIdOf = (meta: Readonly<Record<string, unknown>> | undefined): string | McpError | undefined => {
  if (meta === undefined) return undefined
  for (const key of CALL_ID_KEYS) {
    const id = meta[key]
    if (id === undefined) continue
    return typeof id === "string" && CALL_ID.test(id)
      ? id
      : new McpError(
        ErrorCode.InvalidParams,
        `_meta["${key}"] must be 1 to 128 letters, digits or _.:- (it names the call across restarts)`
      )
  }
  return undefined
}

/** One `tools/call` in flight. */
interface Call {
  readonly requestId: RequestId
  readonly progressToken: ProgressToken | undefined
  readonly send: (notification: { method: "notifications/progress"; params: Record<string, unknown> }) => Promise<void>
  readonly signal: AbortSignal
  readonly cancelled: Deferred.Deferred<void>
  readonly outcome: Deferred.Deferred<Outcome>
  progress: number
}

/** A run fed by a queue: a tool_use in, its Outcome out through the events. */
interface Feed {
  readonly input: Mailbox.Mailbox<ToolUseBlock>
  stopped: boolean
}

const LEVELS: ReadonlyArray<LoggingLevel> = [
  "debug",
  "info",
  "notice",
  "warning",
  "error",
  "critical",
  "alert",
  "emergency"
]

/** The service with its invocations' calls raced against the request's cancellation. */
const cancellableService = (
  service: AnyService,
  wrap: <A, E, R>(toolUseId: string, call: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): AnyService => ({
  ...service,
  plan: (input) => {
    const invocation = service.plan(input)
    return { ...invocation, call: (context) => wrap(context.toolUseId, invocation.call(context)) }
  }
})

/** Serves one connection until its transport closes; everything it started ends with the scope. */
export const serveConnection = (
  transport: Transport,
  options: ConnectionOptions
): Effect.Effect<void, never, Scope.Scope | ConnectionServices> =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const fallback = yield* Approver
    const passed = yield* Effect.context<PermissionPolicy | ToolHooks | ResultStore>()
    const runtime = yield* Effect.runtime<never>()
    const calls = new Map<string, Call>()
    let counter = 0
    let logLevel: LoggingLevel | undefined
    let connectionClosed = false
    /** Durable questions waiting for their call to be sent (again): a resumed turn asks before its client calls. */
    const arrivals = new Map<string, Deferred.Deferred<void>>()
    const arrivalOf = (toolUseId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        let arrival = arrivals.get(toolUseId)
        if (arrival === undefined) {
          arrival = Deferred.unsafeMake<void>(FiberId.none)
          arrivals.set(toolUseId, arrival)
        }
        return Deferred.await(arrival)
      })

    const server = new Server(
      { name: options.name, version: options.version },
      {
        capabilities: { tools: { listChanged: true }, logging: {} },
        ...(options.instructions === undefined ? {} : { instructions: options.instructions })
      }
    )

    // -- the tools, wrapped for cancellation --------------------------------------------------------------------
    const wrap = <A, E, R>(toolUseId: string, call: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
      const state = calls.get(toolUseId)
      if (state === undefined) return call
      return Effect.raceFirst(call, Effect.zipRight(Deferred.await(state.cancelled), Effect.interrupt))
    }
    const wrapped = new WeakMap<RegisteredTool, RegisteredTool>()
    const wrapTool = (tool: RegisteredTool): RegisteredTool => {
      let known = wrapped.get(tool)
      if (known === undefined) {
        known = { definition: tool.definition, service: cancellableService(tool.service, wrap) }
        wrapped.set(tool, known)
      }
      return known
    }
    let lastTools: ReadonlyArray<RegisteredTool> | undefined
    let lastWrapped: ReadonlyArray<RegisteredTool> = []
    const served: Registry = makeDynamicRegistry(() => {
      const tools = registry.snapshot().tools
      if (tools !== lastTools) {
        lastTools = tools
        lastWrapped = tools.map(wrapTool)
      }
      return lastWrapped
    })

    // -- approvals ----------------------------------------------------------------------------------------------
    const denied = (message: string) => ApprovalAnswer.Deny({ message, cancelRun: false })
    const canElicit = (): boolean => {
      const elicitation = server.getClientCapabilities()?.elicitation
      if (elicitation === undefined) return false
      // `{}` is form elicitation (2025-06-18); later clients name the modes they support.
      return "form" in elicitation || !("url" in elicitation)
    }
    const elicit = (request: ApprovalRequest, call: Call | undefined): Effect.Effect<ApprovalAnswer> =>
      Effect.tryPromise({
        try: (signal) => {
          const abort = new AbortController()
          const stop = () => abort.abort()
          signal.addEventListener("abort", stop)
          call?.signal.addEventListener("abort", stop)
          const form = approvalForm(request)
          // A durable question's token: the name of the pending approval across processes.
          const params = request.token === undefined
            ? form
            : { ...form, _meta: { "effect-tool-runtime/approvalToken": request.token } }
          return server.elicitInput(params, {
            signal: abort.signal,
            timeout: options.approvalTimeoutMs ?? 600_000,
            ...(call === undefined ? {} : { relatedRequestId: call.requestId })
          })
        },
        catch: (error) => error
      }).pipe(
        Effect.map((result): ApprovalAnswer => {
          if (result.action !== "accept") {
            return denied(
              `The user ${result.action === "decline" ? "declined" : "cancelled"} the approval of ${request.toolName}.`
            )
          }
          const decision = result.content?.["decision"] as FormDecision | undefined
          if (decision === "allow_once") return ApprovalAnswer.AllowOnce()
          if (decision === "allow_session") return ApprovalAnswer.AllowSession({ rules: request.suggestions })
          return denied(`The user denied ${request.toolName}.`)
        }),
        Effect.catchAll((error) =>
          // The connection closed on a durable question: no answer; it stays open for the next process.
          connectionClosed && request.token !== undefined
            ? Effect.never
            : Effect.succeed(
              call?.signal.aborted === true
                ? denied("The client cancelled the call while it waited for approval.")
                : denied(`Asking the user to approve ${request.toolName} failed (${messageOf(error)}); it was denied.`)
            )
        )
      )
    const approver: Approver["Type"] = Approver.of({
      ask: (request) => {
        const call = calls.get(request.toolUseId)
        if (request.token !== undefined) {
          if (connectionClosed) return Effect.never
          // Asked when the client sends the call again: the answer goes to whoever waits for the result.
          if (call === undefined) return Effect.zipRight(arrivalOf(request.toolUseId), approver.ask(request))
        }
        if (call?.signal.aborted === true) {
          return Effect.succeed(denied("The client cancelled the call before it was approved."))
        }
        if (canElicit()) return elicit(request, call)
        return Effect.map(
          fallback.ask(request),
          (answer) => ApprovalAnswer.$is("Deny")(answer) ? ApprovalAnswer.Deny({ ...answer, cancelRun: false }) : answer
        )
      }
    })

    const services = passed.pipe(Context.add(ToolRegistry, served), Context.add(Approver, approver))
    const toolRuntime = Context.get(
      yield* Layer.build(ToolRuntime.layer.pipe(Layer.provide(Layer.succeedContext(services)))),
      ToolRuntime
    )
    const durable = options.durable === undefined ? undefined : yield* options.durable(services)
    const durableOne = yield* Effect.makeSemaphore(1)

    // -- notifications ------------------------------------------------------------------------------------------
    const log = (level: LoggingLevel, data: string): Effect.Effect<void> =>
      logLevel === undefined || LEVELS.indexOf(level) < LEVELS.indexOf(logLevel)
        ? Effect.void
        : Effect.promise(() => server.sendLoggingMessage({ level, logger: options.name, data }).catch(() => undefined))
    const onEvent = (event: ToolEvent): Effect.Effect<void> => {
      switch (event._tag) {
        case "Started":
          return log("info", `${event.toolUseId}: ${event.activity}`)
        case "Notice":
          return log("notice", `${event.toolUseId}: ${event.message}`)
        case "Progress": {
          const call = calls.get(event.toolUseId)
          const text = event.progress.message ?? event.progress.lines?.at(-1)
          const notify = call === undefined || call.progressToken === undefined
            ? Effect.void
            : Effect.promise(() =>
              call.send({
                method: "notifications/progress",
                params: {
                  progressToken: call.progressToken!,
                  progress: ++call.progress,
                  ...(text === undefined ? {} : { message: text })
                }
              }).catch(() => undefined)
            )
          return Effect.zipRight(notify, text === undefined ? Effect.void : log("debug", `${event.toolUseId}: ${text}`))
        }
        case "Completed": {
          const call = calls.get(event.outcome.toolUseId)
          if (call === undefined) return Effect.void
          // A call interrupted that the client did not cancel: something stopped the whole run (a hook).
          if (event.outcome.status === "interrupted" && !call.signal.aborted && feed !== undefined) {
            feed.stopped = true
          }
          return Deferred.succeed(call.outcome, event.outcome)
        }
        default:
          return Effect.void
      }
    }

    // -- the run ------------------------------------------------------------------------------------------------
    const scope = yield* Effect.scope
    let feed: Feed | undefined
    const startFeed = Effect.gen(function*() {
      // A Mailbox, which the run takes from in batches: a Stream over a Queue costs several times more per call.
      const input = yield* Mailbox.make<ToolUseBlock>()
      const next: Feed = { input, stopped: false }
      const handle: RunHandle = yield* toolRuntime.start(input, { mode: options.scheduling ?? "conflict-aware" })
      yield* Effect.forkIn(Stream.runForEach(handle.events, onEvent), scope)
      return next
    }).pipe(Effect.provideService(Scope.Scope, scope))
    const feedFor = Effect.suspend(() => {
      if (feed !== undefined && !feed.stopped) return Effect.succeed(feed)
      const old = feed
      return Effect.tap(
        Effect.zipRight(old === undefined ? Effect.void : old.input.end, startFeed),
        (started) => Effect.sync(() => void (feed = started))
      )
    })
    const startOne = yield* Effect.makeSemaphore(1)

    const call = (
      name: string,
      input: unknown,
      extra: {
        readonly requestId: RequestId
        readonly signal: AbortSignal
        readonly _meta?: { readonly progressToken?: ProgressToken | undefined } | undefined
        readonly sendNotification: Call["send"]
      }
    ): Effect.Effect<CallToolResult, McpError> =>
      Effect.gen(function*() {
        const clientId = durable === undefined ? undefined : callIdOf(extra._meta)
        if (clientId instanceof McpError) return yield* Effect.fail(clientId)
        if (clientId !== undefined && calls.has(clientId)) {
          return yield* Effect.fail(
            new McpError(ErrorCode.InvalidRequest, `a call with the id ${clientId} is already running`)
          )
        }
        // A durable call without a name of the client's gets one no other process used.
        const id = durable === undefined
          ? `mcp_${++counter}_${String(extra.requestId)}`
          : clientId ?? `mcp_${randomUUID()}`
        const state: Call = {
          requestId: extra.requestId,
          progressToken: extra._meta?.progressToken,
          send: extra.sendNotification,
          signal: extra.signal,
          cancelled: yield* Deferred.make<void>(),
          outcome: yield* Deferred.make<Outcome>(),
          progress: 0
        }
        calls.set(id, state)
        const arrival = arrivals.get(id)
        if (arrival !== undefined) {
          arrivals.delete(id)
          yield* Deferred.succeed(arrival, undefined)
        }
        const onAbort = () => Deferred.unsafeDone(state.cancelled, Exit.void)
        if (extra.signal.aborted) onAbort()
        else extra.signal.addEventListener("abort", onAbort, { once: true })
        const toolUse: ToolUseBlock = { type: "tool_use", id, name, input: input ?? {} }
        const outcome = yield* (durable === undefined
          ? Effect.flatMap(
            startOne.withPermits(1)(feedFor),
            (current) => Effect.zipRight(current.input.offer(toolUse), Deferred.await(state.outcome))
          )
          : durableOne.withPermits(1)(durable(toolUse, onEvent))).pipe(
            Effect.ensuring(Effect.sync(() => {
              calls.delete(id)
              extra.signal.removeEventListener("abort", onAbort)
            }))
          )
        if (options.afterCall !== undefined) yield* Effect.ignore(options.afterCall)
        if (outcome.error?._tag === "UnknownTool") {
          return yield* Effect.fail(new McpError(ErrorCode.InvalidParams, contentText(outcome)))
        }
        return resultOf(outcome)
      })

    // -- the tool list ------------------------------------------------------------------------------------------
    const listed = Effect.map(
      Effect.suspend(() => filterEnabled(served.snapshot().tools)),
      (tools) => tools.filter((tool) => options.exclude?.(tool.definition) !== true).map((tool) => tool.definition)
    )
    let announced: string | undefined
    const signature = (definitions: ReadonlyArray<Definition.Any>) =>
      definitions.map((definition) => definition.name).join("\n")

    // -- the handlers -------------------------------------------------------------------------------------------
    const run = Runtime.runPromise(runtime)
    server.setRequestHandler(ListToolsRequestSchema, () =>
      run(Effect.map(listed, (definitions) => {
        announced = signature(definitions)
        return { tools: definitions.map(listingOf) }
      })))
    server.setRequestHandler(CallToolRequestSchema, (request, extra) =>
      run(call(request.params.name, request.params.arguments, extra)))
    server.setRequestHandler(SetLevelRequestSchema, (request) => {
      logLevel = request.params.level
      return {}
    })

    const closed = yield* Deferred.make<void>()
    server.onclose = () => {
      connectionClosed = true
      Deferred.unsafeDone(closed, Exit.void)
    }
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        // Calls still in flight end with the connection: their fibers are interrupted with the scope.
        Effect.sync(() => {
          for (const state of calls.values()) {
            Deferred.unsafeDone(state.cancelled, Exit.void)
          }
        }),
        Effect.promise(() =>
          server.close().catch(() => undefined)
        )
      )
    )
    yield* Effect.promise(() => server.connect(transport))

    // The tool set changes (an MCP server of ours came up, a tool was disabled): tell the client.
    yield* Effect.forkIn(
      Effect.repeat(
        Effect.flatMap(listed, (definitions) => {
          const now = signature(definitions)
          if (announced === undefined || now === announced) return Effect.void
          announced = now
          return Effect.promise(() => server.sendToolListChanged().catch(() => undefined))
        }),
        Schedule.spaced(options.listCheckMs ?? 1_000)
      ),
      scope
    )
    yield* Deferred.await(closed)
  })

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)

const contentText = (outcome: Outcome): string =>
  typeof outcome.result.content === "string"
    ? outcome.result.content
    : outcome.result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
