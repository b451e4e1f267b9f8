/**
 * Stage 6, **admit**: the point where an authorised call is handed to the scheduler to execute.
 *
 * Takes the {@link Call}, the scheduler's {@link Admission} and the invocation that will run. First the plan is made
 * again when an earlier call may have written since it was made ({@link replanned}: the pipeline then decides it
 * again when the new plan's verdict differs, at most {@link MAX_RECHECKS} times in a row). Then the scheduler
 * re-checks that invocation's claims (a hook or a person may have rewritten the input to claim more than the call was
 * admitted with): when the call may go on, it executes now; when it must wait, the run gives {@link Parked}, whose
 * `resume` goes through admission again once the scheduler lets it go on (parked, the call waited for others, which
 * may have written). What is scheduled is what runs.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { Outcome } from "../../../Tool/Outcome.js"
import type { AnyInvocation, Call, Parked } from "./call.js"
import { withCallSpan } from "./call.js"
import { guarded } from "./finish.js"
import { refreshed } from "./plan.js"

/**
 * How the scheduler admits a call to execution, once its gate has settled the input that will run.
 *
 * `admit` is asked right before the call executes, with the invocation that will run: when that input claims more
 * than the call was admitted with (a hook or a person rewrote it), the scheduler registers the wider claims; and when
 * the call must now wait (for a call it conflicts with, or because an earlier call's rewrite put it behind that
 * call), it answers true, the run gives {@link Parked}, and the scheduler resumes the call once it may go on. False
 * means: execute now.
 */
export interface Admission {
  readonly admit: (invocation: AnyInvocation) => boolean
}

/** A call that runs alone (`executeOne`) is never held back. */
export const alone: Admission = { admit: () => false }

/** How many times in a row a call's decision may change because its plan was made again. */
export const MAX_RECHECKS = 3

/**
 * The invocation planned again when something may have written since it was planned, else the same one; after
 * {@link MAX_RECHECKS} changed decisions in a row, the last one stands.
 */
export const replanned = ({ env, prepared }: Call, invocation: AnyInvocation, rechecks: number): AnyInvocation =>
  rechecks >= MAX_RECHECKS ? invocation : refreshed(env, prepared, invocation)

/**
 * Executes the invocation now, or parks the call; `again` is the rest of its run from admission, run (guarded: it
 * cannot fail) when the scheduler resumes it.
 */
export const admit = (
  call: Call,
  admission: Admission,
  invocation: AnyInvocation,
  execute: (invocation: AnyInvocation) => Effect.Effect<Outcome>,
  again: () => Effect.Effect<Outcome | Parked>
): Effect.Effect<Outcome | Parked> => {
  if (!admission.admit(invocation)) return execute(invocation)
  const parked: Parked = { _tag: "Parked", resume: withCallSpan(call, Effect.suspend(() => guarded(call, again))) }
  return Exit.succeed(parked)
}
