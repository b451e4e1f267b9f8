/**
 * Stage 4, **authorise**: the permission decision from the tool's own view, the policy's rules and mode, and the
 * hooks' opinion.
 *
 * Takes an invocation and the hooks' opinion on it (the {@link Gated} one, or one planned again). {@link verdictOf}
 * asks the tool's `checkPermissions`, then the policy (in a span of its own when the program traces); {@link settle}
 * turns the verdict into an {@link Authorised} decision (an Allow's updatedInput planned again), or a
 * {@link Question} for the approve stage when the answer is Ask. {@link sameVerdict} says whether a call planned
 * again needs deciding again. {@link recordDecision} then writes the settled decision to the call's trace and its
 * event; a Deny becomes {@link denial}.
 */
import * as Effect from "effect/Effect"
import type { HookOpinion, PolicyRequest, PolicyVerdict } from "../../../Permission/PermissionPolicy.js"
import * as Errors from "../../../Tool/Errors.js"
import { Decision, describeReason } from "../../../Tool/Permission.js"
import type { DecisionReason } from "../../../Tool/Permission.js"
import { ToolEvent } from "../../Events.js"
import { continueWith } from "../continuation.js"
import type { AnyInvocation, Call } from "./call.js"
import { renderUseSafely } from "./call.js"
import type { PipelineEnv } from "./env.js"
import { replan } from "./plan.js"

/** A settled decision and the invocation it is about (the one that runs when it allows). */
export interface Authorised {
  readonly _tag: "Authorised"
  readonly decision: Decision
  readonly invocation: AnyInvocation
  /** The policy's verdict the decision answers: a call planned again is decided again only when its verdict differs. */
  readonly verdict: PolicyVerdict
  /** The hooks' opinion the call was decided with. */
  readonly hook: HookOpinion | undefined
}

/** The policy's Ask: what the approver is asked about this invocation. */
export interface Question {
  readonly _tag: "Question"
  readonly invocation: AnyInvocation
  readonly verdict: Extract<PolicyVerdict, { readonly _tag: "Ask" }>
  readonly hook: HookOpinion | undefined
}

/** A settled decision on an invocation, answering a verdict. */
export const authorised = (
  decision: Decision,
  invocation: AnyInvocation,
  verdict: PolicyVerdict,
  hook: HookOpinion | undefined
): Authorised => ({ _tag: "Authorised", decision, invocation, verdict, hook })

/** The policy's decision, in a span of its own (attributes: tool, tool_use id, verdict). */
const evaluateTraced = (env: PipelineEnv, request: PolicyRequest) =>
  !env.traced ? env.policy.evaluate(request) : Effect.withSpan(
    Effect.tap(
      env.policy.evaluate(request),
      (verdict) => Effect.annotateCurrentSpan("permission.verdict", verdict._tag)
    ),
    "PermissionPolicy.evaluate",
    { attributes: { "tool.name": request.definition.name, "tool_use.id": request.context.toolUseId } }
  )

/**
 * The policy's verdict on an invocation: the tool's own check first, then the policy. `allowedInput` is a person's
 * allow of exactly this input (an edited one), which counts only as an allow.
 */
export const verdictOf = (
  { context, env, prepared }: Call,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined,
  allowedInput?: DecisionReason
): Effect.Effect<PolicyVerdict> =>
  continueWith(
    invocation.checkPermissions(context),
    (toolCheck) =>
      evaluateTraced(env, {
        definition: prepared.tool.definition,
        invocation,
        toolCheck,
        hook,
        context,
        ...(allowedInput === undefined ? {} : { allowedInput })
      })
  )

/** A verdict as a decision: allow and deny at once, ask as a question for the approve stage. */
export const settle = (
  { env, prepared }: Call,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined,
  verdict: PolicyVerdict
): Authorised | Question => {
  switch (verdict._tag) {
    case "Allow":
      return authorised(
        Decision.Allow({ reason: verdict.reason }),
        verdict.updatedInput === undefined ? invocation : replan(env, prepared, invocation, verdict.updatedInput),
        verdict,
        hook
      )
    case "Deny":
      return authorised(Decision.Deny({ reason: verdict.reason, message: verdict.message }), invocation, verdict, hook)
    case "Ask":
      return { _tag: "Question", invocation, verdict, hook }
  }
}

/** Whether two verdicts make the same decision: same answer, for the same reason, with the same message. */
export const sameVerdict = (a: PolicyVerdict, b: PolicyVerdict): boolean =>
  a._tag === b._tag && describeReason(a.reason) === describeReason(b.reason) &&
  (a._tag === "Allow" || b._tag === "Allow" || a.message === b.message)

/**
 * Writes the settled decision to the call's trace (the input that will run, its rendering when a rewrite changed it)
 * and publishes it.
 */
export const recordDecision = ({ env, name, prepared, trace }: Call, { decision, invocation }: Authorised) => {
  if (invocation !== prepared.invocation) trace.ui = renderUseSafely(invocation, name)
  trace.executedInput = invocation.input
  trace.decision = decision
  return env.emit(() =>
    ToolEvent.Decided({ toolUseId: prepared.toolUse.id, decision, at: env.clock.unsafeCurrentTimeMillis() })
  )
}

/** The error a Deny becomes: the reason (which rule from which source, which mode), or the message of who denied. */
export const denial = (call: Call, decision: Extract<Decision, { _tag: "Deny" }>): Errors.PermissionDenied => {
  const reason = decision.reason._tag === "User" || decision.reason._tag === "Tool" || decision.reason._tag === "Hook"
    ? decision.message
    : describeReason(decision.reason)
  return new Errors.PermissionDenied({ tool: call.name, reason })
}
