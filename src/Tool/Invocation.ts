/**
 * A call bound once: the {@link Invocation} a tool's `plan` makes of one input, what a planning tool binds itself
 * ({@link Binding}, {@link PlannedBinding}), and how an invocation answers permission rules that name its tool
 * ({@link ContentRule}, {@link RuleMatch}). Re-exported from `Tool`, where a tool's author meets them.
 *
 * @since 0.3.0
 */
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { PermissionCheck } from "./Permission.js"
import type { UiBlock } from "./Presentation.js"
import type { CallContext, Claim, InputRejected, Risk, Traits } from "./Tool.js"
import type { ToolResultContent } from "./Wire.js"

// ---------------------------------------------------------------------------------------------------------------
// rule matching
// ---------------------------------------------------------------------------------------------------------------

/**
 * A rule's content as a tool sees it; `R` carries whatever the policy needs to report which rule matched.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContentRule {
  readonly content: string
  /** The directory of the settings file the rule came from, when it came from one. */
  readonly ruleDirectory: string | undefined
}

/**
 * Content rules for one tool, by behavior.
 *
 * @since 0.1.0
 * @category models
 */
export interface RulesByBehavior<R> {
  readonly deny: ReadonlyArray<R>
  readonly ask: ReadonlyArray<R>
  readonly allow: ReadonlyArray<R>
}

/**
 * Which rule decided: the first deny, else the first ask, else the allow rules that together cover the input.
 *
 * @since 0.1.0
 * @category models
 */
export type RuleMatch<R> =
  | { readonly _tag: "Deny"; readonly rule: R; readonly detail?: string | undefined }
  | { readonly _tag: "Ask"; readonly rule: R; readonly detail?: string | undefined }
  | { readonly _tag: "Allow"; readonly rules: ReadonlyArray<R> }
  | { readonly _tag: "NoMatch"; readonly detail?: string | undefined }

/**
 * How to read a rule's content: `ruleDirectory` anchors `/x`; `behavior` absent reads as deny (allow: real paths only).
 *
 * @since 0.1.0
 * @category models
 */
export interface RuleContext {
  readonly cwd: string
  readonly home: string
  readonly ruleDirectory: string | undefined
  readonly behavior?: "allow" | "ask" | "deny" | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// invocations
// ---------------------------------------------------------------------------------------------------------------

/**
 * A call's input bound once: everything the stages after decoding need, computed from one input. The runtime plans
 * a call when it is decoded and again whenever its input changes (a validate that normalises, a hook's or a person's
 * rewrite, a policy's `updatedInput`); every later stage reads the invocation instead of recomputing from the raw
 * input, so a tool's private analysis (Bash's parse of the command and its resolved paths) happens once per input.
 *
 * @since 0.2.0
 * @category models
 */
export interface Invocation<Input, Output, Failure> {
  readonly input: Input
  readonly traits: Traits
  readonly claims: ReadonlyArray<Claim>
  /** The tool's own view of the risk of this call. */
  readonly checkPermissions: (context: CallContext) => Effect.Effect<PermissionCheck<Input>>
  /** Decides this tool's content rules for this input (see `Stages.matchRules` in `Tool`); undefined when per-rule. */
  readonly matchRules:
    | (<R extends ContentRule>(rules: RulesByBehavior<R>, context: RuleContext) => RuleMatch<R>)
    | undefined
  /** Whether one rule's content matches this input (see `Stages.matchesRule` in `Tool`). */
  readonly matchesRule: ((content: string, context: RuleContext) => boolean) | undefined
  /** Other tools whose whole-tool rules govern this call too (see `Stages.governedAs` in `Tool`). @since 0.3.0 */
  readonly governedAs?: ReadonlyArray<string> | undefined
  /** Semantic checks a schema cannot express, run once the call is admitted; may normalise the input. */
  readonly validate: (context: CallContext) => Effect.Effect<Input, InputRejected>
  /** What the user sees when the call is requested. */
  readonly renderUse: () => ReadonlyArray<UiBlock>
  /** One line for a spinner or status line ("Reading src/a.ts"). */
  readonly activity: () => string
  /** A compact text of what matters for this call's risk, for an automatic approver (`""`: never judged). */
  readonly classifierInput: () => string
  /** The risk of this call. */
  readonly risk: () => Risk
  /** The action. */
  readonly call: (context: CallContext) => Effect.Effect<Output, Failure, Scope.Scope>
  /** What the model gets back from an output of this call. */
  readonly toModel: (output: Output) => ToolResultContent
  /** What the user sees of an output of this call. */
  readonly renderResult: (output: Output) => ReadonlyArray<UiBlock>
  /** The model-facing text of a typed failure of this call. */
  readonly renderFailure: (failure: Failure) => string
}

/**
 * What a tool's own `plan` binds: any of an invocation's parts; the rest come from the tool's stage functions.
 *
 * @since 0.2.0
 * @category models
 */
export type Binding<Input, Output, Failure> = Partial<Omit<Invocation<Input, Output, Failure>, "input" | "traits">> & {
  readonly traits?: Partial<Traits> | undefined
}

/**
 * What a planning tool's `plan` must bind: the call, and for a tool that touches the environment its own permission
 * view; anything else may come from a stage function or the defaults.
 *
 * @since 0.3.0
 * @category models
 */
export type PlannedBinding<Input, Output, Failure, TouchesEnvironment extends boolean> =
  & Binding<Input, Output, Failure>
  & Pick<Invocation<Input, Output, Failure>, "call">
  & ([TouchesEnvironment] extends [false] ? {} : Pick<Invocation<Input, Output, Failure>, "checkPermissions">)

/**
 * An invocation with its types erased, as the runtime and the policy hold it.
 *
 * @since 0.3.0
 * @category models
 */
export type AnyInvocation = Invocation<unknown, unknown, unknown>
