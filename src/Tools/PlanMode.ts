/**
 * `EnterPlanMode` (no parameters) and `ExitPlanMode` (`plan`), Claude Code's plan-mode tools. In plan mode the policy
 * runs only read-only calls; the model explores, writes a plan, and asks to leave with ExitPlanMode.
 *
 * - EnterPlanMode switches the session's mode to `plan` at once (it only takes capabilities away: no permission).
 * - ExitPlanMode always asks the person (a non-overridable ask, so no rule answers it for them; `dontAsk` and a
 *   headless deny-all refuse it), showing the plan. Approved: the mode goes back to what it was before plan mode
 *   (`default` when the session started in plan mode). Refused: the mode stays `plan` and the model is told to stay
 *   and revise the plan (the person's message, when they give one, goes with it).
 *
 * Both change the mode through the call's `permissionMode` (the policy's `mode` control: `RulePolicy` has one); with a
 * policy whose mode is fixed they say so. Both are read-only, so plan mode itself never refuses them.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { PermissionCheck } from "../Tool/Permission.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"

// ---------------------------------------------------------------------------------------------------------------
// definitions
// ---------------------------------------------------------------------------------------------------------------

/**
 * EnterPlanMode's input: none.
 *
 * @since 0.3.0
 * @category models
 */
// An empty Struct emits `{}` or `[]` in JSON Schema; the model is shown an empty object, as Claude Code does.
export const EnterPlanModeInput = Schema.Struct({}).annotations({
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})

/**
 * ExitPlanMode's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const ExitPlanModeInput = Schema.Struct({
  plan: Schema.String.annotations({
    description: "The plan you came up with, that you want to run by the user for approval. Supports markdown. " +
      "The plan should be pretty concise."
  })
})

/**
 * The mode before and after the call.
 *
 * @since 0.3.0
 * @category models
 */
export const PlanModeOutput = Schema.Struct({ from: Schema.String, to: Schema.String })

/**
 * The EnterPlanMode tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const EnterPlanMode = Tool.make("EnterPlanMode", {
  description: [
    "Switches this session to plan mode: only read-only tools run, so you can explore the code and design an " +
    "approach before changing anything.",
    "Use it for non-trivial work where the approach is not yet clear (several files, design choices, unclear " +
    "requirements). When the plan is ready, present it with ExitPlanMode for the user's approval."
  ].join("\n"),
  input: EnterPlanModeInput,
  output: PlanModeOutput,
  touchesEnvironment: false
})

/**
 * The ExitPlanMode tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const ExitPlanMode = Tool.make("ExitPlanMode", {
  description: [
    "Use this tool when you are in plan mode and have finished planning: it shows the plan to the user and asks for " +
    "approval to leave plan mode and start implementing it.",
    "- Only for planning implementation steps of a task that requires writing code, not for research.",
    "- If the user does not approve, stay in plan mode and revise the plan from their feedback."
  ].join("\n"),
  input: ExitPlanModeInput,
  output: PlanModeOutput,
  touchesEnvironment: false
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const fixed = "The permission mode of this session cannot be changed (its policy has a fixed mode)."

/** The mode before plan mode, per layer: restored when a plan is approved. */
const makePrior = () => {
  let prior: string = "default"
  return { get: () => prior, set: (mode: string) => void (prior = mode) }
}

type Restorable = "default" | "acceptEdits" | "bypassPermissions" | "dontAsk"
const restorable = (mode: string): Restorable =>
  mode === "acceptEdits" || mode === "bypassPermissions" || mode === "dontAsk" ? mode : "default"

const modeTraits = () => ({ readOnly: true, concurrencySafe: false })
// One mode per session: calls that change it do not run together.
const modeClaims = () => [Tool.Claim.write("session:mode")]

const enterService = (prior: ReturnType<typeof makePrior>) =>
  EnterPlanMode.service({
    traits: modeTraits,
    claims: modeClaims,
    call: (_input, context) =>
      Effect.gen(function*() {
        const control = context.permissionMode
        if (control === undefined) return yield* new Tool.ToolError({ message: fixed })
        const from = yield* control.get
        if (from !== "plan") prior.set(from)
        yield* control.set("plan")
        return { from, to: "plan" }
      }),
    activity: () => "Entering plan mode",
    renderUse: () => [UiBlock.Title({ text: "EnterPlanMode" })],
    renderResult: () => [UiBlock.Notice({ level: "info", text: "Entered plan mode" })],
    toModel: (output) =>
      output.from === "plan"
        ? "Already in plan mode. Keep exploring read-only; present the plan with ExitPlanMode when it is ready."
        : "Entered plan mode. Explore the codebase with read-only tools and design an approach; do not change " +
          "anything yet. When the plan is ready, present it with ExitPlanMode for the user's approval."
  })

const exitService = (prior: ReturnType<typeof makePrior>) =>
  ExitPlanMode.service({
    traits: modeTraits,
    claims: modeClaims,
    validate: (input, context) =>
      Effect.gen(function*() {
        if (context.permissionMode === undefined) return yield* Tool.reject(fixed)
        if ((yield* context.permissionMode.get) !== "plan") {
          return yield* Tool.reject("You are not in plan mode. This tool is only for leaving plan mode with a plan.")
        }
        if (input.plan.trim() === "") return yield* Tool.reject("The plan is empty: write the plan to approve.")
        return input
      }),
    // Only a person leaves plan mode: no rule, hook allow or mode answers this for them.
    checkPermissions: () =>
      Effect.succeed(
        PermissionCheck.ask(
          "The model asks to leave plan mode and carry out this plan. Deny to keep it in plan mode (say what to " +
            "revise in your message).",
          [],
          { overridable: false }
        )
      ),
    call: (_input, context) =>
      Effect.gen(function*() {
        const control = context.permissionMode
        if (control === undefined) return yield* new Tool.ToolError({ message: fixed })
        const to = restorable(prior.get())
        yield* control.set(to)
        return { from: "plan", to }
      }),
    activity: () => "Presenting the plan",
    classifierInput: (input) => input.plan,
    renderUse: (
      input
    ) => [UiBlock.Title({ text: "ExitPlanMode" }), UiBlock.Code({ text: input.plan, language: "markdown" })],
    renderResult: (output) => [UiBlock.Notice({ level: "info", text: `Plan approved; mode ${output.to}` })],
    toModel: () =>
      "User has approved your plan. You can now start coding. Start with updating your todo list if " +
      "applicable."
  })

/**
 * Both tools' behaviour, sharing what the mode was before plan mode.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = Layer.suspend(() => {
  const prior = makePrior()
  return Layer.merge(Layer.succeed(EnterPlanMode, enterService(prior)), Layer.succeed(ExitPlanMode, exitService(prior)))
})

/**
 * Both tools' services, built (sharing what the mode was before plan mode): what {@link layer} provides, as an
 * Effect (the built-in tools are built together, in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = Effect.sync(() => {
  const prior = makePrior()
  return { enter: enterService(prior), exit: exitService(prior) } as const
})
