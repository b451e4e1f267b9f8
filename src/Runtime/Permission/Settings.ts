/**
 * Claude Code settings files (`~/.claude/settings.json`, `.claude/settings.json`,
 * `.claude/settings.local.json`): their schema, a loader that turns a file into parsed rules tagged with
 * where they came from, and an atomic "add this rule" edit used by "allow always".
 *
 * Only the parts this runtime acts on are checked: `permissions` and the tool hooks. Keys Claude Code knows
 * and we do not (`env`, `model`, `permissions.disableBypassPermissionsMode`, `hooks.Stop`, ...) are ignored,
 * so a user's existing file loads unchanged; a key we do know with a value of the wrong shape is an error.
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
import { formatPath, issueLines } from "./internal/issues.js"
import { parseRule, PermissionRule, printRule, RuleBehavior } from "./Rule.js"

// -----------------------------------------------------------------------------
// schemas
// -----------------------------------------------------------------------------

/**
 * @since 0.1.0
 * @category schemas
 */
export const PermissionMode = Schema.Literal("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")

/**
 * @since 0.1.0
 * @category schemas
 */
export type PermissionMode = typeof PermissionMode.Type

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

/**
 * One command hook: run `command` through the shell, with `timeout` in seconds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CommandHook = Schema.Struct({
  type: Schema.Literal("command"),
  command: Schema.String,
  timeout: optional(Schema.Number.pipe(Schema.positive(), Schema.finite()))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type CommandHook = typeof CommandHook.Type

/**
 * Hooks that run for the tools whose name matches `matcher` (a tool name, `A|B`, or a regular expression;
 * absent, empty or `*` means every tool).
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookMatcher = Schema.Struct({
  matcher: optional(Schema.String),
  hooks: Schema.Array(CommandHook)
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type HookMatcher = typeof HookMatcher.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const PermissionsSettings = Schema.Struct({
  allow: optional(Schema.Array(Schema.String)),
  deny: optional(Schema.Array(Schema.String)),
  ask: optional(Schema.Array(Schema.String)),
  defaultMode: optional(PermissionMode),
  additionalDirectories: optional(Schema.Array(Schema.String))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export const HooksSettings = Schema.Struct({
  PreToolUse: optional(Schema.Array(HookMatcher)),
  PostToolUse: optional(Schema.Array(HookMatcher)),
  PostToolUseFailure: optional(Schema.Array(HookMatcher))
})

/**
 * The part of a Claude Code settings file this runtime reads. Decoding drops unknown keys.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Settings = Schema.Struct({
  permissions: optional(PermissionsSettings),
  hooks: optional(HooksSettings)
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
 * Where a rule came from, in Claude Code's vocabulary. `flagSettings` is a file given on the command line
 * (`--settings`), `cliArg` a rule given directly as an argument, `session` an "allow always" answer kept in
 * memory.
 *
 * @since 0.1.0
 * @category sources
 */
export const RuleSourceKind = Schema.Literal(
  "userSettings",
  "projectSettings",
  "localSettings",
  "flagSettings",
  "cliArg",
  "session"
)

/**
 * @since 0.1.0
 * @category sources
 */
export type RuleSourceKind = typeof RuleSourceKind.Type

/**
 * @since 0.1.0
 * @category sources
 */
export const RuleSource = Schema.Struct({
  kind: RuleSourceKind,
  path: optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category sources
 */
export type RuleSource = typeof RuleSource.Type

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
  source: RuleSource
}) {}

/**
 * A settings file that loaded: its decoded content and its rules, deny, ask and allow in file order.
 *
 * @since 0.1.0
 * @category models
 */
export interface LoadedSettings {
  readonly source: RuleSource & { readonly path: string }
  readonly settings: Settings
  readonly rules: ReadonlyArray<SourcedRule>
}

/**
 * A settings file kind: the subset of `RuleSourceKind` that lives in files.
 *
 * @since 0.1.0
 * @category sources
 */
export type SettingsFileKind = "userSettings" | "projectSettings" | "localSettings" | "flagSettings"

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
            new SettingsError({ file, reason: "InvalidJson", detail: error instanceof Error ? error.message : String(error) })
        })
    }))
  )

const decodeSettings = Schema.decodeUnknownEither(Settings, { errors: "all" })

/**
 * Decodes already-parsed JSON as settings from `source` and parses every rule. Exposed for settings that do
 * not come from a file on disk (e.g. `--settings '{"permissions": ...}'`).
 *
 * @since 0.1.0
 * @category loading
 */
export const decodeSettingsJson = (
  json: unknown,
  source: RuleSource & { readonly path: string }
): Either.Either<LoadedSettings, SettingsError> => {
  const invalid = (lines: ReadonlyArray<string>) =>
    new SettingsError({ file: source.path, reason: "InvalidSettings", detail: lines.join("; ") })

  const decoded = decodeSettings(json)
  if (Either.isLeft(decoded)) {
    return Either.left(invalid(issueLines(decoded.left.issue).map(({ message, path }) =>
      path.length === 0 ? message : `${formatPath(path)}: ${message}`
    )))
  }
  const settings = decoded.right
  const rules: Array<SourcedRule> = []
  const problems: Array<string> = []
  for (const behavior of BEHAVIORS) {
    settings.permissions?.[behavior]?.forEach((text, index) => {
      const parsed = parseRule(text)
      if (Either.isRight(parsed)) rules.push(new SourcedRule({ behavior, rule: parsed.right, text, source }))
      else problems.push(`${formatPath(["permissions", behavior, index])}: ${parsed.left.message}`)
    })
  }
  return problems.length > 0 ? Either.left(invalid(problems)) : Either.right({ source, settings, rules })
}

/**
 * Loads one settings file. A missing file is `None`; a file that cannot be read, is not JSON, does not fit
 * the schema or holds a rule that does not parse fails with a `SettingsError` naming the file and the field.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadSettingsFile = (
  path: string,
  kind: SettingsFileKind = "flagSettings"
): Effect.Effect<Option.Option<LoadedSettings>, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const json = yield* readJson(fs, path)
    if (Option.isNone(json)) return Option.none()
    const loaded = yield* decodeSettingsJson(json.value, { kind, path })
    return Option.some(loaded)
  }).pipe(Effect.withSpan("Settings.loadSettingsFile", { attributes: { path, kind } }))

/**
 * Loads the user, project and local settings files that exist, lowest precedence first.
 *
 * @since 0.1.0
 * @category loading
 */
export const loadClaudeSettings = (options: {
  readonly home: string
  readonly cwd: string
}): Effect.Effect<ReadonlyArray<LoadedSettings>, SettingsError, FileSystem.FileSystem> =>
  Effect.forEach(claudeSettingsPaths(options), ({ kind, path }) => loadSettingsFile(path, kind)).pipe(
    Effect.map((loaded) => loaded.flatMap(Option.toArray))
  )

// -----------------------------------------------------------------------------
// editing
// -----------------------------------------------------------------------------

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const sameRule = (text: unknown, printed: string): boolean => {
  if (typeof text !== "string") return false
  const parsed = parseRule(text)
  return Either.isRight(parsed) ? printRule(parsed.right) === printed : text === printed
}

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
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const invalid = (detail: string) => new SettingsError({ file: path, reason: "InvalidSettings", detail })
    const unwritable = (error: { readonly message: string }) =>
      new SettingsError({ file: path, reason: "Unwritable", detail: error.message })

    const json = Option.getOrElse(yield* readJson(fs, path), (): unknown => ({}))
    if (!isPlainObject(json)) return yield* invalid(`expected object, got ${Array.isArray(json) ? "array" : typeof json}`)
    const permissions = json.permissions ?? {}
    if (!isPlainObject(permissions)) return yield* invalid("permissions: expected object")
    const list = permissions[behavior] ?? []
    if (!Array.isArray(list)) return yield* invalid(`permissions.${behavior}: expected array`)

    const printed = printRule(rule)
    if (list.some((text) => sameRule(text, printed))) return false

    const updated = { ...json, permissions: { ...permissions, [behavior]: [...list, printed] } }
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
  }).pipe(Effect.withSpan("Settings.addRuleToSettingsFile", { attributes: { path, behavior } }))
