/**
 * {@link ToolHooks} from Effect functions and from the `hooks` of Claude Code settings files: command, HTTP, prompt
 * and agent hooks, speaking Claude Code's hook JSON, so existing hook configurations work unchanged.
 *
 * ## Events, matchers and conditions
 * Every event Claude Code defines loads; the runtime raises `PreToolUse` (before the permission decision),
 * `PostToolUse` (after a successful call) and `PostToolUseFailure` (after a failed one), and reports hooks for the
 * other events once as unused ({@link hookWarnings}). A hook runs for the tools its matcher names, with Claude Code's
 * semantics: absent, empty or `*` means every tool; a plain list like `Bash|Edit` means those exact names; anything
 * else is a regular expression tested **unanchored** against the tool name (`mcp__serena__*`, `Notebook.*`). A
 * matcher that is not a valid regular expression fails the layer with one line naming the file and the field.
 * A hook's `if` (a permission rule, `Bash(git commit *)`) limits it further to the calls that rule covers, read as a
 * deny rule would be: any part of a compound command, and any command that cannot be analysed, counts, so a guard
 * runs whenever the call might be what it guards against. A condition covers the same calls the permission policy
 * would let that rule govern: `mcp__fs` also covers the calls governed as that server's (`ReadMcpResourceTool` with
 * `server: "fs"`, see `Invocation.governedAs`). Content conditions and governed calls need the `ToolRegistry` in
 * the layer's context (to plan the call); without it, a hook with a content condition runs for every call its
 * matcher selects, and one without content only for the tools it names.
 *
 * ## Command hooks
 * `command` runs with `sh -c` in the working directory (with `CLAUDE_PROJECT_DIR` set to it); with `args`, the
 * program `command` (`~` expanded) runs with those arguments and no shell. Stdin is one JSON object:
 * `hook_event_name`, `tool_name`, `tool_input`, `tool_use_id`, `cwd`, `session_id`, and for the post events
 * `tool_response` (plus `error` for `PostToolUseFailure`).
 * - Exit 0: stdout that starts with `{` is hook JSON, decoded with a Schema: `continue`, `stopReason`,
 *   `suppressOutput`, `systemMessage`, the legacy `decision` (`approve` | `block`) and `reason`, and
 *   `hookSpecificOutput: { hookEventName, permissionDecision, permissionDecisionReason, updatedInput,
 *   additionalContext }`. Other stdout is plain text, shown to the user as a notice (as Claude Code does).
 * - Exit 2: blocks; stderr is the message (PreToolUse: the call is denied; post events: the message goes to the
 *   model, the call has already run).
 * - Exit 126, 127 or above 128 (not executable, not found, killed by a signal): the hook **crashed**.
 * - Any other non-zero exit: a non-blocking error, reported to the user as a notice.
 * - Time limit: the hook's `timeout` (seconds), else the default of 60 s. On timeout the hook's whole process group,
 *   and every process it started that left the group (`setsid`), get SIGTERM, then SIGKILL after a short grace, so
 *   nothing it started outlives it. What a hook leaves running after it exits by itself is left alone.
 * - Output limit: stdout and stderr are each capped (default 1 MiB). Past it the hook is killed and counts as
 *   crashed, with that reason: memory stays bounded whatever a hook prints.
 *
 * ## HTTP hooks
 * The same JSON is POSTed to `url` (`Content-Type: application/json`, plus `headers`, whose `$VAR`/`${VAR}` are
 * replaced by the environment variables named in `allowedEnvVars` and by nothing otherwise). A 2xx response body is
 * read exactly as a command hook's stdout on exit 0. A connection failure, a timeout, a body over the output limit
 * or any other status is a crash.
 *
 * ## Prompt and agent hooks
 * With a `languageModel` (a {@link PromptModel}, e.g. @effect/ai's `LanguageModel` service) in the options, the hook's
 * `prompt` (`$ARGUMENTS` replaced by the hook JSON, or the JSON appended when absent) goes to the model, which answers
 * `{"ok": true}` or `{"ok": false, "reason": "..."}`: `ok: false` blocks like exit 2 with the reason. An agent hook is
 * run the same way (one model turn; this runtime gives it no tools). An answer that is not that JSON is a crash.
 * Without a language model such a hook cannot run: a PreToolUse one denies every call it matches, with the reason,
 * and {@link hookWarnings} says so once at load.
 *
 * ## PreToolUse decisions
 * - Hooks run in parallel; their opinions combine deny > ask > allow (the first hook in configuration order names
 *   the reason). The policy then places them: a deny denies, an ask asks (after deny rules), an allow counts as an
 *   allow rule (never over a deny or ask rule, the tool's own deny or non-overridable ask, or a safety check).
 * - **Fail closed**: a PreToolUse hook that crashes, times out, prints too much, prints invalid JSON (or JSON that
 *   is not hook output for this event), or, for an Effect hook, fails or dies, denies the call with the reason.
 *   `continue: false` denies too (with `stopReason`) and stops the rest of the run, as Claude Code stops the turn.
 * - `updatedInput` is honoured together with the hook's own `allow` or `ask`, or alone as a pure rewrite (the
 *   policy then decides on the rewritten input as usual); it is ignored with a `deny`. When more than one hook
 *   rewrites the input, nobody can tell which rewrite is meant: the call is denied.
 * - `additionalContext` goes to the model with the result; `systemMessage` and plain stdout become notices.
 *
 * Post hooks can never block: their failures become notices; their `additionalContext`, a `decision: "block"`
 * reason or an exit-2 stderr go to the model.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { coversCall } from "../Permission/RulePolicy.js"
import { compileHookMatcher } from "../Settings/HookMatcher.js"
import { HOOK_EVENTS } from "../Settings/Settings.js"
import type { HooksSettings, LoadedSettings } from "../Settings/Settings.js"
import { formatPath } from "../Shared/issues.js"
import { parseRule, ruleTargetsTool } from "../Tool/Rule.js"
import type { PermissionRule } from "../Tool/Rule.js"
import { combinePre } from "./internal/answers.js"
import { externalHook, functionHook, hookName, untrustedHook } from "./internal/compiled.js"
import type { CompiledHook } from "./internal/compiled.js"
import { urlAllowed } from "./internal/remote.js"
import type { RunSettings } from "./internal/run.js"
import { noPreToolUse, ToolHooks } from "./ToolHooks.js"
import type { PostToolUseEvent, PreToolUseEvent } from "./ToolHooks.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export { HookOutput } from "./internal/answers.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * The hook events.
 *
 * @since 0.1.0
 * @category models
 */
export type HookEvent = "PreToolUse" | "PostToolUse" | "PostToolUseFailure"

/**
 * What a PreToolUse Effect hook answers (every field optional, as in the JSON of a command hook).
 *
 * @since 0.1.0
 * @category models
 */
export interface PreToolUseAnswer {
  readonly permissionDecision?: "allow" | "deny" | "ask" | undefined
  readonly reason?: string | undefined
  /** A rewritten input: with the hook's allow or ask, or alone. */
  readonly updatedInput?: unknown
  /** For the model. */
  readonly additionalContext?: string | undefined
  /** For the user. */
  readonly systemMessage?: string | undefined
}

/**
 * What a post-call Effect hook answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseAnswer {
  readonly additionalContext?: string | undefined
  readonly systemMessage?: string | undefined
}

/**
 * An Effect hook. Failures, defects and timeouts of a PreToolUse hook deny the call.
 *
 * @since 0.1.0
 * @category models
 */
export type FunctionHook =
  | {
    readonly event: "PreToolUse"
    readonly name: string
    readonly matcher?: string | undefined
    readonly timeout?: Duration.DurationInput | undefined
    readonly run: (event: PreToolUseEvent) => Effect.Effect<PreToolUseAnswer, unknown>
  }
  | {
    readonly event: "PostToolUse" | "PostToolUseFailure"
    readonly name: string
    readonly matcher?: string | undefined
    readonly timeout?: Duration.DurationInput | undefined
    readonly run: (event: PostToolUseEvent) => Effect.Effect<PostToolUseAnswer, unknown>
  }

/**
 * The `hooks` of one settings file, with the file's path (named in configuration errors and warnings).
 *
 * @since 0.2.0
 * @category models
 */
export interface SettingsHooks {
  readonly path: string
  readonly hooks: HooksSettings | undefined
  /**
   * The file is a repository's the person has not trusted: its hooks are not run, and a call any of them matches
   * (by matcher and `if`, whatever its event) asks, naming the hook.
   */
  readonly untrusted?: boolean | undefined
}

/**
 * What prompt and agent hooks need of a language model. @effect/ai's `LanguageModel` service is one (pass the
 * value of `yield* LanguageModel.LanguageModel`): this module needs @effect/ai neither at run time nor in its types.
 *
 * @since 0.3.0
 * @category models
 */
export interface PromptModel {
  readonly generateText: (options: { readonly prompt: string }) => Effect.Effect<{ readonly text: string }, unknown>
}

/**
 * The options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface HooksOptions {
  /** The `hooks` objects of the settings files in use, in precedence order (their hooks all run). */
  readonly settingsHooks?: ReadonlyArray<HooksSettings | undefined> | undefined
  /**
   * The same with each file's path, named in errors and warnings ({@link optionsFromSettings} builds it from loaded
   * settings).
   */
  readonly settingsFiles?: ReadonlyArray<SettingsHooks> | undefined
  readonly functionHooks?: ReadonlyArray<FunctionHook> | undefined
  /** Working directory of command hooks, and `cwd` in their input. */
  readonly cwd: string
  /** `session_id` in the input of command hooks. Default: a random UUID. */
  readonly sessionId?: string | undefined
  /** Time limit of a hook that sets none. Default 60 seconds. */
  readonly defaultTimeout?: Duration.DurationInput | undefined
  /** How long a timed-out command hook gets between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
  /** The most a hook may print on stdout, and on stderr (an HTTP hook: its body). Default 1 MiB. */
  readonly maxOutputBytes?: number | undefined
  /** Runs prompt and agent hooks. Without it they cannot run (a PreToolUse one denies what it matches). */
  readonly languageModel?: PromptModel | undefined
  /** Home, for `~` in a command hook's program. Default the user's home directory. */
  readonly home?: string | undefined
  /** Where HTTP hooks' `allowedEnvVars` are read. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /**
   * URL patterns (`*` matches any run of characters) HTTP hooks may POST to (settings `allowedHttpHookUrls`, from
   * every file). Given, an HTTP hook whose URL matches none cannot run: a PreToolUse one denies what it matches.
   */
  readonly allowedHttpHookUrls?: ReadonlyArray<string> | undefined
  /** The only environment variables any HTTP hook may put in headers (settings `httpHookAllowedEnvVars`). */
  readonly httpHookAllowedEnvVars?: ReadonlyArray<string> | undefined
}

/** The events this runtime raises. */
const RAISED: ReadonlyArray<string> = ["PreToolUse", "PostToolUse", "PostToolUseFailure"]

const DEFAULT_MAX_OUTPUT = 1024 * 1024

/**
 * A hook matcher that is not a valid regular expression, or an `if` that is not a rule: one line naming the file and
 * the field when they are known.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookConfigError extends Data.TaggedError("HookConfigError")<{
  readonly matcher: string
  readonly detail: string
  readonly file?: string | undefined
  readonly field?: string | undefined
}> {
  override get message(): string {
    const where = `${this.file === undefined ? "" : `${this.file}: `}${
      this.field === undefined ? "" : `${this.field}: `
    }`
    return `${where}Invalid hook ${this.field?.endsWith(".if") === true ? "condition" : "matcher"} ${
      JSON.stringify(this.matcher)
    }: ${this.detail}`
  }
}

/**
 * Compiles a matcher with Claude Code's semantics: absent, empty or `*` = every tool; `A|B` = exact names; anything
 * else = a regular expression tested unanchored against the tool name.
 *
 * @since 0.1.0
 * @category matchers
 */
export const compileMatcher = (
  matcher: string | undefined
): Either.Either<(toolName: string) => boolean, HookConfigError> =>
  Either.mapLeft(compileHookMatcher(matcher), (detail) => new HookConfigError({ matcher: matcher ?? "", detail }))
// -----------------------------------------------------------------------------
// warnings
// -----------------------------------------------------------------------------

const settingsFilesOf = (
  options: Pick<HooksOptions, "settingsHooks" | "settingsFiles">
): ReadonlyArray<SettingsHooks> => [
  ...(options.settingsHooks ?? []).map((hooks): SettingsHooks => ({ path: "settings", hooks })),
  ...(options.settingsFiles ?? [])
]

/**
 * The hooks options that come from loaded (trust-judged) settings files: each file's hooks with its path (none at
 * all when a file sets `disableAllHooks`), and the HTTP limits (`allowedHttpHookUrls`, `httpHookAllowedEnvVars`:
 * every file's lists together, set when any file sets one).
 *
 * @since 0.2.0
 * @category constructors
 */
export const optionsFromSettings = (
  settings: ReadonlyArray<LoadedSettings>
): Pick<HooksOptions, "settingsFiles" | "allowedHttpHookUrls" | "httpHookAllowedEnvVars"> => {
  const union = (pick: (loaded: LoadedSettings) => ReadonlyArray<string> | undefined) => {
    const lists = settings.map(pick).filter((list) => list !== undefined)
    return lists.length === 0 ? undefined : [...new Set(lists.flat())]
  }
  const urls = union((loaded) => loaded.settings.allowedHttpHookUrls)
  const vars = union((loaded) => loaded.settings.httpHookAllowedEnvVars)
  const disabled = settings.some((loaded) => loaded.settings.disableAllHooks === true)
  // An untrusted file's hooks stay listed, marked, even when another file sets disableAllHooks (an untrusted file's
  // disableAllHooks is never applied): a guard the repository meant is never silently dropped.
  const untrusted = settings.flatMap((loaded): ReadonlyArray<SettingsHooks> =>
    loaded.untrustedHooks === undefined
      ? []
      : [{ path: loaded.source.path, hooks: loaded.untrustedHooks, untrusted: true }]
  )
  return {
    settingsFiles: [
      ...(disabled ? [] : settings.map((loaded) => ({ path: loaded.source.path, hooks: loaded.settings.hooks }))),
      ...untrusted
    ],
    ...(urls === undefined ? {} : { allowedHttpHookUrls: urls }),
    ...(vars === undefined ? {} : { httpHookAllowedEnvVars: vars })
  }
}

/**
 * What to tell the person once, at load, about the hooks of settings files: hooks for events this runtime never
 * raises, and prompt or agent hooks that cannot run without a language model. One line each, naming the file and
 * the field.
 *
 * @since 0.2.0
 * @category warnings
 */
export const hookWarnings = (
  options: Pick<HooksOptions, "settingsHooks" | "settingsFiles" | "languageModel" | "allowedHttpHookUrls">
): ReadonlyArray<string> => {
  const warnings: Array<string> = []
  for (const file of settingsFilesOf(options)) {
    if (file.untrusted === true) continue
    for (const event of HOOK_EVENTS) {
      const groups = file.hooks?.[event] ?? []
      const count = groups.reduce((n, group) => n + group.hooks.length, 0)
      if (count === 0) continue
      if (!RAISED.includes(event)) {
        warnings.push(
          `${file.path}: hooks.${event}: ${count} hook${
            count === 1 ? "" : "s"
          } for ${event}, an event this runtime does not raise; unused`
        )
        continue
      }
      const effect = event === "PreToolUse"
        ? "it denies every call it matches"
        : "it is reported as failed after every call it matches"
      groups.forEach((group, i) =>
        group.hooks.forEach((hook, j) => {
          const field = formatPath(["hooks", event, i, "hooks", j])
          if ((hook.type === "prompt" || hook.type === "agent") && options.languageModel === undefined) {
            warnings.push(
              `${file.path}: ${field}: ${hook.type} hook needs a language model and none is configured; ${effect}`
            )
          }
          if (hook.type === "http" && !urlAllowed(hook.url, options.allowedHttpHookUrls)) {
            warnings.push(
              `${file.path}: ${field}: http hook URL ${hook.url} matches none of allowedHttpHookUrls; ${effect}`
            )
          }
        })
      )
    }
  }
  return warnings
}
// -----------------------------------------------------------------------------
// constructors
// -----------------------------------------------------------------------------

/**
 * Builds the hooks service. With a `ToolRegistry` in the context, hooks' `if` conditions with content are matched by
 * the tool's own rule matching.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: HooksOptions): Effect.Effect<ToolHooks["Type"], HookConfigError> =>
  Effect.gen(function*() {
    const home = options.home ?? os.homedir()
    const settings: RunSettings = {
      cwd: options.cwd,
      home,
      sessionId: options.sessionId ?? randomUUID(),
      defaultTimeout: Duration.decode(options.defaultTimeout ?? Duration.seconds(60)),
      grace: Duration.decode(options.killGrace ?? Duration.seconds(2)),
      maxOutput: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
      languageModel: options.languageModel,
      env: options.env ?? process.env,
      allowedHttpHookUrls: options.allowedHttpHookUrls,
      httpHookAllowedEnvVars: options.httpHookAllowedEnvVars
    }
    const registry = Option.getOrUndefined(yield* Effect.serviceOption(ToolRegistry))
    const hooks: Array<CompiledHook> = []
    for (const file of settingsFilesOf(options)) {
      for (const event of ["PreToolUse", "PostToolUse", "PostToolUseFailure"] as const) {
        const groups = file.hooks?.[event] ?? []
        for (let i = 0; i < groups.length; i++) {
          const group = groups[i]!
          const field = (...rest: ReadonlyArray<PropertyKey>) => formatPath(["hooks", event, i, ...rest])
          const matches = yield* Either.mapLeft(
            compileMatcher(group.matcher),
            (error) =>
              new HookConfigError({
                matcher: error.matcher,
                detail: error.detail,
                file: file.path,
                field: field("matcher")
              })
          )
          for (let j = 0; j < group.hooks.length; j++) {
            const hook = group.hooks[j]!
            const condition = hook.if === undefined ?
              undefined :
              yield* Either.mapLeft(parseRule(hook.if), (error) =>
                new HookConfigError({
                  matcher: hook.if ?? "",
                  detail: error.reason,
                  file: file.path,
                  field: field("hooks", j, "if")
                }))
            hooks.push(
              file.untrusted === true
                ? untrustedHook(
                  matches,
                  condition,
                  hookName(hook),
                  file.path,
                  formatPath(["hooks", event, i, "hooks", j])
                )
                : externalHook(event, matches, condition, hook, settings)
            )
          }
        }
      }
    }
    for (const hook of options.functionHooks ?? []) {
      hooks.push(functionHook(hook, yield* compileMatcher(hook.matcher), settings))
    }

    // An `if` condition, read as a deny rule would be (the policy's own reading: the subjects a call is governed as
    // included). Without the registry, only its tool name can be checked.
    const conditionHolds = (condition: PermissionRule | undefined, toolName: string, input: unknown): boolean => {
      if (condition === undefined) return true
      const tool = registry === undefined ? undefined : Option.getOrUndefined(registry.lookup(toolName))
      if (tool === undefined) return condition.content !== undefined || ruleTargetsTool(condition, toolName)
      try {
        return coversCall(condition, { definition: tool.definition, invocation: tool.service.plan(input) }, {
          cwd: options.cwd,
          home,
          contains: () => false
        })
      } catch {
        return true
      }
    }
    const select = (event: HookEvent, toolName: string, input: unknown) =>
      hooks.filter((hook) =>
        hook.event === event && hook.matches(toolName) && conditionHolds(hook.condition, toolName, input)
      )

    return {
      preToolUse: (event) => {
        const selected = select("PreToolUse", event.toolName, event.input)
        if (selected.length === 0) return Effect.succeed(noPreToolUse)
        return Effect.map(Effect.forEach(selected, (hook) => hook.pre(event), { concurrency: "unbounded" }), combinePre)
          .pipe(
            Effect.withSpan("Hooks.preToolUse", { attributes: { tool: event.toolName, hooks: selected.length } })
          )
      },
      postToolUse: (event) => {
        const selected = select(event.failed ? "PostToolUseFailure" : "PostToolUse", event.toolName, event.input)
        if (selected.length === 0) return Effect.succeed({ additionalContext: [], notices: [] })
        return Effect.map(
          Effect.forEach(selected, (hook) => hook.post(event), { concurrency: "unbounded" }),
          (results) => ({
            additionalContext: results.flatMap((result) => result.additionalContext),
            notices: results.flatMap((result) => result.notices)
          })
        ).pipe(Effect.withSpan("Hooks.postToolUse", { attributes: { tool: event.toolName, hooks: selected.length } }))
      },
      warnings: hookWarnings(options)
    }
  })

/**
 * Hooks from settings files and Effect functions.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: HooksOptions): Layer.Layer<ToolHooks, HookConfigError> =>
  Layer.effect(ToolHooks, make(options))
