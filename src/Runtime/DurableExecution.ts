/**
 * The seam a durable turn plugs into. The runtime consults {@link DurableExecution} when one is in its context (by
 * default none, and then nothing changes): each call's execution (execute -> finish) goes through
 * {@link DurableExecution.call}, each question to the approver through {@link DurableExecution.ask}. The
 * implementation (`effect-tool-runtime/durable`, on @effect/workflow) makes them activities and durable deferreds;
 * this module knows nothing of it.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type { ApprovalAnswer, ApprovalRequest } from "../Permission/Approver.js"
import type { Outcome } from "../Tool/Outcome.js"

/**
 * One call as the durable layer sees it, right before it executes.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableCall {
  readonly toolUseId: string
  readonly toolName: string
  /** The input that runs. */
  readonly input: unknown
  /** Whether running it again is safe (the tool's `idempotent` trait for this input). */
  readonly idempotent: boolean
}

/**
 * How a call's execution may be made durable.
 *
 * @since 0.3.0
 * @category models
 */
export interface DurableCallRun {
  /** Executes the call (and finishes it) as attempt `attempt`. */
  readonly run: (attempt: number) => Effect.Effect<Outcome>
  /** The Outcome of a call that was running when its process stopped, and is not run again. */
  readonly unknown: (attempt: number) => Effect.Effect<Outcome>
}

/**
 * The durable execution the runtime consults; by default none.
 *
 * @since 0.3.0
 * @category tags
 */
export class DurableExecution extends Context.Tag("effect-tool-runtime/DurableExecution")<
  DurableExecution,
  {
    /** Runs one admitted call: at most once unless it is idempotent; a stored outcome when it already ran. */
    readonly call: (call: DurableCall, run: DurableCallRun) => Effect.Effect<Outcome>
    /** Asks the approver, or gives the answer it already gave. */
    readonly ask: (
      request: ApprovalRequest,
      ask: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
    ) => Effect.Effect<ApprovalAnswer>
  }
>() {}
