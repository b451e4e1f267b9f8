/**
 * The PermissionPolicy **service**: it turns a call (the tool's definition, the call's Invocation — input, traits,
 * claims, rule matching — the tool's own check and any hook's opinion)
 * into Allow, Deny or Ask. The runtime asks the {@link Approver} when the answer is Ask, and tells the policy about
 * "allow for the session / always" answers through `remember`. This module holds the Tag and what it speaks (the
 * request, the verdict); the implementations are layers:
 *
 * - {@link PermissionPolicy.toolOnly}, the minimal one: the tool's own check decides, and anything without an opinion
 *   from a tool that touches the environment asks;
 * - `RulePolicy.layer` (`Permission/RulePolicy`), the full one: rules from settings, the command line and the
 *   session, modes, safety checks.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { DecisionReason } from "../Tool/Permission.js"
import type { PermissionCheck } from "../Tool/Permission.js"
import type { PermissionModeControl } from "../Tool/Question.js"
import type { AnyInvocation, CallContext, Definition } from "../Tool/Tool.js"

/**
 * A hook's opinion on a call, when a PreToolUse hook gave one.
 *
 * @since 0.1.0
 * @category models
 */
export interface HookOpinion {
  readonly behavior: "allow" | "deny" | "ask"
  readonly hook: string
  readonly message: string
}

/**
 * Everything the policy may look at.
 *
 * @since 0.1.0
 * @category models
 */
export interface PolicyRequest {
  readonly definition: Definition.Any
  /** The call as the tool bound it: its input, traits, claims and rule matching, computed once. */
  readonly invocation: AnyInvocation
  readonly toolCheck: PermissionCheck<unknown>
  readonly hook: HookOpinion | undefined
  readonly context: CallContext
  /**
   * A person (or an automatic approver) edited the input and allowed the edited one: for exactly this input it counts
   * as an allow rule would (it answers "no rule allows this" and the tool's overridable asks); deny rules, ask rules,
   * safety checks, plan mode and the tool's non-overridable asks still apply, and what they ask is asked again.
   */
  readonly allowedInput?: DecisionReason | undefined
}

/**
 * The policy's answer.
 *
 * @since 0.1.0
 * @category models
 */
export type PolicyVerdict = Data.TaggedEnum<{
  Allow: { readonly reason: DecisionReason; readonly updatedInput?: unknown }
  Deny: { readonly reason: DecisionReason; readonly message: string }
  Ask: { readonly reason: DecisionReason; readonly message: string; readonly suggestions: ReadonlyArray<string> }
}>

/**
 * Constructors and matchers for {@link PolicyVerdict}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PolicyVerdict = Data.taggedEnum<PolicyVerdict>()

/**
 * The PermissionPolicy service.
 *
 * @since 0.1.0
 * @category tags
 */
export class PermissionPolicy extends Context.Tag("effect-tool-runtime/PermissionPolicy")<
  PermissionPolicy,
  {
    readonly evaluate: (request: PolicyRequest) => Effect.Effect<PolicyVerdict>
    /** Records rules a person allowed for the session or for always. */
    readonly remember: (
      rules: ReadonlyArray<string>,
      scope: "session" | "always"
    ) => Effect.Effect<void, PolicyUpdateError>
    /** Whether the policy refuses every call that is not read-only (plan mode). */
    readonly readOnlyOnly: Effect.Effect<boolean>
    /** Whether deny rules forbid reading this absolute path (e.g. `Read(./.env)`), for tools that read many files. */
    readonly deniesRead: (absolutePath: string) => boolean
    /**
     * The session's mode, read and changed (plan mode entered and left); absent when the mode is fixed.
     *
     * @since 0.3.0
     */
    readonly mode?: PermissionModeControl | undefined
  }
>() {
  /**
   * The tool decides; Passthrough from a tool that touches the environment asks, from one that does not, allows.
   * A hook's deny wins; a hook's ask turns an allow into an ask; a hook's allow never bypasses the tool's deny or ask.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly toolOnly: Layer.Layer<PermissionPolicy> = Layer.succeed(PermissionPolicy, {
    evaluate: (request) => Effect.succeed(toolOnlyVerdict(request)),
    remember: () => Effect.void,
    readOnlyOnly: Effect.succeed(false),
    deniesRead: () => false
  })
}

/**
 * Saving a remembered rule failed (e.g. the local settings file could not be written).
 *
 * @since 0.1.0
 * @category errors
 */
export class PolicyUpdateError extends Data.TaggedError("PolicyUpdateError")<{ readonly message: string }> {}

const toolOnlyVerdict = ({ allowedInput, definition, hook, toolCheck }: PolicyRequest): PolicyVerdict => {
  if (
    allowedInput !== undefined && hook?.behavior !== "deny" && toolCheck._tag !== "Deny" &&
    !(toolCheck._tag === "Ask" && toolCheck.overridable === false)
  ) {
    return PolicyVerdict.Allow({ reason: allowedInput })
  }
  if (hook?.behavior === "deny") {
    return PolicyVerdict.Deny({
      reason: DecisionReason.Hook({ hook: hook.hook, message: hook.message }),
      message: hook.message
    })
  }
  switch (toolCheck._tag) {
    case "Deny":
      return PolicyVerdict.Deny({
        reason: DecisionReason.Tool({ message: toolCheck.message }),
        message: toolCheck.message
      })
    case "Ask":
      return PolicyVerdict.Ask({
        reason: DecisionReason.Tool({ message: toolCheck.message }),
        message: toolCheck.message,
        suggestions: toolCheck.suggestions ?? []
      })
    case "Allow":
      return hook?.behavior === "ask"
        ? PolicyVerdict.Ask({
          reason: DecisionReason.Hook({ hook: hook.hook, message: hook.message }),
          message: hook.message,
          suggestions: []
        })
        : PolicyVerdict.Allow({
          reason: DecisionReason.Tool({ message: toolCheck.reason ?? `${definition.name} allowed this call` }),
          updatedInput: toolCheck.updatedInput
        })
    case "Passthrough":
      if (hook?.behavior === "allow") {
        return PolicyVerdict.Allow({ reason: DecisionReason.Hook({ hook: hook.hook, message: hook.message }) })
      }
      if (hook?.behavior === "ask" || definition.touchesEnvironment) {
        const message = hook?.message ?? `${definition.name} wants to run and no rule allows it.`
        return PolicyVerdict.Ask({
          reason: DecisionReason.Default({ message }),
          message,
          suggestions: toolCheck.suggestions ?? []
        })
      }
      return PolicyVerdict.Allow({
        reason: DecisionReason.Default({ message: `${definition.name} does not touch the environment` })
      })
  }
}
