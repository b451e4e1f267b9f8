/**
 * What a UI hears while a turn runs. Events are delivered as they happen, not held back by the model-order
 * delivery of outcomes.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import type { ApprovalAnswer, ApprovalRequest } from "../Permission/Approver.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { Decision } from "../Tool/Permission.js"
import type { UiBlock } from "../Tool/Presentation.js"
import type { Progress } from "../Tool/Tool.js"

/**
 * One thing that happened to one tool_use.
 *
 * @since 0.1.0
 * @category models
 */
export type ToolEvent = Data.TaggedEnum<{
  /**
   * The model is still streaming this tool_use's input: what a person sees of it so far (nothing is checked or run
   * until it is complete). `partialInput` is the input parsed so far.
   */
  Previewed: {
    readonly toolUseId: string
    readonly name: string
    readonly ui: ReadonlyArray<UiBlock>
    readonly partialInput: unknown
    readonly at: number
  }
  /** The runtime received the tool_use and is waiting to start it. */
  Queued: { readonly toolUseId: string; readonly name: string; readonly at: number }
  /** The call passed its checks and its scheduling constraints, and begins. */
  Started: {
    readonly toolUseId: string
    readonly toolName: string
    readonly ui: ReadonlyArray<UiBlock>
    /** One line for a spinner or status line, from the tool's `activity` ("Reading src/a.ts"). */
    readonly activity: string
    readonly at: number
  }
  /** The running call reported progress. */
  Progress: { readonly toolUseId: string; readonly progress: Progress; readonly at: number }
  /** A person is being asked. */
  PermissionRequested: { readonly toolUseId: string; readonly request: ApprovalRequest; readonly at: number }
  /** The person answered. */
  PermissionAnswered: { readonly toolUseId: string; readonly answer: ApprovalAnswer; readonly at: number }
  /** The permission decision was taken. */
  Decided: { readonly toolUseId: string; readonly decision: Decision; readonly at: number }
  /** Something for the user from a hook (a non-blocking hook error, a `systemMessage`). */
  Notice: { readonly toolUseId: string; readonly message: string; readonly at: number }
  /** A tool died; the full cause, for logs (the model only gets a generic message). */
  DefectLogged: { readonly toolUseId: string; readonly cause: Cause.Cause<unknown>; readonly at: number }
  /** The tool_use has its Outcome. */
  Completed: { readonly outcome: Outcome; readonly at: number }
}>

/**
 * Constructors and matchers for {@link ToolEvent}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ToolEvent = Data.taggedEnum<ToolEvent>()
