/**
 * Durable turns on many runners: each process that provides {@link layerPostgres} is a runner of one
 * @effect/cluster cluster whose messages, shard locks and the session's record of calls live in one Postgres
 * database. A turn's workflow runs on the runner that holds its shard (whichever process executed it); when a runner
 * dies its Postgres connections close, its shard locks go with them, and another runner takes the shards over and
 * resumes their turns: an idempotent call that was running runs again, any other is reported "unknown: the process
 * stopped while it ran". Every runner must provide the same tools (the same program, deployed several times).
 *
 * ```ts
 * const durable = DurableRunners.layerPostgres({ url: "postgres://app@db/agents", host: "10.0.0.5", port: 34431 })
 * ```
 *
 * The Postgres driver (@effect/sql-pg) and the socket transport are loaded when the layer is built, so
 * `effect-tool-runtime/durable` needs them only where this layer is used.
 *
 * @since 0.3.0
 */
import * as ClusterWorkflowEngine from "@effect/cluster/ClusterWorkflowEngine"
import * as RunnerAddress from "@effect/cluster/RunnerAddress"
import type * as ShardingConfig from "@effect/cluster/ShardingConfig"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { ToolHooks } from "../Hooks/ToolHooks.js"
import type { Approver } from "../Permission/Approver.js"
import type { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import type { ToolRuntime } from "../Runtime/ToolRuntime.js"
import type { ResultStore } from "../Session/ResultStore.js"
import { withoutPassword } from "../Shared/url.js"
import { DurableTurns } from "./DurableTurns.js"

/**
 * Where a runner is and how it joins the cluster.
 *
 * @since 0.3.0
 * @category models
 */
export interface PostgresRunnerOptions {
  /** The database every runner shares (`postgres://user:password@host:port/database`). */
  readonly url: string
  /** The address the other runners reach this one at (default `localhost`). */
  readonly host?: string | undefined
  /** This runner's port (other runners send it the messages of the shards it holds). */
  readonly port: number
  /** The address to listen on, when it differs from `host` (e.g. `0.0.0.0` behind a NAT). */
  readonly listenHost?: string | undefined
  /**
   * @effect/cluster's settings, for tuning (shards per group, lock refresh, poll intervals). `runnerAddress` comes
   * from `host` and `port`.
   */
  readonly shardingConfig?: Partial<ShardingConfig.ShardingConfig["Type"]> | undefined
}

/**
 * The runner could not join: the database cannot be reached (or refused the runner's tables), or its address cannot
 * be listened on. The message names the database without its password.
 *
 * @since 0.3.0
 * @category errors
 */
export class DurableStoreError extends Data.TaggedError("DurableStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

const detail = (cause: unknown): string => {
  const inner = typeof cause === "object" && cause !== null && "cause" in cause ? cause.cause : undefined
  const text = (value: unknown) => value instanceof Error ? value.message : String(value)
  return inner === undefined ? text(cause) : `${text(cause)} (${text(inner)})`
}

/**
 * This process as one runner of the cluster on Postgres: the durable {@link ToolRuntime} and {@link DurableTurns}.
 * Fails with a {@link DurableStoreError} when the database cannot be reached or the address cannot be listened on.
 *
 * @since 0.3.0
 * @category layers
 */
export const layerPostgres = (
  options: PostgresRunnerOptions
): Layer.Layer<
  DurableTurns | ToolRuntime,
  DurableStoreError,
  ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore
> =>
  Layer.unwrapEffect(Effect.promise(async () => {
    // Loaded here: a program on SQLite never needs the Postgres driver or the socket transport.
    const [PgClient, NodeClusterSocket] = await Promise.all([
      import("@effect/sql-pg/PgClient"),
      import("@effect/platform-node/NodeClusterSocket")
    ])
    const host = options.host ?? "localhost"
    const runner = NodeClusterSocket.layer({
      storage: "sql",
      shardingConfig: {
        ...clusterDefaults,
        ...options.shardingConfig,
        runnerAddress: Option.some(RunnerAddress.make(host, options.port)),
        runnerListenAddress: options.listenHost === undefined
          ? Option.none()
          : Option.some(RunnerAddress.make(options.listenHost, options.port))
      }
    })
    const client = PgClient.layer({ url: Redacted.make(options.url) })
    const runtime = DurableTurns.layer.pipe(Layer.provide(ClusterWorkflowEngine.layer), Layer.provide(runner))
    const where = `${host}:${options.port}`
    return oneAtATime(runtime).pipe(
      Layer.provide(client),
      Layer.mapError((error) =>
        new DurableStoreError({
          message: error._tag === "SocketServerError"
            ? `the durable runner cannot listen at ${where}: ${detail(error)}`
            : error._tag === "SqlError"
            ? `the durable store ${withoutPassword(options.url)} cannot be used: ${detail(error)}`
            : `the durable runner cannot start: ${detail(error)}`,
          cause: error
        })
      )
    )
  }))

/**
 * Builds the runner's layers while holding a Postgres advisory lock: each creates its tables with `CREATE TABLE IF
 * NOT EXISTS`, which is not safe against itself in Postgres (two runners starting together fail with a duplicate key
 * in `pg_type`). The lock is held by one reserved connection and released once the layers are built.
 */
const oneAtATime = <A, E, R>(
  layer: Layer.Layer<A, E, R>
): Layer.Layer<A, E | SqlError, R | SqlClient.SqlClient> =>
  Layer.scopedContext(Effect.gen(function*() {
    const scope = yield* Effect.scope
    const sql = yield* SqlClient.SqlClient
    return yield* Effect.scoped(Effect.gen(function*() {
      const connection = yield* sql.reserve
      yield* connection.executeRaw("SELECT pg_advisory_lock($1)", [migrationLock])
      return yield* Layer.buildWithScope(layer, scope).pipe(
        Effect.ensuring(Effect.ignore(connection.executeRaw("SELECT pg_advisory_unlock($1)", [migrationLock])))
      )
    }))
  }))

/** The advisory lock's key (any constant the runners agree on; a lock key is a 64-bit integer). */
const migrationLock = 0x65747252756e6e72n.toString()

/**
 * Faster than @effect/cluster's defaults where it matters to a turn someone waits on: a message for a shard taken
 * over is found in storage within a second, not ten.
 */
const clusterDefaults: Partial<ShardingConfig.ShardingConfig["Type"]> = {
  entityMessagePollInterval: "1 second",
  refreshAssignmentsInterval: "1 second"
}
