/**
 * The settings schema: what a Claude Code settings file may hold (permission modes, rules, hooks of every kind),
 * where a file comes from (its kind and path, the rules tagged with it), what a loaded file is, and the error every
 * settings operation fails with. Pure data: no file system here.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { RuleSource } from "../Tool/Permission.js"
import { PermissionRule, RuleBehavior } from "../Tool/Rule.js"

// -----------------------------------------------------------------------------
// schemas
// -----------------------------------------------------------------------------

/**
 * The modes the policy runs in.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionMode = Schema.Literal("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")

/**
 * @since 0.1.0
 * @category schemas
 */
export type PermissionMode = typeof PermissionMode.Type

/**
 * Every `defaultMode` value Claude Code documents: the policy's modes, `manual` (an alias of `default`) and `auto`
 * (approvals by a classifier; without one configured it runs as `default`, with a warning).
 *
 * @since 0.2.0
 * @category schemas
 */
export const PermissionModeSetting = Schema.Literal(
  "default",
  "manual",
  "acceptEdits",
  "plan",
  "auto",
  "bypassPermissions",
  "dontAsk"
)

/**
 * @since 0.2.0
 * @category schemas
 */
export type PermissionModeSetting = typeof PermissionModeSetting.Type

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

const Seconds = Schema.Number.pipe(Schema.positive(), Schema.finite())

/** Fields every kind of hook may carry. */
const hookCommon = {
  timeout: optional(Seconds),
  /** A rule (`Bash(git commit *)`): the hook runs only for calls the rule matches. */
  if: optional(Schema.String),
  statusMessage: optional(Schema.String),
  once: optional(Schema.Boolean)
}

/**
 * A command hook: `command` through the shell, or, with `args`, the program `command` with those arguments and no
 * shell. `timeout` in seconds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandHook = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String,
  args: optional(Schema.Array(Schema.String)),
  async: optional(Schema.Boolean),
  shell: optional(Schema.String),
  ...hookCommon
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type CommandHook = typeof CommandHook.Type

/**
 * An HTTP hook: the hook JSON is POSTed to `url`; the response body is read as a command hook's stdout. `$VAR` and
 * `${VAR}` in header values are replaced by environment variables listed in `allowedEnvVars` (others by nothing).
 *
 * @since 0.2.0
 * @category schemas
 */
export const HttpHook = Schema.Struct({
  type: Schema.Literal("http"),
  url: Schema.String,
  headers: optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  allowedEnvVars: optional(Schema.Array(Schema.String)),
  ...hookCommon
})

/**
 * A prompt or agent hook: a language model answers `prompt` (`$ARGUMENTS` is the hook JSON) with
 * `{"ok": boolean, "reason"?: string}`.
 *
 * @since 0.2.0
 * @category schemas
 */
export const PromptHook = Schema.Struct({
  type: Schema.Literal("prompt", "agent"),
  prompt: Schema.String,
  model: optional(Schema.String),
  ...hookCommon
})

/**
 * @since 0.2.0
 * @category schemas
 */
export const HookDefinition = Schema.Union(CommandHook, HttpHook, PromptHook)

/**
 * @since 0.2.0
 * @category schemas
 */
export type HookDefinition = typeof HookDefinition.Type

/**
 * Hooks that run for the tools whose name matches `matcher`: absent, empty or `*` means every tool, a plain list
 * like `Bash|Edit` those exact names, anything else a regular expression tested unanchored against the tool name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookMatcher = Schema.Struct({
  matcher: optional(Schema.String),
  hooks: Schema.Array(HookDefinition)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type HookMatcher = typeof HookMatcher.Type

/**
 * Every hook event Claude Code defines. The runtime raises `PreToolUse`, `PostToolUse` and `PostToolUseFailure`;
 * hooks for the others load and are reported once as unused.
 *
 * @since 0.2.0
 * @category schemas
 */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "PostToolUseFailure",
  "PermissionRequest",
  "PermissionDenied",
  "Notification",
  "UserPromptSubmit",
  "Stop",
  "StopFailure",
  "SubagentStart",
  "SubagentStop",
  "PreCompact",
  "PostCompact",
  "SessionStart",
  "SessionEnd",
  "Setup",
  "TeammateIdle",
  "TaskCreated",
  "TaskCompleted",
  "ConfigChange",
  "CwdChanged",
  "FileChanged",
  "InstructionsLoaded",
  "WorktreeCreate",
  "WorktreeRemove",
  "Elicitation",
  "ElicitationResult"
] as const

/**
 * @since 0.2.0
 * @category schemas
 */
export type HookEventName = (typeof HOOK_EVENTS)[number]

const hookEventFields = Object.fromEntries(
  HOOK_EVENTS.map((event) => [event, optional(Schema.Array(HookMatcher))])
) as {
  readonly [K in HookEventName]: Schema.optionalWith<Schema.Array$<typeof HookMatcher>, { exact: true }>
}

/**
 * @since 0.1.0
 * @category schemas
 */
export const HooksSettings = Schema.Struct(hookEventFields)

/**
 * @since 0.2.0
 * @category schemas
 */
export type HooksSettings = typeof HooksSettings.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const PermissionsSettings = Schema.Struct({
  allow: optional(Schema.Array(Schema.String)),
  deny: optional(Schema.Array(Schema.String)),
  ask: optional(Schema.Array(Schema.String)),
  defaultMode: optional(PermissionModeSetting),
  additionalDirectories: optional(Schema.Array(Schema.String)),
  disableBypassPermissionsMode: optional(Schema.Literal("disable")),
  disableAutoMode: optional(Schema.Literal("disable"))
})

/**
 * The part of a Claude Code settings file this runtime reads, plus `trustedProjects` (read from the user's file
 * only): the projects whose repository settings the person trusts. `allowedHttpHookUrls` and
 * `httpHookAllowedEnvVars` restrict, so they apply from every file, trusted or not. Decoding drops unknown keys (the loader warns
 * about them first).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  permissions: optional(PermissionsSettings),
  hooks: optional(HooksSettings),
  /** Turns off the hooks of every settings file (a repository's file only once trusted: it would switch off guards). */
  disableAllHooks: optional(Schema.Boolean),
  /** URL patterns (`*` matches anything) HTTP hooks may POST to; when any file sets it, other URLs are refused. */
  allowedHttpHookUrls: optional(Schema.Array(Schema.String)),
  /** Environment variables HTTP hooks may put in headers; when any file sets it, others are never sent. */
  httpHookAllowedEnvVars: optional(Schema.Array(Schema.String)),
  trustedProjects: optional(Schema.Array(Schema.String))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type Settings = typeof Settings.Type

// -----------------------------------------------------------------------------
// sources
// -----------------------------------------------------------------------------

/**
 * The rule sources that live in files: user, project, local settings and a file given with `--settings`.
 *
 * @since 0.1.0
 * @category sources
 */
export const SettingsFileKind = RuleSource.pipe(
  Schema.pickLiteral("userSettings", "projectSettings", "localSettings", "flagSettings")
)

/**
 * @since 0.1.0
 * @category sources
 */
export type SettingsFileKind = typeof SettingsFileKind.Type

/**
 * One settings file: which of the rule sources it is and where it lives. Every rule read from it carries it.
 *
 * @since 0.2.0
 * @category sources
 */
export const SettingsFile = Schema.Struct({
  kind: SettingsFileKind,
  path: Schema.String
})

/**
 * @since 0.2.0
 * @category sources
 */
export type SettingsFile = typeof SettingsFile.Type

/**
 * A parsed rule with its behaviour, its source and the text it was written as.
 *
 * @since 0.1.0
 * @category sources
 */
export class SourcedRule extends Schema.Class<SourcedRule>("effect-tool-runtime/SourcedRule")({
  behavior: RuleBehavior,
  rule: PermissionRule,
  text: Schema.String,
  source: SettingsFile
}) {}

/**
 * Something in a settings file that loaded but deserves the person's attention: an unknown key, a dropped rule,
 * an entry the trust model did not apply, a hook that will not run. `field` is the JSON path (`permissions.Deny`).
 *
 * @since 0.2.0
 * @category models
 */
export interface SettingsWarning {
  readonly file: string
  readonly field: string
  readonly message: string
}

/**
 * One line for a warning: `file: field: message`.
 *
 * @since 0.2.0
 * @category models
 */
export const formatSettingsWarning = (warning: SettingsWarning): string =>
  `${warning.file}: ${warning.field === "" ? "" : `${warning.field}: `}${warning.message}`

/**
 * A settings file that loaded: its content as it applies (after the trust decision, with `~` expanded), its rules
 * (deny, ask and allow in file order) and the warnings found on the way. `trusted` says whether its permissive
 * entries apply (always true outside the repository).
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadedSettings {
  readonly source: SettingsFile
  readonly settings: Settings
  readonly rules: ReadonlyArray<SourcedRule>
  readonly warnings: ReadonlyArray<SettingsWarning>
  readonly trusted: boolean
}

/**
 * The three standard settings files, from lowest to highest precedence: user, project, local.
 *
 * @since 0.1.0
 * @category sources
 */
export const claudeSettingsPaths = (options: {
  readonly home: string
  readonly cwd: string
}): ReadonlyArray<{ readonly kind: SettingsFileKind; readonly path: string }> => [
  { kind: "userSettings", path: Path.join(options.home, ".claude", "settings.json") },
  { kind: "projectSettings", path: Path.join(options.cwd, ".claude", "settings.json") },
  { kind: "localSettings", path: Path.join(options.cwd, ".claude", "settings.local.json") }
]

// -----------------------------------------------------------------------------
// errors
// -----------------------------------------------------------------------------

/**
 * A settings file that could not be read, parsed, validated or written. `detail` names the field path and
 * what is wrong with it.
 *
 * @since 0.1.0
 * @category errors
 */
export class SettingsError extends Schema.TaggedError<SettingsError>("effect-tool-runtime/SettingsError")(
  "SettingsError",
  {
    file: Schema.String,
    reason: Schema.Literal("Unreadable", "InvalidJson", "InvalidSettings", "Unwritable"),
    detail: Schema.String
  }
) {
  override get message(): string {
    switch (this.reason) {
      case "Unreadable":
        return `Cannot read settings file ${this.file}: ${this.detail}`
      case "InvalidJson":
        return `Settings file ${this.file} is not valid JSON: ${this.detail}`
      case "InvalidSettings":
        return `Invalid settings in ${this.file}: ${this.detail}`
      case "Unwritable":
        return `Cannot write settings file ${this.file}: ${this.detail}`
    }
  }
}
