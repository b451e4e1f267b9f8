/**
 * The audit log: every event and Outcome of every run, as JSON lines a team can keep — session id, tool_use id,
 * tool, status, the decision and its reason, the executed input, and the **audit text**: exactly the text the runtime
 * handed the UI (an Outcome's UI blocks, a permission prompt, a notice, a progress line), never the raw output or the
 * model's tool_result. {@link search} matches that text only, so a transcript search never finds what a person was
 * not shown.
 *
 * ```ts
 * const audited = program.pipe(Effect.provide(AuditLog.layerFile({ path: "audit.jsonl", sessionId: "s-1" })))
 * const hits = yield* AuditLog.search("audit.jsonl", "rm -rf")
 * ```
 *
 * The ToolRuntime writes to whatever AuditLog is in context; the default is none (and then costs nothing).
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { describeReason } from "../Tool/Permission.js"
import { toText } from "../Tool/Presentation.js"
import type { ToolEvent } from "./Events.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * One line of the audit log.
 *
 * @since 0.2.0
 * @category models
 */
export const AuditEntry = Schema.Struct({
  at: Schema.Number,
  session_id: Schema.String,
  event: Schema.String,
  tool_use_id: Schema.String,
  tool: Schema.optional(Schema.String),
  status: Schema.optional(Schema.String),
  decision: Schema.optional(Schema.String),
  reason: Schema.optional(Schema.String),
  executed_input: Schema.optional(Schema.Unknown),
  /** Which attempt of a durable turn ran the call (since 0.3.0). */
  attempt: Schema.optional(Schema.Number),
  /** What the UI was shown: the only text {@link search} looks at. */
  audit: Schema.String
})
/**
 * @since 0.2.0
 * @category models
 */
export type AuditEntry = typeof AuditEntry.Type

/**
 * Reading or writing the audit log failed.
 *
 * @since 0.2.0
 * @category errors
 */
export class AuditLogError
  extends Schema.TaggedError<AuditLogError>("effect-tool-runtime/AuditLogError")("AuditLogError", {
    path: Schema.String,
    message: Schema.String
  })
{}

/** Executed inputs larger than this (as JSON) are cut, so one call cannot blow up the log. */
const MAX_INPUT_CHARS = 64 * 1024

const boundedInput = (input: unknown): unknown => {
  if (input === undefined) return undefined
  const json = JSON.stringify(input)
  return json === undefined || json.length <= MAX_INPUT_CHARS
    ? input
    : { truncated: true, prefix: json.slice(0, MAX_INPUT_CHARS) }
}

/**
 * The audit entry of one event: what the UI was handed, and the facts around it.
 *
 * @since 0.2.0
 * @category constructors
 */
export const entryOf = (sessionId: string, event: ToolEvent): AuditEntry => {
  const base = { at: event.at, session_id: sessionId, event: event._tag }
  switch (event._tag) {
    case "Previewed":
      return { ...base, tool_use_id: event.toolUseId, tool: event.name, audit: toText(event.ui) }
    case "Queued":
      return { ...base, tool_use_id: event.toolUseId, tool: event.name, audit: "" }
    case "Started":
      return { ...base, tool_use_id: event.toolUseId, tool: event.toolName, audit: toText(event.ui) }
    case "Progress":
      return {
        ...base,
        tool_use_id: event.toolUseId,
        audit: [event.progress.message, ...(event.progress.lines ?? [])].filter((line) => line !== undefined).join("\n")
      }
    case "PermissionRequested":
      return {
        ...base,
        tool_use_id: event.toolUseId,
        tool: event.request.toolName,
        executed_input: boundedInput(event.request.input),
        audit: `${event.request.message}\n${toText(event.request.ui)}`
      }
    case "PermissionAnswered":
      return { ...base, tool_use_id: event.toolUseId, decision: event.answer._tag, audit: "" }
    case "Decided":
      return {
        ...base,
        tool_use_id: event.toolUseId,
        decision: event.decision._tag,
        reason: describeReason(event.decision.reason),
        audit: ""
      }
    case "Notice":
      return { ...base, tool_use_id: event.toolUseId, audit: event.message }
    case "DefectLogged":
      return { ...base, tool_use_id: event.toolUseId, audit: "" }
    case "Completed": {
      const { outcome } = event
      return {
        ...base,
        tool_use_id: outcome.toolUseId,
        tool: outcome.toolName ?? outcome.requestedName,
        status: outcome.status,
        ...(outcome.decision === undefined
          ? {}
          : { decision: outcome.decision._tag, reason: describeReason(outcome.decision.reason) }),
        executed_input: boundedInput(outcome.executedInput),
        ...(outcome.attempt === undefined ? {} : { attempt: outcome.attempt }),
        audit: outcome.audit
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the service
// ---------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link AuditLog.layerFile}.
 *
 * @since 0.2.0
 * @category models
 */
export interface AuditFileOptions {
  readonly path: string
  readonly sessionId: string
  /** Rotate once the file would pass this size. Default 10 MiB. */
  readonly maxBytes?: number | undefined
  /** Rotated files kept (`path.1` newest ... `path.N` oldest). Default 5. */
  readonly maxFiles?: number | undefined
}

interface AuditSink {
  /** False for the default (no log): the runtime then builds no events for it. */
  readonly enabled: boolean
  readonly record: (event: ToolEvent) => Effect.Effect<void>
}

const none: AuditSink = { enabled: false, record: () => Effect.void }

/**
 * The AuditLog service; by default none.
 *
 * @since 0.2.0
 * @category tags
 */
export class AuditLog
  extends Context.Reference<AuditLog>()("effect-tool-runtime/AuditLog", { defaultValue: () => none })
{
  /**
   * JSON lines appended to `path` (created 0600; an existing file open to others is tightened to 0600; missing
   * directories are created 0700), rotated by size: `path.1` is the newest rotated file, at most `maxFiles` are kept.
   * A write that fails is logged and the run goes on: auditing never breaks a turn.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layerFile = (options: AuditFileOptions): Layer.Layer<AuditLog> =>
    Layer.effect(
      AuditLog,
      Effect.gen(function*() {
        const maxBytes = options.maxBytes ?? 10 * 1024 * 1024
        const maxFiles = Math.max(1, options.maxFiles ?? 5)
        const lock = yield* Effect.makeSemaphore(1)
        let size = yield* Effect.sync(() => (fs.existsSync(options.path) ? fs.statSync(options.path).size : 0))
        // The log holds what people were shown and what ran: it is private, whoever created it.
        yield* Effect.try({
          try: () => {
            if (!fs.existsSync(options.path)) return
            const mode = fs.statSync(options.path).mode & 0o777
            if ((mode & 0o077) !== 0) fs.chmodSync(options.path, 0o600)
          },
          catch: (error) => new AuditLogError({ path: options.path, message: `cannot make it private: ${error}` })
        }).pipe(Effect.catchAll((error) => Effect.logWarning(`audit log: ${error.message}`)))
        const rotate = () => {
          for (let i = maxFiles - 1; i >= 1; i--) {
            const from = `${options.path}.${i}`
            if (fs.existsSync(from)) fs.renameSync(from, `${options.path}.${i + 1}`)
          }
          if (fs.existsSync(options.path)) fs.renameSync(options.path, `${options.path}.1`)
          fs.rmSync(`${options.path}.${maxFiles + 1}`, { force: true })
          size = 0
        }
        const write = (line: string) =>
          Effect.try({
            try: () => {
              const bytes = Buffer.byteLength(line)
              if (size > 0 && size + bytes > maxBytes) rotate()
              fs.mkdirSync(nodePath.dirname(options.path), { recursive: true, mode: 0o700 })
              fs.appendFileSync(options.path, line, { mode: 0o600 })
              size += bytes
            },
            catch: (error) => new AuditLogError({ path: options.path, message: String(error) })
          })
        return {
          enabled: true,
          record: (event: ToolEvent) =>
            lock.withPermits(1)(write(`${JSON.stringify(entryOf(options.sessionId, event))}\n`)).pipe(
              Effect.catchAll((error) => Effect.logWarning(`audit log: ${error.message}`))
            )
        }
      })
    )

  /**
   * Entries kept in memory, for tests: the returned effect reads them.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layerMemory = (
    sessionId: string
  ): { readonly layer: Layer.Layer<AuditLog>; readonly entries: Effect.Effect<ReadonlyArray<AuditEntry>> } => {
    const entries: Array<AuditEntry> = []
    return {
      layer: Layer.succeed(AuditLog, {
        enabled: true,
        record: (event) => Effect.sync(() => void entries.push(entryOf(sessionId, event)))
      }),
      entries: Effect.sync(() => [...entries])
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// search
// ---------------------------------------------------------------------------------------------------------------

const decodeEntry = Schema.decodeUnknownOption(Schema.parseJson(AuditEntry))

/**
 * The entries of an audit log (`path` and its rotated files, oldest first) whose audit text contains `query`
 * (case-insensitive). Only the audit text is searched: what the UI showed, nothing else. Lines that are not audit
 * entries are skipped.
 *
 * @since 0.2.0
 * @category search
 */
export const search = (path: string, query: string): Effect.Effect<ReadonlyArray<AuditEntry>, AuditLogError> =>
  Effect.try({
    try: () => {
      const rotated = fs.readdirSync(nodePath.dirname(path))
        .flatMap((name) => {
          const match = new RegExp(`^${nodePath.basename(path).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.(\\d+)$`).exec(
            name
          )
          return match === null ? [] : [[Number(match[1]), nodePath.join(nodePath.dirname(path), name)] as const]
        })
        .sort((a, b) => b[0] - a[0])
        .map(([, file]) => file)
      const files = [...rotated, ...(fs.existsSync(path) ? [path] : [])]
      const needle = query.toLowerCase()
      return files.flatMap((file) =>
        fs.readFileSync(file, "utf8").split("\n").flatMap((line) => {
          if (line === "") return []
          const entry = decodeEntry(line)
          return entry._tag === "Some" && entry.value.audit.toLowerCase().includes(needle) ? [entry.value] : []
        })
      )
    },
    catch: (error) => new AuditLogError({ path, message: String(error) })
  })
