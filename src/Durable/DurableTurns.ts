/**
 * Durable turns: a turn's tool calls survive the process that runs them. A turn is a workflow (@effect/workflow)
 * keyed by its session and turn; each call an activity keyed by its tool_use id; a question to the approver a
 * durable deferred whose token the approver is given. Executing the same turn again (in this process or a new one)
 * attaches to the run that exists: calls that completed give their recorded outcome, a call that was running when
 * its process died runs again when it is idempotent and is otherwise reported "unknown: the process stopped while it
 * ran", and a question nobody answered is asked again. One tool_result per tool_use, in model order, as always.
 *
 * ```ts
 * const outcomes = yield* DurableTurns.execute({ session: "s1", toolUses })   // the same call again attaches
 * ```
 *
 * Layers: {@link DurableTurns.layerSqlite} (one runner, a SQLite file in the session directory: nothing to start)
 * and {@link DurableTurns.layer} over a workflow engine and SQL client of your own (e.g. runners on Postgres, see
 * `DurableRunners.layerPostgres`). Each gives the durable {@link ToolRuntime} too: use it for every turn of the session.
 *
 * @since 0.3.0
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SingleRunner from "@effect/cluster/SingleRunner"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import * as Workflow from "@effect/workflow/Workflow"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { ToolHooks } from "../Hooks/ToolHooks.js"
import type { Approver } from "../Permission/Approver.js"
import type { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import type { ToolEvent } from "../Runtime/Events.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import type { SchedulingMode } from "../Runtime/ToolRuntime.js"
import type { ResultStore } from "../Session/ResultStore.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import * as Execution from "./internal/execution.js"
import * as Record from "./internal/record.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * One turn to execute durably.
 *
 * @since 0.3.0
 * @category models
 */
export interface TurnRequest {
  /** The session the turn belongs to. */
  readonly session: string
  /** The turn's key within the session; default: derived from its tool_use ids (the same turn, the same key). */
  readonly turn?: string | undefined
  readonly toolUses: ReadonlyArray<ToolUseBlock>
  /** How the turn's calls are scheduled; default `"conflict-aware"`. */
  readonly mode?: SchedulingMode | undefined
  /**
   * Told each event of the turn's calls (queued, started, decided, completed, ...) while the turn runs in this
   * process. A turn whose workflow runs on another runner (its shard is elsewhere) gives none.
   */
  readonly onEvent?: ((event: ToolEvent) => Effect.Effect<void>) | undefined
}

/**
 * What the session records of one call: the attempt that ran it and how it ended (`unknown`: its process stopped
 * while it ran, and it was not run again).
 *
 * @since 0.3.0
 * @category models
 */
export interface CallRecord {
  readonly toolUseId: string
  readonly toolName: string
  readonly attempt: number
  readonly state: "running" | "done" | "unknown"
  readonly status: string | undefined
}

/**
 * The workflow a durable turn is.
 *
 * @since 0.3.0
 * @category workflows
 */
export const TurnWorkflow = Workflow.make({
  name: "effect-tool-runtime/Turn",
  payload: {
    session: Schema.String,
    turn: Schema.String,
    toolUses: Schema.Array(Schema.Unknown),
    mode: Schema.optional(Schema.Literal("conflict-aware", "batched"))
  },
  // Each Outcome as JSON (see `internal/record.ts`).
  success: Schema.Array(Schema.String),
  idempotencyKey: ({ session, turn }) => `${session}\u0000${turn}`
})

/** The default turn key: a digest of the tool_use ids in model order. */
const turnKey = (request: TurnRequest): string =>
  request.turn ??
    createHash("sha256").update(request.toolUses.map((toolUse) => toolUse.id).join("\u0000")).digest("hex").slice(0, 32)

// ---------------------------------------------------------------------------------------------------------------
// the service
// ---------------------------------------------------------------------------------------------------------------

/**
 * Runs turns durably.
 *
 * @since 0.3.0
 * @category tags
 */
export class DurableTurns extends Context.Tag("effect-tool-runtime/DurableTurns")<
  DurableTurns,
  {
    /** Executes the turn, or attaches to its run; its outcomes in model order. */
    readonly execute: (request: TurnRequest) => Effect.Effect<ReadonlyArray<Outcome>>
    /** What the session records of the turn's calls, in the order they started. */
    readonly calls: (request: Omit<TurnRequest, "toolUses"> & Partial<TurnRequest>) => Effect.Effect<
      ReadonlyArray<CallRecord>
    >
  }
>() {
  /**
   * Durable turns over a workflow engine and a SQL client of the caller's (the record of calls lives in that
   * database). Gives the durable {@link ToolRuntime} too.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layer: Layer.Layer<
    DurableTurns | ToolRuntime,
    never,
    WorkflowEngine | SqlClient.SqlClient | ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore
  > = Layer.suspend(() => layerOver)

  /**
   * One runner on a SQLite file (`durable.sqlite`) in the session directory: nothing to start, and a new process on
   * the same directory resumes the turns the last one left.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerSqlite = (options: {
    readonly directory: string
    readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
  }): Layer.Layer<
    DurableTurns | ToolRuntime,
    never,
    ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore
  > => {
    const engine = ClusterWorkflowEngine.layer.pipe(
      Layer.provideMerge(
        SingleRunner.layer({ runnerStorage: "memory", shardingConfig: { ...quickRunner, ...options.shardingConfig } })
      )
    )
    const client = Layer.suspend(() => {
      mkdirSync(options.directory, { recursive: true, mode: 0o700 })
      return SqliteClient.layer({ filename: join(options.directory, "durable.sqlite") })
    }).pipe(
      // WAL with NORMAL sync: a killed process loses nothing it committed (only a power cut may lose the last
      // commits); FULL would wait for the disk on every message of every call.
      Layer.tap((context) => Context.get(context, SqlClient.SqlClient)`PRAGMA synchronous = NORMAL`)
    )
    return DurableTurns.layer.pipe(
      Layer.provide(engine),
      Layer.provideMerge(client),
      Layer.orDie
    ) as Layer.Layer<
      DurableTurns | ToolRuntime,
      never,
      ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore
    >
  }

  /**
   * Each call a durable turn of its own (`mcp/<tool_use id>` in the session), on one SQLite runner in `directory`,
   * over the services given: what `McpServe`'s `durable` option takes (the services are the connection's: its
   * tools, wrapped for cancellation, and its approver, which asks through elicitation). Built in the scope.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly servedCalls = (options: {
    readonly directory: string
    /** The session's key; default the directory. */
    readonly session?: string | undefined
  }) =>
  (
    services: Context.Context<ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore>
  ): Effect.Effect<
    (toolUse: ToolUseBlock, onEvent: (event: ToolEvent) => Effect.Effect<void>) => Effect.Effect<Outcome>,
    never,
    Scope.Scope
  > =>
    Effect.map(
      Layer.build(
        DurableTurns.layerSqlite({ directory: options.directory }).pipe(
          Layer.provide(Layer.succeedContext(services))
        )
      ),
      (context) => {
        const turns = Context.get(context, DurableTurns)
        const session = options.session ?? options.directory
        return (toolUse, onEvent) =>
          Effect.map(
            turns.execute({ session, turn: `mcp/${toolUse.id}`, toolUses: [toolUse], onEvent }),
            (outcomes) => outcomes[0]!
          )
      }
    )

  /**
   * Executes a turn durably with the service in context.
   *
   * @since 0.3.0
   * @category accessors
   */
  static readonly execute = (request: TurnRequest): Effect.Effect<ReadonlyArray<Outcome>, never, DurableTurns> =>
    Effect.flatMap(DurableTurns, (turns) => turns.execute(request))
}

/**
 * One process, one runner: messages are delivered at once; storage is polled for what a dead process left. At
 * shutdown a turn still running (waiting on a person, say) is stopped at once rather than given 15 s to end: it is
 * durable, and the next process resumes it.
 */
const quickRunner: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  entityMessagePollInterval: "200 millis",
  sendRetryInterval: "50 millis",
  entityTerminationTimeout: "0 millis"
}

/**
 * Who is told the events of a turn running in this process, by session and turn: the workflow's body looks its turn
 * up here (the workflow may run on another runner, where nobody listens).
 */
const listeners = new Map<string, (event: ToolEvent) => Effect.Effect<void>>()
const listenerKey = (session: string, turn: string): string => `${session}\u0000${turn}`

/** The turn's calls on the durable runtime, their events to the listener if there is one. */
const runTurn = (
  session: string,
  turn: string,
  toolUses: ReadonlyArray<ToolUseBlock>,
  mode: SchedulingMode | undefined
): Effect.Effect<ReadonlyArray<Outcome>, never, ToolRuntime> => {
  const options = mode === undefined ? undefined : { mode }
  const onEvent = listeners.get(listenerKey(session, turn))
  if (onEvent === undefined) return ToolRuntime.execute(toolUses, options)
  return Effect.scoped(Effect.gen(function*() {
    const handle = yield* ToolRuntime.start(toolUses, options)
    const forwarding = yield* Effect.forkScoped(Stream.runForEach(handle.events, onEvent))
    const outcomes = yield* handle.await
    yield* Fiber.join(forwarding)
    return outcomes
  }))
}

const layerOver = Layer.effect(
  DurableTurns,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const context = yield* Effect.context<WorkflowEngine>()
    const execute = Effect.fn("DurableTurns.execute")(function*(request: TurnRequest) {
      const turn = turnKey(request)
      const key = listenerKey(request.session, turn)
      const run = TurnWorkflow.execute({
        session: request.session,
        turn,
        toolUses: request.toolUses,
        ...(request.mode === undefined ? {} : { mode: request.mode })
      }).pipe(Effect.provide(context), Effect.orDie)
      const onEvent = request.onEvent
      const encoded = onEvent === undefined ? yield* run : yield* Effect.acquireUseRelease(
        Effect.sync(() => listeners.set(key, onEvent)),
        () => run,
        () => Effect.sync(() => listeners.get(key) === onEvent && listeners.delete(key))
      )
      return encoded.map(Record.decodeOutcome)
    })
    const calls = Effect.fn("DurableTurns.calls")(
      function*(request: Omit<TurnRequest, "toolUses"> & Partial<TurnRequest>) {
        const executionId = yield* TurnWorkflow.executionId({
          session: request.session,
          turn: turnKey({ toolUses: [], ...request }),
          toolUses: []
        })
        const rows = yield* Effect.orDie(Record.ofExecution(sql, executionId))
        return rows.map((row): CallRecord => ({
          toolUseId: row.tool_use_id,
          toolName: row.tool,
          attempt: row.attempt,
          state: row.state,
          status: row.status ?? undefined
        }))
      }
    )
    return DurableTurns.of({ execute, calls })
  })
).pipe(
  // The workflow runs the turn on the durable runtime; its calls and questions go through the durable execution.
  Layer.provideMerge(
    TurnWorkflow.toLayer(({ mode, session, toolUses, turn }) =>
      runTurn(session, turn, toolUses as ReadonlyArray<ToolUseBlock>, mode).pipe(
        Effect.map((outcomes) => outcomes.map(Record.encodeOutcome))
      )
    )
  ),
  Layer.provideMerge(ToolRuntime.layer),
  Layer.provide(Layer.effect(Execution.DurableExecutionTag, Execution.make)),
  Layer.provide(Layer.effectDiscard(Effect.orDie(Record.migrate)))
)
