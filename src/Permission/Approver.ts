/**
 * The Approver asks a person whether a call may run. The runtime puts requests to it one at a time, even when calls
 * run in parallel. Layers: {@link Approver.allowAll}, {@link Approver.denyAll}, {@link Approver.scripted} (tests),
 * and the interactive terminal prompt in `Permission/TerminalApprover`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type { DecisionReason } from "../Tool/Permission.js"
import type { UiBlock } from "../Tool/Presentation.js"
import type { QuestionReply, QuestionRequest } from "../Tool/Question.js"
import type { Risk } from "../Tool/Tool.js"

/**
 * What the person is shown.
 *
 * @since 0.1.0
 * @category models
 */
export interface ApprovalRequest {
  readonly toolUseId: string
  readonly toolName: string
  readonly input: unknown
  /** The call as the UI renders it. */
  readonly ui: ReadonlyArray<UiBlock>
  /** Why approval is needed. */
  readonly message: string
  /** Rules (`Tool(content)`) that would allow calls like this one from now on. */
  readonly suggestions: ReadonlyArray<string>
  /**
   * Why the policy asks (an ask rule, a safety check, the tool, a hook, or no rule allowing it). An automatic
   * approver must leave every reason but `Default` to a person.
   *
   * @since 0.2.0
   */
  readonly reason?: DecisionReason | undefined
  /** The tool's compact text of what matters for risk; `""` when the tool gives none (never judged automatically). */
  readonly classifierInput?: string | undefined
  /** The risk of the call, from its traits and the tool's view. */
  readonly risk?: Risk | undefined
  /**
   * In a durable turn, the token of the durable deferred this question is: it names the pending approval across
   * processes (an answer given in a new process resumes the turn).
   *
   * @since 0.3.0
   */
  readonly token?: string | undefined
}

/**
 * The person's answer.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalAnswer = Data.TaggedEnum<{
  /** Run this call. */
  AllowOnce: {}
  /** Run it, and add these rules to the session. */
  AllowSession: { readonly rules: ReadonlyArray<string> }
  /** Run it, and persist these rules to the local settings file. */
  AllowAlways: { readonly rules: ReadonlyArray<string> }
  /** Do not run it; `message` goes to the model; `cancelRun` stops the rest of the turn. */
  Deny: { readonly message?: string | undefined; readonly cancelRun: boolean }
  /** Run it with this input instead (decoded and validated again). */
  Edit: { readonly input: unknown }
  /** An automatic approver (not a person) allowed this call; `approver` and `reason` go to the audit. */
  AllowAuto: { readonly approver: string; readonly reason: string }
}>

/**
 * Constructors and matchers for {@link ApprovalAnswer}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ApprovalAnswer = Data.taggedEnum<ApprovalAnswer>()

/**
 * The Approver service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Approver extends Context.Tag("effect-tool-runtime/Approver")<
  Approver,
  {
    readonly ask: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
    /**
     * Puts questions to the person (AskUserQuestion). Absent on approvers that cannot ask anyone (allow-all,
     * deny-all, scripted approvals): the tool then tells the model no one is there to answer.
     *
     * @since 0.3.0
     */
    readonly answer?: ((request: QuestionRequest) => Effect.Effect<QuestionReply>) | undefined
  }
>() {
  /**
   * Approves everything once. For trusted, headless runs.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly allowAll: Layer.Layer<Approver> = Layer.succeed(Approver, {
    ask: () => Effect.succeed(ApprovalAnswer.AllowOnce())
  })

  /**
   * Refuses everything: the safe answer when no person is there.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly denyAll: Layer.Layer<Approver> = Layer.succeed(Approver, {
    ask: (request) =>
      Effect.succeed(
        ApprovalAnswer.Deny({
          message: `No one was available to approve ${request.toolName}; it was denied.`,
          cancelRun: false
        })
      )
  })

  /**
   * Answers by script: a function of the request, or a list consumed in order (then denying). Every request is
   * recorded, in the order asked, in the returned `Ref`, so tests can assert what was asked.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly scripted = (
    script: ReadonlyArray<ApprovalAnswer> | ((request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>),
    asked?: Ref.Ref<ReadonlyArray<ApprovalRequest>>
  ): Layer.Layer<Approver> =>
    Layer.effect(
      Approver,
      Effect.gen(function*() {
        const remaining = yield* Ref.make(typeof script === "function" ? [] : [...script])
        const answer = typeof script === "function"
          ? script
          : () =>
            Ref.modify(remaining, ([next, ...rest]): [ApprovalAnswer, Array<ApprovalAnswer>] => [
              next ?? ApprovalAnswer.Deny({ message: "The approval script ran out of answers.", cancelRun: false }),
              rest
            ])
        return {
          ask: (request) =>
            (asked === undefined ? Effect.void : Ref.update(asked, (all) => [...all, request])).pipe(
              Effect.zipRight(answer(request))
            )
        }
      })
    )

  /**
   * `base` (default {@link Approver.denyAll}) for approvals, and questions answered by `answer` (a test's person).
   * Every question request is recorded in `asked` when given.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly answering = (
    answer: (request: QuestionRequest) => Effect.Effect<QuestionReply>,
    options: {
      readonly base?: Layer.Layer<Approver> | undefined
      readonly asked?: Ref.Ref<ReadonlyArray<QuestionRequest>> | undefined
    } = {}
  ): Layer.Layer<Approver> =>
    Layer.effect(
      Approver,
      Effect.map(Approver, (base) => ({
        ask: base.ask,
        answer: (request: QuestionRequest) =>
          (options.asked === undefined ? Effect.void : Ref.update(options.asked, (all) => [...all, request])).pipe(
            Effect.zipRight(answer(request))
          )
      }))
    ).pipe(Layer.provide(options.base ?? Approver.denyAll))
}
