/**
 * Questions a tool puts to the person (AskUserQuestion), and their answers: the protocol's side of the channel. The
 * runtime passes a tool the Approver's way of asking (`CallContext.askPerson`) when the Approver can ask; without
 * it (an automatic approver, no terminal) there is no person to ask and the tool says so.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"

/**
 * One choice of a question.
 *
 * @since 0.3.0
 * @category models
 */
export interface QuestionOption {
  readonly label: string
  readonly description: string
}

/**
 * One question: its text, a short header, 2-4 options, and whether several may be chosen.
 *
 * @since 0.3.0
 * @category models
 */
export interface Question {
  readonly question: string
  readonly header: string
  readonly options: ReadonlyArray<QuestionOption>
  readonly multiSelect: boolean
}

/**
 * What the person is asked: the questions of one call.
 *
 * @since 0.3.0
 * @category models
 */
export interface QuestionRequest {
  readonly toolUseId: string
  readonly questions: ReadonlyArray<Question>
}

/**
 * The person's reply: an answer per question text (labels joined with ", " for several, or their own words), or a
 * refusal to answer.
 *
 * @since 0.3.0
 * @category models
 */
export type QuestionReply =
  | { readonly _tag: "Answered"; readonly answers: Readonly<Record<string, string>> }
  | { readonly _tag: "Declined"; readonly message?: string | undefined }

/**
 * The permission mode of a running session, as a tool sees it.
 *
 * @since 0.3.0
 * @category models
 */
export interface PermissionModeControl {
  readonly get: Effect.Effect<string>
  readonly set: (mode: "default" | "acceptEdits" | "plan" | "bypassPermissions" | "dontAsk") => Effect.Effect<void>
}
