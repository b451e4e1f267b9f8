/**
 * The envelope of one finished tool_use: what the model gets, what the user saw, what the audit log keeps, and
 * how the call went. Exactly one Outcome exists for every tool_use the runtime is given.
 *
 * @since 0.1.0
 */
import type { ToolCallError } from "./Errors.js"
import type { Decision } from "./Permission.js"
import type { UiBlock } from "./Presentation.js"
import type { ToolResultBlock } from "./Wire.js"

/**
 * How a call ended.
 *
 * @since 0.1.0
 * @category models
 */
export type Status = "success" | "error" | "denied" | "interrupted" | "timed_out"

/**
 * When things happened, in milliseconds since the epoch on the runtime's Clock (so `TestClock` controls them).
 *
 * @since 0.1.0
 * @category models
 */
export interface Timings {
  /** When the runtime received the tool_use. */
  readonly receivedAt: number
  /** When the tool's `call` began; absent when it never did. */
  readonly startedAt?: number | undefined
  readonly endedAt: number
  /** `endedAt - startedAt` when the call ran, else 0. */
  readonly durationMs: number
}

/**
 * One finished tool_use.
 *
 * @since 0.1.0
 * @category models
 */
export interface Outcome {
  readonly toolUseId: string
  /** The name the model used (possibly an alias, possibly unknown). */
  readonly requestedName: string
  /** The tool's canonical name, when the name resolved. */
  readonly toolName: string | undefined
  readonly status: Status
  /** What goes back to the model. */
  readonly result: ToolResultBlock
  /** What the user sees. */
  readonly ui: ReadonlyArray<UiBlock>
  /** Plain text derived from `ui`: the searchable transcript. */
  readonly audit: string
  /** The tool's raw output, on success. */
  readonly output?: unknown
  /** The typed failure, on anything but success. */
  readonly error?: ToolCallError | undefined
  /** The input as the model sent it. */
  readonly originalInput: unknown
  /** The input actually executed, after validation, hooks or the user edited it; absent when nothing ran. */
  readonly executedInput?: unknown
  /** The permission decision, when one was taken. */
  readonly decision?: Decision | undefined
  /** Extra context for the model from hooks, already appended to `result`. */
  readonly additionalContext: ReadonlyArray<string>
  /** Where the full result was written when it was too large for the context. */
  readonly persistedPath?: string | undefined
  readonly timings: Timings
  /**
   * Which attempt ran the call, in a durable turn (1 unless a process died while it ran and it was run again).
   *
   * @since 0.3.0
   */
  readonly attempt?: number | undefined
}
