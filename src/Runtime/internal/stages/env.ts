/**
 * Not a stage: what every stage runs with. The services and shared state of one turn ({@link PipelineEnv}, with the
 * run's write log that says whether a plan may be stale), how a run learns whether tools are enabled and whether
 * calls get spans, and the two things any stage may say through it (a hook's notices, a defect's log).
 */
import type * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { RegisteredTool, ToolRegistry } from "../../../Catalog/ToolRegistry.js"
import type { ToolHooks } from "../../../Hooks/ToolHooks.js"
import type { Approver } from "../../../Permission/Approver.js"
import type { PermissionPolicy } from "../../../Permission/PermissionPolicy.js"
import type { ResultStore } from "../../../Session/ResultStore.js"
import { Availability } from "../../../Tool/Tool.js"
import type { DurableExecution } from "../../DurableExecution.js"
import { ToolEvent } from "../../Events.js"
import type { RuntimeSettings } from "../../RuntimeConfig.js"
import type { WriteLog } from "../freshness.js"

/** The services and shared state one turn's calls run with. */
export interface PipelineEnv {
  readonly registry: ToolRegistry["Type"]
  readonly policy: PermissionPolicy["Type"]
  readonly approver: Approver["Type"]
  readonly hooks: ToolHooks["Type"]
  readonly store: ResultStore["Type"]
  readonly settings: RuntimeSettings
  /** Read synchronously (`unsafeCurrentTimeMillis`): looking the Clock up on every timestamp is measurable. */
  readonly clock: Clock.Clock
  /** Publishes an event; built lazily, so a run nobody listens to does not pay for its events. */
  readonly emit: (event: () => ToolEvent) => Effect.Effect<void>
  /**
   * Whether anything receives the events (the run's events stream, the audit log). When nothing does, calls are told
   * that nobody wants their progress (`CallContext.progressWanted`), and an MCP call asks its server for none.
   */
  readonly listened: boolean
  /** Serialises approval requests: a person is asked one thing at a time. */
  readonly withApprovalLock: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Cancels the rest of the run (a person's "deny and stop"); the calling fiber is spared. */
  readonly cancelRun: Effect.Effect<void>
  /**
   * Whether calls and decisions get spans: true when the program installed a tracer of its own. Effect's built-in
   * tracer exports nothing, and a span per call costs more than the whole call (`bench/pipeline`).
   */
  readonly traced: boolean
  /**
   * Whether a tool is enabled, asked only of tools that define `isEnabled` (read once per run, then cached: see
   * {@link availabilityCache}).
   */
  readonly availability: (tool: RegisteredTool) => Effect.Effect<Availability>
  /**
   * When each call of the run was planned and which calls may be writing (`freshness.ts`): a call planned before an
   * earlier call may have written is planned again before its gate and before it executes. Absent for a call that
   * runs alone (nothing of its turn runs before it).
   */
  readonly writes?: WriteLog | undefined
  /** The durable execution a turn runs under, if any (`DurableExecution`). */
  readonly durable?: DurableExecution["Type"] | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// availability
// ---------------------------------------------------------------------------------------------------------------

const disabledWhenUnsure = (check: Effect.Effect<Availability>): Effect.Effect<Availability> =>
  Effect.catchAllCause(check, () => Effect.succeed(Availability.disabled("its availability check failed")))

/** The availability for a single request: asked once, since the request makes one call. */
export const availabilityOnce: PipelineEnv["availability"] = (tool) => disabledWhenUnsure(tool.service.isEnabled)

/**
 * Asks each tool's `isEnabled` at most once: the answers of one run (or one request). A check that fails or dies
 * counts as disabled: a tool that cannot say it works is not called.
 */
export const availabilityCache = (): PipelineEnv["availability"] => {
  const known = new Map<string, Availability>()
  return (tool) => {
    const cached = known.get(tool.definition.name)
    if (cached !== undefined) return Exit.succeed(cached)
    return Effect.map(
      disabledWhenUnsure(tool.service.isEnabled),
      (availability) => {
        known.set(tool.definition.name, availability)
        return availability
      }
    )
  }
}

// Spans only for a program that installed a tracer (see PipelineEnv.traced).
export { isTracing, tracesCalls } from "../../../Shared/tracing.js"

// ---------------------------------------------------------------------------------------------------------------
// what any stage says
// ---------------------------------------------------------------------------------------------------------------

/** Hook messages for the user, as events. */
export const notify = (env: PipelineEnv, toolUseId: string, notices: ReadonlyArray<string>): Effect.Effect<void> =>
  notices.length === 0
    ? Effect.void
    : Effect.forEach(
      notices,
      (message) => env.emit(() => ToolEvent.Notice({ toolUseId, message, at: env.clock.unsafeCurrentTimeMillis() })),
      { discard: true }
    )

/** A defect, to the events (for UIs) and to the log (with its full cause); the model only ever sees a generic text. */
export const logDefect = (env: PipelineEnv, toolUseId: string, cause: Cause.Cause<unknown>): Effect.Effect<void> =>
  Effect.zipRight(
    Effect.suspend(() =>
      env.emit(() => ToolEvent.DefectLogged({ toolUseId, cause, at: env.clock.unsafeCurrentTimeMillis() }))
    ),
    Effect.logError(`tool_use ${toolUseId} died`, cause)
  )
