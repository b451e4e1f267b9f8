/**
 * The `AskUserQuestion` tool (Claude Code's name and schema: `questions[1..4]`, each `{question, header,
 * options[2..4] {label, description}, multiSelect}`): the model asks the person multiple-choice questions and gets
 * their answers back.
 *
 * The questions go through the Approver's channel (`CallContext.askPerson`: the terminal, `serve`'s client, a test's
 * `Approver.answering`), one request at a time with approvals. When the Approver cannot ask anyone (allow-all,
 * deny-all, `exec` without a terminal) the call ends at once with a result saying no one is there to answer, so the
 * model goes on with its best judgement: never a hang. It touches nothing, so it needs no permission and runs in plan
 * mode.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

const QuestionOption = Schema.Struct({
  label: Schema.String.annotations({
    description: "The display text for this option that the user will see and select. Should be concise (1-5 words)."
  }),
  description: Schema.String.annotations({
    description: "Explanation of what this option means or what will happen if chosen."
  })
})

const Question = Schema.Struct({
  question: Schema.String.annotations({
    description: "The complete question to ask the user. Should be clear, specific, and end with a question mark."
  }),
  header: Schema.String.annotations({
    description: "Very short label displayed as a chip/tag (max 12 chars). Examples: \"Auth method\", \"Library\"."
  }),
  options: Schema.Array(QuestionOption).pipe(Schema.minItems(2), Schema.maxItems(4)).annotations({
    description: "The available choices for this question. Must have 2-4 options. There is no 'Other' option to add: " +
      "the user can always answer in their own words."
  }),
  multiSelect: Schema.Boolean.annotations({
    description: "Set to true to allow the user to select multiple options instead of just one."
  })
})

/**
 * AskUserQuestion's input, as Claude Code names it (its `answers`, filled by Claude Code's own permission dialog and
 * never sent by a model, is left out: a record would keep the definition from OpenAI's strict mode).
 *
 * @since 0.3.0
 * @category models
 */
export const AskUserQuestionInput = Schema.Struct({
  questions: Schema.Array(Question).pipe(Schema.minItems(1), Schema.maxItems(4)).annotations({
    description: "Questions to ask the user (1-4 questions)"
  })
})

/**
 * The answers, or why there are none.
 *
 * @since 0.3.0
 * @category models
 */
export const AskUserQuestionOutput = Schema.Union(
  Schema.TaggedStruct("Answered", {
    questions: Schema.Array(Question),
    answers: Schema.Record({ key: Schema.String, value: Schema.String })
  }),
  Schema.TaggedStruct("Declined", { message: Schema.optional(Schema.String) }),
  Schema.TaggedStruct("NoPerson", {})
)

/**
 * @since 0.3.0
 * @category models
 */
export type AskUserQuestionOutput = typeof AskUserQuestionOutput.Type

/**
 * The AskUserQuestion tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const AskUserQuestion = Tool.make("AskUserQuestion", {
  description: [
    "Asks the user multiple-choice questions, to gather preferences, clarify ambiguous instructions or get a decision " +
    "while you work.",
    "- 1-4 questions per call, each with a short header (max 12 characters) and 2-4 options (label and description).",
    "- multiSelect: true lets the user choose several options. The user can always answer in their own words instead.",
    "- If you recommend an option, put it first and add \"(Recommended)\" to its label.",
    "- When no one can answer (a headless run), the result says so: continue with your best judgement.",
    "- To ask whether a plan is ready, use ExitPlanMode instead."
  ].join("\n"),
  input: AskUserQuestionInput,
  output: AskUserQuestionOutput,
  touchesEnvironment: false
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const service = AskUserQuestion.service({
  traits: () => ({ readOnly: true, concurrencySafe: false }),
  // One conversation with the person at a time.
  claims: () => [Tool.Claim.write("person")],
  validate: (input) => {
    const texts = input.questions.map((q) => q.question)
    if (new Set(texts).size !== texts.length) return Tool.reject("Question texts must be unique.")
    for (const q of input.questions) {
      const labels = q.options.map((o) => o.label)
      if (new Set(labels).size !== labels.length) {
        return Tool.reject(`Option labels must be unique within a question ("${q.question}").`)
      }
    }
    return Effect.succeed(input)
  },
  call: (input, context) =>
    context.askPerson === undefined
      ? Effect.succeed({ _tag: "NoPerson" as const })
      : Effect.map(context.askPerson({ toolUseId: context.toolUseId, questions: input.questions }), (reply) =>
        reply._tag === "Answered"
          ? { _tag: "Answered" as const, questions: input.questions, answers: reply.answers }
          : { _tag: "Declined" as const, ...(reply.message === undefined ? {} : { message: reply.message }) }),
  activity: () => "Asking the user",
  classifierInput: (input) => input.questions.map((q) => q.question).join(" | "),
  renderUse: (input) => [
    UiBlock.Title({
      text: `AskUserQuestion(${input.questions.length} question${input.questions.length === 1 ? "" : "s"})`
    }),
    ...input.questions.map((q) =>
      UiBlock.Text({
        text: `[${q.header}] ${q.question}${q.multiSelect ? " (several may be chosen)" : ""}\n` +
          q.options.map((o, i) => `  ${i + 1}. ${o.label}: ${o.description}`).join("\n")
      })
    )
  ],
  renderResult: (output) =>
    output._tag === "Answered"
      ? [UiBlock.Fields({ fields: Object.entries(output.answers) })]
      : [UiBlock.Notice({ level: "info", text: output._tag === "NoPerson" ? "No one to ask" : "Declined to answer" })],
  toModel: (output) => {
    switch (output._tag) {
      case "Answered":
        return `User has answered your questions: ${
          Object.entries(output.answers).map(([q, a]) => `"${q}"="${a}"`).join(", ")
        }. You can now continue with the user's answers in mind.`
      case "Declined":
        return `The user declined to answer your questions${
          output.message === undefined ? "." : `: ${output.message}`
        } Continue without the answers, or ask differently.`
      case "NoPerson":
        return "No one is available to answer questions in this session (it runs without a person). Continue with " +
          "your best judgement, and state the assumptions you make."
    }
  }
})

/**
 * AskUserQuestion's service, built: what {@link layer} provides, as an Effect (the built-in tools are built
 * together, in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Effect.succeed(service)

/**
 * AskUserQuestion's behaviour (needs nothing: the person is reached through the call's context).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = Layer.succeed(AskUserQuestion, service)
