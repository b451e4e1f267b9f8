/**
 * {@link ToolHooks} from two kinds of hooks: Effect functions, and command hooks that speak Claude Code's hook JSON,
 * so existing hook scripts (from the `hooks` of a settings file) work unchanged.
 *
 * ## Events and matchers
 * `PreToolUse` (before the permission decision), `PostToolUse` (after a successful call) and `PostToolUseFailure`
 * (after a failed one). A hook runs for the tools its matcher names: absent, empty or `*` means every tool; a plain
 * list like `Bash|Edit` means those exact names; anything else is a regular expression matched against the whole
 * tool name (`mcp__github__.*`). A matcher that is not a valid regular expression fails the layer.
 *
 * ## Command hooks
 * Run with `sh -c` in the working directory (with `CLAUDE_PROJECT_DIR` set to it). Stdin is one JSON object:
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
 * - Time limit: the hook's `timeout` (seconds), else the default of 60 s. On timeout the hook's whole process group
 *   gets SIGTERM, then SIGKILL after a short grace, so nothing it started outlives it.
 *
 * ## PreToolUse decisions
 * - Hooks run in parallel; their opinions combine deny > ask > allow (the first hook in configuration order names
 *   the reason). The policy then places them: a deny denies, an ask asks (after deny rules), an allow counts as an
 *   allow rule (never over a deny or ask rule, the tool's own deny or ask, or a safety check).
 * - **Fail closed**: a PreToolUse hook that crashes, times out, prints invalid JSON (or JSON that is not hook output
 *   for this event), or, for an Effect hook, fails or dies, denies the call with the reason. `continue: false`
 *   denies too (with `stopReason`) and stops the rest of the run, as Claude Code stops the turn.
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
import * as Command from "@effect/platform/Command"
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import type { HooksSettings } from "./Permission/Settings.js"
import type { HookOpinion } from "./PermissionPolicy.js"
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
  readonly permissionDecision?: "allow" | "deny" | "ask"
  readonly reason?: string
  /** A rewritten input: with the hook's allow or ask, or alone. */
  readonly updatedInput?: unknown
  /** For the model. */
  readonly additionalContext?: string
  /** For the user. */
  readonly systemMessage?: string
}

/**
 * What a post-call Effect hook answers.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseAnswer {
  readonly additionalContext?: string
  readonly systemMessage?: string
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
    readonly matcher?: string
    readonly timeout?: Duration.DurationInput
    readonly run: (event: PreToolUseEvent) => Effect.Effect<PreToolUseAnswer, unknown>
  }
  | {
    readonly event: "PostToolUse" | "PostToolUseFailure"
    readonly name: string
    readonly matcher?: string
    readonly timeout?: Duration.DurationInput
    readonly run: (event: PostToolUseEvent) => Effect.Effect<PostToolUseAnswer, unknown>
  }

/**
 * The options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface HooksOptions {
  /** The `hooks` objects of the settings files in use, in precedence order (their hooks all run). */
  readonly settingsHooks?: ReadonlyArray<typeof HooksSettings.Type | undefined>
  readonly functionHooks?: ReadonlyArray<FunctionHook>
  /** Working directory of command hooks, and `cwd` in their input. */
  readonly cwd: string
  /** `session_id` in the input of command hooks. Default: a random UUID. */
  readonly sessionId?: string
  /** Time limit of a hook that sets none. Default 60 seconds. */
  readonly defaultTimeout?: Duration.DurationInput
  /** How long a timed-out command hook gets between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput
}

/**
 * A hook matcher that is not a valid regular expression.
 *
 * @since 0.1.0
 * @category errors
 */
export class HookConfigError extends Data.TaggedError("effect-tool-runtime/HookConfigError")<{
  readonly matcher: string
  readonly detail: string
}> {
  override get message(): string {
    return `Invalid hook matcher ${JSON.stringify(this.matcher)}: ${this.detail}`
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
    opinion: behavior === undefined ? undefined : { behavior, message: answer.reason ?? `hook ${hook} answered ${behavior}` },
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
    onLeft: (error) => Either.left(`printed JSON that is not hook output: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    onRight: (output) => Either.right(Option.some(output))
  })
}

const plainText = (hook: string, stdout: string): ReadonlyArray<string> => {
  const text = stdout.trim()
  return text === "" || text.startsWith("{") ? [] : [`hook ${hook}: ${text}`]
}

// -----------------------------------------------------------------------------
// running commands
// -----------------------------------------------------------------------------

type CommandResult =
  | { readonly _tag: "Exited"; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly _tag: "TimedOut"; readonly after: Duration.Duration }
  | { readonly _tag: "Crashed"; readonly message: string }

const collect = <E>(stream: Stream.Stream<Uint8Array, E>) => stream.pipe(Stream.decodeText(), Stream.runFold("", (all, chunk) => all + chunk))

const signalGroup = (pid: number, signal: NodeJS.Signals): void => {
  try {
    process.kill(-pid, signal)
  } catch {
    // The group is already gone.
  }
}

/**
 * Runs `sh -c command` with `stdin`, within `timeout`. When the run does not complete (timeout, interruption), the
 * whole process group gets SIGTERM, then SIGKILL after `grace`: background children die with the hook.
 */
const runCommand = (
  executor: CommandExecutor.CommandExecutor,
  command: string,
  stdin: string,
  options: { readonly cwd: string; readonly timeout: Duration.Duration; readonly grace: Duration.Duration }
): Effect.Effect<CommandResult> =>
  Effect.scoped(
    Effect.gen(function*() {
      const process = yield* executor.start(
        Command.make("sh", "-c", command).pipe(
          Command.workingDirectory(options.cwd),
          Command.env({ CLAUDE_PROJECT_DIR: options.cwd }),
          Command.feed(stdin)
        )
      )
      // Registered after start, so it runs before the platform's own release (which only sends SIGTERM and waits).
      yield* Effect.addFinalizer((exit) =>
        Exit.isSuccess(exit) ? Effect.void : Effect.gen(function*() {
          signalGroup(process.pid, "SIGTERM")
          yield* process.exitCode.pipe(Effect.ignore, Effect.interruptible, Effect.timeoutOption(options.grace))
          signalGroup(process.pid, "SIGKILL")
        })
      )
      const [stdout, stderr, code] = yield* Effect.all([collect(process.stdout), collect(process.stderr), process.exitCode], { concurrency: "unbounded" })
      return { _tag: "Exited", code, stdout, stderr } as CommandResult
    })
  ).pipe(
    Effect.timeoutOption(options.timeout),
    Effect.map(Option.getOrElse((): CommandResult => ({ _tag: "TimedOut", after: options.timeout }))),
    Effect.catchAll((error) => Effect.succeed<CommandResult>({ _tag: "Crashed", message: error.message }))
  )

const crashedExit = (code: number): boolean => code === 126 || code === 127 || code > 128

const describeFailure = (result: Exclude<CommandResult, { readonly _tag: "Exited"; readonly code: 0 }>): string => {
  switch (result._tag) {
    case "TimedOut":
      return `timed out after ${Duration.format(result.after)}`
    case "Crashed":
      return `crashed: ${result.message}`
    case "Exited":
      return `${crashedExit(result.code) ? "crashed" : "failed"} with exit code ${result.code}${result.stderr.trim() === "" ? "" : `: ${result.stderr.trim()}`}`
  }
}

// -----------------------------------------------------------------------------
// compiled hooks
// -----------------------------------------------------------------------------

interface CompiledHook {
  readonly event: HookEvent
  readonly name: string
  readonly matches: (toolName: string) => boolean
  readonly pre: (event: PreToolUseEvent) => Effect.Effect<PreAnswer>
  readonly post: (event: PostToolUseEvent) => Effect.Effect<PostToolUseResult>
}

/**
 * Compiles a matcher: absent, empty or `*` = every tool; `A|B` = exact names; anything else = an anchored regular
 * expression.
 *
 * @since 0.1.0
 * @category matchers
 */
export const compileMatcher = (matcher: string | undefined): Either.Either<(toolName: string) => boolean, HookConfigError> => {
  if (matcher === undefined || matcher.trim() === "" || matcher.trim() === "*") return Either.right(() => true)
  if (/^[A-Za-z0-9_\-|]+$/.test(matcher)) {
    const names = new Set(matcher.split("|"))
    return Either.right((toolName) => names.has(toolName))
  }
  try {
    const pattern = new RegExp(`^(?:${matcher})$`)
    return Either.right((toolName) => pattern.test(toolName))
  } catch (error) {
    return Either.left(new HookConfigError({ matcher, detail: error instanceof Error ? error.message : String(error) }))
  }
}

const noPost = (hook: string, notices: ReadonlyArray<string>, context: ReadonlyArray<string> = []): PostToolUseResult => ({
  additionalContext: context,
  notices: notices.map((notice) => `hook ${hook}: ${notice}`)
})

interface RunSettings {
  readonly executor: CommandExecutor.CommandExecutor
  readonly cwd: string
  readonly sessionId: string
  readonly defaultTimeout: Duration.Duration
  readonly grace: Duration.Duration
}

const commandHook = (
  event: HookEvent,
  matches: (toolName: string) => boolean,
  hook: { readonly command: string; readonly timeout?: number | undefined },
  settings: RunSettings
): CompiledHook => {
  const name = hook.command
  const timeout = hook.timeout === undefined ? settings.defaultTimeout : Duration.seconds(hook.timeout)
  const run = (input: Record<string, unknown>) =>
    runCommand(settings.executor, hook.command, JSON.stringify({ session_id: settings.sessionId, cwd: settings.cwd, hook_event_name: event, ...input }), {
      cwd: settings.cwd,
      timeout,
      grace: settings.grace
    })
  return {
    event,
    name,
    matches,
    pre: (call) =>
      Effect.map(run({ tool_name: call.toolName, tool_input: call.input, tool_use_id: call.toolUseId }), (result): PreAnswer => {
        if (result._tag !== "Exited" || crashedExit(result.code)) return denied(name, `PreToolUse hook ${name} ${describeFailure(result)}; the call is denied.`)
        if (result.code === 2) return denied(name, result.stderr.trim() === "" ? `Blocked by hook ${name}.` : result.stderr.trim())
        if (result.code !== 0) return preAnswer(name, { notices: [`hook ${name} ${describeFailure(result)}`] })
        const parsed = parseStdout(result.stdout)
        if (Either.isLeft(parsed)) return denied(name, `PreToolUse hook ${name} ${parsed.left}; the call is denied.`)
        if (Option.isNone(parsed.right)) return preAnswer(name, { notices: plainText(name, result.stdout) })
        const output = parsed.right.value
        const notices = output.systemMessage === undefined ? [] : [output.systemMessage]
        // Claude Code stops the whole turn on `continue: false`: the call is denied and the rest of the run stops.
        if (output.continue === false) return { ...denied(name, output.stopReason ?? `Hook ${name} stopped processing.`), notices, stopRun: true }
        const specific = output.hookSpecificOutput
        if (specific !== undefined && specific.hookEventName !== "PreToolUse") {
          return denied(name, `PreToolUse hook ${name} printed output for ${specific.hookEventName}; the call is denied.`)
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
      }),
    post: (call) =>
      Effect.map(
        run({
          tool_name: call.toolName,
          tool_input: call.input,
          tool_use_id: call.toolUseId,
          tool_response: call.response,
          ...(call.failed ? { error: typeof call.response === "string" ? call.response : JSON.stringify(call.response) } : {})
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
          if (specific !== undefined && specific.hookEventName !== event) return noPost(name, [...notices, `printed output for ${specific.hookEventName}`])
          const context = [
            ...(output.decision === "block" && output.reason !== undefined ? [output.reason] : []),
            ...(specific?.additionalContext === undefined ? [] : [specific.additionalContext])
          ]
          return { additionalContext: context, notices: notices.map((notice) => `hook ${name}: ${notice}`) }
        }
      )
  }
}

const functionHook = (hook: FunctionHook, matches: (toolName: string) => boolean, settings: RunSettings): CompiledHook => {
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
    pre: (call) =>
      hook.event === "PreToolUse"
        ? Effect.map(guarded(Effect.suspend(() => hook.run(call))), Either.match({
          onLeft: (why) => denied(hook.name, `PreToolUse hook ${hook.name} ${why}; the call is denied.`),
          onRight: (answer) => fromPreAnswer(hook.name, answer)
        }))
        : Effect.succeed(preAnswer(hook.name)),
    post: (call) =>
      hook.event === "PreToolUse"
        ? Effect.succeed(noPost(hook.name, []))
        : Effect.map(guarded(Effect.suspend(() => hook.run(call))), Either.match({
          onLeft: (why) => noPost(hook.name, [why]),
          onRight: (answer) => ({
            additionalContext: answer.additionalContext === undefined ? [] : [answer.additionalContext],
            notices: answer.systemMessage === undefined ? [] : [`hook ${hook.name}: ${answer.systemMessage}`]
          })
        }))
  }
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
    const message = `Hooks ${names} each rewrote the input; the call is denied rather than guessing which rewrite to run.`
    return { opinion: { behavior: "deny", hook: names, message }, updatedInput: undefined, additionalContext, notices, stopRun }
  }
  return { opinion, updatedInput: rewrites[0]?.updatedInput, additionalContext, notices, stopRun }
}

// -----------------------------------------------------------------------------
// constructors
// -----------------------------------------------------------------------------

/**
 * Builds the hooks service.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: HooksOptions): Effect.Effect<ToolHooks["Type"], HookConfigError, CommandExecutor.CommandExecutor> =>
  Effect.gen(function*() {
    const settings: RunSettings = {
      executor: yield* CommandExecutor.CommandExecutor,
      cwd: options.cwd,
      sessionId: options.sessionId ?? randomUUID(),
      defaultTimeout: Duration.decode(options.defaultTimeout ?? Duration.seconds(60)),
      grace: Duration.decode(options.killGrace ?? Duration.seconds(2))
    }
    const hooks: Array<CompiledHook> = []
    for (const fromFile of options.settingsHooks ?? []) {
      for (const event of ["PreToolUse", "PostToolUse", "PostToolUseFailure"] as const) {
        for (const group of fromFile?.[event] ?? []) {
          const matches = yield* compileMatcher(group.matcher)
          for (const hook of group.hooks) if (hook.type === "command") hooks.push(commandHook(event, matches, hook, settings))
        }
      }
    }
    for (const hook of options.functionHooks ?? []) {
      hooks.push(functionHook(hook, yield* compileMatcher(hook.matcher), settings))
    }
    const select = (event: HookEvent, toolName: string) => hooks.filter((hook) => hook.event === event && hook.matches(toolName))

    return {
      preToolUse: (event) => {
        const selected = select("PreToolUse", event.toolName)
        if (selected.length === 0) return Effect.succeed(noPreToolUse)
        return Effect.map(Effect.forEach(selected, (hook) => hook.pre(event), { concurrency: "unbounded" }), combinePre).pipe(
          Effect.withSpan("Hooks.preToolUse", { attributes: { tool: event.toolName, hooks: selected.length } })
        )
      },
      postToolUse: (event) => {
        const selected = select(event.failed ? "PostToolUseFailure" : "PostToolUse", event.toolName)
        if (selected.length === 0) return Effect.succeed({ additionalContext: [], notices: [] })
        return Effect.map(Effect.forEach(selected, (hook) => hook.post(event), { concurrency: "unbounded" }), (results) => ({
          additionalContext: results.flatMap((result) => result.additionalContext),
          notices: results.flatMap((result) => result.notices)
        })).pipe(Effect.withSpan("Hooks.postToolUse", { attributes: { tool: event.toolName, hooks: selected.length } }))
      }
    }
  })

/**
 * Hooks from settings files and Effect functions.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: HooksOptions): Layer.Layer<ToolHooks, HookConfigError, CommandExecutor.CommandExecutor> =>
  Layer.effect(ToolHooks, make(options))
