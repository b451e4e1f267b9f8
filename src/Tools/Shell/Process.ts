/**
 * Running one shell command as a child process whose whole lifecycle belongs to the caller's Scope.
 *
 * - **Spawn**: `bash --norc --noprofile -c` through `@effect/platform`'s `Command`, in the given directory, with an explicit
 *   environment (never the parent's implicitly: `extendEnv` is off). The platform spawns detached, so the shell
 *   leads a process group of its own.
 * - **Output**: stdout and stderr are one stream, interleaved exactly as written. The shell itself points
 *   descriptor 2 at descriptor 1 before the command runs (`exec 2>&1`), so both are the same pipe and the kernel
 *   keeps the order of writes. Merging two pipes afterwards could not: the order of reads across two pipes is
 *   a race. Standard input is `/dev/null`, so a command waiting for input ends instead of hanging.
 * - **Termination**: on timeout, on interruption, and also after a normal exit, every process of the call is
 *   terminated ({@link ProcessTree.terminate}): SIGTERM to the group and to every process carrying the call's
 *   marker variable, a grace period, then SIGKILL. A background job (`sleep 100 &`) does not outlive the call,
 *   and cannot hold the output pipe open after the shell exits.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type { PlatformError } from "@effect/platform/Error"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import { argvProblem } from "../internal/argumentLimits.js"
import { realSleep } from "./internal/realTime.js"
import * as ProcessTree from "./ProcessTree.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A program and its arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type Argv = readonly [program: string, ...args: Array<string>]

/**
 * What to run and how.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellOptions {
  /** The command, as the user or model wrote it. */
  readonly command: string
  readonly cwd: string
  /** The complete environment of the shell (the call's marker variable is added). */
  readonly env: Readonly<Record<string, string>>
  /** Wall-clock limit; the tree is terminated when it passes. */
  readonly timeout: Duration.DurationInput
  /** Time between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput
  /** Receives the interleaved output, chunk by chunk, in order. Must not fail. */
  readonly onOutput: (chunk: Uint8Array) => Effect.Effect<void>
  /** Wraps the shell's argv, e.g. in a sandbox. Default: none. */
  readonly wrap?: (argv: Argv) => Argv
  /**
   * The most output bytes delivered to `onOutput`. Once more arrive, the rest is dropped, the tree is terminated
   * and the run ends as {@link ShellExit} `OutputLimit`. Default: no limit.
   */
  readonly maxOutputBytes?: number
}

/**
 * How the shell ended.
 *
 * @since 0.1.0
 * @category models
 */
export type ShellExit = Data.TaggedEnum<{
  /** The shell exited with a code. */
  Exited: { readonly code: number }
  /** The shell was killed by a signal it did not get from us; `code` is `128 + signal number`, as a shell reports it. */
  Signaled: { readonly signal: string; readonly code: number }
  /** The timeout passed; the tree was terminated. */
  TimedOut: { readonly after: Duration.Duration }
  /** More than `maxOutputBytes` of output arrived; the first `limitBytes` were delivered and the tree was terminated. */
  OutputLimit: { readonly limitBytes: number }
}>

/**
 * Constructors and matchers for {@link ShellExit}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const ShellExit = Data.taggedEnum<ShellExit>()

/**
 * The result of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellResult {
  readonly exit: ShellExit
  readonly pid: number
  /** Processes still running after the shell ended (background jobs), terminated at the end of the call. */
  readonly leftovers: number
  /** Whether the output was cut short because a process nobody could find held the pipe open. */
  readonly outputIncomplete: boolean
}

/**
 * The shell could not be started, or its output could not be read.
 *
 * @since 0.1.0
 * @category errors
 */
export class ShellProcessError extends Data.TaggedError("effect-tool-runtime/Tools/Shell/ShellProcessError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

// ---------------------------------------------------------------------------------------------------------------
// environment
// ---------------------------------------------------------------------------------------------------------------

/**
 * Variables never passed to the shell: they make bash or the tools it runs execute code or read configuration
 * the analysis cannot see (`BASH_ENV`, exported functions, `LD_PRELOAD`, git configuration from the
 * environment...).
 *
 * @since 0.1.0
 * @category environment
 */
export const droppedVariable =
  /^(?:BASH_ENV|ENV|BASH_FUNC_.*|PROMPT_COMMAND|PS4|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|IFS|LD_PRELOAD|LD_AUDIT|LD_LIBRARY_PATH|NODE_OPTIONS|PYTHONSTARTUP|PERL5OPT|RUBYOPT|GIT_(?!AUTHOR_|COMMITTER_).*|EFFECT_TOOL_RUNTIME_.*)$/

/**
 * The environment for a shell: the given one (default: this process's) minus {@link droppedVariable}, with a
 * non-interactive setup (no pager, no terminal prompts).
 *
 * @since 0.1.0
 * @category environment
 */
export const shellEnvironment = (base: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && !droppedVariable.test(name)) env[name] = value
  }
  return { ...env, PAGER: "cat", GIT_PAGER: "cat", GIT_TERMINAL_PROMPT: "0" }
}

// ---------------------------------------------------------------------------------------------------------------
// running
// ---------------------------------------------------------------------------------------------------------------

/**
 * The script bash runs: the redirections first, then the command. Bash parses a whole line (or a whole compound
 * command) before running any of it, so a syntax error in the command's first line is printed before the
 * redirection took effect: it goes to the real stderr, which is read too. Keeping one line keeps `$LINENO` and
 * bash's error messages numbered as the command was written.
 *
 * @since 0.1.0
 * @category running
 */
export const shellScript = (command: string): string => `exec 2>&1 </dev/null; ${command}`

const signalNumber = (name: string): number => (os.constants.signals as Record<string, number | undefined>)[name] ?? 0

const DEFAULT_GRACE = Duration.seconds(2)
/** How long output may keep arriving after every process we know of is gone. */
const DRAIN_LIMIT_MS = 2_000

/**
 * Runs a command to completion (or timeout). Interrupting the effect terminates the whole tree, as does closing
 * the Scope; either way no process of the call survives it (within the limits in `ProcessTree`).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: ShellOptions): Effect.Effect<ShellResult, ShellProcessError, CommandExecutor.CommandExecutor | Scope.Scope> =>
  Effect.gen(function*() {
    const grace = options.killGrace ?? DEFAULT_GRACE
    const marker = randomUUID()
    // `--norc`: libuv's stdio pipes are socketpairs, and bash reads ~/.bashrc when its stdin is a socket ("run by
    // rshd") unless SHLVL says it is nested; a user's rc file must not change what an analysed command does.
    const argv: Argv = ["bash", "--norc", "--noprofile", "-c", shellScript(options.command)]
    const [program, ...args] = options.wrap?.(argv) ?? argv
    // The kernel refuses NUL bytes and oversized arguments; Node throws on them. Say so instead of crashing.
    const refused = argvProblem([program, ...args], options.env)
    if (refused !== undefined) return yield* new ShellProcessError({ message: `cannot start bash: ${refused}` })
    const command = Command.make(program, ...args).pipe(
      Command.workingDirectory(options.cwd),
      Command.env({ ...options.env, [ProcessTree.markerVariable]: marker }, { extendEnv: false })
    )
    const startTicks = ProcessTree.startTicksFloor()
    const started = yield* Command.start(command).pipe(
      Effect.mapError((cause) => new ShellProcessError({ message: `cannot start bash in ${options.cwd}: ${cause.message}`, cause }))
    )
    const tree: ProcessTree.ProcessTree = { pgid: started.pid, marker, startTicks }
    let cleanedUp = false
    // Runs before the platform's own release (finalizers run in reverse), which would wait without limit.
    yield* Effect.addFinalizer(() => (cleanedUp ? Effect.void : ProcessTree.terminate(tree, grace)))

    // stderr carries nothing once the shell has redirected it, except what comes before (a syntax error in the
    // command's first line) or from a wrapper (bwrap's own errors). Two readers share one lock, so chunks reach
    // `onOutput` one at a time; `Stream.merge` would do the same at twice the cost per chunk.
    const lock = yield* Effect.makeSemaphore(1)
    // Output past the limit is never delivered (memory and disk stay bounded); its first byte ends the run.
    const limit = options.maxOutputBytes ?? Infinity
    const overflowed = yield* Deferred.make<void>()
    let delivered = 0
    const deliver = (chunk: Uint8Array): Effect.Effect<void> => {
      const room = limit - delivered
      if (chunk.length <= room) {
        delivered += chunk.length
        return options.onOutput(chunk)
      }
      delivered = limit
      const kept = room > 0 ? options.onOutput(chunk.subarray(0, room)) : Effect.void
      return Effect.zipRight(kept, Deferred.succeed(overflowed, undefined))
    }
    const readAll = (stream: Stream.Stream<Uint8Array, PlatformError>) =>
      Stream.runForEachChunk(stream, (chunk) => lock.withPermits(1)(Effect.forEach(chunk, deliver, { discard: true })))
    const reader = yield* Effect.all([readAll(started.stdout), readAll(started.stderr)], { concurrency: 2, discard: true }).pipe(
      Effect.mapError((cause) => new ShellProcessError({ message: `cannot read the command's output: ${cause.message}`, cause })),
      Effect.forkScoped
    )

    const exitCode = started.exitCode.pipe(
      Effect.map((code): ShellExit => ShellExit.Exited({ code })),
      Effect.catchAll((error) => {
        const signal = /signal: (SIG[A-Z0-9]+)/.exec(error.message)?.[1] ?? "SIGKILL"
        return Effect.succeed(ShellExit.Signaled({ signal, code: 128 + signalNumber(signal) }))
      })
    )
    const timeout = Duration.decode(options.timeout)
    const exit = yield* Effect.raceAll([
      exitCode,
      Effect.as(realSleep(Duration.toMillis(timeout)), ShellExit.TimedOut({ after: timeout })),
      Effect.as(Deferred.await(overflowed), ShellExit.OutputLimit({ limitBytes: limit }))
    ])
    const termination = yield* ProcessTree.terminate(tree, grace)
    // Nothing of the call runs any more, so nothing can start anything: the finalizer has nothing left to do.
    cleanedUp = termination.survivors.length === 0

    // Every writer is gone, so the pipe reaches its end; unless a process we could not find holds it open.
    const drained = yield* Fiber.join(reader).pipe(
      Effect.as(true),
      Effect.raceFirst(Effect.as(realSleep(DRAIN_LIMIT_MS), false))
    )
    if (!drained) yield* Fiber.interrupt(reader)
    return {
      exit,
      pid: started.pid,
      leftovers: exit._tag === "TimedOut" || exit._tag === "OutputLimit" ? 0 : termination.found,
      outputIncomplete: !drained
    } satisfies ShellResult
  })
