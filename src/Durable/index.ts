/**
 * `effect-tool-runtime/durable`: durable tool execution on @effect/workflow and @effect/cluster (optional peer
 * dependencies, with @effect/sql and a driver: @effect/sql-sqlite-node for one runner on SQLite, @effect/sql-pg for
 * runners on Postgres). Nothing else imports this room, so the other entry points load without them.
 *
 * The room owns the turn workflow, the activities and durable approvals that implement the runtime's
 * `DurableExecution` seam (src/Runtime), and the session's record of which attempt ran each call. It may import
 * src/Tool, src/Runtime's public modules, src/Permission's and src/Session's public modules, and the Catalog's.
 *
 * @since 0.3.0
 */

/** @since 0.3.0 */
export * as DurableTurns from "./DurableTurns.js"

/** @since 0.3.0 */
export * as DurableRunners from "./DurableRunners.js"
