/**
 * The `Bash` tool: runs a shell command in the workspace, as Claude Code's tool of the same name does
 * (parameters `command`, `timeout` in milliseconds, `description`, `run_in_background`, `dangerouslyDisableSandbox`).
 * `run_in_background: true` starts the command as a background task of the session's `TaskRegistry` (same decision,
 * sandbox and process rules; the call returns at once with the task id); without a registry in context it is refused.
 *
 * - **Risk** comes from the static analysis in `Shell/`: a command is read-only only when every simple command
 *   in it is on the read-only allowlist (`Shell/ReadOnly`), and then it runs alongside reads and is auto-allowed
 *   inside the workspace by the policy; anything else claims the whole world and needs a rule or a person.
 *   `Bash(...)` rules are decided by `Shell/BashRule` (a compound command is allowed only if every part is).
 *   The tool never allows on its own: it asks for commands it cannot analyse, and otherwise has no opinion.
 * - **Execution** is `Shell/Process`: own process group, explicit environment, stdout and stderr interleaved,
 *   timeout (default 2 minutes, at most 10), and no process outliving the call (background jobs included).
 * - **Enforcement** is the sandbox (`Process/Sandbox`), on by default where the machine supports it: a command
 *   allowed because it is read-only runs with the whole file system read-only and no network; one a rule or a person
 *   allowed may write the working directories (and what Edit allow rules grant) but not settings files,
 *   `.git/hooks` or `.git/config`, and reach only the allowed domains. A refusal by the sandbox is explained to the
 *   model after the output. Where the sandbox cannot run, one warning says why and commands run with the analysis
 *   alone (unless the options require it). `dangerouslyDisableSandbox: true` is refused unless
 *   `allowUnsandboxedCommands` is on, and then asked for like any unsandboxed command.
 * - **Output** streams to the ResultStore once it outgrows the model's budget; memory keeps a head and a tail
 *   (1 MiB each by default). The model gets head and tail with the path of the full output. One call's output is
 *   capped (`maxOutputBytes`, 64 MiB by default): past it the process tree is killed, the first `maxOutputBytes`
 *   are kept, and the model is told so (`seq 1 inf` cannot fill the disk). A NUL byte in the command, or a command
 *   over the kernel's limit for one argument (128 KB), is an input error before anything runs. Exit code 1 of
 *   `grep`, `egrep`, `fgrep`, `rg`, `diff`, `cmp`, `test` and `[` as the last command is an answer, not an
 *   error; any other non-zero exit code is a failure whose message holds the output and the code.
 *
 * ```ts
 * // needs Workspace, ResultStore, CommandExecutor
 * const tools = Bash.layer({ sandbox: { allowedDomains: ["registry.npmjs.org"] } })
 * ```
 *
 * @since 0.1.0
 */
import * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as path from "node:path"
import * as Sandbox from "../Process/Sandbox.js"
import { ResultStore } from "../Session/ResultStore.js"
import type { ResultSink } from "../Session/ResultStore.js"
import { Workspace } from "../Session/Workspace.js"
import { formatBytes as sharedFormatBytes } from "../Shared/bytes.js"
import { onceInScope } from "../Shared/once.js"
import { realSleep } from "../Shared/realTime.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type { Decision, PermissionCheck } from "../Tool/Permission.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { ArgumentString } from "./internal/argumentLimits.js"
import { serviceOf } from "./internal/service.js"
import { matchesRule } from "./Shell/BashRule.js"
import * as CommandPlan from "./Shell/CommandPlan.js"
import { OutputBuffer } from "./Shell/OutputBuffer.js"
import * as Process from "./Shell/Process.js"

// ---------------------------------------------------------------------------------------------------------------
// limits
// ---------------------------------------------------------------------------------------------------------------

/**
 * The default timeout of a command, in milliseconds (2 minutes).
 *
 * @since 0.1.0
 * @category limits
 */
export const DEFAULT_TIMEOUT_MS = 120_000

/**
 * The longest timeout a call may ask for, in milliseconds (10 minutes).
 *
 * @since 0.1.0
 * @category limits
 */
export const MAX_TIMEOUT_MS = 600_000

/**
 * The tool's `maxResultChars`; its own model text stays under it, so the runtime never stores it a second time.
 *
 * @since 0.1.0
 * @category limits
 */
export const MAX_RESULT_CHARS = 30_000

/** Output up to this many bytes reaches the model whole (a character is at least one byte). */
const BODY_LIMIT = 28_000
/** Bytes per write to the ResultStore. */
const WRITE_BATCH = 1024 * 1024
/** Characters of head and of tail the model gets from a larger output. */
const PREVIEW_CHARS = 12_000

/**
 * The most output one call may produce by default (64 MiB): past it the command is stopped, so a runaway
 * (`seq 1 inf`, `yes`) cannot fill the disk. Configurable with {@link BashOptions} `maxOutputBytes`.
 *
 * @since 0.2.0
 * @category limits
 */
export const DEFAULT_MAX_OUTPUT_BYTES = 64 * 1024 * 1024

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The tool's input, as in Claude Code.
 *
 * @since 0.1.0
 * @category models
 */
export const BashInput = Schema.Struct({
  // What bash gets is one argument, `bash -c SCRIPT`: the command plus the script's redirections must fit in it.
  command: ArgumentString("The command to execute", { spare: Buffer.byteLength(Process.shellScript("")) }),
  // Over the maximum is clamped to it, as Claude Code does (a model asking for "an hour" gets the longest wait).
  timeout: Schema.optional(
    Schema.transform(Schema.Number.pipe(Schema.greaterThanOrEqualTo(1)), Schema.Number, {
      strict: true,
      decode: (ms) => Math.min(ms, MAX_TIMEOUT_MS),
      encode: (ms) => ms
    }).annotations({ description: `Optional timeout in milliseconds (max ${MAX_TIMEOUT_MS})` })
  ),
  description: Schema.optional(
    Schema.String.annotations({ description: "Clear, concise description of what this command does in 5-10 words" })
  ),
  run_in_background: Schema.optional(Schema.Boolean.annotations({
    description:
      "Set to true to run this command in the background: the call returns at once with a task id. Read its output " +
      "with TaskOutput, stop it with TaskStop; you are told when it ends, so there is no need to poll."
  })),
  dangerouslyDisableSandbox: Schema.optional(Schema.Boolean.annotations({
    description:
      "Set this to true to dangerously override sandbox mode and run commands without sandboxing. Refused unless the settings allow unsandboxed commands (sandbox.allowUnsandboxedCommands); then the user is asked."
  }))
})

/**
 * Why a call with `run_in_background: true` is refused (the model reads it).
 *
 * @since 0.3.0
 * @category models
 */
export const backgroundRefusal =
  "run_in_background is not available in this runtime (it has no task registry): the command was not run. Run it " +
  "in the foreground (omit run_in_background), with a timeout of up to 600000 ms if it takes long."

/**
 * Why a call with `dangerouslyDisableSandbox: true` is refused (the model reads it).
 *
 * @since 0.3.0
 * @category models
 */
export const sandboxEscapeRefusal =
  "dangerouslyDisableSandbox is refused: the settings do not allow unsandboxed commands (sandbox.allowUnsandboxedCommands is off), so the command was not run. Run it without dangerouslyDisableSandbox; if the sandbox blocks what it needs, say so to the user."

/** The refusal for an input asking for what this runtime does not do (here), if any. */
const notSupported = (input: BashInput, escapeAllowed: boolean, background: boolean): string | undefined =>
  input.run_in_background === true && !background
    ? backgroundRefusal
    : input.dangerouslyDisableSandbox === true && !escapeAllowed
    ? sandboxEscapeRefusal
    : undefined
/**
 * @since 0.1.0
 * @category models
 */
export type BashInput = typeof BashInput.Type

/**
 * What a finished command produced.
 *
 * @since 0.1.0
 * @category models
 */
export const BashOutput = Schema.Struct({
  /** The whole output (stdout and stderr interleaved) when memory kept it all, else its head. */
  output: Schema.String,
  /** The tail of the output when bytes between head and tail were dropped from memory, else empty. */
  outputTail: Schema.String,
  /** Bytes between `output` and `outputTail` that only the stored file has. */
  omittedBytes: Schema.Number,
  totalBytes: Schema.Number,
  /** The full output in the ResultStore, when it outgrew the model's budget. */
  fullOutputPath: Schema.optional(Schema.String),
  exitCode: Schema.Number,
  /** What a non-zero exit code that is not an error means (`no matches`). */
  interpretation: Schema.optional(Schema.String),
  durationMs: Schema.Number,
  /** Background processes still running when the command ended; they were stopped. */
  stoppedBackgroundProcesses: Schema.Number,
  /** The output ended early: a process outside the call's reach held it open. */
  outputIncomplete: Schema.Boolean,
  /** `run_in_background: true`: the task's id (its output goes to `fullOutputPath`). */
  backgroundTaskId: Schema.optional(Schema.String)
})
/**
 * @since 0.1.0
 * @category models
 */
export type BashOutput = typeof BashOutput.Type

/**
 * Why a command failed; `message` is the model's text (exit code and bounded output).
 *
 * @since 0.1.0
 * @category errors
 */
export class BashFailure
  extends Schema.TaggedError<BashFailure>("effect-tool-runtime/Tools/Bash/BashFailure")("BashFailure", {
    reason: Schema.Literal("exit", "signal", "timeout", "start", "outputLimit"),
    message: Schema.String,
    exitCode: Schema.optional(Schema.Number),
    fullOutputPath: Schema.optional(Schema.String)
  })
{}

/**
 * The sandbox of Bash's commands, as Claude Code's `sandbox` settings describe it (see `Settings/Sandbox`). Every
 * field is optional; the defaults are the safe ones.
 *
 * @since 0.3.0
 * @category models
 */
export interface BashSandboxOptions {
  /** Default true: commands run in the sandbox wherever it can run. */
  readonly enabled?: boolean | undefined
  /** Default false: where the sandbox cannot run, say so once and run commands with the analysis alone. True: fail. */
  readonly failIfUnavailable?: boolean | undefined
  /** `Bash(...)` rule contents of commands that run outside the sandbox (`docker:*`). */
  readonly excludedCommands?: ReadonlyArray<string> | undefined
  /** Hosts commands a rule or a person allowed may reach (WebFetch allow rules, network.allowedDomains). */
  readonly allowedDomains?: ReadonlyArray<string> | undefined
  /** Absolute paths such commands may write besides the working directories (what Edit allow rules grant). */
  readonly writable?: ReadonlyArray<string> | undefined
  /** Absolute paths or globs no command may read (Read deny rules). */
  readonly unreadable?: ReadonlyArray<string> | undefined
  /** Absolute paths that stay read-only besides settings files, `.git/hooks` and `.git/config`. */
  readonly protectedPaths?: ReadonlyArray<string> | undefined
  /** Default false: `dangerouslyDisableSandbox: true` is refused. True: such a call runs unsandboxed, after asking. */
  readonly allowUnsandboxedCommands?: boolean | undefined
  /** Default false. True: a command no rule decides runs in the sandbox without asking (deny and ask rules hold). */
  readonly autoAllowBashIfSandboxed?: boolean | undefined
  /** Where the one warning goes when the sandbox cannot run (the CLI's stderr). Default: `Effect.logWarning`. */
  readonly warn?: ((line: string) => void) | undefined
}

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashOptions {
  /**
   * The sandbox. Default: on where the machine supports it (one warning and the analysis alone where it does not).
   * `"off"`: never. `"bubblewrap"`: required (the layer fails where it cannot run). An object: see
   * {@link BashSandboxOptions}.
   */
  readonly sandbox?: "off" | "bubblewrap" | BashSandboxOptions | undefined
  /** Time between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
  /** Bytes of head, and of tail, kept in memory. Default 1 MiB each. */
  readonly memoryBytes?: number | undefined
  /** The environment commands start from, before dangerous variables are removed. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Interval of progress reports with the latest lines. Default 1 second. */
  readonly progressInterval?: Duration.DurationInput | undefined
  /**
   * The most output bytes one call may produce ({@link DEFAULT_MAX_OUTPUT_BYTES} by default). Past it the process
   * tree is killed, the first `maxOutputBytes` are kept (and stored), and the model is told so.
   */
  readonly maxOutputBytes?: number | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// the tool
// ---------------------------------------------------------------------------------------------------------------

const description =
  `Runs a bash command in the workspace directory and returns its output (stdout and stderr interleaved) and exit code. Use it for builds, tests, git, package managers and other programs; for reading, searching and editing files use Read, Grep, Glob and Edit instead.

- command: the bash command line. Quote paths that contain spaces; chain dependent steps with \`&&\`.
- Each call runs in a fresh shell: \`cd\`, variables and background jobs do not carry over, and every process the command started is stopped when it ends. Standard input is empty, so interactive commands cannot wait for input.
- timeout: in milliseconds, ${DEFAULT_TIMEOUT_MS} by default, at most ${MAX_TIMEOUT_MS} (a longer one is shortened to it).
- Long output is cut: you get the beginning and the end, and the path of a file holding all of it.
- Exit code 1 from grep, rg, diff, cmp, test and [ is reported as a result (no matches, files differ, condition false), not as an error.
- Commands that change things may need the user's approval, and rules may refuse them.
- description: what the command does, in 5-10 words, shown to the user.`

const definition = Tool.make("Bash", {
  description,
  input: BashInput,
  output: BashOutput,
  failure: BashFailure,
  maxResultChars: MAX_RESULT_CHARS,
  // Above the largest per-call timeout plus the kill grace, so the tool's own timeout (with its partial output)
  // always fires before the runtime's.
  timeout: Duration.seconds(MAX_TIMEOUT_MS / 1000 + 10),
  touchesEnvironment: true
})

// ---------------------------------------------------------------------------------------------------------------
// presentation
// ---------------------------------------------------------------------------------------------------------------

/**
 * A byte count in human units.
 *
 * @since 0.1.0
 * @category presentation
 */
export const formatBytes: (bytes: number) => string = sharedFormatBytes

const formatDuration = (ms: number): string => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`)

/** The first `max` characters, cut after a line break when one falls in the second half. */
const headOf = (text: string, max: number): string => {
  if (text.length <= max) return text
  const cut = text.lastIndexOf("\n", max)
  return text.slice(0, cut >= max / 2 ? cut + 1 : max)
}

/** The last `max` characters, cut after a line break when one falls in the first half. */
const tailOf = (text: string, max: number): string => {
  if (text.length <= max) return text
  const start = text.length - max
  const cut = text.indexOf("\n", start)
  return text.slice(cut !== -1 && cut < start + max / 2 ? cut + 1 : start)
}

interface OutputView {
  readonly output: string
  readonly outputTail: string
  readonly omittedBytes: number
  readonly totalBytes: number
  readonly fullOutputPath?: string | undefined
}

/**
 * The output as the model and the UI see it: whole when it fits the budget, else head and tail with the size of
 * what is left out and the path of the full output. Never longer than about 25,000 characters.
 *
 * @since 0.1.0
 * @category presentation
 */
export const outputText = (view: OutputView): string => {
  const whole = view.omittedBytes === 0 && view.outputTail === ""
  if (whole && view.output.length <= BODY_LIMIT) return view.output
  const head = headOf(view.output, PREVIEW_CHARS)
  const tail = tailOf(whole ? view.output : view.outputTail, PREVIEW_CHARS)
  const where = view.fullOutputPath === undefined
    ? "the full output could not be saved"
    : `full output (${formatBytes(view.totalBytes)}) saved to: ${view.fullOutputPath}`
  const separator = head.endsWith("\n") ? "" : "\n"
  return `${head}${separator}\n... [output too long: the middle was left out; ${where}] ...\n\n${tail}`
}

const modelText = (output: BashOutput): string => {
  if (output.backgroundTaskId !== undefined) {
    return `Command running in background with ID: ${output.backgroundTaskId}. Output is being written to: ${
      output.fullOutputPath ?? "(unknown)"
    }. You will be told when it ends; read its output with TaskOutput and stop it with TaskStop.`
  }
  const notes: Array<string> = []
  if (output.interpretation !== undefined) notes.push(`(exit code ${output.exitCode}: ${output.interpretation})`)
  if (output.stoppedBackgroundProcesses > 0) {
    notes.push(
      `(${output.stoppedBackgroundProcesses} background process(es) were still running when the command ended and ` +
        `were stopped: nothing outlives a call)`
    )
  }
  if (output.outputIncomplete) notes.push("(the output may be incomplete: a detached process kept it open)")
  const body = outputText(output).replace(/\n$/, "")
  return [body, ...notes].filter((part) => part !== "").join("\n")
}

// ---------------------------------------------------------------------------------------------------------------
// execution
// ---------------------------------------------------------------------------------------------------------------

interface Services {
  readonly workspace: Workspace["Type"]
  readonly store: ResultStore["Type"]
  readonly env: Readonly<Record<string, string>>
  /** The sandbox, started at the first command that needs it (see {@link sandboxOnDemand}). */
  readonly sandbox: Effect.Effect<SandboxState>
  readonly killGrace: Duration.DurationInput
  readonly memoryBytes: number
  readonly progressEvery: number
  readonly maxOutputBytes: number
  readonly tasks: TaskRegistry["Type"] | undefined
}

const runCommand = (
  services: Services,
  input: BashInput,
  context: Tool.CallContext,
  plan: CommandPlan.CommandPlan
): Effect.Effect<BashOutput, BashFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const buffer = new OutputBuffer(services.memoryBytes, services.memoryBytes)
    let sink: ResultSink | undefined
    let sinkBroken = false
    const startedAt = performance.now()

    const keepSinkOrDrop = (write: Effect.Effect<void, unknown>) =>
      Effect.catchAll(write, (error) =>
        Effect.sync(() => {
          sinkBroken = true
        }).pipe(Effect.zipRight(Effect.logWarning("Bash: the full output could not be stored", error))))

    // Writes to the store go in batches of WRITE_BATCH bytes through one reused buffer: one write per pipe chunk
    // costs several times the throughput, and fresh buffers would grow the heap.
    let batch: Uint8Array | undefined
    let batched = 0
    const flush = Effect.suspend(() => {
      if (sink === undefined || batch === undefined || batched === 0) return Effect.void
      const data = batch.subarray(0, batched)
      batched = 0
      return keepSinkOrDrop(sink.write(data))
    })
    const toSink = (chunk: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        if (sink === undefined || sinkBroken) return Effect.void
        batch ??= new Uint8Array(WRITE_BATCH)
        if (batched + chunk.length <= batch.length) {
          batch.set(chunk, batched)
          batched += chunk.length
          return batched === batch.length ? flush : Effect.void
        }
        return Effect.zipRight(flush, chunk.length >= WRITE_BATCH ? keepSinkOrDrop(sink.write(chunk)) : toSink(chunk))
      })

    const onOutput = (chunk: Uint8Array): Effect.Effect<void> =>
      Effect.suspend(() => {
        buffer.append(chunk)
        if (sink !== undefined) return toSink(chunk)
        if (sinkBroken || buffer.totalBytes <= BODY_LIMIT) return Effect.void
        // Past the model's budget: from now on the full output goes to the store. All of it is still in the head.
        return keepSinkOrDrop(
          services.store.open(context.toolUseId).pipe(
            Scope.extend(scope),
            Effect.tap((opened) => {
              sink = opened
              return opened.write(buffer.headSoFar())
            })
          )
        )
      })

    const view = (): OutputView => {
      const snapshot = buffer.snapshot()
      return {
        output: snapshot.head,
        outputTail: snapshot.tail,
        omittedBytes: snapshot.omittedBytes,
        totalBytes: snapshot.totalBytes,
        fullOutputPath: sinkBroken ? undefined : sink?.path
      }
    }

    const progress = yield* Effect.forkScoped(
      Effect.forever(
        realSleep(services.progressEvery).pipe(
          Effect.zipRight(Effect.suspend(() =>
            context.progress({
              message: `Running for ${formatDuration(performance.now() - startedAt)}, ${
                formatBytes(buffer.totalBytes)
              } of output`,
              lines: buffer.latestLines(5)
            })
          ))
        )
      )
    )

    const timeoutMs = Math.min(input.timeout ?? DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
    const sandbox = yield* services.sandbox
    const policy = policyFor(sandbox, services.workspace, input, plan, context.decision)
    const wrap = policy === undefined || sandbox.service === undefined
      ? undefined
      : yield* sandbox.service.wrap(Process.bashArgv(input.command), policy, context.toolUseId).pipe(
        Effect.map((argv) => () => argv),
        Effect.mapError((error) => new BashFailure({ reason: "start", message: error.message }))
      )
    const result = yield* Process.run({
      command: input.command,
      cwd: services.workspace.cwd,
      env: services.env,
      timeout: Duration.millis(timeoutMs),
      killGrace: services.killGrace,
      onOutput,
      maxOutputBytes: services.maxOutputBytes,
      ...(wrap === undefined ? {} : { wrap })
    }).pipe(
      Effect.mapError((error) => new BashFailure({ reason: "start", message: error.message })),
      Effect.onInterrupt(() =>
        // Stop reporting "running" (the tree is killed after this), keep what the reader got, say where it is.
        Fiber.interrupt(progress).pipe(
          Effect.zipRight(flush),
          Effect.zipRight(Effect.suspend(() => {
            const partial = view()
            return context.progress({
              message: `Interrupted after ${formatDuration(performance.now() - startedAt)}; ${
                formatBytes(partial.totalBytes)
              } of output so far${partial.fullOutputPath === undefined ? "" : ` (saved to ${partial.fullOutputPath})`}`,
              lines: buffer.latestLines(20)
            })
          }))
        )
      )
    )
    yield* Fiber.interrupt(progress)
    yield* flush

    const durationMs = Math.round(performance.now() - startedAt)
    const seen = view()
    const output: BashOutput = {
      output: seen.output,
      outputTail: seen.outputTail,
      omittedBytes: seen.omittedBytes,
      totalBytes: seen.totalBytes,
      ...(seen.fullOutputPath === undefined ? {} : { fullOutputPath: seen.fullOutputPath }),
      exitCode: result.exit._tag === "TimedOut" ? 124 : result.exit._tag === "OutputLimit" ? 137 : result.exit.code,
      durationMs,
      stoppedBackgroundProcesses: result.leftovers,
      outputIncomplete: result.outputIncomplete
    }
    // A refusal by the sandbox is said in words the model can act on, after the output that shows it.
    const denial = policy === undefined ? undefined : Sandbox.explainDenial(`${seen.output}${seen.outputTail}`, policy)
    const failure = (reason: BashFailure["reason"], headline: string, exitCode?: number) =>
      new BashFailure({
        reason,
        message: [headline, modelText(output), denial ?? ""].filter((part) => part !== "").join("\n"),
        ...(exitCode === undefined ? {} : { exitCode }),
        ...(output.fullOutputPath === undefined ? {} : { fullOutputPath: output.fullOutputPath })
      })
    switch (result.exit._tag) {
      case "TimedOut":
        return yield* failure(
          "timeout",
          `Command timed out after ${formatDuration(timeoutMs)} and was stopped. Output so far:`
        )
      case "OutputLimit":
        return yield* failure(
          "outputLimit",
          `Command produced more than ${
            formatBytes(result.exit.limitBytes)
          } of output, the limit for one call, and was stopped; ` +
            `the first ${
              formatBytes(result.exit.limitBytes)
            } were kept. Narrow the command (head, grep, a smaller range) and run it again. Output:`
        )
      case "Signaled":
        return yield* failure(
          "signal",
          `Command was killed by ${result.exit.signal} (exit code ${result.exit.code}). Output:`,
          result.exit.code
        )
      case "Exited": {
        const code = result.exit.code
        if (code === 0) return output
        const meaning = code === 1 ? plan.exitOneMeaning : undefined
        if (meaning !== undefined) return { ...output, interpretation: meaning }
        return yield* failure("exit", `Command failed with exit code ${code}. Output:`, code)
      }
    }
  })

/**
 * `run_in_background: true`: the same command and sandbox policy as in the foreground, started as a task of the
 * registry; the call returns at once. The registry decides where the sandbox lives: in this process (the task then
 * ends with it), or in a sandbox host of the task's own (a task that outlives this process).
 */
const startBackground = (
  services: Services,
  tasks: TaskRegistry["Type"],
  input: BashInput,
  context: Tool.CallContext,
  plan: CommandPlan.CommandPlan
): Effect.Effect<BashOutput, BashFailure> =>
  Effect.gen(function*() {
    const startedAt = performance.now()
    const sandbox = yield* services.sandbox
    const policy = policyFor(sandbox, services.workspace, input, plan, context.decision)
    const service = sandbox.service
    // A start interrupted (a cancelled command) is stopped by the registry: no task runs with an id the model never
    // got.
    const task = yield* tasks.start({
      command: input.command,
      description: input.description,
      argv: Process.bashArgv(input.command),
      cwd: services.workspace.cwd,
      env: services.env,
      ...(policy === undefined || service === undefined
        ? {}
        : { sandbox: { policy, wrap: (argv) => service.wrap(argv, policy, context.toolUseId) } })
    }).pipe(Effect.mapError((error) => new BashFailure({ reason: "start", message: error.message })))
    return {
      output: "",
      outputTail: "",
      omittedBytes: 0,
      totalBytes: 0,
      fullOutputPath: task.outputPath,
      exitCode: 0,
      durationMs: Math.round(performance.now() - startedAt),
      stoppedBackgroundProcesses: 0,
      outputIncomplete: false,
      backgroundTaskId: task.id
    } satisfies BashOutput
  })

/** The sandbox as the layer found it: running, or why not. */
interface SandboxState {
  readonly service: Sandbox.Sandbox["Type"] | undefined
  readonly options: BashSandboxOptions
}

const sandboxOptionsOf = (option: BashOptions["sandbox"]): BashSandboxOptions =>
  option === "off"
    ? { enabled: false }
    : option === "bubblewrap"
    ? { enabled: true, failIfUnavailable: true }
    : option ?? {}

/** `dangerouslyDisableSandbox: true` is honoured only when the settings allow unsandboxed commands. */
const escapeAllowed = (options: BashSandboxOptions): boolean => options.allowUnsandboxedCommands === true

/** Whether a command runs outside the sandbox: no sandbox, an allowed escape, or an excluded command. */
const unsandboxed = (state: SandboxState, input: BashInput): boolean =>
  state.service === undefined ||
  input.dangerouslyDisableSandbox === true ||
  (state.options.excludedCommands ?? []).some((content) => matchesRule(content, input.command.trim()))

/**
 * What a command may touch: read-only when it was allowed because it is read-only (or, called directly, when the
 * analysis says it is); otherwise the working directories and what Edit allow rules grant, minus settings files and
 * `.git` internals, and the allowed domains. Undefined: it runs unsandboxed.
 */
const policyFor = (
  state: SandboxState,
  workspace: Workspace["Type"],
  input: BashInput,
  plan: CommandPlan.CommandPlan,
  decision: Decision | undefined
): Sandbox.SandboxPolicy | undefined => {
  if (unsandboxed(state, input)) return undefined
  const unreadable = state.options.unreadable ?? []
  const readOnly = decision === undefined
    ? plan.traits.readOnly
    : decision._tag === "Allow" && decision.reason._tag === "ReadOnly"
  if (readOnly) return Sandbox.readOnlyPolicy(unreadable)
  const writable = [...workspace.roots, ...(state.options.writable ?? [])]
  return {
    writable,
    protectedPaths: [
      ...writable.flatMap((root) => [
        path.join(root, ".claude", "settings.json"),
        path.join(root, ".claude", "settings.local.json"),
        path.join(root, ".git", "hooks"),
        path.join(root, ".git", "config")
      ]),
      ...(workspace.home === undefined ? [] : [path.join(workspace.home, ".claude", "settings.json")]),
      ...(state.options.protectedPaths ?? [])
    ],
    unreadable,
    domains: state.options.allowedDomains ?? []
  }
}

/**
 * The tool's own view: the analysis's, except that a command leaving the sandbox (`dangerouslyDisableSandbox`) is
 * asked for like any unsandboxed one, and, with `autoAllowBashIfSandboxed`, a sandboxed command no rule decides runs.
 */
const permissionCheck = (
  state: SandboxState,
  input: BashInput,
  plan: CommandPlan.CommandPlan
): PermissionCheck<never> => {
  const check = plan.permissionCheck
  if (state.service === undefined || check._tag === "Deny") return check
  if (input.dangerouslyDisableSandbox === true) {
    return check._tag === "Ask" ? check : {
      _tag: "Ask",
      message: "Bash needs approval: the command asks to run outside the sandbox (dangerouslyDisableSandbox)."
    }
  }
  if (state.options.autoAllowBashIfSandboxed === true && check._tag === "Passthrough" && !unsandboxed(state, input)) {
    return { _tag: "Allow", reason: "the command runs in the sandbox (autoAllowBashIfSandboxed)" }
  }
  return check
}

/**
 * The sandbox when the first command needs it, once: checking for it costs a few processes (bwrap, socat, a trial
 * run), which a session that never runs a command (an `exec` of one Read) does not pay. When the options require
 * the sandbox it is started with the layer instead, so that the layer fails at once where it cannot run.
 */
const sandboxOnDemand = (
  options: BashSandboxOptions,
  cwd: string,
  executor: CommandExecutor.CommandExecutor
): Effect.Effect<Effect.Effect<SandboxState>, Sandbox.SandboxUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    if (options.enabled === false) return Effect.succeed<SandboxState>({ service: undefined, options })
    if (options.failIfUnavailable === true) return Effect.succeed(yield* startSandbox(options, cwd, executor))
    const scope = yield* Effect.scope
    // Started in a fiber of the layer's own: a first command interrupted while it starts leaves it to the next one.
    return yield* onceInScope(
      startSandbox(options, cwd, executor).pipe(
        Scope.extend(scope),
        // Not required: a sandbox that cannot start was said once (startSandbox warns) and commands run without it.
        Effect.catchAll(() => Effect.succeed<SandboxState>({ service: undefined, options }))
      ),
      scope
    )
  })

/** The sandbox, or why it cannot run: a failure when the options require it, one warning otherwise. */
const startSandbox = (
  options: BashSandboxOptions,
  cwd: string,
  executor: CommandExecutor.CommandExecutor
): Effect.Effect<SandboxState, Sandbox.SandboxUnavailable, Scope.Scope> => {
  if (options.enabled === false) return Effect.succeed({ service: undefined, options })
  return Layer.build(Sandbox.layer).pipe(
    Effect.tap((context) =>
      Sandbox.probe(cwd).pipe(
        Effect.provide(context),
        Effect.provideService(CommandExecutor.CommandExecutor, executor)
      )
    ),
    Effect.map((context): SandboxState => ({ service: Context.get(context, Sandbox.Sandbox), options })),
    Effect.catchTag("SandboxUnavailable", (error) =>
      options.failIfUnavailable === true
        ? Effect.fail(error)
        : Effect.suspend(() => {
          const line =
            `Bash: the sandbox cannot run here, so commands run with the permission analysis alone: ${error.message}`
          const warn = options.warn
          return warn === undefined ? Effect.logWarning(line) : Effect.sync(() => warn(line))
        }).pipe(Effect.as<SandboxState>({ service: undefined, options })))
  )
}

/**
 * The Bash tool over the Workspace (commands run in its working directory), the ResultStore (full outputs) and a
 * CommandExecutor (e.g. `NodeContext.layer`). Commands run in the sandbox (`Process/Sandbox`) wherever it can run;
 * where it cannot, the layer logs one warning and commands run with the analysis alone, unless the options require
 * the sandbox (`sandbox: "bubblewrap"` or `failIfUnavailable`): then the layer fails with
 * {@link Sandbox.SandboxUnavailable} saying why.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: BashOptions = {}
): Layer.Layer<
  Tool.Identifier<"Bash">,
  Sandbox.SandboxUnavailable,
  Workspace | ResultStore | CommandExecutor.CommandExecutor
> => Layer.scoped(definition, make(options))

/**
 * Bash's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together, in one
 * Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: BashOptions = {}) =>
  serviceOf(
    definition,
    Effect.gen(function*() {
      const workspace = yield* Workspace
      const store = yield* ResultStore
      const executor = yield* CommandExecutor.CommandExecutor
      const sandboxOptions = sandboxOptionsOf(options.sandbox)
      const sandbox = yield* sandboxOnDemand(sandboxOptions, workspace.cwd, executor)
      // Background tasks need the session's registry; without one, `run_in_background: true` is refused.
      const tasks = Option.getOrUndefined(yield* Effect.serviceOption(TaskRegistry))
      const services: Services = {
        workspace,
        store,
        env: Process.shellEnvironment(options.env),
        sandbox,
        killGrace: options.killGrace ?? Duration.seconds(2),
        memoryBytes: Math.max(BODY_LIMIT, options.memoryBytes ?? 1024 * 1024),
        progressEvery: Duration.toMillis(Duration.decode(options.progressInterval ?? Duration.seconds(1))),
        maxOutputBytes: Math.max(0, options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES),
        tasks
      }
      return {
        // A soft interrupt lets a command finish (Claude Code's default): stopping it halfway may leave a mess.
        interruptBehavior: "block",
        validate: (input) => {
          if (input.command.trim() === "") return Tool.reject("The command is empty.")
          const refusal = notSupported(input, escapeAllowed(sandboxOptions), tasks !== undefined)
          return refusal === undefined ? Effect.succeed(input) : Tool.reject(refusal)
        },
        // The command is analysed once per input, here; every stage of the call reads this plan.
        plan: (input) => {
          const plan = CommandPlan.planCommand(input.command, workspace)
          return {
            traits: plan.traits,
            claims: plan.claims,
            checkPermissions: () => Effect.map(sandbox, (state) => permissionCheck(state, input, plan)),
            matchRules: plan.matchRules,
            call: (context) =>
              input.run_in_background === true && services.tasks !== undefined
                ? startBackground(services, services.tasks, input, context, plan)
                : runCommand(services, input, context, plan)
          }
        },
        renderUse: (input) => [
          UiBlock.Title({
            text: input.description === undefined || input.description.trim() === ""
              ? "Bash"
              : `Bash: ${input.description}`
          }),
          UiBlock.Code({ text: input.command, language: "bash" })
        ],
        renderResult: (output) => [
          UiBlock.Code({ text: outputText(output) }),
          UiBlock.Fields({
            fields: [
              [
                "exit code",
                output.interpretation === undefined
                  ? String(output.exitCode)
                  : `${output.exitCode} (${output.interpretation})`
              ],
              ["duration", formatDuration(output.durationMs)],
              ["output", formatBytes(output.totalBytes)],
              ...(output.fullOutputPath === undefined ? [] : [["full output", output.fullOutputPath] as const])
            ]
          })
        ],
        toModel: modelText
      }
    })
  )

/**
 * The Bash tool: its definition, the Tag of its service, and {@link layer}.
 *
 * @since 0.1.0
 * @category tools
 */
export const BashTool = Object.assign(definition, { layer })
