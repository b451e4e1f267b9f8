/**
 * Running one shell command: Bash's shell over {@link Subprocess.run}, which owns the process lifecycle.
 *
 * - **Spawn**: `bash --norc --noprofile -c` in the given directory, with an explicit environment (never the
 *   parent's implicitly). The shell leads a process group of its own and carries the run's marker variable.
 * - **Output**: stdout and stderr are one stream, interleaved exactly as written. The shell itself points
 *   descriptor 2 at descriptor 1 before the command runs (`exec 2>&1`), so both are the same pipe and the kernel
 *   keeps the order of writes. Merging two pipes afterwards could not: the order of reads across two pipes is
 *   a race. Standard input is `/dev/null`, so a command waiting for input ends instead of hanging.
 * - **Termination**: on timeout, on interruption, and also after a normal exit, every process of the call is
 *   terminated: SIGTERM to the group and to every process carrying the call's marker variable, a grace period,
 *   then SIGKILL. A background job (`sleep 100 &`) does not outlive the call, and cannot hold the output pipe open
 *   after the shell exits.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Subprocess from "../../Process/Subprocess.js"
import { argvProblem } from "../internal/argumentLimits.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A program and its arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type Argv = Subprocess.Argv

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
  readonly killGrace?: Duration.DurationInput | undefined
  /** Receives the interleaved output, chunk by chunk, in order. Must not fail. */
  readonly onOutput: (chunk: Uint8Array) => Effect.Effect<void>
  /** Wraps the shell's argv, e.g. in a sandbox. Default: none. */
  readonly wrap?: ((argv: Argv) => Argv) | undefined
  /**
   * The most output bytes delivered to `onOutput`. Once more arrive, the rest is dropped, the tree is terminated
   * and the run ends as {@link ShellExit} `OutputLimit`. Default: no limit.
   */
  readonly maxOutputBytes?: number | undefined
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
export class ShellProcessError extends Data.TaggedError("ShellProcessError")<{
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
export const shellEnvironment = (
  base: Readonly<Record<string, string | undefined>> = process.env
): Record<string, string> => {
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

/**
 * The argv of the shell that runs a command. `--norc`: bash reads ~/.bashrc when its stdin is a socket ("run by
 * rshd") unless SHLVL says it is nested; a user's rc file must not change what an analysed command does.
 *
 * @since 0.3.0
 * @category running
 */
export const bashArgv = (command: string): Argv => ["bash", "--norc", "--noprofile", "-c", shellScript(command)]

/**
 * Runs a command to completion (or timeout). Interrupting the effect terminates the whole tree, as does closing
 * the Scope; either way no process of the call survives it (within the limits of {@link Subprocess.run}).
 *
 * @since 0.1.0
 * @category running
 */
export const run = (options: ShellOptions): Effect.Effect<ShellResult, ShellProcessError, Scope.Scope> =>
  Effect.gen(function*() {
    const argv = bashArgv(options.command)
    const wrapped = options.wrap?.(argv) ?? argv
    // The kernel refuses NUL bytes and oversized arguments; Node throws on them. Say so instead of crashing.
    const refused = argvProblem(wrapped, options.env)
    if (refused !== undefined) return yield* new ShellProcessError({ message: `cannot start bash: ${refused}` })
    const limit = options.maxOutputBytes ?? Infinity
    const result = yield* Subprocess.run({
      argv: wrapped,
      cwd: options.cwd,
      env: options.env,
      timeout: options.timeout,
      ...(options.killGrace === undefined ? {} : { killGrace: options.killGrace }),
      // stderr carries nothing once the shell has redirected it, except what comes before (a syntax error in the
      // command's first line) or from a wrapper (bwrap's own errors): it joins stdout, under stdout's limit.
      stdout: { onChunk: options.onOutput, maxBytes: limit, overflow: "stop" },
      stderr: "stdout"
    }).pipe(
      Effect.mapError((error) => {
        // Named as the user knows it: bash, also when a sandbox wraps it.
        const why = error.cause instanceof Error ? error.cause.message : String(error.cause)
        return new ShellProcessError({
          message: error.reason === "spawn" ? `cannot start bash in ${options.cwd}: ${why}` : error.message,
          cause: error
        })
      })
    )
    const exit: ShellExit = Subprocess.Exit.$match(result.exit, {
      Exited: ({ code }) => ShellExit.Exited({ code }),
      Signaled: ({ code, signal }) => ShellExit.Signaled({ signal, code }),
      TimedOut: ({ after }) => ShellExit.TimedOut({ after }),
      OutputLimit: ({ limitBytes }) => ShellExit.OutputLimit({ limitBytes }),
      // `onOutput` never answers "enough".
      Stopped: () => ShellExit.OutputLimit({ limitBytes: limit })
    })
    return {
      exit,
      pid: result.pid,
      leftovers: result.leftovers,
      outputIncomplete: result.outputIncomplete
    } satisfies ShellResult
  })
