/**
 * What a tool is: a **definition** (pure data, the model's contract) plus a **service** (the behaviour, one Effect
 * service per tool, provided by a Layer). A tool value is itself the service's `Context.Tag`, so any tool can be
 * swapped for a test double with `Layer.succeed(MyTool, MyTool.service({ ... }))`.
 *
 * ```ts
 * const Echo = Tool.make("Echo", {
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 * const EchoLive = Echo.implement({ call: ({ text }) => Effect.succeed(text) })
 * ```
 *
 * A tool that touches the environment (files, processes, network, other servers) is the default, and such a tool
 * must define `checkPermissions`: leaving it out is a compile-time error.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as defaults from "./internal/defaults.js"
import * as enabled from "./internal/enabled.js"
import type { ContentRule, Invocation, PlannedBinding, RuleContext, RuleMatch, RulesByBehavior } from "./Invocation.js"
import type { Decision, PermissionCheck } from "./Permission.js"
import { UiBlock } from "./Presentation.js"
import type { PermissionModeControl, QuestionReply, QuestionRequest } from "./Question.js"
import type { ToolResultContent } from "./Wire.js"

// ---------------------------------------------------------------------------------------------------------------
// type id
// ---------------------------------------------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: unique symbol = Symbol.for("effect-tool-runtime/Tool")
/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A call bound once and how it answers permission rules: see the `Invocation` module.
 *
 * @since 0.2.0
 * @category models
 */
export type {
  AnyInvocation,
  Binding,
  ContentRule,
  Invocation,
  PlannedBinding,
  RuleContext,
  RuleMatch,
  RulesByBehavior
} from "./Invocation.js"

/**
 * How the registry shows a tool to the model: `eager` and `always` with their full schema, `deferred` by name
 * only until a tool search finds it (`always` is never deferred, whatever the runtime's settings).
 *
 * @since 0.1.0
 * @category models
 */
export type Loading = "eager" | "deferred" | "always"

/**
 * Input-dependent properties of a call. The defaults are the conservative answers.
 *
 * How they combine with {@link Claim}s for scheduling — one meaning, in both modes:
 * - **conflict-aware** (default): claims decide. A tool that declares `claims` is scheduled by them alone (a call
 *   waits only for earlier calls whose claims conflict with its own; the world claim `*` runs alone). A tool that
 *   declares none claims nothing when `concurrencySafe`, and the whole world otherwise.
 * - **batched** (Claude Code's): `concurrencySafe` decides. Consecutive concurrency-safe calls run together; any other
 *   call runs alone. Claims are not read.
 * - Not for scheduling: `readOnly` (permissions), `idempotent` (0.3.0: safe to run again; durable turns re-run it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Traits {
  /** Changes nothing anywhere. Default false. */
  readonly readOnly: boolean
  /**
   * May run alongside other calls: in batched mode, with its consecutive concurrency-safe neighbours; in
   * conflict-aware mode it only decides the default claims (nothing, or the world) of a tool that declares none.
   * Default false.
   */
  readonly concurrencySafe: boolean
  /** May destroy data that cannot be recovered. Default false. */
  readonly destructive: boolean
  /** Reaches outside the local machine (network, other services). Default false. */
  readonly openWorld: boolean
  readonly idempotent?: boolean | undefined
}

/**
 * A resource one call touches. Resources are hierarchical paths (`file:/abs/dir` covers `file:/abs/dir/x.ts`);
 * two claims conflict when their resources overlap and at least one writes. The resource `*` is the whole world.
 *
 * @since 0.1.0
 * @category models
 */
export interface Claim {
  readonly resource: string
  readonly access: "read" | "write"
}

/**
 * Constructors for {@link Claim}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Claim = {
  read: (resource: string): Claim => ({ resource, access: "read" }),
  write: (resource: string): Claim => ({ resource, access: "write" }),
  /** Claims everything, exclusively: the call runs alone. */
  world: { resource: "*", access: "write" } as Claim
} as const

/**
 * A progress report from a running call, shown to the user (never to the model).
 *
 * @since 0.1.0
 * @category models
 */
export interface Progress {
  readonly message?: string | undefined
  /** The latest lines of output, for long-running commands. */
  readonly lines?: ReadonlyArray<string> | undefined
  /** Completion between 0 and 1, when known. */
  readonly fraction?: number | undefined
}

/**
 * What every stage of a call receives besides its input.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallContext {
  readonly toolUseId: string
  /** The tool's canonical name. */
  readonly toolName: string
  /** Reports progress to the events stream. */
  readonly progress: (update: Progress) => Effect.Effect<void>
  /**
   * False when nothing receives progress (a run without an events stream or an audit log): a tool may then skip the
   * work of producing it (an MCP call asks its server for none). Absent: assume something does.
   *
   * @since 0.3.0
   */
  readonly progressWanted?: boolean | undefined
  /** Whether rules deny reading this absolute path: Grep and Glob leave such files out (`Read(./.env)` holds in .). */
  readonly isReadDenied: (absolutePath: string) => boolean
  /** The decision that let the call run (absent when a tool is called directly); Bash's sandbox follows it. */
  readonly decision?: Decision | undefined
  /** Asks the person through the Approver (one at a time with approvals); absent when it cannot ask anyone. */
  readonly askPerson?: ((request: QuestionRequest) => Effect.Effect<QuestionReply>) | undefined
  /** The session's permission mode, read and changed (plan mode); absent when the policy's mode is fixed. */
  readonly permissionMode?: PermissionModeControl | undefined
}

/**
 * A semantic validation failure; its message is written for the model.
 *
 * @since 0.1.0
 * @category errors
 */
export class InputRejected
  extends Schema.TaggedError<InputRejected>("effect-tool-runtime/Tool/InputRejected")("InputRejected", {
    message: Schema.String
  })
{}

/**
 * The default typed failure of a tool: a message for the model.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolError extends Schema.TaggedError<ToolError>("effect-tool-runtime/Tool/ToolError")("ToolError", {
  message: Schema.String
}) {}

/**
 * A value whose fields may still be missing, at every depth: a tool's input while the model is still streaming it.
 *
 * @since 0.2.0
 * @category models
 */
export type DeepPartial<A> = A extends ReadonlyArray<infer E> ? ReadonlyArray<DeepPartial<E>>
  : A extends object ? { readonly [K in keyof A]?: DeepPartial<A[K]> }
  : A

/**
 * Whether a tool can work in the current context. A disabled tool is left out of what the model is shown, and a
 * call to it gets `reason` back.
 *
 * @since 0.2.0
 * @category models
 */
export type Availability =
  | { readonly _tag: "Enabled" }
  | { readonly _tag: "Disabled"; readonly reason: string }

/**
 * Constructors for {@link Availability}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const Availability = {
  enabled: { _tag: "Enabled" } as Availability,
  disabled: (reason: string): Availability => ({ _tag: "Disabled", reason })
} as const

/**
 * What a soft interrupt (a person typing mid-turn) does to a running call: `cancel` stops it, `block` lets it finish
 * (Claude Code's names). Queued calls never start either way.
 *
 * @since 0.2.0
 * @category models
 */
export type InterruptBehavior = "cancel" | "block"

/**
 * How much harm a call could do, for a classifier and for a UI.
 *
 * @since 0.2.0
 * @category models
 */
export type Risk = "low" | "medium" | "high"

/**
 * The model's contract: pure data, no behaviour.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<
  Name extends string,
  Input extends Schema.Schema.AnyNoContext,
  Output extends Schema.Schema.AnyNoContext,
  Failure extends Schema.Schema.AnyNoContext,
  TouchesEnvironment extends boolean
> {
  readonly name: Name
  /** Other names the model may use (old names, common misspellings). */
  readonly aliases: ReadonlyArray<string>
  /** What the model reads to decide when and how to use the tool. */
  readonly description: string
  readonly input: Input
  readonly output: Output
  readonly failure: Failure
  readonly loading: Loading
  /** Extra words a tool search should match (for deferred tools). */
  readonly searchHint: string | undefined
  /** Longest tool_result text kept in context; longer ones go to the result store. `Infinity` opts out. */
  readonly maxResultChars: number
  /** Default time limit of one call (`Duration.infinity`: none); a call may override it. */
  readonly timeout: Duration.Duration
  /** Whether a call touches files, processes, the network or other servers. */
  readonly touchesEnvironment: TouchesEnvironment
  /**
   * Whether the tool reads or edits files, as permission rules see it: `Read(...)` rules also govern tools with
   * `"read"` (Glob, Grep), `Edit(...)` rules also govern tools with `"edit"` (Write), and the `acceptEdits` mode
   * allows `"edit"` tools inside the workspace.
   */
  readonly fileAccess: "read" | "edit" | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Definition {
  /**
   * A definition of any tool.
   *
   * @since 0.1.0
   * @category models
   */
  export type Any = Definition<
    string,
    Schema.Schema.AnyNoContext,
    Schema.Schema.AnyNoContext,
    Schema.Schema.AnyNoContext,
    boolean
  >
}

/**
 * The behaviour of one tool, as the runtime sees it: `plan(input)` binds one input into an {@link Invocation}, which
 * holds everything that depends on the input (checks, traits, claims, permission view, rule matching, rendering, the
 * call); the service itself keeps only what does not (availability, soft-interrupt behaviour, and the renderings of
 * inputs that are not one bound call: a partial input while it streams, a group of calls). This is the value a
 * tool's Layer provides; {@link make}'s `service` / `implement` build it from plain stage functions.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service<Input, Output, Failure> {
  /** Binds an input into an {@link Invocation}: the one way the runtime, the policy and hooks see a call. */
  readonly plan: (input: Input) => Invocation<Input, Output, Failure>
  /**
   * What the user sees while the model is still streaming the input: any field may be missing, and strings may be
   * cut short. Never used to decide anything. Default: the tool's name and its main argument, once it has arrived.
   */
  readonly renderPartial: (partial: DeepPartial<Input>) => ReadonlyArray<UiBlock>
  /** One line for many similar calls shown as a group ("Read 3 files"). Default: the name, a count and the arguments. */
  readonly summary: (inputs: ReadonlyArray<Input>) => string
  /**
   * Whether the tool can work now (its server is up, the network is there). Read once per run and cached for it, so
   * it may look at live state; it must be cheap. Default {@link alwaysEnabled}, which the runtime never runs.
   */
  readonly isEnabled: Effect.Effect<Availability>
  /** What a soft interrupt does to a running call of this tool. Default `"block"`: the call finishes. */
  readonly interruptBehavior: InterruptBehavior
}

/**
 * A tool's stages as plain functions of the input: what a simple tool writes, and what {@link make}'s `service`
 * turns into a `plan`.
 *
 * @since 0.3.0
 * @category models
 */
export interface Stages<Input, Output, Failure> {
  /** Semantic checks a schema cannot express; may normalise the input. */
  readonly validate: (input: Input, context: CallContext) => Effect.Effect<Input, InputRejected>
  /** The tool's own view of the risk of this call. */
  readonly checkPermissions: (input: Input, context: CallContext) => Effect.Effect<PermissionCheck<Input>>
  /** Input-dependent traits. */
  readonly traits: (input: Input) => Traits
  /**
   * The resources this call touches. Authoritative in conflict-aware mode (see {@link Traits}); by default nothing for
   * a concurrency-safe call and the world for any other.
   */
  readonly claims: (input: Input) => ReadonlyArray<Claim>
  /** The action. Resources it opens belong to the Scope, closed on completion, interruption or timeout. */
  readonly call: (input: Input, context: CallContext) => Effect.Effect<Output, Failure, Scope.Scope>
  /** What the user sees when the call is requested. */
  readonly renderUse: (input: Input) => ReadonlyArray<UiBlock>
  /** What the user sees of a result. */
  readonly renderResult: (output: Output, input: Input) => ReadonlyArray<UiBlock>
  /** What the model gets back. */
  readonly toModel: (output: Output, input: Input) => ToolResultContent
  /** The model-facing text of a typed failure. */
  readonly renderFailure: (failure: Failure, input: Input) => string
  /** One line for a spinner or status line ("Reading src/a.ts"). Default: the name and the main argument. */
  readonly activity: (input: Input) => string
  /**
   * A compact text of what matters for this call's risk (the command; the path and the change; the URL), for an
   * automatic approver. Default `""`: the call is never judged automatically, a person is asked.
   */
  readonly classifierInput: (input: Input) => string
  /** The risk of this call. Default from its traits ({@link riskOf}). */
  readonly risk: (input: Input, traits: Traits) => Risk
  /**
   * Whether the content of a permission rule naming this tool (`Tool(content)`) matches this input. Tools without
   * it are matched by whole-tool rules only.
   */
  readonly matchesRule?: ((content: string, input: Input, context: RuleContext) => boolean) | undefined
  /**
   * Decides all content rules for this tool at once, for tools where one boolean per rule is not enough (a compound
   * shell command is allowed only when every part is covered, possibly by different rules). When absent, the policy
   * uses `matchesRule` rule by rule.
   */
  readonly matchRules?:
    | (<R extends ContentRule>(
      input: Input,
      rules: RulesByBehavior<R>,
      context: RuleContext
    ) => RuleMatch<R>)
    | undefined
  /**
   * Names of other tools whose whole-tool rules govern this call too (the MCP resource tools name their server's, so
   * `mcp__srv` rules cover its resources): any one's deny or ask applies; an allow needs every name covered.
   *
   * @since 0.3.0
   */
  readonly governedAs?: ((input: Input) => ReadonlyArray<string>) | undefined
}

/**
 * The service-level options of an implementation (see {@link Service}), all with defaults.
 *
 * @since 0.3.0
 * @category models
 */
export type ServiceOptions<Input, Output, Failure> = Partial<Omit<Service<Input, Output, Failure>, "plan">>

/** @internal */
export type StageOptions<Input, Output, Failure> =
  & Partial<Omit<Stages<Input, Output, Failure>, "call" | "traits" | "checkPermissions">>
  & { readonly traits?: (input: Input) => Partial<Traits> }

/**
 * A simple tool's implementation: `call` plus whichever stages differ from the safe defaults, as plain functions of
 * the input. A tool that touches the environment must also write `checkPermissions`.
 *
 * @since 0.3.0
 * @category models
 */
export type StageImplementation<Input, Output, Failure, TouchesEnvironment extends boolean> =
  & ServiceOptions<Input, Output, Failure>
  & StageOptions<Input, Output, Failure>
  & Pick<Stages<Input, Output, Failure>, "call">
  & { readonly plan?: never }
  & ([TouchesEnvironment] extends [false] ? Partial<Pick<Stages<Input, Output, Failure>, "checkPermissions">>
    : Pick<Stages<Input, Output, Failure>, "checkPermissions">)

/**
 * A planning tool's implementation (Gemini CLI's `build -> ToolInvocation`): `plan` binds an input once, from one
 * shared analysis of it, and must bind the call and (for a tool that touches the environment) the permission check;
 * parts it leaves out come from the optional stage functions beside it, then the defaults.
 *
 * @since 0.3.0
 * @category models
 */
export type PlannedImplementation<Input, Output, Failure, TouchesEnvironment extends boolean> =
  & ServiceOptions<Input, Output, Failure>
  & StageOptions<Input, Output, Failure>
  & {
    readonly plan: (input: Input) => PlannedBinding<Input, Output, Failure, TouchesEnvironment>
    readonly call?: never
    readonly checkPermissions?: never
  }

/**
 * What a tool author writes: plain stage functions ({@link StageImplementation}), or a `plan` that binds each input
 * once ({@link PlannedImplementation}). Either way the tool ends up as a {@link Service} whose `plan` is the one way the
 * runtime sees a call.
 *
 * @since 0.1.0
 * @category models
 */
export type Implementation<Input, Output, Failure, TouchesEnvironment extends boolean> =
  | StageImplementation<Input, Output, Failure, TouchesEnvironment>
  | PlannedImplementation<Input, Output, Failure, TouchesEnvironment>

/**
 * The identifier of a tool's service in the Context.
 *
 * @since 0.1.0
 * @category models
 */
export interface Identifier<Name extends string> {
  readonly [TypeId]: Name
}

/**
 * A tool: its definition, the Tag of its service, and ways to implement it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tool<
  Name extends string,
  Input extends Schema.Schema.AnyNoContext,
  Output extends Schema.Schema.AnyNoContext,
  Failure extends Schema.Schema.AnyNoContext,
  TouchesEnvironment extends boolean
> extends Context.Tag<Identifier<Name>, Service<Input["Type"], Output["Type"], Failure["Type"]>> {
  readonly [TypeId]: TypeId
  readonly definition: Definition<Name, Input, Output, Failure, TouchesEnvironment>
  /** A complete service from an implementation, the safe defaults filled in (for `Layer.succeed(Tool, ...)`). */
  readonly service: (
    implementation: Implementation<Input["Type"], Output["Type"], Failure["Type"], TouchesEnvironment>
  ) => Service<Input["Type"], Output["Type"], Failure["Type"]>
  /** A Layer providing this tool from an implementation. */
  readonly implement: (
    implementation: Implementation<Input["Type"], Output["Type"], Failure["Type"], TouchesEnvironment>
  ) => Layer.Layer<Identifier<Name>>
  /** A Layer providing this tool from an effect that builds the implementation (to use other services). */
  readonly implementEffect: <E, R>(
    build: Effect.Effect<Implementation<Input["Type"], Output["Type"], Failure["Type"], TouchesEnvironment>, E, R>
  ) => Layer.Layer<Identifier<Name>, E, Exclude<R, Scope.Scope>>
}

/**
 * @since 0.1.0
 * @category models
 */
export declare namespace Tool {
  /**
   * Any tool, whatever its types.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Any {
    readonly [TypeId]: TypeId
    readonly key: string
    readonly definition: Definition.Any
  }

  /**
   * The Context identifier of a tool (or of a union of tools).
   *
   * @since 0.1.0
   * @category models
   */
  export type IdentifierOf<T> = T extends { readonly definition: { readonly name: infer Name extends string } } ?
    Identifier<Name>
    : never

  /**
   * The decoded input type of a tool.
   *
   * @since 0.1.0
   * @category models
   */
  export type InputOf<T> = T extends { readonly definition: { readonly input: Schema.Schema<infer A, infer _I> } } ? A
    : never
}

/**
 * Any tool, whatever its types (`Tool.Any`).
 *
 * @since 0.2.0
 * @category models
 */
export type Any = Tool.Any

/**
 * The Context identifier of a tool (or of a union of tools).
 *
 * @since 0.2.0
 * @category models
 */
export type IdentifierOf<T> = Tool.IdentifierOf<T>

/**
 * The decoded input type of a tool.
 *
 * @since 0.2.0
 * @category models
 */
export type InputOf<T> = Tool.InputOf<T>

/**
 * A service with its types erased, as the registry holds it.
 *
 * @since 0.1.0
 * @category models
 */
export type AnyService = Service<unknown, unknown, unknown>

// ---------------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------------

/**
 * The options of {@link make}; everything but `description` and `input` has a default.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions<
  Input extends Schema.Schema.AnyNoContext,
  Output extends Schema.Schema.AnyNoContext,
  Failure extends Schema.Schema.AnyNoContext,
  TouchesEnvironment extends boolean
> {
  readonly description: string
  readonly input: Input
  /** Default `Schema.Unknown`. */
  readonly output?: Output | undefined
  /** Default {@link ToolError}. */
  readonly failure?: Failure | undefined
  /** Default `[]`. */
  readonly aliases?: ReadonlyArray<string> | undefined
  /** Default `"eager"`. */
  readonly loading?: Loading | undefined
  readonly searchHint?: string | undefined
  /** Default 50,000 (the runtime's cap applies too); `Infinity` for tools that bound their own output. */
  readonly maxResultChars?: number | undefined
  /**
   * Default none: a timer costs a fiber per call, and most tools bound themselves (Bash) or are bounded by their
   * client (MCP). The runtime's settings or a call's options can still impose one.
   */
  readonly timeout?: Duration.DurationInput | undefined
  /** Default `true`: only a tool that says otherwise may skip `checkPermissions`. */
  readonly touchesEnvironment?: TouchesEnvironment | undefined
  /** Default none. */
  readonly fileAccess?: "read" | "edit" | undefined
}

/**
 * The conservative traits: not read-only, not concurrency-safe, not destructive, not open-world.
 *
 * @since 0.1.0
 * @category constructors
 */
export const conservativeTraits: Traits = {
  readOnly: false,
  concurrencySafe: false,
  destructive: false,
  openWorld: false
}

/**
 * The argument that says what a call is about (a path, a command, a URL), on one short line: one of the usual field
 * names, else the first string field. Works on partial inputs too. Undefined when there is none.
 *
 * @since 0.2.0
 * @category utilities
 */
export const mainArgument: (input: unknown) => string | undefined = defaults.mainArgument

/**
 * The risk a call's traits imply: destructive is high; read-only and local is low; anything else is medium.
 *
 * @since 0.2.0
 * @category utilities
 */
export const riskOf = (traits: Traits): Risk =>
  traits.destructive ? "high" : traits.readOnly && !traits.openWorld ? "low" : "medium"

/**
 * The default {@link Service.isEnabled}: always enabled. The runtime recognises it and skips the check.
 *
 * @since 0.2.0
 * @category constructors
 */
export const alwaysEnabled: Effect.Effect<Availability> = Effect.succeed(Availability.enabled)

const fillDefaults = <Input, Output, Failure>(
  name: string,
  implementation: defaults.AnyImplementation<Input, Output, Failure>
): Service<Input, Output, Failure> => {
  const {
    activity = defaults.defaultActivity(name),
    call = defaults.noCall(name),
    checkPermissions,
    claimsOf = implementation.claims,
    classifierInput,
    governedAs,
    matchesRule,
    matchRules,
    renderFailure = defaults.defaultRenderFailure,
    renderResult,
    renderUse = (input: Input) => [UiBlock.Title({ text: `${name}(${JSON.stringify(input)})` })],
    risk,
    toModel = defaults.defaultToModel,
    traits,
    validate
  } = { ...implementation, claimsOf: implementation.claims }
  const bind = implementation.plan
  const plan = (input: Input): Invocation<Input, Output, Failure> => {
    const bound = bind?.(input)
    const callTraits: Traits = bound?.traits === undefined
      ? { ...conservativeTraits, ...traits?.(input) }
      : { ...conservativeTraits, ...bound.traits }
    const model = bound?.toModel ?? ((output: Output) => toModel(output, input))
    return {
      input,
      traits: callTraits,
      // The default claims follow the call's own traits: a call that may not run alongside others claims the world.
      claims: bound?.claims ?? claimsOf?.(input) ?? (callTraits.concurrencySafe ? [] : [Claim.world]),
      validate: bound?.validate ?? (validate === undefined ? () => Effect.succeed(input) : (c) => validate(input, c)),
      checkPermissions: bound?.checkPermissions ??
        (checkPermissions === undefined ? () => defaults.passthrough : (context) => checkPermissions(input, context)),
      matchRules: bound?.matchRules ??
        (matchRules === undefined ? undefined : (rules, context) => matchRules(input, rules, context)),
      matchesRule: bound?.matchesRule ??
        (matchesRule === undefined ? undefined : (content, context) => matchesRule(content, input, context)),
      governedAs: bound?.governedAs ?? governedAs?.(input),
      renderUse: bound?.renderUse ?? (() => renderUse(input)),
      activity: bound?.activity ?? (() => activity(input)),
      classifierInput: bound?.classifierInput ?? (() => classifierInput?.(input) ?? ""),
      risk: bound?.risk ?? (() => risk === undefined ? riskOf(callTraits) : risk(input, callTraits)),
      call: bound?.call ?? ((context) => call(input, context)),
      toModel: model,
      renderResult: bound?.renderResult ??
        (renderResult === undefined
          ? (output) => defaults.resultBlocks(model(output))
          : (output) => renderResult(output, input)),
      renderFailure: bound?.renderFailure ?? ((failure) => renderFailure(failure, input))
    }
  }
  return {
    plan,
    renderPartial: implementation.renderPartial ?? defaults.defaultRenderPartial(name),
    summary: implementation.summary ?? defaults.defaultSummary(name),
    isEnabled: implementation.isEnabled ?? alwaysEnabled,
    interruptBehavior: implementation.interruptBehavior ?? "block"
  }
}

/**
 * A complete service from an implementation of a tool whose types are erased (a stand-in, an adapted MCP tool): the
 * safe defaults filled in, `plan` built from the stages. Typed tools use their own `service` instead.
 *
 * @since 0.2.0
 * @category constructors
 */
export const serviceFrom = (
  name: string,
  implementation: Implementation<unknown, unknown, unknown, boolean>
): AnyService => fillDefaults(name, implementation as defaults.AnyImplementation<unknown, unknown, unknown>)

/**
 * Defines a tool. The result is the Tag of the tool's service, carrying the definition; `implement` builds its
 * Layer from plain stage functions (or from a `plan` that binds each input once).
 *
 * @example
 * ```ts
 * import { Effect, Schema } from "effect"
 * import { Tool } from "effect-tool-runtime"
 *
 * export const Echo = Tool.make("Echo", {
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 * export const EchoLive = Echo.implement({
 *   traits: () => ({ readOnly: true, concurrencySafe: true }),
 *   call: ({ text }) => Effect.succeed(text)
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <
  const Name extends string,
  Input extends Schema.Schema.AnyNoContext,
  Output extends Schema.Schema.AnyNoContext = typeof Schema.Unknown,
  Failure extends Schema.Schema.AnyNoContext = typeof ToolError,
  TouchesEnvironment extends boolean = true
>(
  name: Name,
  options: MakeOptions<Input, Output, Failure, TouchesEnvironment>
): Tool<Name, Input, Output, Failure, TouchesEnvironment> => {
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(name)) {
    throw new TypeError(`Tool name must match ^[a-zA-Z0-9_-]{1,64}$ (Anthropic's rule), got ${JSON.stringify(name)}`)
  }
  const definition: Definition<Name, Input, Output, Failure, TouchesEnvironment> = {
    name,
    aliases: options.aliases ?? [],
    description: options.description,
    input: options.input,
    output: options.output ?? (Schema.Unknown as unknown as Output),
    failure: options.failure ?? (ToolError as unknown as Failure),
    loading: options.loading ?? "eager",
    searchHint: options.searchHint,
    maxResultChars: options.maxResultChars ?? 50_000,
    timeout: Duration.decode(options.timeout ?? Duration.infinity),
    touchesEnvironment: options.touchesEnvironment ?? (true as TouchesEnvironment),
    fileAccess: options.fileAccess
  }
  type S = Service<Input["Type"], Output["Type"], Failure["Type"]>
  type I = Implementation<Input["Type"], Output["Type"], Failure["Type"], TouchesEnvironment>
  const tag = Context.GenericTag<Identifier<Name>, S>(`effect-tool-runtime/Tool/${name}`)
  const service = (implementation: I): S =>
    fillDefaults(name, implementation as defaults.AnyImplementation<Input["Type"], Output["Type"], Failure["Type"]>)
  return Object.assign(tag, {
    [TypeId]: TypeId as TypeId,
    definition,
    service,
    implement: (implementation: I) => Layer.succeed(tag, service(implementation)),
    implementEffect: <E, R>(build: Effect.Effect<I, E, R>) => Layer.scoped(tag, Effect.map(build, service))
  })
}

/**
 * Whether a value is a tool.
 *
 * @since 0.1.0
 * @category guards
 */
export const isTool = (u: unknown): u is Tool.Any => typeof u === "object" && u !== null && TypeId in u

/**
 * A call that needs no Scope (it opens nothing that outlives it), so the runtime runs it without one: a Scope put into
 * a call's context costs some 5-15 µs of CPU per call (a copy of the fiber's services and two FiberRef writes), a
 * third of what the runtime adds to an MCP tool's call. Only an Effect that requires nothing can be marked: one
 * that needs a Scope (`Effect.addFinalizer`, `Effect.acquireRelease`) does not type-check here. Interruption and
 * timeouts still stop it. In an implementation: `call: ({ url }) => Tool.unscoped(fetchStatus(url))`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const unscoped = <A, E>(call: Effect.Effect<A, E>): Unscoped<A, E> => {
  unscopedCalls.add(call)
  return call as Unscoped<A, E>
}

/**
 * A call marked by {@link unscoped}.
 *
 * @since 0.3.0
 * @category models
 */
export interface Unscoped<A, E> extends Effect.Effect<A, E> {
  readonly [UnscopedTypeId]: typeof UnscopedTypeId
}

declare const UnscopedTypeId: unique symbol

// A set, not a property on the Effect: an extra property would change the shape of the runtime's own objects. The
// mark belongs to the Effect value, so a shared one marked by one tool runs unscoped wherever it runs: right, as it
// requires nothing. (A marked call in a run of several sees the run's Scope, if it looks with `serviceOption`.)
const unscopedCalls = new WeakSet<object>()

/**
 * Whether a call was marked by {@link unscoped}: the runtime then runs it without a Scope.
 *
 * @since 0.3.0
 * @category guards
 */
export const isUnscoped = (u: unknown): u is Unscoped<unknown, unknown> => unscopedCalls.has(u as object)

/**
 * A semantic validation failure with a message for the model.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reject = (message: string): Effect.Effect<never, InputRejected> =>
  Effect.fail(new InputRejected({ message }))

/**
 * The tools that are enabled now, in their order: for what the model is shown (tool definitions, tool search).
 * Each tool's `isEnabled` is asked once, all at once (a check several tools share, as an MCP server's tools do, once
 * for them all); tools without one are kept without asking, and a check that fails or dies leaves its tool out.
 *
 * @since 0.2.0
 * @category utilities
 */
export const filterEnabled = <T extends { readonly service: AnyService }>(
  tools: ReadonlyArray<T>
): Effect.Effect<ReadonlyArray<T>> => enabled.filterEnabled(tools, alwaysEnabled)
