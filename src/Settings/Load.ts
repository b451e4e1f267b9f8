/**
 * Loading settings: JSON decoded against the schema with every problem on one line naming the file and the field
 * (unknown keys and near misses, rules that do not parse, rules for tools that do not exist), and the loaders that
 * read the standard files and `--settings` files and judge the repository's ones for trust.
 *
 * @since 0.3.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import { closest } from "../Shared/closest.js"
import { formatPath, issueLines } from "../Shared/issues.js"
import { sameLooking } from "../Shared/lookAlike.js"
import { parseRule } from "../Tool/Rule.js"
import type { RuleBehavior } from "../Tool/Rule.js"
import * as Grants from "./Grants.js"
import { compileHookMatcher } from "./HookMatcher.js"
import { expandHome, isPlainObject, readJson } from "./internal/files.js"
import { checkRuleToolName, readFileRule } from "./RuleTools.js"
import type { ToolNameOptions } from "./RuleTools.js"
import { claudeSettingsPaths, HOOK_EVENTS, Settings, SettingsError, SourcedRule } from "./SettingsSchema.js"
import type {
  HooksSettings,
  LoadedSettings,
  SettingsFile,
  SettingsFileKind,
  SettingsWarning
} from "./SettingsSchema.js"
import { applyTrust, isTrusted } from "./Trust.js"

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
// loading
// -----------------------------------------------------------------------------

const BEHAVIORS: ReadonlyArray<RuleBehavior> = ["deny", "ask", "allow"]

const decodeSettings = Schema.decodeUnknownEither(Settings, { errors: "all" })

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
