/**
 * The typed failures of the one-call pipeline. Each stage fails with one of these; the runtime turns every one of
 * them into a tool_result the model can act on ({@link modelText}) and keeps the typed value in the Outcome.
 *
 * @since 0.1.0
 */
import type * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"

// ---------------------------------------------------------------------------------------------------------------
// type id
// ---------------------------------------------------------------------------------------------------------------

/**
 * Carried by every {@link ToolCallError}, so {@link isToolCallError} tells them from any other error with a `_tag`.
 *
 * @since 0.2.0
 * @category type ids
 */
export const ToolCallErrorTypeId: unique symbol = Symbol.for("effect-tool-runtime/ToolCallError")
/**
 * @since 0.2.0
 * @category type ids
 */
export type ToolCallErrorTypeId = typeof ToolCallErrorTypeId

/**
 * The requested tool does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownTool extends Data.TaggedError("UnknownTool")<{
  readonly name: string
  /** The closest registered names, best first. */
  readonly suggestions: ReadonlyArray<string>
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    const hint = this.suggestions.length > 0 ? ` Closest available tools: ${this.suggestions.join(", ")}.` : ""
    return `No such tool available: ${this.name}.${hint}`
  }
}

/**
 * One problem with a tool's input, addressed by the parameter path.
 *
 * @since 0.1.0
 * @category models
 */
export type InputIssue =
  | { readonly _tag: "NotAnObject"; readonly provided: string }
  | { readonly _tag: "Missing"; readonly path: string }
  | { readonly _tag: "Unexpected"; readonly path: string }
  | { readonly _tag: "WrongType"; readonly path: string; readonly expected: string; readonly provided: string }
  | { readonly _tag: "Invalid"; readonly path: string; readonly message: string }

/**
 * One line of model-facing text for an input issue, in Claude Code's wording where it has one.
 *
 * @since 0.1.0
 * @category utilities
 */
export const describeInputIssue = (issue: InputIssue): string => {
  switch (issue._tag) {
    case "NotAnObject":
      return `The input must be a JSON object, but was provided as \`${issue.provided}\``
    case "Missing":
      return `The required parameter \`${issue.path}\` is missing`
    case "Unexpected":
      return `An unexpected parameter \`${issue.path}\` was provided`
    case "WrongType":
      return `The parameter \`${issue.path}\` type is expected as \`${issue.expected}\` but provided as ` +
        `\`${issue.provided}\``
    case "Invalid":
      return issue.path === ""
        ? `The input is invalid: ${issue.message}`
        : `The parameter \`${issue.path}\` is invalid: ${issue.message}`
  }
}

/**
 * The tool exists but cannot work right now (its server is down, there is no network); `reason` says why.
 *
 * @since 0.2.0
 * @category errors
 */
export class ToolDisabled extends Data.TaggedError("ToolDisabled")<{
  readonly tool: string
  readonly reason: string
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    return `${this.tool} is not available right now: ${this.reason}. Do not call it again in this turn; use another ` +
      `tool or tell the user.`
  }
}

/**
 * The input did not decode against the tool's schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends Data.TaggedError("InvalidInput")<{
  readonly tool: string
  readonly issues: ReadonlyArray<InputIssue>
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    return `InputValidationError: Tool failed due to the following issue(s):\n${
      this.issues.map(describeInputIssue).join("\n")
    }`
  }
}

/**
 * The tool's semantic validation refused the input (e.g. `old_string` not unique). The message is written for
 * the model.
 *
 * @since 0.1.0
 * @category errors
 */
export class ValidationFailed extends Data.TaggedError("ValidationFailed")<{
  readonly tool: string
  readonly message: string
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
}

/**
 * The permission policy, a hook or a person refused the call.
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionDenied extends Data.TaggedError("PermissionDenied")<{
  readonly tool: string
  /** Why, for the model: names the rule, mode, hook, tool or user. */
  readonly reason: string
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    return `Permission to use ${this.tool} was denied: ${this.reason}`
  }
}

/**
 * The tool ran and failed with its own typed failure.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolFailed extends Data.TaggedError("ToolFailed")<{
  readonly tool: string
  /** The tool's typed failure value. */
  readonly failure: unknown
  /** The failure rendered for the model. */
  readonly message: string
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
}

/**
 * The call ran past its timeout and was stopped; its scope was closed.
 *
 * @since 0.1.0
 * @category errors
 */
export class TimedOut extends Data.TaggedError("TimedOut")<{
  readonly tool: string
  readonly timeout: Duration.Duration
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    return `${this.tool} timed out after ${
      Duration.format(this.timeout)
    } and was stopped. It may have had partial effects.`
  }
}

/**
 * The call was cancelled. `started` tells whether it had begun: a started call may have had effects and is never
 * reported as one that never ran.
 *
 * @since 0.1.0
 * @category errors
 */
export class Interrupted extends Data.TaggedError("Interrupted")<{
  readonly tool: string
  readonly started: boolean
  /**
   * The process running the call stopped while it ran (a durable turn resumed without running it again): whether it
   * had its effects is unknown.
   *
   * @since 0.3.0
   */
  readonly processStopped?: boolean | undefined
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    if (this.processStopped === true) {
      return `${this.tool}: unknown: the process stopped while it ran. It may or may not have had its effects; ` +
        `check before retrying.`
    }
    return this.started
      ? `${this.tool} was interrupted by the user while running. It may have had partial effects; check before ` +
        `retrying.`
      : `${this.tool} was cancelled before it started. It never ran.`
  }
}

/**
 * The tool died unexpectedly (threw, or failed outside its typed error channel). The model gets a generic message;
 * the full cause goes to the events and logs.
 *
 * @since 0.1.0
 * @category errors
 */
export class Defect extends Data.TaggedError("Defect")<{
  readonly tool: string
  readonly cause: Cause.Cause<unknown>
  /** Whether the tool's action had already run (its effects happened; only its result was lost). */
  readonly ran: boolean
}> {
  readonly [ToolCallErrorTypeId]: ToolCallErrorTypeId = ToolCallErrorTypeId
  override get message(): string {
    return this.ran
      ? `${this.tool} ran, but failed with an internal error before its result could be reported. Its effects may ` +
        `have happened; check before retrying.`
      : `${this.tool} failed with an internal error. The details were logged for the user; try a different approach ` +
        `or ask the user.`
  }
}

/**
 * Every way a single call can fail.
 *
 * @since 0.1.0
 * @category errors
 */
export type ToolCallError =
  | UnknownTool
  | ToolDisabled
  | InvalidInput
  | ValidationFailed
  | PermissionDenied
  | ToolFailed
  | TimedOut
  | Interrupted
  | Defect

/**
 * Whether a value is one of the pipeline's errors ({@link ToolCallError}).
 *
 * @since 0.2.0
 * @category guards
 */
export const isToolCallError = (u: unknown): u is ToolCallError =>
  typeof u === "object" && u !== null && ToolCallErrorTypeId in u

/**
 * The tool_result text of a failure: the message wrapped as Claude Code does, so models trained on it recognise it.
 *
 * @since 0.1.0
 * @category utilities
 */
export const modelText = (error: ToolCallError): string => {
  switch (error._tag) {
    case "UnknownTool":
      return `<tool_use_error>Error: ${error.message}</tool_use_error>`
    default:
      return `<tool_use_error>${error.message}</tool_use_error>`
  }
}

/**
 * One {@link InputIssue} per problem of a Schema parse issue, each naming the parameter path, in words a model can act
 * on without seeing the schema.
 *
 * @since 0.3.0
 * @category constructors
 */
export { inputIssues } from "./internal/inputIssues.js"
