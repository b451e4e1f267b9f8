/**
 * The session's record of durable calls: one row per (turn execution, tool_use id) with the attempt that ran it, its
 * state (running, done, unknown) and its outcome. A call found `running` when its turn is executed again was running
 * when its process died. Plain SQL both SQLite and Postgres understand.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import type { Outcome } from "../../Tool/Outcome.js"

/** One call's row. */
export interface CallRow {
  readonly execution_id: string
  readonly tool_use_id: string
  readonly tool: string
  readonly attempt: number
  readonly state: "running" | "done" | "unknown"
  readonly status: string | null
  readonly outcome: string | null
}

/** The table, created once per database. */
export const migrate: Effect.Effect<void, SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql`CREATE TABLE IF NOT EXISTS effect_tool_runtime_calls (
      execution_id TEXT NOT NULL,
      tool_use_id TEXT NOT NULL,
      tool TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      state TEXT NOT NULL,
      status TEXT,
      outcome TEXT,
      started_at BIGINT NOT NULL,
      ended_at BIGINT,
      PRIMARY KEY (execution_id, tool_use_id)
    )`.pipe(
      Effect.zipRight(sql`CREATE TABLE IF NOT EXISTS effect_tool_runtime_answers (
      execution_id TEXT NOT NULL,
      question TEXT NOT NULL,
      answer TEXT NOT NULL,
      PRIMARY KEY (execution_id, question)
    )`),
      Effect.asVoid
    )
)

/** The answer a question of a turn execution got, if any (JSON). */
export const answerOf = (
  sql: SqlClient.SqlClient,
  executionId: string,
  question: string
): Effect.Effect<string | undefined, SqlError> =>
  Effect.map(
    sql<{ readonly answer: string }>`SELECT answer FROM effect_tool_runtime_answers
      WHERE execution_id = ${executionId} AND question = ${question}`,
    (rows) => rows[0]?.answer
  )

/** Keeps the answer a question got (the first one wins). */
export const answered = (
  sql: SqlClient.SqlClient,
  executionId: string,
  question: string,
  answer: string
): Effect.Effect<void, SqlError> =>
  sql`INSERT INTO effect_tool_runtime_answers (execution_id, question, answer)
    VALUES (${executionId}, ${question}, ${answer}) ON CONFLICT (execution_id, question) DO NOTHING`.pipe(Effect.asVoid)

/** The row of a call, if it ever started. */
export const find = (
  sql: SqlClient.SqlClient,
  executionId: string,
  toolUseId: string
): Effect.Effect<CallRow | undefined, SqlError> =>
  Effect.map(
    sql<CallRow>`SELECT execution_id, tool_use_id, tool, attempt, state, status, outcome
      FROM effect_tool_runtime_calls WHERE execution_id = ${executionId} AND tool_use_id = ${toolUseId}`,
    (rows) => rows[0] === undefined ? undefined : { ...rows[0], attempt: Number(rows[0].attempt) }
  )

/** Attempt `attempt` starts. */
export const started = (
  sql: SqlClient.SqlClient,
  executionId: string,
  toolUseId: string,
  tool: string,
  attempt: number,
  at: number
): Effect.Effect<void, SqlError> =>
  sql`INSERT INTO effect_tool_runtime_calls (execution_id, tool_use_id, tool, attempt, state, started_at)
    VALUES (${executionId}, ${toolUseId}, ${tool}, ${attempt}, 'running', ${at})
    ON CONFLICT (execution_id, tool_use_id)
    DO UPDATE SET attempt = ${attempt}, state = 'running', started_at = ${at}, ended_at = NULL`.pipe(Effect.asVoid)

/** The call ended (`done`), or was reported unknown. */
export const ended = (
  sql: SqlClient.SqlClient,
  executionId: string,
  toolUseId: string,
  state: "done" | "unknown",
  outcome: string,
  status: string,
  at: number
): Effect.Effect<void, SqlError> =>
  sql`UPDATE effect_tool_runtime_calls SET state = ${state}, outcome = ${outcome}, status = ${status}, ended_at = ${at}
    WHERE execution_id = ${executionId} AND tool_use_id = ${toolUseId}`.pipe(Effect.asVoid)

/** Every call of a turn execution, in the order they started. */
export const ofExecution = (
  sql: SqlClient.SqlClient,
  executionId: string
): Effect.Effect<ReadonlyArray<CallRow>, SqlError> =>
  Effect.map(
    sql<CallRow>`SELECT execution_id, tool_use_id, tool, attempt, state, status, outcome
      FROM effect_tool_runtime_calls WHERE execution_id = ${executionId} ORDER BY started_at, tool_use_id`,
    (rows) => rows.map((row) => ({ ...row, attempt: Number(row.attempt) }))
  )

/**
 * An Outcome as JSON: what the model, the UI and the audit need survive (result, ui, audit, status, inputs,
 * decision, timings, attempt); an error keeps its tag, fields and message; an output that is not JSON is dropped.
 */
export const encodeOutcome = (outcome: Outcome): string => {
  const error = outcome.error === undefined
    ? undefined
    : { ...plain(outcome.error), _tag: outcome.error._tag, message: outcome.error.message }
  const { output, ...rest } = outcome
  const base = { ...rest, ...(error === undefined ? {} : { error }) }
  try {
    return JSON.stringify({ ...base, output }, replacer)
  } catch {
    return JSON.stringify(base, replacer)
  }
}

/** The Outcome read back (plain data: tagged values keep their `_tag`). */
export const decodeOutcome = (text: string): Outcome => JSON.parse(text) as Outcome

const plain = (value: object): Record<string, unknown> => {
  const copy: Record<string, unknown> = {}
  for (const [key, field] of Object.entries(value)) {
    // A defect's cause is for the log, not for the record.
    if (key !== "cause") copy[key] = field
  }
  return copy
}

const replacer = (_key: string, value: unknown): unknown =>
  typeof value === "bigint" ? value.toString() : typeof value === "function" ? undefined : value
