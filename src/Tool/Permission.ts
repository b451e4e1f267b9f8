/**
 * Permission vocabulary of the protocol: what a tool thinks of a call ({@link PermissionCheck}), where a rule came
 * from ({@link RuleSource}), why a decision was taken ({@link DecisionReason}) and the decision itself
 * ({@link Decision}). These stay with the protocol because a tool returns the first and every Outcome carries the
 * last; the rest of the permission room (rules, settings and their trust, modes, safety checks, the
 * `PermissionPolicy` service and its `RulePolicy` implementation, the approvers) is `src/Permission`, which builds on
 * this module and never the other way round.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------------
// the tool's own view
// ---------------------------------------------------------------------------------------------------------------

/**
 * A tool's own view of the risk of one call.
 *
 * - `Allow`: the tool vouches for the call, optionally with a rewritten input. Rules and modes may still deny or ask.
 * - `Deny`: never run this; `message` is written for the model.
 * - `Ask`: a person must approve; `suggestions` are rules that would allow similar calls. An ask is `overridable`
 *   (the default): an allow rule (settings, command line, the session's "allow always"), a hook's allow or
 *   `bypassPermissions` answers it before the person is asked, so the rule a prompt suggests, once saved, allows the
 *   same call next time, provided the suggestions are rules the tool can match (a whole-tool rule, or content its
 *   `matchesRule`/`matchRules` reads). `overridable: false` is for asks no rule may answer (a command that cannot be
 *   analysed).
 * - `Passthrough`: no opinion; the policy decides.
 *
 * @since 0.1.0
 * @category models
 */
export type PermissionCheck<Input> =
  | { readonly _tag: "Allow"; readonly updatedInput?: Input | undefined; readonly reason?: string | undefined }
  | { readonly _tag: "Deny"; readonly message: string }
  | {
    readonly _tag: "Ask"
    readonly message: string
    readonly suggestions?: ReadonlyArray<string> | undefined
    readonly overridable?: boolean | undefined
  }
  | { readonly _tag: "Passthrough"; readonly suggestions?: ReadonlyArray<string> | undefined }

/**
 * Constructors for {@link PermissionCheck}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const PermissionCheck = {
  allow: <Input = never>(
    options?: { readonly updatedInput?: Input | undefined; readonly reason?: string | undefined }
  ): PermissionCheck<Input> => ({
    _tag: "Allow",
    ...options
  }),
  deny: (message: string): PermissionCheck<never> => ({ _tag: "Deny", message }),
  ask: (
    message: string,
    suggestions?: ReadonlyArray<string>,
    options?: { readonly overridable?: boolean | undefined }
  ): PermissionCheck<never> => ({
    _tag: "Ask",
    message,
    ...(suggestions === undefined ? {} : { suggestions }),
    ...(options?.overridable === undefined ? {} : { overridable: options.overridable })
  }),
  passthrough: (suggestions?: ReadonlyArray<string>): PermissionCheck<never> =>
    suggestions === undefined ? { _tag: "Passthrough" } : { _tag: "Passthrough", suggestions }
} as const

// ---------------------------------------------------------------------------------------------------------------
// decisions
// ---------------------------------------------------------------------------------------------------------------

/**
 * Where a permission rule came from, in Claude Code's vocabulary: one of the settings files (`userSettings`
 * `~/.claude/settings.json`, `projectSettings` `.claude/settings.json`, `localSettings` `.claude/settings.local.json`,
 * `flagSettings` a file given with `--settings`), `cliArg` a rule given directly on the command line (`--allow`), or
 * `session` a rule a person allowed for this session. The one name for this concept: settings files carry it as
 * their `kind` (`Settings.SettingsFile`), decisions name it in `DecisionReason.Rule`. Whether a settings file's
 * permissive entries apply is a separate matter, its trust (`Settings.applyTrust`).
 *
 * @since 0.1.0
 * @category models
 */
export const RuleSource = Schema.Literal(
  "userSettings",
  "projectSettings",
  "localSettings",
  "flagSettings",
  "cliArg",
  "session"
)

/**
 * @since 0.1.0
 * @category models
 */
export type RuleSource = typeof RuleSource.Type

/**
 * Why a call was allowed or denied. Every decision carries one, so a denial can always be explained to the model
 * and to the person reading the audit log.
 *
 * @since 0.1.0
 * @category models
 */
export type DecisionReason = Data.TaggedEnum<{
  /** A permission rule matched. */
  Rule: {
    readonly rule: string
    readonly behavior: "allow" | "deny" | "ask"
    readonly source: RuleSource
    readonly path?: string | undefined
  }
  /** The permission mode decided (e.g. plan mode refuses writes). */
  Mode: { readonly mode: string; readonly message: string }
  /** A PreToolUse hook decided. */
  Hook: { readonly hook: string; readonly message: string }
  /** The tool's own checkPermissions decided. */
  Tool: { readonly message: string }
  /** A person (through the Approver) decided. */
  User: { readonly scope: "once" | "session" | "always"; readonly message?: string | undefined }
  /** A safety check that no mode or rule can switch off (writes to `.git/`, settings, shell profiles...). */
  SafetyCheck: { readonly message: string }
  /** The call is read-only and stays inside the workspace. */
  ReadOnly: {}
  /** Nothing else applied. */
  Default: { readonly message: string }
  /** An automatic approver (a classifier) answered where a person would have been asked. */
  Classifier: { readonly approver: string; readonly message: string }
}>

/**
 * Constructors and matchers for {@link DecisionReason}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const DecisionReason = Data.taggedEnum<DecisionReason>()

/**
 * One sentence describing a reason, for the model and for people.
 *
 * @since 0.1.0
 * @category utilities
 */
export const describeReason = DecisionReason.$match({
  Rule: ({ behavior, path, rule, source }) =>
    `${behavior} rule \`${rule}\` from ${source}${path === undefined ? "" : ` (${path})`}`,
  Mode: ({ message, mode }) => `permission mode ${mode}: ${message}`,
  Hook: ({ hook, message }) => `hook ${hook}: ${message}`,
  Tool: ({ message }) => message,
  User: ({ message, scope }) =>
    message === undefined
      ? `the user (${scope === "once" ? "this call" : `allowed for ${scope === "session" ? "the session" : "always"}`})`
      : `the user: ${message}`,
  SafetyCheck: ({ message }) => `safety check: ${message}`,
  ReadOnly: () => "read-only call inside the workspace",
  Default: ({ message }) => message,
  Classifier: ({ approver, message }) => `${approver}: ${message}`
})

/**
 * The final word on one call.
 *
 * @since 0.1.0
 * @category models
 */
export type Decision = Data.TaggedEnum<{
  Allow: { readonly reason: DecisionReason }
  Deny: { readonly reason: DecisionReason; readonly message: string }
}>

/**
 * Constructors and matchers for {@link Decision}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const Decision = Data.taggedEnum<Decision>()
