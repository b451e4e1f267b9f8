/**
 * Stage 3, **gate**: the tool's own semantic checks, then the PreToolUse hooks, once the scheduler admitted the call.
 *
 * Takes the scheduled {@link Call}. Plans the call again when an earlier call may have written since it arrived
 * (`plan.ts`, {@link refreshed}), runs `validate` (which may normalise the input: planned again), then the
 * PreToolUse hooks: their notices become events, a hook that stops the run cancels it, and an input a hook rewrote
 * is decoded, planned and validated again. Gives {@link Gated}: the invocation the permission stage decides on, the
 * hooks' opinion on it and the context they add for the model; or fails with InvalidInput / ValidationFailed.
 */
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { HookOpinion } from "../../../Permission/PermissionPolicy.js"
import type * as Errors from "../../../Tool/Errors.js"
import { continueWith, continueWithExit } from "../continuation.js"
import type { AnyInvocation, Call } from "./call.js"
import { notify } from "./env.js"
import { rebind, refreshed, replan, validationFailed } from "./plan.js"

/** What passed the gate. */
export interface Gated {
  readonly invocation: AnyInvocation
  /** The hooks' permission opinion (allow, ask or deny), weighed by the policy with the rules. */
  readonly opinion: HookOpinion | undefined
  /** What the hooks add to the model's tool_result. */
  readonly additionalContext: ReadonlyArray<string>
}

/**
 * The tool's `validate`, planning again when it normalised the input. Planned when it arrived, the call is planned
 * again first when a call before it may have written since (its plan would describe another world).
 */
export const validate = (
  { context, env, name, prepared }: Call
): Effect.Effect<AnyInvocation, Errors.ValidationFailed> => {
  const current = refreshed(env, prepared, prepared.invocation)
  return continueWithExit(
    current.validate(context),
    (exit): Effect.Effect<AnyInvocation, Errors.ValidationFailed> => {
      if (Exit.isSuccess(exit)) return Exit.succeed(replan(env, prepared, current, exit.value))
      return exit.cause._tag === "Fail"
        ? Exit.fail(validationFailed(name, exit.cause.error))
        : Exit.failCause(exit.cause as Cause.Cause<never>)
    }
  )
}

/** validate -> PreToolUse hooks. */
export const gate = (call: Call): Effect.Effect<Gated, Errors.InvalidInput | Errors.ValidationFailed> => {
  const { env, name, prepared } = call
  const toolUseId = prepared.toolUse.id
  return continueWith(
    validate(call),
    (validated) =>
      continueWith(
        env.hooks.preToolUse({ toolUseId, toolName: name, input: validated.input }),
        (pre) =>
          continueWith(
            pre.stopRun === true
              ? Effect.zipRight(notify(env, toolUseId, pre.notices), env.cancelRun)
              : notify(env, toolUseId, pre.notices),
            () =>
              continueWith(
                pre.updatedInput === undefined ? Exit.succeed(validated) : rebind(call, pre.updatedInput),
                (invocation): Effect.Effect<Gated> =>
                  Exit.succeed({ invocation, opinion: pre.opinion, additionalContext: pre.additionalContext })
              )
          )
      )
  )
}
