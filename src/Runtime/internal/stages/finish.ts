/**
 * Stage 8, **finish**: PostToolUse hooks -> budget -> present -> Outcome. Every Outcome is built here, in
 * {@link outcomeOf}, and the PostToolUse hooks run here, in {@link finish}; nothing else builds either.
 *
 * Takes how far the call got ({@link Report}) and how it ended: the tool's Exit from the execute stage
 * ({@link finish}: an output is fitted to the context budget, a failure becomes ToolFailed, Interrupted or Defect,
 * and either goes through the PostToolUse hooks), or an error of an earlier stage ({@link failed}: UnknownTool,
 * InvalidInput, PermissionDenied, ...), a defect ({@link died}), an interruption ({@link interrupted}). Gives the
 * Outcome, with the file the result store saved and the Completed event. {@link guarded} turns anything a stage
 * throws or dies with into an Outcome too: no call ends without one.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Errors from "../../../Tool/Errors.js"
import type { Outcome, Status } from "../../../Tool/Outcome.js"
import type { Decision } from "../../../Tool/Permission.js"
import { toText, UiBlock } from "../../../Tool/Presentation.js"
import { toolResult } from "../../../Tool/Wire.js"
import type { ToolResultContent, ToolUseBlock } from "../../../Tool/Wire.js"
import { ToolEvent } from "../../Events.js"
import { applyBudget } from "../budget.js"
import { continueWith } from "../continuation.js"
import type { AnyInvocation, Call, Prepared, Trace } from "./call.js"
import type { PipelineEnv } from "./env.js"
import { logDefect, notify } from "./env.js"

// ---------------------------------------------------------------------------------------------------------------
// what an Outcome is built from
// ---------------------------------------------------------------------------------------------------------------

/** How far a call got, as its Outcome reports it. */
export interface Report {
  readonly toolUse: ToolUseBlock
  /** The canonical name, once the tool was found. */
  readonly toolName: string | undefined
  readonly receivedAt: number
  readonly startedAt?: number
  readonly ui: ReadonlyArray<UiBlock>
  readonly executedInput?: unknown
  readonly decision?: Decision
  readonly additionalContext?: ReadonlyArray<string>
  readonly attempt?: number
}

/** The report of a call before it is scheduled: its title is the name the model used. */
export const reportBefore = (toolUse: ToolUseBlock, toolName: string | undefined, receivedAt: number): Report => ({
  toolUse,
  toolName,
  receivedAt,
  ui: [UiBlock.Title({ text: toolUse.name })]
})

/** The report of a scheduled call: what its trace says so far, and the context hooks added for the model. */
export const reportOf = (
  { name, prepared, trace }: Call,
  additionalContext: ReadonlyArray<string> = []
): Report => ({
  toolUse: prepared.toolUse,
  toolName: name,
  receivedAt: prepared.receivedAt,
  ...trace,
  additionalContext
})

/** How a call ended: an output fitted to the budget, or an error. */
type Ending =
  | {
    readonly _tag: "Returned"
    readonly invocation: AnyInvocation
    readonly output: unknown
    /** The model's content after the budget: the output itself, or a preview and the saved file. */
    readonly content: ToolResultContent
    readonly persistedPath: string | undefined
  }
  | { readonly _tag: "Failed"; readonly error: Errors.ToolCallError }

const statusOf = (error: Errors.ToolCallError): Status => {
  switch (error._tag) {
    case "PermissionDenied":
      return "denied"
    case "Interrupted":
      return "interrupted"
    case "TimedOut":
      return "timed_out"
    default:
      return "error"
  }
}

const withContext = (content: ToolResultContent, additional: ReadonlyArray<string>): ToolResultContent => {
  if (additional.length === 0) return content
  const extra = additional.join("\n")
  return typeof content === "string" ? `${content}\n\n${extra}` : [...content, { type: "text", text: extra }]
}

const timings = (receivedAt: number, startedAt: number | undefined, endedAt: number) =>
  startedAt === undefined
    ? { receivedAt, endedAt, durationMs: 0 }
    : { receivedAt, startedAt, endedAt, durationMs: endedAt - startedAt }

// ---------------------------------------------------------------------------------------------------------------
// the Outcome
// ---------------------------------------------------------------------------------------------------------------

/**
 * The one place an Outcome is built: the model's tool_result (with the hooks' context), what the user sees (the use,
 * then the result or the error), the audit text derived from that, both inputs, the decision and the timings.
 */
const outcomeOf = (env: PipelineEnv, report: Report, ending: Ending): Outcome => {
  const endedAt = env.clock.unsafeCurrentTimeMillis()
  const additional = report.additionalContext ?? []
  const toolUseId = report.toolUse.id
  const timed = timings(report.receivedAt, report.startedAt, endedAt)
  // Two literals rather than one with conditional spreads: this is every call's hot path (`bench/pipeline`).
  if (ending._tag === "Returned") {
    const ui = [...report.ui, ...ending.invocation.renderResult(ending.output)]
    return {
      toolUseId,
      requestedName: report.toolUse.name,
      toolName: report.toolName,
      status: "success",
      result: toolResult(toolUseId, withContext(ending.content, additional), false),
      ui,
      audit: toText(ui),
      output: ending.output,
      originalInput: report.toolUse.input,
      executedInput: ending.invocation.input,
      ...(report.decision === undefined ? {} : { decision: report.decision }),
      additionalContext: additional,
      ...(ending.persistedPath === undefined ? {} : { persistedPath: ending.persistedPath }),
      timings: timed,
      ...(report.attempt === undefined ? {} : { attempt: report.attempt })
    }
  }
  const { error } = ending
  const ui = [
    ...report.ui,
    UiBlock.Notice({ level: error._tag === "Interrupted" ? "warning" : "error", text: error.message })
  ]
  return {
    toolUseId,
    requestedName: report.toolUse.name,
    toolName: report.toolName,
    status: statusOf(error),
    result: toolResult(toolUseId, withContext(Errors.modelText(error), additional), true),
    ui,
    audit: toText(ui),
    error,
    originalInput: report.toolUse.input,
    ...(report.executedInput === undefined ? {} : { executedInput: report.executedInput }),
    ...(report.decision === undefined ? {} : { decision: report.decision }),
    additionalContext: additional,
    timings: timed,
    ...(report.attempt === undefined ? {} : { attempt: report.attempt })
  }
}

/**
 * Every Outcome ends here. A tool that streamed its output to the store (Bash) fits its own budget, so only the store
 * knows it saved something: the Outcome names that file too, whatever the status (taken, so a later call with the
 * same id does not inherit it).
 */
const complete = (env: PipelineEnv, outcome: Outcome): Effect.Effect<Outcome> =>
  continueWith(env.store.saved(outcome.toolUseId), (saved) => {
    const named = saved === undefined || outcome.persistedPath !== undefined
      ? outcome
      : { ...outcome, persistedPath: saved }
    return continueWith(
      env.emit(() => ToolEvent.Completed({ outcome: named, at: named.timings.endedAt })),
      () => Exit.succeed(named)
    )
  })

/** The Outcome of a call that failed at any stage. */
export const failed = (env: PipelineEnv, report: Report, error: Errors.ToolCallError): Effect.Effect<Outcome> =>
  complete(env, outcomeOf(env, report, { _tag: "Failed", error }))

// ---------------------------------------------------------------------------------------------------------------
// after the call: budget or error -> PostToolUse hooks -> Outcome
// ---------------------------------------------------------------------------------------------------------------

/** An output, fitted to the tool's budget (capped by the runtime's). */
const budgeted = ({ env, prepared }: Call, invocation: AnyInvocation, output: unknown): Effect.Effect<Ending> => {
  const { definition } = prepared.tool
  const limit = definition.maxResultChars === Infinity
    ? Infinity
    : Math.min(definition.maxResultChars, env.settings.maxResultChars)
  return continueWith(
    applyBudget(env.store, prepared.toolUse.id, invocation.toModel(output), limit, env.settings.previewChars),
    (fitted): Effect.Effect<Ending> =>
      Exit.succeed({
        _tag: "Returned",
        invocation,
        output,
        content: fitted.content,
        persistedPath: fitted.persistedPath
      })
  )
}

/** A tool's own failure: its typed failure (rendered for the model), its own interruption, or a defect (logged). */
const callError = (
  { env, name, prepared }: Call,
  invocation: AnyInvocation,
  cause: Cause.Cause<unknown>
): Effect.Effect<Ending> =>
  continueWith(
    Option.match(Cause.failureOption(cause), {
      onSome: (failure): Effect.Effect<Errors.ToolCallError> =>
        Effect.sync(() => new Errors.ToolFailed({ tool: name, failure, message: invocation.renderFailure(failure) })),
      onNone: () =>
        Cause.isInterruptedOnly(cause)
          // The tool interrupted itself (not the run): it started, and stopped.
          ? Effect.succeed(new Errors.Interrupted({ tool: name, started: true }))
          : Effect.as(logDefect(env, prepared.toolUse.id, cause), new Errors.Defect({ tool: name, cause, ran: true }))
    }),
    (error): Effect.Effect<Ending> => Exit.succeed({ _tag: "Failed", error })
  )

/**
 * The end of a call that ran: its output or its failure goes through the PostToolUse hooks (their notices become
 * events, their context goes to the model), then becomes the Outcome. A call that timed out skips the hooks.
 */
export const finish = (
  call: Call,
  invocation: AnyInvocation,
  additionalContext: ReadonlyArray<string>,
  ran: Exit.Exit<Exit.Exit<unknown, unknown>, Errors.TimedOut>
): Effect.Effect<Outcome> => {
  if (Exit.isFailure(ran)) {
    return ran.cause._tag === "Fail"
      ? failed(call.env, reportOf(call, additionalContext), ran.cause.error)
      : died(call, ran.cause)
  }
  const { env, name, prepared } = call
  const toolUseId = prepared.toolUse.id
  const exit = ran.value
  return continueWith(
    Exit.isSuccess(exit) ? budgeted(call, invocation, exit.value) : callError(call, invocation, exit.cause),
    (ending) =>
      continueWith(
        env.hooks.postToolUse({
          toolUseId,
          toolName: name,
          input: invocation.input,
          response: ending._tag === "Returned" ? ending.content : Errors.modelText(ending.error),
          failed: ending._tag === "Failed"
        }),
        (post) =>
          continueWith(
            notify(env, toolUseId, post.notices),
            () =>
              complete(env, outcomeOf(env, reportOf(call, [...additionalContext, ...post.additionalContext]), ending))
          )
      )
  )
}

// ---------------------------------------------------------------------------------------------------------------
// calls that did not get that far
// ---------------------------------------------------------------------------------------------------------------

/** The Outcome of a defect: logged with its full cause; the model gets a generic text. */
export const diedWith = (
  env: PipelineEnv,
  report: Report,
  cause: Cause.Cause<unknown>,
  ran: boolean
): Effect.Effect<Outcome> =>
  Effect.zipRight(
    logDefect(env, report.toolUse.id, cause),
    failed(env, report, new Errors.Defect({ tool: report.toolName ?? report.toolUse.name, cause, ran }))
  )

/** The Outcome of a scheduled call that died at any stage (it ran if it had started). */
export const died = (call: Call, cause: Cause.Cause<unknown>): Effect.Effect<Outcome> =>
  diedWith(call.env, reportOf(call), cause, call.trace.startedAt !== undefined)

/** The Outcome of a call whose fiber was interrupted, from what its trace says. */
export const interrupted = (env: PipelineEnv, prepared: Prepared, trace: Trace): Effect.Effect<Outcome> =>
  failed(
    env,
    { toolUse: prepared.toolUse, toolName: prepared.tool.definition.name, receivedAt: prepared.receivedAt, ...trace },
    new Errors.Interrupted({ tool: prepared.tool.definition.name, started: trace.startedAt !== undefined })
  )

/** A stage that interrupted itself (not the run: that never reaches here) still gets its Outcome. */
const selfInterrupted = (call: Call): Effect.Effect<Outcome> =>
  failed(
    call.env,
    reportOf(call),
    new Errors.Interrupted({ tool: call.name, started: call.trace.startedAt !== undefined })
  )

/**
 * The Outcome of a run the gate stopped: its error (InvalidInput, ValidationFailed), its own interruption, or a
 * defect.
 */
export const stopped = (call: Call, cause: Cause.Cause<Errors.ToolCallError>): Effect.Effect<Outcome> => {
  if (cause._tag === "Fail") return failed(call.env, reportOf(call), cause.error)
  return Cause.isInterruptedOnly(cause) ? selfInterrupted(call) : died(call, cause)
}

/**
 * Runs the rest of a call so that it cannot fail: a stage that throws instead of failing (a tool's validate, renderer
 * or checkPermissions) is a defect, not a crash, and a defect or a self-interruption in the stages that run through
 * the runtime still yields an Outcome.
 */
export const guarded = <A>(call: Call, flow: () => Effect.Effect<A | Outcome>): Effect.Effect<A | Outcome> => {
  let effect: Effect.Effect<A | Outcome>
  try {
    effect = flow()
  } catch (thrown) {
    return died(call, Cause.die(thrown))
  }
  return Exit.isExit(effect)
    ? effect
    : Effect.catchAllCause(
      effect,
      (cause) => (Cause.isInterruptedOnly(cause) ? selfInterrupted(call) : died(call, cause))
    )
}
