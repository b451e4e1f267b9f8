/**
 * Claude Code settings files (`~/.claude/settings.json`, `.claude/settings.json`,
 * `.claude/settings.local.json`): their schema, a loader that turns a file into parsed rules tagged with
 * where they came from, the trust given to a repository's files, and atomic edits ("allow always", "trust this
 * project").
 *
 * ## What loads
 * Every key Claude Code documents is accepted; the ones this runtime acts on (`permissions`, `hooks`) are checked
 * against a schema. A key nobody knows (`permissions.Deny`) is a warning that names the closest known key and is
 * otherwise ignored. A known key with a value of the wrong shape, an invalid hook matcher or `if` condition, and a
 * malformed `deny` or `ask` rule stop the load (fail closed: a rule meant to protect something is never silently
 * lost); a malformed `allow` rule is dropped with a warning, as Claude Code does. Each problem is one line naming
 * the file and the field.
 *
 * ## Rules for tools
 * A rule for a tool this runtime does not have (`WebSearch`, `Task`, an MCP server that is not configured) is kept,
 * with a warning; a tool name one edit away from a known tool (`bash`) is an error naming the tool meant.
 * File rules are read as Claude Code reads them: `Edit(...)` governs every tool that writes files and `Read(...)`
 * every tool that reads or lists them. `Write(...)`, `MultiEdit(...)` and `NotebookEdit(...)` deny and ask rules are
 * read as `Edit(...)`, `Glob(...)`, `Grep(...)` and `LS(...)` ones as `Read(...)` (never less safe than written);
 * allow rules under those names do nothing, as in Claude Code. Each such rule gets a warning saying how it is read.
 *
 * ## Trust
 * Restrictive entries (deny and ask rules) apply from every file. Permissive entries of the repository's files
 * (`.claude/settings.json`, `.claude/settings.local.json`): allow rules, hooks, `additionalDirectories` and a
 * `defaultMode` other than `default`/`plan`, apply only once the person trusted the project: its path (or an
 * ancestor's) is listed in `trustedProjects` of the user's settings, or the loader is told so (`--trust-project`).
 * No repository file can turn on `bypassPermissions`, trusted or not. `~` is the home directory in every path.
 * One exception, as in Claude Code: the allow rules "always allow" wrote into `settings.local.json` for the person
 * apply untrusted too, because the person's own record (`Grants`, outside the project) lists them for that file.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { closest, editDistance } from "../Shared/closest.js"
import { formatPath, issueLines } from "../Shared/issues.js"
import { sameLooking } from "../Shared/lookAlike.js"
import { RuleSource } from "../Tool/Permission.js"
import { makeRule, parseMcpName, parseRule, PermissionRule, printRule, RuleBehavior } from "../Tool/Rule.js"
import * as Grants from "./Grants.js"
import { compileHookMatcher } from "./HookMatcher.js"

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
  /**
   * The hooks of an untrusted repository file, set aside: they are not run, and not ignored either (a call they
   * match asks, naming the hook: see `Hooks.optionsFromSettings`).
   */
  readonly untrustedHooks?: HooksSettings | undefined
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

// -----------------------------------------------------------------------------
// known keys
// -----------------------------------------------------------------------------

/** Top-level keys Claude Code documents (and `trustedProjects`, this runtime's own). */
const TOP_LEVEL_KEYS = [
  "$schema",
  "apiKeyHelper",
  "attribution",
  "autoMemoryEnabled",
  "autoUpdatesChannel",
  "availableModels",
  "awsAuthRefresh",
  "awsCredentialExport",
  "alwaysThinkingEnabled",
  "allowManagedHooksOnly",
  "allowManagedMcpServersOnly",
  "allowManagedPermissionRulesOnly",
  "allowedHttpHookUrls",
  "allowedMcpServers",
  "cleanupPeriodDays",
  "companyAnnouncements",
  "deniedMcpServers",
  "disableAllHooks",
  "disabledMcpjsonServers",
  "effortLevel",
  "enableAllProjectMcpServers",
  "enabledMcpjsonServers",
  "enabledPlugins",
  "env",
  "extraKnownMarketplaces",
  "feedbackSurveyRate",
  "fileSuggestion",
  "forceLoginMethod",
  "forceLoginOrgUUID",
  "gcpAuthRefresh",
  "hooks",
  "httpHookAllowedEnvVars",
  "includeCoAuthoredBy",
  "includeGitInstructions",
  "language",
  "model",
  "modelOverrides",
  "otelHeadersHelper",
  "outputStyle",
  "permissions",
  "plansDirectory",
  "prefersReducedMotion",
  "respectGitignore",
  "sandbox",
  "showTurnDuration",
  "skipWebFetchPreflight",
  "spinnerTipsEnabled",
  "spinnerTipsOverride",
  "spinnerVerbs",
  "statusLine",
  "strictKnownMarketplaces",
  "teammateMode",
  "terminalProgressBarEnabled",
  "theme",
  "trustedProjects",
  "viewMode"
]

const PERMISSIONS_KEYS = [
  "allow",
  "ask",
  "deny",
  "defaultMode",
  "additionalDirectories",
  "disableBypassPermissionsMode",
  "disableAutoMode"
]

const MATCHER_KEYS = ["matcher", "hooks"]

const HOOK_COMMON_KEYS = ["type", "timeout", "if", "statusMessage", "once"]

const HOOK_KEYS: Readonly<Record<string, ReadonlyArray<string>>> = {
  command: [...HOOK_COMMON_KEYS, "command", "args", "async", "shell"],
  http: [...HOOK_COMMON_KEYS, "url", "headers", "allowedEnvVars"],
  prompt: [...HOOK_COMMON_KEYS, "prompt", "model"],
  agent: [...HOOK_COMMON_KEYS, "prompt", "model"]
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Keys nobody knows: a near miss of a known key (`permissions.Deny`, `permission`, `hooks.PreTooluse`) is a problem
 * that stops the load, naming the key meant (what it holds was meant to deny, ask or block, and must not be dropped
 * silently); any other unknown key is a warning.
 */
const unknownKeys = (
  json: unknown,
  file: string
): { readonly warnings: Array<SettingsWarning>; readonly nearMisses: Array<string> } => {
  const warnings: Array<SettingsWarning> = []
  const nearMisses: Array<string> = []
  const check = (value: unknown, path: ReadonlyArray<PropertyKey>, known: ReadonlyArray<string>, what: string) => {
    if (!isPlainObject(value)) return
    for (const key of Object.keys(value)) {
      if (known.includes(key)) continue
      const near = known.find((name) => sameLooking(name, key)) ?? closest(key, known)
      const field = formatPath([...path, key])
      if (near !== undefined) nearMisses.push(`${field}: unknown ${what}, did you mean ${near}?`)
      else warnings.push({ file, field, message: `unknown ${what} (ignored)` })
    }
  }
  check(json, [], TOP_LEVEL_KEYS, "setting")
  if (!isPlainObject(json)) return { warnings, nearMisses }
  check(json.permissions, ["permissions"], PERMISSIONS_KEYS, "permissions key")
  check(json.hooks, ["hooks"], HOOK_EVENTS, "hook event")
  if (isPlainObject(json.hooks)) {
    for (const event of HOOK_EVENTS) {
      const groups = json.hooks[event]
      if (!Array.isArray(groups)) continue
      groups.forEach((group: unknown, i) => {
        check(group, ["hooks", event, i], MATCHER_KEYS, "hook matcher key")
        if (!isPlainObject(group) || !Array.isArray(group.hooks)) return
        group.hooks.forEach((hook: unknown, j) => {
          const known = isPlainObject(hook) && typeof hook.type === "string" ? HOOK_KEYS[hook.type] : undefined
          if (known !== undefined) {
            check(hook, ["hooks", event, i, "hooks", j], known, `${String((hook as { type: string }).type)} hook key`)
          }
        })
      })
    }
  }
  return { warnings, nearMisses }
}

// -----------------------------------------------------------------------------
// tools named by rules
// -----------------------------------------------------------------------------

/**
 * The built-in tools of this runtime: rules for them need no comment.
 *
 * @since 0.2.0
 * @category rules
 */
export const RUNTIME_TOOLS: ReadonlyArray<string> = [
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "Bash",
  "WebFetch",
  "ToolSearch"
]

/**
 * Claude Code's tools that this runtime does not have. Rules for them load (real settings files carry them) and
 * match nothing here until a tool of that name is registered.
 *
 * @since 0.2.0
 * @category rules
 */
export const CLAUDE_CODE_ONLY_TOOLS: ReadonlyArray<string> = [
  "Agent",
  "Task",
  "TaskOutput",
  "TaskStop",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "WebSearch",
  "NotebookEdit",
  "NotebookRead",
  "TodoWrite",
  "TodoRead",
  "MultiEdit",
  "LS",
  "KillShell",
  "KillBash",
  "BashOutput",
  "ExitPlanMode",
  "EnterPlanMode",
  "SlashCommand",
  "Skill",
  "AskUserQuestion",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "LSP",
  "EnterWorktree",
  "ExitWorktree",
  "SendMessage",
  "TeamCreate",
  "TeamDelete",
  "Monitor",
  "CronCreate",
  "CronDelete",
  "CronList",
  "PowerShell"
]

/** File tools whose path rules Claude Code reads as `Edit(...)` or `Read(...)`. */
const FILE_RULE_FAMILY: Readonly<Record<string, "Edit" | "Read">> = {
  Write: "Edit",
  MultiEdit: "Edit",
  NotebookEdit: "Edit",
  Glob: "Read",
  Grep: "Read",
  LS: "Read",
  NotebookRead: "Read"
}

/**
 * How one rule is read: as written, under its file family's name (`Write(x)` deny -> `Edit(x)`), or not at all
 * (`Write(x)` allow, which Claude Code never matches), with the warning that says so.
 *
 * @since 0.2.0
 * @category rules
 */
export const readFileRule = (
  behavior: RuleBehavior,
  rule: PermissionRule
): { readonly rule: PermissionRule | undefined; readonly warning: string | undefined } => {
  const family = FILE_RULE_FAMILY[rule.toolName]
  if (family === undefined || rule.content === undefined) return { rule, warning: undefined }
  const asFamily = printRule(makeRule(family, rule.content))
  if (behavior === "allow") {
    return {
      rule: undefined,
      warning: `${
        printRule(rule)
      } has no effect: as in Claude Code, only ${family}(path) rules are matched by file permission checks (${family} rules cover every tool that ${
        family === "Edit" ? "writes" : "reads or lists"
      } files); write ${asFamily} instead`
    }
  }
  return {
    rule: makeRule(family, rule.content),
    warning: `${printRule(rule)} is read as ${asFamily}: ${family} rules cover every tool that ${
      family === "Edit" ? "writes" : "reads or lists"
    } files (Claude Code would not match ${printRule(rule)} at all)`
  }
}

/**
 * The options that say which tools and MCP servers exist, for the checks on rules' tool names.
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolNameOptions {
  /** Tools of this runtime. Default {@link RUNTIME_TOOLS}. */
  readonly knownTools?: ReadonlyArray<string> | undefined
  /** Configured MCP servers: rules for other servers get a warning. Default none. */
  readonly mcpServers?: ReadonlyArray<string> | undefined
}

type ToolNameCheck = { readonly _tag: "Ok" } | { readonly _tag: "Warning"; readonly message: string } | {
  readonly _tag: "Error"
  readonly message: string
}

/**
 * Checks the tool a rule names: a known tool is fine; a Claude Code tool this runtime lacks, an unconfigured MCP
 * server or an unknown name is a warning (the rule is kept); a name one edit away from a known tool is an error.
 *
 * @since 0.2.0
 * @category rules
 */
export const checkRuleToolName = (toolName: string, options: ToolNameOptions = {}): ToolNameCheck => {
  const known = options.knownTools ?? RUNTIME_TOOLS
  const mcp = parseMcpName(toolName)
  if (mcp !== undefined) {
    return (options.mcpServers ?? []).includes(mcp.server)
      ? { _tag: "Ok" }
      : {
        _tag: "Warning",
        message: `no MCP server "${mcp.server}" is configured; the rule is kept and matches nothing until it is`
      }
  }
  if (known.includes(toolName)) return { _tag: "Ok" }
  if (CLAUDE_CODE_ONLY_TOOLS.includes(toolName)) {
    return {
      _tag: "Warning",
      message: `${toolName} is a Claude Code tool this runtime does not have; the rule is kept and matches nothing`
    }
  }
  const near = [...known, ...CLAUDE_CODE_ONLY_TOOLS].find((name) =>
    editDistance(name, toolName) === 1 || sameLooking(name, toolName)
  )
  if (near !== undefined) return { _tag: "Error", message: `unknown tool "${toolName}", did you mean ${near}?` }
  return {
    _tag: "Warning",
    message: `unknown tool "${toolName}"; the rule is kept and matches nothing until a tool of that name exists`
  }
}

// -----------------------------------------------------------------------------
// loading
// -----------------------------------------------------------------------------

const BEHAVIORS: ReadonlyArray<RuleBehavior> = ["deny", "ask", "allow"]

const readJson = (
  fs: FileSystem.FileSystem,
  file: string
): Effect.Effect<Option.Option<unknown>, SettingsError> =>
  fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed(Option.none<string>())
    ),
    Effect.mapError((error) => new SettingsError({ file, reason: "Unreadable", detail: error.message })),
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(Option.none()),
      // An empty file (freshly created) is an empty settings object, not a syntax error.
      onSome: (text) =>
        text.trim() === "" ? Effect.succeed(Option.some<unknown>({})) : Either.try({
          try: () => Option.some<unknown>(JSON.parse(text)),
          catch: (error) =>
            new SettingsError({
              file,
              reason: "InvalidJson",
              detail: (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")
            })
        })
    }))
  )

const decodeSettings = Schema.decodeUnknownEither(Settings, { errors: "all" })

/** `~` and `~/x` against home. */
const expandHome = (path: string, home: string | undefined): string =>
  home === undefined ? path : path === "~" ? home : path.startsWith("~/") ? Path.join(home, path.slice(2)) : path

/** Hook matchers that are not regular expressions and `if` conditions that are not rules: one line each. */
const hookProblems = (hooks: HooksSettings | undefined): Array<string> => {
  const problems: Array<string> = []
  if (hooks === undefined) return problems
  for (const event of HOOK_EVENTS) {
    hooks[event]?.forEach((group, i) => {
      const compiled = compileHookMatcher(group.matcher)
      if (Either.isLeft(compiled)) {
        problems.push(
          `${formatPath(["hooks", event, i, "matcher"])}: invalid regular expression ${
            JSON.stringify(group.matcher)
          }: ${compiled.left}`
        )
      }
      group.hooks.forEach((hook, j) => {
        if (hook.if === undefined) return
        const parsed = parseRule(hook.if)
        if (Either.isLeft(parsed)) {
          problems.push(`${formatPath(["hooks", event, i, "hooks", j, "if"])}: ${parsed.left.message}`)
        }
      })
    })
  }
  return problems
}

/**
 * The options of the loaders: which tools exist (for the checks on rule names) and where home is (for `~`).
 *
 * @since 0.2.0
 * @category models
 */
export interface DecodeOptions extends ToolNameOptions {
  /** Expands `~` in path settings. Default: no expansion. */
  readonly home?: string | undefined
}

/**
 * Decodes already-parsed JSON as settings from `source` and parses every rule. Exposed for settings that do
 * not come from a file on disk (e.g. `--settings '{"permissions": ...}'`). The result is trusted: apply
 * {@link applyTrust} to settings that come from a repository.
 *
 * @since 0.1.0
 * @category loading
 */
export const decodeSettingsJson = (
  json: unknown,
  source: SettingsFile,
  options: DecodeOptions = {}
): Either.Either<LoadedSettings, SettingsError> => {
  const file = source.path
  const invalid = (lines: ReadonlyArray<string>) =>
    new SettingsError({ file, reason: "InvalidSettings", detail: lines.join("; ") })

  const decoded = decodeSettings(json)
  if (Either.isLeft(decoded)) {
    return Either.left(
      invalid(
        issueLines(decoded.left.issue).map(({ message, path }) =>
          path.length === 0 ? message : `${formatPath(path)}: ${message}`
        )
      )
    )
  }
  const { nearMisses, warnings } = unknownKeys(json, file)
  const warn = (path: ReadonlyArray<PropertyKey>, message: string) =>
    warnings.push({ file, field: formatPath(path), message })
  let settings = decoded.right
  const rules: Array<SourcedRule> = []
  const problems: Array<string> = [...nearMisses, ...hookProblems(settings.hooks)]
  for (const behavior of BEHAVIORS) {
    settings.permissions?.[behavior]?.forEach((text, index) => {
      const path = ["permissions", behavior, index]
      const parsed = parseRule(text)
      if (Either.isLeft(parsed)) {
        // A malformed allow rule grants nothing: drop it. A malformed deny or ask rule meant to protect something.
        if (behavior === "allow") warn(path, `${parsed.left.message}; the rule is dropped`)
        else problems.push(`${formatPath(path)}: ${parsed.left.message}`)
        return
      }
      const named = checkRuleToolName(parsed.right.toolName, options)
      if (named._tag === "Error") return problems.push(`${formatPath(path)}: ${JSON.stringify(text)}: ${named.message}`)
      if (named._tag === "Warning") warn(path, `${JSON.stringify(text)}: ${named.message}`)
      const read = readFileRule(behavior, parsed.right)
      if (read.warning !== undefined) warn(path, read.warning)
      if (read.rule !== undefined) rules.push(new SourcedRule({ behavior, rule: read.rule, text, source }))
    })
  }
  if (problems.length > 0) return Either.left(invalid(problems))
  const directories = settings.permissions?.additionalDirectories
  if (directories !== undefined && options.home !== undefined) {
    settings = {
      ...settings,
      permissions: {
        ...settings.permissions,
        additionalDirectories: directories.map((dir) => expandHome(dir, options.home))
      }
    }
  }
  return Either.right({ source, settings, rules, warnings, trusted: true })
}

// -----------------------------------------------------------------------------
// trust
// -----------------------------------------------------------------------------

/**
 * Whether a settings file comes from the repository (project or local settings), so that its permissive entries
 * wait for the person's trust.
 *
 * @since 0.2.0
 * @category trust
 */
export const isRepositorySource = (kind: RuleSource): boolean => kind === "projectSettings" || kind === "localSettings"

/**
 * Whether the user's settings trust a project: `trustedProjects` lists its path or an ancestor's (`~` expanded).
 *
 * @since 0.2.0
 * @category trust
 */
export const isTrusted = (userSettings: Settings | undefined, project: string, home: string): boolean => {
  const target = Path.resolve(project)
  return (userSettings?.trustedProjects ?? []).some((entry) => {
    const trusted = Path.resolve(expandHome(entry, home))
    const relative = Path.relative(trusted, target)
    return relative === "" || (!relative.startsWith("..") && !Path.isAbsolute(relative))
  })
}

const PERMISSIVE_MODES: ReadonlyArray<PermissionModeSetting> = ["acceptEdits", "auto", "bypassPermissions", "dontAsk"]

/**
 * Applies the trust decision to a repository file: untrusted, its allow rules, hooks, `additionalDirectories` and a
 * `defaultMode` other than `default`/`plan` are set aside, with one warning per kind; trusted or not,
 * `bypassPermissions` is set aside. Deny and ask rules always stay. Files from outside the repository pass unchanged.
 *
 * `granted` (for `settings.local.json`) are the allow rules, as printed, that this runtime wrote into the file for
 * the person ("always allow", recorded in their own state: see `Grants`): those apply untrusted too.
 *
 * @since 0.2.0
 * @category trust
 */
export const applyTrust = (
  loaded: LoadedSettings,
  trusted: boolean,
  granted: ReadonlySet<string> = new Set()
): LoadedSettings => {
  if (!isRepositorySource(loaded.source.kind)) return loaded
  const file = loaded.source.path
  const warnings = [...loaded.warnings]
  const untrusted = (field: string, what: string) =>
    warnings.push({
      file,
      field,
      message:
        `${what} not applied: this project is not trusted (run with --trust-project, or add it to trustedProjects in ~/.claude/settings.json)`
    })
  const permissions = loaded.settings.permissions
  const mode = permissions?.defaultMode
  let keepMode = mode
  if (mode === "bypassPermissions") {
    warnings.push({
      file,
      field: "permissions.defaultMode",
      message: "bypassPermissions is never taken from a repository's settings; the mode stays default"
    })
    keepMode = undefined
  } else if (!trusted && mode !== undefined && PERMISSIVE_MODES.includes(mode)) {
    untrusted("permissions.defaultMode", `mode ${mode}`)
    keepMode = undefined
  }
  let rules = loaded.rules
  let hooks = loaded.settings.hooks
  let directories = permissions?.additionalDirectories
  let setAside: HooksSettings | undefined
  const isGranted = (rule: SourcedRule) => rule.behavior === "allow" && granted.has(printRule(rule.rule))
  if (!trusted) {
    const allows = rules.filter((rule) => rule.behavior === "allow" && !isGranted(rule)).length
    if (allows > 0) {
      untrusted(
        "permissions.allow",
        `${allows} allow rule${allows === 1 ? "" : "s"}${
          granted.size > 0 ? " (other than those you allowed always here)" : ""
        }`
      )
    }
    rules = rules.filter((rule) => rule.behavior !== "allow" || isGranted(rule))
    if (hooks !== undefined && HOOK_EVENTS.some((event) => (hooks?.[event]?.length ?? 0) > 0)) {
      warnings.push({
        file,
        field: "hooks",
        message:
          "hooks not applied: this project is not trusted (run with --trust-project, or add it to trustedProjects in ~/.claude/settings.json); they are not run, and every call they match asks"
      })
      setAside = hooks
    }
    hooks = undefined
    if (directories !== undefined && directories.length > 0) {
      untrusted("permissions.additionalDirectories", "additional directories")
    }
    directories = undefined
  }
  const { additionalDirectories: _dirs, defaultMode: _mode, ...restrictive } = permissions ?? {}
  const { disableAllHooks, hooks: _hooks, permissions: _permissions, ...rest } = loaded.settings
  if (!trusted && disableAllHooks === true) untrusted("disableAllHooks", "disableAllHooks")
  const settings: Settings = {
    ...rest,
    ...(hooks === undefined ? {} : { hooks }),
    ...(disableAllHooks === undefined || (!trusted && disableAllHooks) ? {} : { disableAllHooks }),
    ...(permissions === undefined ? {} : {
      permissions: {
        ...restrictive,
        ...(trusted ? {} : { allow: rules.filter((rule) => rule.behavior === "allow").map((rule) => rule.text) }),
        ...(keepMode === undefined ? {} : { defaultMode: keepMode }),
        ...(directories === undefined ? {} : { additionalDirectories: directories })
      }
    })
  }
  return {
    ...loaded,
    settings,
    rules,
    warnings,
    trusted,
    ...(setAside === undefined ? {} : { untrustedHooks: setAside })
  }
}

// -----------------------------------------------------------------------------
// loading files
// -----------------------------------------------------------------------------

/**
 * Loads one settings file. A missing file is `None`; a file that cannot be read, is not JSON, does not fit
 * the schema or holds a deny or ask rule that does not parse fails with a `SettingsError` naming the file and the
 * field. The result is not yet judged for trust (see {@link applyTrust}).
 *
 * @since 0.1.0
 * @category loading
 */
export const loadSettingsFile = (
  path: string,
  kind: SettingsFileKind = "flagSettings",
  options: DecodeOptions = {}
): Effect.Effect<Option.Option<LoadedSettings>, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const json = yield* readJson(fs, path)
    if (Option.isNone(json)) return Option.none()
    const loaded = yield* decodeSettingsJson(json.value, { kind, path }, options)
    return Option.some(loaded)
  }).pipe(Effect.withSpan("Settings.loadSettingsFile", { attributes: { path, kind } }))

/**
 * The options of {@link loadClaudeSettings}.
 *
 * @since 0.2.0
 * @category models
 */
export interface ClaudeSettingsOptions extends ToolNameOptions {
  readonly home: string
  readonly cwd: string
  /** The person trusts this project for this run (`--trust-project`), whatever `trustedProjects` says. */
  readonly trustProject?: boolean | undefined
  /**
   * The person's record of the rules "always allow" wrote into `settings.local.json` (see `Grants`). Default
   * `Grants.defaultGrantsPath(home)`.
   */
  readonly grantsPath?: string | undefined
}

/**
 * Whether a project is trusted: told so, or listed (with an ancestor) in `trustedProjects` of the user's settings
 * file. For anything else that comes from the repository (e.g. `.mcp.json`).
 *
 * @since 0.2.0
 * @category trust
 */
export const isProjectTrusted = (options: {
  readonly home: string
  readonly cwd: string
  readonly trustProject?: boolean | undefined
}): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  options.trustProject === true ? Effect.succeed(true) : Effect.map(
    loadSettingsFile(claudeSettingsPaths(options)[0]!.path, "userSettings", { home: options.home }),
    (user) => isTrusted(Option.getOrUndefined(Option.map(user, (loaded) => loaded.settings)), options.cwd, options.home)
  )

/**
 * Loads the user, project and local settings files that exist, lowest precedence first, with the repository's
 * files judged for trust.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadClaudeSettings = (
  options: ClaudeSettingsOptions
): Effect.Effect<ReadonlyArray<LoadedSettings>, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const decodeOptions = decodeOptionsOf(options)
    const loaded = yield* Effect.forEach(claudeSettingsPaths(options), ({ kind, path }) =>
      loadSettingsFile(path, kind, decodeOptions))
    const user = Option.getOrUndefined(loaded[0]!)
    const trusted = options.trustProject === true || isTrusted(user?.settings, options.cwd, options.home)
    const local = Option.getOrUndefined(loaded[2]!)
    // The record is read only when it can matter: an untrusted project with a local settings file.
    const granted = trusted || local === undefined
      ? new Set<string>()
      : yield* Grants.grantedRules(options.grantsPath ?? Grants.defaultGrantsPath(options.home), local.source.path)
        .pipe(
          Effect.mapError((error) =>
            new SettingsError({ file: error.file, reason: "Unreadable", detail: error.detail })
          )
        )
    return loaded.flatMap(Option.toArray).map((file) =>
      applyTrust(file, trusted, file.source.kind === "localSettings" ? granted : undefined)
    )
  })

/** The decode options within loader options: home, and which tools and servers exist. */
const decodeOptionsOf = (options: ToolNameOptions & { readonly home: string }): DecodeOptions => ({
  home: options.home,
  ...(options.knownTools === undefined ? {} : { knownTools: options.knownTools }),
  ...(options.mcpServers === undefined ? {} : { mcpServers: options.mcpServers })
})

/**
 * Loads settings files: Claude Code's standard locations (user, project, local) when `claudeSettings` is set, then
 * each of `files` (source `flagSettings`, trusted: the person named them; but a file whose real path lies inside the
 * project is the project's, `projectSettings`, judged for trust like `.claude/settings.json`). A file named in `files` must exist; a
 * standard location may be absent. The repository's files are judged for trust (`trustProject`, or `trustedProjects`
 * in the user's settings). A malformed file fails with a `SettingsError` naming the file and the field; everything
 * milder is in each file's `warnings`.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadSettings = (
  options: {
    readonly claudeSettings?: boolean | undefined
    readonly files?: ReadonlyArray<string> | undefined
    readonly cwd: string
    readonly home: string
    readonly trustProject?: boolean | undefined
    /** See {@link ClaudeSettingsOptions.grantsPath}. */
    readonly grantsPath?: string | undefined
  } & ToolNameOptions
): Effect.Effect<ReadonlyArray<LoadedSettings>, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const standard = options.claudeSettings === true ? yield* loadClaudeSettings(options) : []
    const decodeOptions = decodeOptionsOf(options)
    const fs = yield* FileSystem.FileSystem
    const real = (path: string) => fs.realPath(path).pipe(Effect.orElseSucceed(() => path))
    const project = yield* real(Path.resolve(options.cwd))
    const user = standard.find((file) => file.source.kind === "userSettings")
    const trusted = options.trustProject === true || isTrusted(user?.settings, options.cwd, options.home)
    const given = yield* Effect.forEach(options.files ?? [], (file) =>
      Effect.gen(function*() {
        const path = Path.resolve(options.cwd, file)
        // A file inside the project is the project's, whoever names it: the model could have written it, so its
        // permissive entries wait for trust like `.claude/settings.json`'s.
        const relative = Path.relative(project, yield* real(path))
        const inProject = !relative.startsWith("..") && !Path.isAbsolute(relative)
        const loaded = yield* loadSettingsFile(path, inProject ? "projectSettings" : "flagSettings", decodeOptions)
        if (Option.isNone(loaded)) {
          return yield* Effect.fail(
            new SettingsError({ file: path, reason: "Unreadable", detail: "the file does not exist" })
          )
        }
        return inProject ? applyTrust(loaded.value, trusted) : loaded.value
      }))
    return [...standard, ...given]
  })

// -----------------------------------------------------------------------------
// modes
// -----------------------------------------------------------------------------

/**
 * The mode that applies, and why when it is not what was asked for.
 *
 * @since 0.2.0
 * @category modes
 */
export interface ResolvedMode {
  readonly mode: PermissionMode
  readonly warnings: ReadonlyArray<string>
}

/**
 * The mode a set of (trust-judged) settings files asks for: the last `permissions.defaultMode`, or `requested` when
 * given. `manual` is `default`; `auto` is `default` (the classifier approver answers the questions) and, without
 * one configured, a warning; `bypassPermissions` is refused, with a warning, when any file sets
 * `disableBypassPermissionsMode`.
 *
 * @since 0.2.0
 * @category modes
 */
export const resolveMode = (
  settings: ReadonlyArray<LoadedSettings>,
  options: { readonly requested?: PermissionModeSetting | undefined; readonly classifier?: boolean | undefined } = {}
): ResolvedMode => {
  const warnings: Array<string> = []
  let wanted: PermissionModeSetting = "default"
  let from = "the default"
  for (const loaded of settings) {
    const mode = loaded.settings.permissions?.defaultMode
    if (mode === undefined) continue
    // Defence in depth: a repository file never sets bypassPermissions, even if it did not go through applyTrust.
    if (mode === "bypassPermissions" && isRepositorySource(loaded.source.kind)) continue
    wanted = mode
    from = loaded.source.path
  }
  if (options.requested !== undefined) {
    wanted = options.requested
    from = "the command line"
  }
  switch (wanted) {
    case "manual":
      return { mode: "default", warnings }
    case "auto":
      if (options.classifier !== true) {
        warnings.push(
          `mode auto (from ${from}) needs a classifier approver and none is configured; running in default mode`
        )
      }
      return { mode: "default", warnings }
    case "bypassPermissions": {
      const disabler = settings.find((loaded) =>
        loaded.settings.permissions?.disableBypassPermissionsMode === "disable"
      )
      if (disabler !== undefined) {
        warnings.push(
          `mode bypassPermissions (from ${from}) is disabled by ${disabler.source.path} (permissions.disableBypassPermissionsMode); running in default mode`
        )
        return { mode: "default", warnings }
      }
      return { mode: wanted, warnings }
    }
    default:
      return { mode: wanted, warnings }
  }
}

// -----------------------------------------------------------------------------
// editing
// -----------------------------------------------------------------------------

const sameRule = (text: unknown, printed: string): boolean => {
  if (typeof text !== "string") return false
  const parsed = parseRule(text)
  return Either.isRight(parsed) ? printRule(parsed.right) === printed : text === printed
}

/**
 * Rewrites a settings file's JSON with `edit` (which answers the new content, `undefined` for "nothing to change", or
 * why the file cannot be edited), keeping every other key. The file (and its directory) is created if missing. The
 * new content is written to a temporary file in the same directory and renamed over the old one, so a reader never
 * sees half a file. Read-modify-write is not locked: callers serialise concurrent edits of one file.
 */
const editSettingsFile = (
  path: string,
  edit: (json: Record<string, unknown>) => Either.Either<Record<string, unknown> | undefined, string>
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const invalid = (detail: string) => new SettingsError({ file: path, reason: "InvalidSettings", detail })
    const unwritable = (error: { readonly message: string }) =>
      new SettingsError({ file: path, reason: "Unwritable", detail: error.message })

    const json = Option.getOrElse(yield* readJson(fs, path), (): unknown => ({}))
    if (!isPlainObject(json)) {
      return yield* invalid(`expected object, got ${Array.isArray(json) ? "array" : typeof json}`)
    }
    const edited = edit(json)
    if (Either.isLeft(edited)) return yield* invalid(edited.left)
    const updated = edited.right
    if (updated === undefined) return false

    const directory = Path.dirname(path)
    const suffix = (yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)
    const temporary = Path.join(directory, `.${Path.basename(path)}.${suffix}.tmp`)

    yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(unwritable))
    yield* fs.writeFileString(temporary, `${JSON.stringify(updated, null, 2)}\n`, { flag: "wx" }).pipe(
      Effect.zipRight(fs.rename(temporary, path)),
      Effect.mapError(unwritable),
      Effect.tapError(() => fs.remove(temporary).pipe(Effect.ignore))
    )
    return true
  })

/**
 * Adds `rule` to `permissions[behavior]` of a settings file unless an equal rule is already there, keeping
 * every other key. The file (and its directory) is created if missing. The new content is written to a
 * temporary file in the same directory and renamed over the old one, so a reader never sees half a file.
 * Succeeds with `true` when the rule was added, `false` when it was already present.
 *
 * Read-modify-write is not locked: callers that may add rules concurrently to the same file serialise the
 * calls (one `Semaphore` per file).
 *
 * @since 0.1.0
 * @category editing
 */
export const addRuleToSettingsFile = (
  path: string,
  behavior: RuleBehavior,
  rule: PermissionRule
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  editSettingsFile(path, (json) => {
    const permissions = json.permissions ?? {}
    if (!isPlainObject(permissions)) return Either.left("permissions: expected object")
    const list = permissions[behavior] ?? []
    if (!Array.isArray(list)) return Either.left(`permissions.${behavior}: expected array`)
    const printed = printRule(rule)
    if (list.some((text) => sameRule(text, printed))) return Either.right(undefined)
    return Either.right({ ...json, permissions: { ...permissions, [behavior]: [...list, printed] } })
  }).pipe(Effect.withSpan("Settings.addRuleToSettingsFile", { attributes: { path, behavior } }))

/**
 * Records that the person trusts a project: adds its absolute path to `trustedProjects` of the user's settings file
 * (atomically, as {@link addRuleToSettingsFile} does). Succeeds with `false` when it was already there.
 *
 * @since 0.2.0
 * @category editing
 */
export const addTrustedProject = (
  userSettingsPath: string,
  project: string
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  editSettingsFile(userSettingsPath, (json) => {
    const list = json.trustedProjects ?? []
    if (!Array.isArray(list)) return Either.left("trustedProjects: expected array")
    const absolute = Path.resolve(project)
    if (list.includes(absolute)) return Either.right(undefined)
    return Either.right({ ...json, trustedProjects: [...list, absolute] })
  }).pipe(Effect.withSpan("Settings.addTrustedProject", { attributes: { path: userSettingsPath, project } }))
