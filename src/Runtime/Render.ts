/**
 * What a person sees of a run: events rendered as terminal text. Used by `exec --verbose` and by the demo, and
 * exported from the package (`renderEvent`, `renderOutcome`) for programs that print a run the same way.
 *
 * @since 0.2.0
 */
import type { Outcome } from "../Tool/Outcome.js"
import { describeReason } from "../Tool/Permission.js"
import { toText } from "../Tool/Presentation.js"
import type { ToolEvent } from "./Events.js"

const indent = (text: string, prefix = "    "): string => text.split("\n").map((line) => `${prefix}${line}`).join("\n")

const clip = (text: string, lines = 12): string => {
  const all = text.split("\n")
  return all.length <= lines ? text : [...all.slice(0, lines), `… (${all.length - lines} more lines)`].join("\n")
}

const symbol: Record<Outcome["status"], string> = {
  success: "✓",
  error: "✗",
  denied: "⊘",
  interrupted: "■",
  timed_out: "⏱"
}

/**
 * One event as lines of terminal text, or undefined for events a person does not need to see.
 *
 * @since 0.2.0
 * @category rendering
 */
export const renderEvent = (event: ToolEvent): string | undefined => {
  switch (event._tag) {
    case "Started":
      return `● ${event.activity === "" ? toText(event.ui).split("\n")[0] : event.activity}  [${event.toolUseId}]`
    case "Progress": {
      const last = event.progress.lines?.at(-1) ?? event.progress.message
      return last === undefined ? undefined : `  … ${last}`
    }
    case "PermissionRequested":
      return `? ${event.request.toolName} asks for permission: ${event.request.message}\n${
        indent(toText(event.request.ui))
      }`
    case "PermissionAnswered":
      return `  answer: ${event.answer._tag}`
    case "Completed":
      return renderOutcome(event.outcome)
    case "Notice":
      return `  note: ${event.message}`
    case "DefectLogged":
      return `! ${event.toolUseId} died unexpectedly (details in the log)`
    default:
      return undefined
  }
}

/**
 * A finished call: status, decision and what the screen shows of it.
 *
 * @since 0.2.0
 * @category rendering
 */
export const renderOutcome = (outcome: Outcome): string => {
  const decision = outcome.decision === undefined
    ? ""
    : ` — ${outcome.decision._tag.toLowerCase()}: ${describeReason(outcome.decision.reason)}`
  const head = `${symbol[outcome.status]} ${
    outcome.toolName ?? outcome.requestedName
  } ${outcome.status}${decision} (${outcome.timings.durationMs} ms)`
  return `${head}\n${indent(clip(outcome.audit))}`
}
