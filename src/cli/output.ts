/**
 * What the CLI writes: standard output carries only JSON (one object for `exec`, one object per line for `serve`);
 * logs go to standard error with `--verbose`, nowhere without. Every write to standard output is awaited, so the
 * process exits only once a pipe has taken all of it.
 */
import * as Effect from "effect/Effect"
import * as Logger from "effect/Logger"
import type { ToolEvent } from "../Runtime/Events.js"
import type { Outcome } from "../Tool/Outcome.js"
import { describeReason } from "../Tool/Permission.js"
import { toText } from "../Tool/Presentation.js"

/** Why standard output broke (EPIPE: the reader closed it), once it has; later writes are dropped. */
let outputBroken: NodeJS.ErrnoException | undefined
const brokenListeners = new Set<(error: NodeJS.ErrnoException) => void>()

const breakOutput = (error: NodeJS.ErrnoException): void => {
  if (outputBroken !== undefined) return
  outputBroken = error
  for (const listener of brokenListeners) listener(error)
}

// A write to a pipe whose reader is gone fails with EPIPE, reported as an 'error' event: without a listener that
// event would crash the process with the turn's processes still running.
process.stdout.on("error", breakOutput)

/** The error that broke standard output, if it broke. */
export const outputError = (): NodeJS.ErrnoException | undefined => outputBroken

/** Calls `listener` once standard output breaks (at once when it already has); returns the unregistration. */
export const onOutputBroken = (listener: (error: NodeJS.ErrnoException) => void): () => void => {
  if (outputBroken !== undefined) {
    listener(outputBroken)
    return () => {}
  }
  brokenListeners.add(listener)
  return () => brokenListeners.delete(listener)
}

/** Writes text to standard output and waits until it is handed to the OS; nothing once the output is broken. */
export const writeText = (text: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (outputBroken !== undefined || process.stdout.destroyed) {
      resume(Effect.void)
      return
    }
    process.stdout.write(text, (error) => {
      if (error !== undefined && error !== null) breakOutput(error)
      resume(Effect.void)
    })
  })

/** Writes one line of JSON to standard output (one write, so concurrent lines never interleave). */
export const writeJsonLine = (value: unknown): Effect.Effect<void> => writeText(`${JSON.stringify(value)}\n`)

/** One line on standard error, whatever the message holds. */
export const oneLine = (message: string): string => message.replace(/\s*\n\s*/g, " ")

/** Logs to standard error with `--verbose`, else nowhere: never to standard output, which carries the JSON. */
export const loggerLayer = (verbose: boolean) =>
  Logger.replace(
    Logger.defaultLogger,
    verbose ? Logger.map(Logger.logfmtLogger, (line) => void process.stderr.write(`${line}\n`)) : Logger.none
  )

/** The summary of one outcome in the CLI's output; `suggestions` are the rules offered when the call asked. */
export const summary = (outcome: Outcome, suggestions: ReadonlyArray<string> = []) => ({
  tool_use_id: outcome.toolUseId,
  name: outcome.toolName ?? outcome.requestedName,
  status: outcome.status,
  decision: outcome.decision === undefined
    ? null
    : {
      behavior: outcome.decision._tag === "Allow" ? "allow" : "deny",
      reason: describeReason(outcome.decision.reason),
      kind: outcome.decision.reason._tag
    },
  duration_ms: outcome.timings.durationMs,
  persisted_path: outcome.persistedPath ?? null,
  suggestions
})

/** Remembers the rules suggested to a person, per tool_use, from the run's events. */
export const suggestionsRecorder = () => {
  const byToolUse = new Map<string, ReadonlyArray<string>>()
  return {
    record: (event: ToolEvent) => {
      if (event._tag === "PermissionRequested") byToolUse.set(event.toolUseId, event.request.suggestions)
    },
    of: (toolUseId: string): ReadonlyArray<string> => byToolUse.get(toolUseId) ?? []
  }
}

/** The JSON of one event for `serve` (what a UI needs; the full cause of a defect stays in the log). */
export const eventJson = (event: ToolEvent): Record<string, unknown> => {
  switch (event._tag) {
    case "Previewed":
      return { event: "previewed", tool_use_id: event.toolUseId, name: event.name, ui_text: toText(event.ui) }
    case "Queued":
      return { event: "queued", tool_use_id: event.toolUseId, name: event.name }
    case "Started":
      return { event: "started", tool_use_id: event.toolUseId, name: event.toolName }
    case "Progress":
      return {
        event: "progress",
        tool_use_id: event.toolUseId,
        message: event.progress.message ?? null,
        lines: event.progress.lines ?? []
      }
    case "PermissionRequested":
      return {
        event: "permission_requested",
        tool_use_id: event.toolUseId,
        message: event.request.message,
        suggestions: event.request.suggestions
      }
    case "PermissionAnswered":
      return { event: "permission_answered", tool_use_id: event.toolUseId, answer: event.answer._tag }
    case "Decided":
      return {
        event: "decided",
        tool_use_id: event.toolUseId,
        behavior: event.decision._tag === "Allow" ? "allow" : "deny",
        reason: describeReason(event.decision.reason)
      }
    case "Notice":
      return { event: "notice", tool_use_id: event.toolUseId, message: event.message }
    case "DefectLogged":
      return { event: "defect", tool_use_id: event.toolUseId }
    case "Completed":
      return { event: "completed", tool_use_id: event.outcome.toolUseId, status: event.outcome.status }
  }
}
