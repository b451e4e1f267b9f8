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
 * runs whenever the call might be what it guards against. Content conditions need the `ToolRegistry` in the
 * layer's context (to ask the tool how its rules match); without it, a hook with a content condition runs for
 * every call its matcher selects.
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
 * With a `languageModel` (a {@link PromptModel}, e.g. @effect/ai's `LanguageModel` service) in the options, the hook's `prompt` (`$ARGUMENTS`
 * replaced by the hook JSON, or the JSON appended when absent) goes to the model, which answers
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
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import * as nodePath from "node:path"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { HookOpinion } from "../Permission/PermissionPolicy.js"
import { coversCall } from "../Permission/RulePolicy.js"
import * as Subprocess from "../Process/Subprocess.js"
import { compileHookMatcher } from "../Settings/HookMatcher.js"
import { HOOK_EVENTS } from "../Settings/Settings.js"
import type { HookDefinition, HooksSettings, LoadedSettings } from "../Settings/Settings.js"
import { formatPath } from "../Shared/issues.js"
import { parseRule } from "../Tool/Rule.js"
import type { PermissionRule } from "../Tool/Rule.js"
import { noPreToolUse, ToolHooks } from "./ToolHooks.js"
import type { PostToolUseEvent, PostToolUseResult, PreToolUseEvent, PreToolUseResult } from "./ToolHooks.js"

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
  /** The same with each file's path, named in errors and warnings ({@link optionsFromSettings} builds it from loaded settings). */
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

/** Whether a URL matches one of Claude Code's `allowedHttpHookUrls` patterns. */
const urlAllowed = (url: string, patterns: ReadonlyArray<string> | undefined): boolean =>
  patterns === undefined ||
  patterns.some((pattern) =>
    new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(
      url
    )
  )

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

// -----------------------------------------------------------------------------
// hook output
// -----------------------------------------------------------------------------

/**
 * The JSON a command hook may print on stdout (exit 0). Unknown keys are ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookOutput = Schema.Struct({
  continue: Schema.optional(Schema.Boolean),
  stopReason: Schema.optional(Schema.String),
  suppressOutput: Schema.optional(Schema.Boolean),
  systemMessage: Schema.optional(Schema.String),
  decision: Schema.optional(Schema.Literal("approve", "block")),
  reason: Schema.optional(Schema.String),
  hookSpecificOutput: Schema.optional(Schema.Struct({
    hookEventName: Schema.Literal("PreToolUse", "PostToolUse", "PostToolUseFailure"),
    permissionDecision: Schema.optional(Schema.Literal("allow", "deny", "ask")),
    permissionDecisionReason: Schema.optional(Schema.String),
    updatedInput: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    additionalContext: Schema.optional(Schema.String)
  }))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type HookOutput = typeof HookOutput.Type

const decodeHookOutput = Schema.decodeUnknownEither(HookOutput, { errors: "all" })

/** One hook's answer, before combining. */
interface PreAnswer {
  readonly hook: string
  readonly opinion: { readonly behavior: HookOpinion["behavior"]; readonly message: string } | undefined
  readonly updatedInput: unknown
  readonly additionalContext: ReadonlyArray<string>
  readonly notices: ReadonlyArray<string>
  /** `continue: false`: stop the rest of the run too. */
  readonly stopRun: boolean
}

const preAnswer = (hook: string, fields: Partial<Omit<PreAnswer, "hook">> = {}): PreAnswer => ({
  hook,
  opinion: fields.opinion,
  updatedInput: fields.updatedInput,
  additionalContext: fields.additionalContext ?? [],
  notices: fields.notices ?? [],
  stopRun: fields.stopRun ?? false
})

const denied = (hook: string, message: string): PreAnswer => preAnswer(hook, { opinion: { behavior: "deny", message } })

const fromPreAnswer = (hook: string, answer: PreToolUseAnswer, notices: ReadonlyArray<string> = []): PreAnswer => {
  const behavior = answer.permissionDecision
  return preAnswer(hook, {
    opinion: behavior === undefined
      ? undefined
      : { behavior, message: answer.reason ?? `hook ${hook} answered ${behavior}` },
    updatedInput: behavior === "deny" ? undefined : answer.updatedInput,
    additionalContext: answer.additionalContext === undefined ? [] : [answer.additionalContext],
    notices: [...notices, ...(answer.systemMessage === undefined ? [] : [answer.systemMessage])]
  })
}

/** Reads exit-0 stdout: JSON when it looks like JSON, else plain text. */
const parseStdout = (stdout: string): Either.Either<Option.Option<HookOutput>, string> => {
  const text = stdout.trim()
  if (text === "" || !text.startsWith("{")) return Either.right(Option.none())
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`printed invalid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  return Either.match(decodeHookOutput(json), {
    onLeft: (error) =>
      Either.left(`printed JSON that is not hook output: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    onRight: (output) => Either.right(Option.some(output))
  })
}

const plainText = (hook: string, stdout: string): ReadonlyArray<string> => {
  const text = stdout.trim()
  return text === "" || text.startsWith("{") ? [] : [`hook ${hook}: ${text}`]
}

// -----------------------------------------------------------------------------
// running hooks
// -----------------------------------------------------------------------------

/** What running an external hook (command, HTTP, model) came to, in a command's terms. */
type HookRun =
  | { readonly _tag: "Exited"; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly _tag: "TimedOut"; readonly after: Duration.Duration }
  | { readonly _tag: "Crashed"; readonly message: string }

const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes % 1024 === 0
    ? `${bytes / 1024} KiB`
    : `${bytes} bytes`

const expandHome = (path: string, home: string): string =>
  path === "~" ? home : path.startsWith("~/") ? nodePath.join(home, path.slice(2)) : path

interface RunSettings {
  readonly cwd: string
  readonly home: string
  readonly sessionId: string
  readonly defaultTimeout: Duration.Duration
  readonly grace: Duration.Duration
  readonly maxOutput: number
  readonly languageModel: PromptModel | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly allowedHttpHookUrls: ReadonlyArray<string> | undefined
  readonly httpHookAllowedEnvVars: ReadonlyArray<string> | undefined
}

/**
 * Runs a command hook with `stdin`, within `timeout`: `sh -c command`, or `command ...args` with no shell, through
 * {@link Subprocess.run}. When the run does not complete (timeout, interruption, too much output), the hook's
 * process group and every process it started (`setsid` ones too) get SIGTERM, then SIGKILL after `grace`:
 * background children die with the hook. After a normal exit, what it left running is left alone.
 */
const runCommand = (
  hook: { readonly command: string; readonly args?: ReadonlyArray<string> | undefined },
  stdin: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> =>
  Effect.scoped(
    Subprocess.run({
      argv: hook.args === undefined
        ? ["sh", "-c", hook.command]
        : [expandHome(hook.command, settings.home), ...hook.args],
      cwd: settings.cwd,
      env: { ...process.env, CLAUDE_PROJECT_DIR: settings.cwd },
      stdin,
      timeout,
      killGrace: settings.grace,
      stdout: { maxBytes: settings.maxOutput },
      stderr: { maxBytes: settings.maxOutput },
      afterExit: "keep"
    })
  ).pipe(
    Effect.map((result): HookRun => {
      switch (result.exit._tag) {
        case "Exited":
          return { _tag: "Exited", code: result.exit.code, stdout: utf8(result.stdout), stderr: utf8(result.stderr) }
        case "TimedOut":
          return { _tag: "TimedOut", after: timeout }
        case "OutputLimit":
          return {
            _tag: "Crashed",
            message: `printed more than ${formatBytes(result.exit.limitBytes)} on ${result.exit.stream}`
          }
        case "Signaled":
          return { _tag: "Crashed", message: `killed by ${result.exit.signal}` }
        case "Stopped":
          // No sink here answers "enough": unreachable, said plainly all the same.
          return { _tag: "Crashed", message: "stopped" }
      }
    }),
    Effect.catchAll((error) => Effect.succeed<HookRun>({ _tag: "Crashed", message: error.message }))
  )

const utf8 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")

/** `$VAR` and `${VAR}` replaced by the allowed environment variables, and by nothing when not allowed. */
const interpolate = (
  value: string,
  allowed: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): string =>
  value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_, braced: string | undefined, bare: string | undefined) => {
      const name = (braced ?? bare)!
      return allowed.includes(name) ? env[name] ?? "" : ""
    }
  )

/** POSTs the hook JSON; a 2xx body is read as a command's stdout on exit 0; anything else is a crash. */
const runHttp = (
  hook: {
    readonly url: string
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly allowedEnvVars?: ReadonlyArray<string> | undefined
  },
  body: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> => {
  if (!urlAllowed(hook.url, settings.allowedHttpHookUrls)) {
    return Effect.succeed({ _tag: "Crashed", message: "cannot run: its URL matches none of allowedHttpHookUrls" })
  }
  const globalVars = settings.httpHookAllowedEnvVars
  const allowed = (hook.allowedEnvVars ?? []).filter((name) => globalVars === undefined || globalVars.includes(name))
  const headers: Record<string, string> = { "content-type": "application/json" }
  for (const [name, value] of Object.entries(hook.headers ?? {})) {
    headers[name] = interpolate(value, allowed, settings.env)
  }
  return Effect.tryPromise({
    try: async (signal): Promise<HookRun> => {
      const response = await fetch(hook.url, { method: "POST", headers, body, signal, redirect: "error" })
      const chunks: Array<Uint8Array> = []
      let size = 0
      if (response.body !== null) {
        const reader = response.body.getReader()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          size += value.length
          if (size > settings.maxOutput) {
            await reader.cancel()
            return { _tag: "Crashed", message: `answered with more than ${formatBytes(settings.maxOutput)}` }
          }
          chunks.push(value)
        }
      }
      if (response.status < 200 || response.status > 299) {
        return { _tag: "Crashed", message: `answered HTTP ${response.status}` }
      }
      return { _tag: "Exited", code: 0, stdout: Buffer.concat(chunks).toString("utf8"), stderr: "" }
    },
    catch: (error) => error
  }).pipe(
    Effect.timeoutOption(timeout),
    Effect.map(Option.getOrElse((): HookRun => ({ _tag: "TimedOut", after: timeout }))),
    Effect.catchAll((error) => {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
      return Effect.succeed<HookRun>({
        _tag: "Crashed",
        message: `could not be reached (${error instanceof Error ? error.message : String(error)}${cause})`
      })
    })
  )
}

const ModelAnswer = Schema.parseJson(Schema.Struct({ ok: Schema.Boolean, reason: Schema.optional(Schema.String) }))
const decodeModelAnswer = Schema.decodeUnknownEither(ModelAnswer)

/** The model's `{ok, reason}` as a command's exit: ok is exit 0, not ok is exit 2 with the reason on stderr. */
const runPrompt = (
  prompt: string,
  input: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> => {
  const model = settings.languageModel
  if (model === undefined) {
    return Effect.succeed({
      _tag: "Crashed",
      message: "cannot run: no language model is configured for prompt and agent hooks"
    })
  }
  const text = prompt.includes("$ARGUMENTS") ? prompt.split("$ARGUMENTS").join(input) : `${prompt}\n\n${input}`
  const instructed =
    `${text}\n\nAnswer with JSON only: {"ok": true} to let this proceed, or {"ok": false, "reason": "why"} to block it.`
  return model.generateText({ prompt: instructed }).pipe(
    Effect.map((response): HookRun => {
      const raw = response.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, "")
      const answer = decodeModelAnswer(raw)
      if (Either.isLeft(answer)) {
        return {
          _tag: "Crashed",
          message: `the model answered ${JSON.stringify(raw.slice(0, 200))}, not {"ok": boolean, "reason"?: string}`
        }
      }
      return answer.right.ok
        ? { _tag: "Exited", code: 0, stdout: "", stderr: "" }
        : { _tag: "Exited", code: 2, stdout: "", stderr: answer.right.reason ?? "" }
    }),
    Effect.timeoutOption(timeout),
    Effect.map(Option.getOrElse((): HookRun => ({ _tag: "TimedOut", after: timeout }))),
    Effect.catchAllCause((cause) =>
      Effect.succeed<HookRun>({
        _tag: "Crashed",
        message: `the model call failed: ${Cause.pretty(cause).split("\n")[0]}`
      })
    )
  )
}

const crashedExit = (code: number): boolean => code === 126 || code === 127 || code > 128

const describeFailure = (result: Exclude<HookRun, { readonly _tag: "Exited"; readonly code: 0 }>): string => {
  switch (result._tag) {
    case "TimedOut":
      return `timed out after ${Duration.format(result.after)}`
    case "Crashed":
      return `crashed: ${result.message}`
    case "Exited":
      return `${crashedExit(result.code) ? "crashed" : "failed"} with exit code ${result.code}${
        result.stderr.trim() === "" ? "" : `: ${result.stderr.trim()}`
      }`
  }
}

// -----------------------------------------------------------------------------
// compiled hooks
// -----------------------------------------------------------------------------

interface CompiledHook {
  readonly event: HookEvent
  readonly name: string
  readonly matches: (toolName: string) => boolean
  readonly condition: PermissionRule | undefined
  readonly pre: (event: PreToolUseEvent) => Effect.Effect<PreAnswer>
  readonly post: (event: PostToolUseEvent) => Effect.Effect<PostToolUseResult>
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

const noPost = (
  hook: string,
  notices: ReadonlyArray<string>,
  context: ReadonlyArray<string> = []
): PostToolUseResult => ({
  additionalContext: context,
  notices: notices.map((notice) => `hook ${hook}: ${notice}`)
})

const hookName = (hook: HookDefinition): string => {
  switch (hook.type) {
    case "command":
      return hook.args === undefined ? hook.command : [hook.command, ...hook.args].join(" ")
    case "http":
      return hook.url
    case "prompt":
    case "agent": {
      const first = hook.prompt.split("\n")[0]!
      return `${hook.type} ${JSON.stringify(first.length > 60 ? `${first.slice(0, 57)}...` : first)}`
    }
  }
}

/**
 * A hook of an untrusted project file: never run; before a call it matches (whatever its own event), it asks, with a
 * reason naming the hook and the file.
 */
const untrustedHook = (
  matches: (toolName: string) => boolean,
  condition: PermissionRule | undefined,
  name: string,
  file: string,
  field: string
): CompiledHook => ({
  event: "PreToolUse",
  name,
  matches,
  condition,
  pre: () =>
    Effect.succeed(preAnswer(name, {
      opinion: {
        behavior: "ask",
        message:
          `The hook ${name} (${file}: ${field}) matches this call and was not run: the project is not trusted. Approve only if the call may run without it (or trust the project with --trust-project).`
      }
    })),
  post: () => Effect.succeed(noPost(name, []))
})

/** A hook that runs outside the program (a command, an HTTP endpoint, a model), read the way command hooks are. */
const externalHook = (
  event: HookEvent,
  matches: (toolName: string) => boolean,
  condition: PermissionRule | undefined,
  hook: HookDefinition,
  settings: RunSettings
): CompiledHook => {
  const name = hookName(hook)
  const timeout = hook.timeout === undefined ? settings.defaultTimeout : Duration.seconds(hook.timeout)
  const run = (input: Record<string, unknown>): Effect.Effect<HookRun> => {
    const json = JSON.stringify({ session_id: settings.sessionId, cwd: settings.cwd, hook_event_name: event, ...input })
    switch (hook.type) {
      case "command":
        return runCommand(hook, json, timeout, settings)
      case "http":
        return runHttp(hook, json, timeout, settings)
      case "prompt":
      case "agent":
        return runPrompt(hook.prompt, json, timeout, settings)
    }
  }
  return {
    event,
    name,
    matches,
    condition,
    pre: (call) =>
      Effect.map(
        run({ tool_name: call.toolName, tool_input: call.input, tool_use_id: call.toolUseId }),
        (result): PreAnswer => {
          if (result._tag !== "Exited" || crashedExit(result.code)) {
            return denied(name, `PreToolUse hook ${name} ${describeFailure(result)}; the call is denied.`)
          }
          if (result.code === 2) {
            return denied(name, result.stderr.trim() === "" ? `Blocked by hook ${name}.` : result.stderr.trim())
          }
          if (result.code !== 0) {
            return preAnswer(name, { notices: [`hook ${name} ${describeFailure(result)}`] })
          }
          const parsed = parseStdout(result.stdout)
          if (Either.isLeft(parsed)) return denied(name, `PreToolUse hook ${name} ${parsed.left}; the call is denied.`)
          if (Option.isNone(parsed.right)) return preAnswer(name, { notices: plainText(name, result.stdout) })
          const output = parsed.right.value
          const notices = output.systemMessage === undefined ? [] : [output.systemMessage]
          // Claude Code stops the whole turn on `continue: false`: the call is denied and the rest of the run stops.
          if (output.continue === false) {
            return { ...denied(name, output.stopReason ?? `Hook ${name} stopped processing.`), notices, stopRun: true }
          }
          const specific = output.hookSpecificOutput
          if (specific !== undefined && specific.hookEventName !== "PreToolUse") {
            return denied(
              name,
              `PreToolUse hook ${name} printed output for ${specific.hookEventName}; the call is denied.`
            )
          }
          const legacy = output.decision === "approve" ? "allow" : output.decision === "block" ? "deny" : undefined
          const decision = specific?.permissionDecision ?? legacy
          const reason = specific?.permissionDecisionReason ?? output.reason
          return fromPreAnswer(name, {
            ...(decision === undefined ? {} : { permissionDecision: decision }),
            ...(reason === undefined ? {} : { reason }),
            ...(specific?.updatedInput === undefined ? {} : { updatedInput: specific.updatedInput }),
            ...(specific?.additionalContext === undefined ? {} : { additionalContext: specific.additionalContext })
          }, notices)
        }
      ),
    post: (call) =>
      Effect.map(
        run({
          tool_name: call.toolName,
          tool_input: call.input,
          tool_use_id: call.toolUseId,
          tool_response: call.response,
          ...(call.failed
            ? { error: typeof call.response === "string" ? call.response : JSON.stringify(call.response) }
            : {})
        }),
        (result): PostToolUseResult => {
          if (result._tag !== "Exited") return noPost(name, [describeFailure(result)])
          if (result.code === 2) return noPost(name, [], result.stderr.trim() === "" ? [] : [result.stderr.trim()])
          if (result.code !== 0) return noPost(name, [describeFailure(result)])
          const parsed = parseStdout(result.stdout)
          if (Either.isLeft(parsed)) return noPost(name, [parsed.left])
          if (Option.isNone(parsed.right)) return { additionalContext: [], notices: plainText(name, result.stdout) }
          const output = parsed.right.value
          const notices = output.systemMessage === undefined ? [] : [output.systemMessage]
          const specific = output.hookSpecificOutput
          if (specific !== undefined && specific.hookEventName !== event) {
            return noPost(name, [
              ...notices,
              `printed output for ${specific.hookEventName}`
            ])
          }
          const context = [
            ...(output.decision === "block" && output.reason !== undefined ? [output.reason] : []),
            ...(specific?.additionalContext === undefined ? [] : [specific.additionalContext])
          ]
          return { additionalContext: context, notices: notices.map((notice) => `hook ${name}: ${notice}`) }
        }
      )
  }
}

const functionHook = (
  hook: FunctionHook,
  matches: (toolName: string) => boolean,
  settings: RunSettings
): CompiledHook => {
  const timeout = hook.timeout === undefined ? settings.defaultTimeout : Duration.decode(hook.timeout)
  const guarded = <A>(effect: Effect.Effect<A, unknown>) =>
    effect.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => `timed out after ${Duration.format(timeout)}` }),
      Effect.sandbox,
      Effect.mapError((cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure) && typeof failure.value === "string") return failure.value
        return `failed: ${Cause.pretty(cause).split("\n")[0]}`
      }),
      Effect.either
    )
  return {
    event: hook.event,
    name: hook.name,
    matches,
    condition: undefined,
    pre: (call) =>
      hook.event === "PreToolUse"
        ? Effect.map(
          guarded(Effect.suspend(() => hook.run(call))),
          Either.match({
            onLeft: (why) => denied(hook.name, `PreToolUse hook ${hook.name} ${why}; the call is denied.`),
            onRight: (answer) => fromPreAnswer(hook.name, answer)
          })
        )
        : Effect.succeed(preAnswer(hook.name)),
    post: (call) =>
      hook.event === "PreToolUse"
        ? Effect.succeed(noPost(hook.name, []))
        : Effect.map(
          guarded(Effect.suspend(() => hook.run(call))),
          Either.match({
            onLeft: (why) => noPost(hook.name, [why]),
            onRight: (answer) => ({
              additionalContext: answer.additionalContext === undefined ? [] : [answer.additionalContext],
              notices: answer.systemMessage === undefined ? [] : [`hook ${hook.name}: ${answer.systemMessage}`]
            })
          })
        )
  }
}

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
// combining
// -----------------------------------------------------------------------------

const combinePre = (answers: ReadonlyArray<PreAnswer>): PreToolUseResult => {
  const additionalContext = answers.flatMap((answer) => answer.additionalContext)
  const notices = answers.flatMap((answer) => answer.notices)
  const stopRun = answers.some((answer) => answer.stopRun)
  const strongest = (["deny", "ask", "allow"] as const)
    .map((behavior) => answers.find((answer) => answer.opinion?.behavior === behavior))
    .find((answer) => answer !== undefined)
  const opinion: HookOpinion | undefined = strongest?.opinion === undefined
    ? undefined
    : { behavior: strongest.opinion.behavior, hook: strongest.hook, message: strongest.opinion.message }
  if (opinion?.behavior === "deny") return { opinion, updatedInput: undefined, additionalContext, notices, stopRun }
  const rewrites = answers.filter((answer) => answer.updatedInput !== undefined)
  if (rewrites.length > 1) {
    const names = rewrites.map((answer) => answer.hook).join(", ")
    const message =
      `Hooks ${names} each rewrote the input; the call is denied rather than guessing which rewrite to run.`
    return {
      opinion: { behavior: "deny", hook: names, message },
      updatedInput: undefined,
      additionalContext,
      notices,
      stopRun
    }
  }
  return { opinion, updatedInput: rewrites[0]?.updatedInput, additionalContext, notices, stopRun }
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

    // An `if` condition, read as a deny rule would be. Without the registry, only its tool name can be checked.
    const conditionHolds = (condition: PermissionRule | undefined, toolName: string, input: unknown): boolean => {
      if (condition === undefined) return true
      const tool = registry === undefined ? undefined : Option.getOrUndefined(registry.lookup(toolName))
      if (tool === undefined) return condition.content !== undefined || condition.toolName === toolName
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
