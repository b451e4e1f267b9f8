/**
 * One call, from tool_use to Outcome, as the DESIGN's pipeline line reads:
 *
 * ```
 * prepare:  decode (lookup, enabled, schema) -> plan
 * run:      gate (re-plan if stale -> validate -> PreToolUse) -> authorise (tool + policy + hooks)
 *           -> approve (on Ask; an edit is authorised again)
 *           -> admit (re-plan if stale, decided again if its verdict differs; the scheduler re-checks the claims)
 *           -> execute (scoped, with timeout) -> finish (PostToolUse -> budget -> present -> Outcome)
 * ```
 *
 * Whenever the input changes on the way (a normalising validate, a hook's or a person's rewrite, a policy's
 * updatedInput) the call is planned again: what is checked is what runs. A call planned before an earlier call of
 * the turn may have written is planned again before its gate and again before it executes (`freshness.ts`).
 *
 * Each stage is a module of its own under `stages/`, saying what it takes and what it gives; this module only
 * composes them. {@link prepare} runs before scheduling and gives the scheduler a {@link Prepared} call (or the
 * Outcome of a call that cannot run); {@link runScheduled} runs the rest once the scheduler admits it. Nothing here
 * ever fails: every failure becomes an Outcome, built in `stages/finish.ts`.
 *
 * The stages are chained with `continueWith` / `continueWithExit` (see `continuation.ts`): `Effect.flatMap`, and
 * `Effect.flatMap` over `Effect.exit`, continued synchronously when a stage is already an Exit, which is what keeps a
 * trivial call cheap (`bench/pipeline`).
 */
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import type { HookOpinion, PolicyVerdict } from "../../Permission/PermissionPolicy.js"
import * as Errors from "../../Tool/Errors.js"
import type { Outcome } from "../../Tool/Outcome.js"
import type { ToolUseBlock } from "../../Tool/Wire.js"
import { continueWith, continueWithExit } from "./continuation.js"
import type { Admission } from "./stages/admit.js"
import { admit, alone, replanned } from "./stages/admit.js"
import { approve, editedByUser } from "./stages/approve.js"
import type { Authorised } from "./stages/authorise.js"
import { denial, recordDecision, sameVerdict, settle, verdictOf } from "./stages/authorise.js"
import type { AnyInvocation, Call, Parked, Prepared, Trace } from "./stages/call.js"
import { callOf, traceOf, withCallSpan } from "./stages/call.js"
import { availabilityOf, decodeInput, disabled, lookup } from "./stages/decode.js"
import type { PipelineEnv } from "./stages/env.js"
import { execute } from "./stages/execute.js"
import type { Report } from "./stages/finish.js"
import { diedWith, failed, finish, guarded, reportBefore, reportOf, stopped } from "./stages/finish.js"
import { gate } from "./stages/gate.js"
import { plan } from "./stages/plan.js"

export type { Admission } from "./stages/admit.js"
export type { AnyInvocation, Parked, Prepared, Trace } from "./stages/call.js"
export { isParked, traceOf } from "./stages/call.js"
export type { PipelineEnv } from "./stages/env.js"
export { availabilityCache, availabilityOnce, isTracing, tracesCalls } from "./stages/env.js"
export { failed, interrupted } from "./stages/finish.js"

// ---------------------------------------------------------------------------------------------------------------
// before scheduling: decode -> plan
// ---------------------------------------------------------------------------------------------------------------

/**
 * Lookup, decode and plan. Gives the prepared call, or the Outcome of a call that cannot run (unknown tool, disabled
 * tool, invalid input, or a defect in the tool's schema or plan).
 */
export const prepare = (
  env: PipelineEnv,
  toolUse: ToolUseBlock,
  receivedAt: number,
  timeout: Duration.Duration | undefined
): Effect.Effect<Either.Either<Prepared, Outcome>> => {
  const found = lookup(env, toolUse)
  if (Either.isLeft(found)) return notPrepared(env, reportBefore(toolUse, undefined, receivedAt), found.left)
  const tool = found.right
  const report = reportBefore(toolUse, tool.definition.name, receivedAt)
  return continueWith(availabilityOf(env, tool), (availability) => {
    if (availability._tag === "Disabled") return notPrepared(env, report, disabled(tool, availability.reason))
    try {
      // Inside the try: a schema's own filter or transform may throw, and so may a tool's traits or claims.
      const decoded = decodeInput(tool, toolUse.input)
      if (Either.isLeft(decoded)) return notPrepared(env, report, decoded.left)
      return Exit.succeed(
        Either.right({ toolUse, tool, invocation: plan(env, tool, decoded.right), receivedAt, timeout })
      )
    } catch (thrown) {
      return continueWith(
        diedWith(env, report, Cause.die(thrown), false),
        (outcome) => Exit.succeed(Either.left(outcome))
      )
    }
  })
}

const notPrepared = (
  env: PipelineEnv,
  report: Report,
  error: Errors.ToolCallError
): Effect.Effect<Either.Either<Prepared, Outcome>> =>
  continueWith(failed(env, report, error), (outcome) => Exit.succeed(Either.left(outcome)))

// ---------------------------------------------------------------------------------------------------------------
// after scheduling: gate -> authorise -> approve -> admit -> execute -> finish
// ---------------------------------------------------------------------------------------------------------------

/**
 * Everything after scheduling. Never fails. Interruption (a cancelled run, or the caller's fiber) interrupts the call
 * and closes its scope; the interrupter reports it from the {@link Trace}.
 */
export const runScheduled = (
  env: PipelineEnv,
  prepared: Prepared,
  trace: Trace,
  admission: Admission
): Effect.Effect<Outcome | Parked> => {
  const call = callOf(env, prepared, trace)
  return withCallSpan(call, guarded(call, () => stages(call, admission)))
}

/** Everything after scheduling, for a call that runs alone. Never fails. */
export const run = (env: PipelineEnv, prepared: Prepared, trace: Trace = traceOf(prepared)): Effect.Effect<Outcome> =>
  runScheduled(env, prepared, trace, alone) as Effect.Effect<Outcome>

/** gate -> authorise -> approve (when the answer is Ask) -> the decision recorded, and on. */
const stages = (call: Call, admission: Admission): Effect.Effect<Outcome | Parked> =>
  continueWithExit(gate(call), (gated) => {
    if (Exit.isFailure(gated)) return stopped(call, gated.cause)
    const { additionalContext, invocation, opinion } = gated.value
    return continueWithExit(
      continueWith(verdictOf(call, invocation, opinion), (verdict) => settleAsking(call, invocation, opinion, verdict)),
      (authorised) =>
        Exit.isSuccess(authorised)
          ? decided(call, admission, authorised.value, additionalContext, 0)
          : stopped(call, authorised.cause)
    )
  })

/** A verdict settled: at once, or by the approver; an edited input is authorised again, and asked again if it asks. */
const settleAsking = (
  call: Call,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined,
  verdict: PolicyVerdict
): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> => {
  const settled = settle(call, invocation, hook, verdict)
  if (settled._tag === "Authorised") return Exit.succeed(settled)
  return continueWith(
    approve(call, settled),
    (answer) =>
      answer._tag === "Authorised" ? Exit.succeed(answer) : continueWith(
        verdictOf(call, answer.invocation, undefined, editedByUser),
        (again) => settleAsking(call, answer.invocation, undefined, again)
      )
  )
}

/** The decision recorded; a Deny finishes the call, an Allow goes to admission. */
const decided = (
  call: Call,
  admission: Admission,
  authorised: Authorised,
  additionalContext: ReadonlyArray<string>,
  rechecks: number
): Effect.Effect<Outcome | Parked> =>
  continueWith(recordDecision(call, authorised), (): Effect.Effect<Outcome | Parked> => {
    const { decision } = authorised
    if (decision._tag === "Deny") {
      return failed(call.env, reportOf(call, additionalContext), denial(call, decision))
    }
    return proceed(call, admission, authorised, additionalContext, rechecks)
  })

/**
 * admit: a plan made before something may have written is made again and, if its verdict differs, decided again
 * (asking again if it now asks); then executed now or parked -> execute -> finish.
 */
const proceed = (
  call: Call,
  admission: Admission,
  authorised: Authorised,
  additionalContext: ReadonlyArray<string>,
  rechecks: number
): Effect.Effect<Outcome | Parked> => {
  const fresh = replanned(call, authorised.invocation, rechecks)
  if (fresh === authorised.invocation) return admitted(call, admission, authorised, additionalContext)
  return continueWith(verdictOf(call, fresh, authorised.hook), (verdict): Effect.Effect<Outcome | Parked> => {
    if (sameVerdict(verdict, authorised.verdict)) {
      return admitted(call, admission, { ...authorised, invocation: fresh }, additionalContext)
    }
    return continueWithExit(settleAsking(call, fresh, authorised.hook, verdict), (settled) =>
      Exit.isSuccess(settled)
        ? decided(call, admission, settled.value, additionalContext, rechecks + 1)
        : settled.cause._tag === "Fail"
        ? failed(call.env, reportOf(call, additionalContext), settled.cause.error)
        : Exit.failCause(settled.cause as Cause.Cause<never>))
  })
}

/** The scheduler lets the call go on -> execute -> finish; or parks it, to go through admission again. */
const admitted = (
  call: Call,
  admission: Admission,
  authorised: Authorised,
  additionalContext: ReadonlyArray<string>
): Effect.Effect<Outcome | Parked> =>
  admit(
    call,
    admission,
    authorised.invocation,
    (invocation) => {
      const durable = call.env.durable
      if (durable === undefined) {
        return continueWithExit(execute(call, invocation), (ran) => finish(call, invocation, additionalContext, ran))
      }
      // A durable turn: the call runs at most once unless it is idempotent (or gives the outcome it already had).
      return durable.call({
        toolUseId: call.prepared.toolUse.id,
        toolName: call.name,
        input: invocation.input,
        idempotent: invocation.traits.idempotent === true
      }, {
        run: (attempt) => {
          call.trace.attempt = attempt
          return continueWithExit(execute(call, invocation), (ran) => finish(call, invocation, additionalContext, ran))
        },
        unknown: (attempt) => {
          call.trace.attempt = attempt
          call.trace.startedAt ??= call.env.clock.unsafeCurrentTimeMillis()
          return failed(
            call.env,
            reportOf(call, additionalContext),
            new Errors.Interrupted({ tool: call.name, started: true, processStopped: true })
          )
        }
      })
    },
    () => proceed(call, admission, authorised, additionalContext, 0)
  )
