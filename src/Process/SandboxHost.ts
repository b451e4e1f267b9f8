/**
 * The sandbox host: a process of its own that holds the OS sandbox ({@link Sandbox}) for one command. sandbox-runtime
 * lives in the process that started it (its filtering proxy, the bridges into the sandbox, the mount points made for
 * protected paths that do not exist); a command that must outlive that process (a background task kept between
 * `exec --session` runs) runs under a host instead, which starts sandbox-runtime with the same configuration, runs
 * the command in it under the caller's {@link SandboxPolicy}, and keeps the sandbox for as long as the command runs.
 *
 * - **The program**: `node <entry> <request JSON> <program> [args...]` ({@link argv} builds it; the entry calls
 *   {@link main}; {@link program} is the package's own). The command gets the host's standard input, output and
 *   error (they go where the host's go: output never passes through the host), its working directory and its
 *   environment.
 * - **Exit**: the host exits with the command's exit code, or 128 + the signal number when a signal killed it (as a
 *   shell reports it), once the sandbox is released. One that cannot start the sandbox says why on standard error
 *   and exits with {@link CANNOT_SANDBOX}: the command never runs unsandboxed.
 * - **One tree**: the command stays in the host's process group and carries its environment's marker
 *   (`Subprocess.markerVariable`), as do sandbox-runtime's helpers, so whoever ends the host's tree (TaskStop in a
 *   later process, `Subprocess.terminateTree`) ends the command, its sandbox and the host together.
 * - **Told to stop** (SIGTERM, SIGINT, SIGHUP, as often as they come): the command gets SIGTERM, a grace period,
 *   then SIGKILL; then the sandbox is released (mount points removed, proxy and bridges closed) and the host exits
 *   with 128 + the signal's number.
 *
 * May import: effect, the `Process` room and `Shared`.
 *
 * @since 0.3.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as childProcess from "node:child_process"
import * as nodeFs from "node:fs"
import * as os from "node:os"
import { fileURLToPath } from "node:url"
import * as Sandbox from "./Sandbox.js"
import type { Argv } from "./Subprocess.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a host is asked: the policy the command runs under, and the id violations are attributed to.
 *
 * @since 0.3.0
 * @category models
 */
export const HostRequest = Schema.Struct({
  id: Schema.String,
  policy: Schema.Struct({
    writable: Schema.Array(Schema.String),
    protectedPaths: Schema.Array(Schema.String),
    unreadable: Schema.Array(Schema.String),
    domains: Schema.Array(Schema.String)
  })
})

/**
 * @since 0.3.0
 * @category models
 */
export type HostRequest = typeof HostRequest.Type

/**
 * The exit code of a host that could not start the sandbox (the command did not run).
 *
 * @since 0.3.0
 * @category constants
 */
export const CANNOT_SANDBOX = 126

/** Between SIGTERM and SIGKILL of the command when the host is told to stop. */
const GRACE = Duration.seconds(1)

const RequestJson = Schema.parseJson(HostRequest)
const encodeRequest = Schema.encodeSync(RequestJson)
const decodeRequest = Schema.decodeUnknownEither(RequestJson)

// ---------------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------------

/**
 * The program that runs the package's own host, `[process.execPath, "<package>/dist/Process/internal/
 * sandboxHostMain.js"]` (found from this module, and from the bundled CLI in `dist/bin/`, both one directory below
 * `dist/`); undefined where that file is missing (the sources run without a build). Pass it as `TaskRegistry`'s
 * `sandboxHost`.
 *
 * @since 0.3.0
 * @category constructors
 */
export const program = (): Argv | undefined => {
  const entry = fileURLToPath(new URL("../Process/internal/sandboxHostMain.js", import.meta.url))
  return nodeFs.existsSync(entry) ? [process.execPath, entry] : undefined
}

/**
 * The argv that runs `command` under a host: `host` is the program that runs the host's entry (e.g.
 * {@link program}).
 *
 * @since 0.3.0
 * @category constructors
 */
export const argv = (host: Argv, request: HostRequest, command: Argv): Argv => [
  host[0],
  ...host.slice(1),
  encodeRequest(request),
  ...command
]

// ---------------------------------------------------------------------------------------------------------------
// running
// ---------------------------------------------------------------------------------------------------------------

const signalNumber = (signal: NodeJS.Signals | null): number =>
  signal === null ? 0 : (os.constants.signals as Record<string, number | undefined>)[signal] ?? 0

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number => code ?? 128 + signalNumber(signal)

const ended = (child: childProcess.ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null

/** Completes with the child's exit code, as a shell reports it. */
const awaitExit = (child: childProcess.ChildProcess): Effect.Effect<number> =>
  Effect.async<number>((resume) => {
    if (ended(child)) return resume(Effect.succeed(exitCodeOf(child.exitCode, child.signalCode)))
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      resume(Effect.succeed(exitCodeOf(code, signal)))
    child.once("exit", onExit)
    return Effect.sync(() => void child.removeListener("exit", onExit))
  })

/**
 * Whether the child exits within `millis` (real time). One callback, not a race: this runs in a finalizer, where a
 * race would wait for its loser (the timer) however early the child exits.
 */
const exitsWithin = (child: childProcess.ChildProcess, millis: number): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    if (ended(child)) return resume(Effect.succeed(true))
    const onExit = () => {
      clearTimeout(timer)
      resume(Effect.succeed(true))
    }
    const timer = setTimeout(() => {
      child.removeListener("exit", onExit)
      resume(Effect.succeed(false))
    }, millis)
    child.once("exit", onExit)
    return Effect.sync(() => {
      clearTimeout(timer)
      child.removeListener("exit", onExit)
    })
  })

/** SIGTERM, at most `GRACE` to exit, then SIGKILL (and the wait for it): the command is gone before the sandbox. */
const stopChild = (child: childProcess.ChildProcess): Effect.Effect<void> =>
  Effect.gen(function*() {
    // Never started (the spawn failed), or already gone.
    if (child.pid === undefined || ended(child)) return
    child.kill("SIGTERM")
    if (yield* exitsWithin(child, Duration.toMillis(GRACE))) return
    child.kill("SIGKILL")
    yield* awaitExit(child)
  })

/**
 * Runs `command` in the sandbox under the request's policy and answers its exit code (128 + the signal's number
 * when a signal killed it). The sandbox is released when the Scope closes, after the command has been stopped.
 *
 * @since 0.3.0
 * @category running
 */
export const run = (
  request: HostRequest,
  command: Argv
): Effect.Effect<number, Sandbox.SandboxUnavailable, Scope.Scope> =>
  Effect.gen(function*() {
    const sandbox = Context.get(yield* Layer.build(Sandbox.layer), Sandbox.Sandbox)
    const wrapped = yield* sandbox.wrap(command, request.policy, request.id)
    // Not `Subprocess`: the command must stay in the host's group and keep the host's marker, so that ending the
    // host's tree ends it (a fresh group and marker would let it outlive a host killed without a grace).
    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () => childProcess.spawn(wrapped[0], wrapped.slice(1), { stdio: "inherit" }),
        catch: (error) =>
          new Sandbox.SandboxUnavailable({ message: `the sandboxed command cannot start: ${String(error)}` })
      }),
      stopChild
    )
    return yield* Effect.raceFirst(
      awaitExit(child),
      Effect.async<never, Sandbox.SandboxUnavailable>((resume) => {
        const onError = (error: Error) =>
          resume(
            Effect.fail(
              new Sandbox.SandboxUnavailable({ message: `the sandboxed command cannot start: ${error.message}` })
            )
          )
        child.once("error", onError)
        return Effect.sync(() => void child.removeListener("error", onError))
      })
    )
  })

/** The signals that tell a host to stop. */
const STOP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const

/**
 * The host's program: decodes `args` (`<request JSON> <program> [args...]`), runs the command with {@link run}, and
 * exits with its code. A stop signal interrupts the run (the command is stopped, the sandbox released) and the host
 * exits with 128 + that signal's number; further signals while it cleans up are ignored (the caller's SIGKILL after
 * its grace is the end of it).
 *
 * @since 0.3.0
 * @category running
 */
export const main = (args: ReadonlyArray<string>): void => {
  process.title = "effect-tool-runtime sandbox host"
  const fail = (message: string, code: number) => {
    process.stderr.write(`effect-tool-runtime sandbox host: ${message}\n`)
    process.exitCode = code
  }
  const [json, program, ...rest] = args
  const request = decodeRequest(json)
  if (Either.isLeft(request) || program === undefined) {
    return fail(
      Either.isLeft(request)
        ? `the request is not valid: ${ParseResult.TreeFormatter.formatErrorSync(request.left)}`
        : "no command to run",
      2
    )
  }
  const fiber = Effect.runFork(Effect.scoped(run(request.right, [program, ...rest])))
  let stoppedBy: NodeJS.Signals | undefined
  const onSignal = (signal: NodeJS.Signals) => {
    if (stoppedBy !== undefined) return
    stoppedBy = signal
    Effect.runFork(Fiber.interrupt(fiber))
  }
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal)
  fiber.addObserver((exit) => {
    if (stoppedBy !== undefined) process.exitCode = 128 + signalNumber(stoppedBy)
    else if (Exit.isSuccess(exit)) process.exitCode = exit.value
    else {
      const failure = Cause.failureOption(exit.cause)
      fail(Option.isSome(failure) ? failure.value.message : Cause.pretty(exit.cause), CANNOT_SANDBOX)
    }
    // The command has ended and the sandbox is released: nothing sandbox-runtime left open may keep the host (and
    // so the task) alive. Its standard output and error are files or pipes written synchronously.
    process.exit()
  })
}
