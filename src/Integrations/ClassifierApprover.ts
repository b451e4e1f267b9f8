/**
 * An {@link Approver} that puts asks to a language model first (Claude Code's auto mode), in front of the next
 * approver (a person, or deny). It sits only where a person would be asked, so it can never allow what a deny
 * rule, an ask rule, a safety check or plan mode refuses: those never reach an approver as a plain "no rule allows
 * it" ask.
 *
 * Fail-closed: the classifier judges only asks whose reason is `Default` (no rule allowed the call), whose tool gave
 * a classifier input (the default `""` means never), and whose risk is at most `maxRisk`. A timeout, a model error
 * or an answer that does not parse hands the ask to the next approver.
 *
 * ```ts
 * const approver = ClassifierApprover.layer({ context: "The user asked to fix the failing tests." }).pipe(
 *   Layer.provide(TerminalApprover.layer),   // the next approver
 *   Layer.provide(AnthropicLanguageModel.layer({ model: "claude-haiku-4-5" }))
 * )
 * ```
 *
 * @since 0.2.0
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { ApprovalAnswer, Approver } from "../Permission/Approver.js"
import type { ApprovalRequest } from "../Permission/Approver.js"
import type { Risk } from "../Tool/Tool.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The options of {@link layer}.
 *
 * @since 0.2.0
 * @category models
 */
export interface ClassifierOptions {
  /** What the classifier should know besides the call: the user's request, the project's conventions. */
  readonly context?: string | undefined
  /** How long the classifier may take before the next approver is asked. Default 10 seconds. */
  readonly timeout?: Duration.DurationInput | undefined
  /** The highest risk the classifier may judge; riskier calls go to the next approver. Default `"medium"`. */
  readonly maxRisk?: Risk | undefined
  /**
   * What a "block" answer does: `deny` (the model is told why and may try something else, as in Claude Code's auto
   * mode) or `next` (ask the next approver). Default `"deny"`.
   */
  readonly onBlock?: "deny" | "next" | undefined
  /** The name the audit shows for this approver. Default `"classifier"`. */
  readonly name?: string | undefined
}

/**
 * The answer the classifier must give: one JSON object.
 *
 * @since 0.2.0
 * @category models
 */
export const ClassifierAnswer = Schema.Struct({
  decision: Schema.Literal("allow", "block"),
  reason: Schema.String
})

/**
 * @since 0.2.0
 * @category models
 */
export type ClassifierAnswer = typeof ClassifierAnswer.Type

// ---------------------------------------------------------------------------------------------------------------
// prompt
// ---------------------------------------------------------------------------------------------------------------

/**
 * The instructions the classifier gets.
 *
 * @since 0.2.0
 * @category prompt
 */
export const instructions = [
  "You review actions an AI coding agent wants to take on a user's machine, in place of the user.",
  "Allow an action only when it is clearly within what the user asked for and cannot do lasting harm outside it:",
  "no deleting or overwriting data the user did not ask to change, no sending data or credentials off the machine,",
  "no changing system or security settings, no running code fetched from the network.",
  "When in doubt, block.",
  "Answer with exactly one JSON object and nothing else: {\"decision\": \"allow\" | \"block\", \"reason\": \"<one " +
  "sentence>\"}."
].join("\n")

/**
 * The user message of one ask: the caller's context, the tool, its risk and its classifier input.
 *
 * @since 0.2.0
 * @category prompt
 */
export const promptOf = (request: ApprovalRequest, context: string | undefined): string =>
  [
    ...(context === undefined || context === "" ? [] : [`<context>\n${context}\n</context>`]),
    `<action tool="${request.toolName}" risk="${request.risk ?? "medium"}">`,
    request.classifierInput ?? "",
    "</action>",
    `Why a person would be asked: ${request.message}`
  ].join("\n")

const decodeAnswer = Schema.decodeUnknownEither(Schema.parseJson(ClassifierAnswer))

/** The answer in the model's text: the whole text, or the one JSON object in it (models like code fences). */
const parseAnswer = (text: string): Option.Option<ClassifierAnswer> => {
  const trimmed = text.trim()
  const direct = decodeAnswer(trimmed)
  if (Either.isRight(direct)) return Option.some(direct.right)
  const start = trimmed.indexOf("{")
  const end = trimmed.lastIndexOf("}")
  if (start < 0 || end <= start) return Option.none()
  return Option.getRight(decodeAnswer(trimmed.slice(start, end + 1)))
}

const riskRank: Record<Risk, number> = { low: 0, medium: 1, high: 2 }

/**
 * Whether the classifier may judge this ask at all: only a plain "no rule allows it" ask (never an ask rule, a
 * safety check, a hook's or the tool's own ask), of a tool that gave a classifier input, at most `maxRisk`.
 *
 * @since 0.2.0
 * @category utilities
 */
export const isJudgeable = (request: ApprovalRequest, maxRisk: Risk = "medium"): boolean =>
  request.reason?._tag === "Default" &&
  request.classifierInput !== undefined && request.classifierInput.trim() !== "" &&
  riskRank[request.risk ?? "high"] <= riskRank[maxRisk]

// ---------------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------------

/**
 * The classifier approver over the language model and the next approver in context.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (
  options: ClassifierOptions = {}
): Effect.Effect<Approver["Type"], never, LanguageModel.LanguageModel | Approver> =>
  Effect.gen(function*() {
    const model = yield* LanguageModel.LanguageModel
    const next = yield* Approver
    const timeout = Duration.decode(options.timeout ?? Duration.seconds(10))
    const name = options.name ?? "classifier"
    const onBlock = options.onBlock ?? "deny"

    /** The classifier's answer, or none when it took too long, failed, or said something that does not parse. */
    const classify = (request: ApprovalRequest): Effect.Effect<Option.Option<ClassifierAnswer>> =>
      model.generateText({
        prompt: [{ role: "system", content: instructions }, {
          role: "user",
          content: promptOf(request, options.context)
        }]
      }).pipe(
        Effect.map((response) => parseAnswer(response.text)),
        Effect.timeoutOption(timeout),
        Effect.map(Option.flatten),
        Effect.catchAllCause(() => Effect.succeedNone)
      )

    const ask = Effect.fn("ClassifierApprover.ask")(function*(request: ApprovalRequest) {
      yield* Effect.annotateCurrentSpan("tool.name", request.toolName)
      if (!isJudgeable(request, options.maxRisk)) {
        yield* Effect.annotateCurrentSpan("classifier.verdict", "not judged")
        return yield* next.ask(request)
      }
      const answer = yield* classify(request)
      yield* Effect.annotateCurrentSpan(
        "classifier.verdict",
        Option.match(answer, { onNone: () => "no answer", onSome: (a) => a.decision })
      )
      if (Option.isNone(answer)) return yield* next.ask(request)
      if (answer.value.decision === "allow") {
        return ApprovalAnswer.AllowAuto({ approver: name, reason: answer.value.reason })
      }
      if (onBlock === "next") {
        return yield* next.ask(request)
      }
      return ApprovalAnswer.Deny({
        message: `The ${name} blocked this action: ${answer.value.reason} Try a safer way, or ask the user.`,
        cancelRun: false
      })
    })

    return { ask }
  })

/**
 * The classifier approver, in front of the next approver (provide it below this layer) and over a language model.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (
  options: ClassifierOptions = {}
): Layer.Layer<Approver, never, LanguageModel.LanguageModel | Approver> => Layer.effect(Approver, make(options))
