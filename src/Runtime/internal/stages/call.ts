/**
 * Not a stage: one call as the stages see it. A {@link Prepared} call is what `prepare` (decode, plan) gives the
 * scheduler; a {@link Call} is what every stage after scheduling takes: the turn's env, the prepared call, the
 * context the tool's own stages get, and the {@link Trace} of how far the call got. A run ends with an Outcome, or
 * {@link Parked} when admission holds it back; {@link withCallSpan} gives the whole run its span.
 */
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { RegisteredTool } from "../../../Catalog/ToolRegistry.js"
import type { Outcome } from "../../../Tool/Outcome.js"
import type { Decision } from "../../../Tool/Permission.js"
import { UiBlock } from "../../../Tool/Presentation.js"
import type * as Tool from "../../../Tool/Tool.js"
import type { CallContext } from "../../../Tool/Tool.js"
import type { ToolUseBlock } from "../../../Tool/Wire.js"
import { ToolEvent } from "../../Events.js"
import type { PipelineEnv } from "./env.js"

/** A call's input as the tool bound it. */
export type AnyInvocation = Tool.AnyInvocation

/** A call that resolved to a tool, decoded and was planned: ready to be scheduled. */
export interface Prepared {
  readonly toolUse: ToolUseBlock
  readonly tool: RegisteredTool
  /** The plan of the decoded input; the scheduler admits the call on its traits and claims. */
  readonly invocation: AnyInvocation
  readonly receivedAt: number
  /** A per-call timeout overriding the tool's default. */
  readonly timeout: Duration.Duration | undefined
}

/**
 * How far a call got, written as it goes, so whoever interrupts it (a cancelled run) can still report it faithfully:
 * a call that started is never reported as one that never ran.
 */
export interface Trace {
  ui: ReadonlyArray<UiBlock>
  executedInput?: unknown
  decision?: Decision
  startedAt?: number
  /** Which attempt of a durable turn runs the call (absent outside one). */
  attempt?: number
}

/** A renderer that throws shows the tool's name alone. */
export const renderUseSafely = (invocation: AnyInvocation, name: string): ReadonlyArray<UiBlock> => {
  try {
    return invocation.renderUse()
  } catch {
    return [UiBlock.Title({ text: name })]
  }
}

/** A fresh trace for a prepared call. */
export const traceOf = (prepared: Prepared): Trace => ({
  ui: renderUseSafely(prepared.invocation, prepared.tool.definition.name)
})

/** One scheduled call, as every stage after scheduling takes it. */
export interface Call {
  readonly env: PipelineEnv
  readonly prepared: Prepared
  /** The tool's canonical name. */
  readonly name: string
  /** What the tool's own stages (validate, checkPermissions, call) get. */
  readonly context: CallContext
  readonly trace: Trace
}

/** The call a prepared call becomes once the scheduler runs it. */
export const callOf = (env: PipelineEnv, prepared: Prepared, trace: Trace): Call => {
  const toolUseId = prepared.toolUse.id
  const name = prepared.tool.definition.name
  return {
    env,
    prepared,
    name,
    context: {
      toolUseId,
      toolName: name,
      progress: (progress) =>
        Effect.suspend(() =>
          env.emit(() => ToolEvent.Progress({ toolUseId, progress, at: env.clock.unsafeCurrentTimeMillis() }))
        ),
      progressWanted: env.listened,
      isReadDenied: env.policy.deniesRead,
      // A person is asked one thing at a time: questions wait behind approvals, as approvals do.
      askPerson: env.approver.answer === undefined
        ? undefined
        : (request) => env.withApprovalLock(env.approver.answer!(request)),
      permissionMode: env.policy.mode
    },
    trace
  }
}

/** A call that passed its gate and waits to be admitted to execution, with the rest of its run. */
export interface Parked {
  readonly _tag: "Parked"
  readonly resume: Effect.Effect<Outcome | Parked>
}

/** Whether a run ended parked rather than with an Outcome. */
export const isParked = (result: Outcome | Parked): result is Parked => "_tag" in result && result._tag === "Parked"

/** A call's span: tool name, tool_use id, and the status it ended with (`parked` while it waits for admission). */
export const withCallSpan = (
  { env, name, prepared }: Call,
  flow: Effect.Effect<Outcome | Parked>
): Effect.Effect<Outcome | Parked> =>
  !env.traced ? flow : Effect.withSpan(
    Effect.tap(
      flow,
      (result) => Effect.annotateCurrentSpan("tool.status", isParked(result) ? "parked" : result.status)
    ),
    "ToolRuntime.call",
    { attributes: { "tool.name": name, "tool_use.id": prepared.toolUse.id } }
  )
