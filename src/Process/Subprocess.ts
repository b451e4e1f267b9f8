/**
 * Running a program as a child process whose whole lifecycle belongs to the caller's Scope: the one place that
 * starts and stops processes (Bash's shell, command hooks and Grep's ripgrep all run through it).
 *
 * - **Spawn**: an argv (never a shell unless the argv says so), in a directory, with an explicit environment
 *   (never the parent's implicitly). The program is spawned detached, so it leads a process group of its own, and
 *   its environment carries a marker variable ({@link markerVariable}) with a value unique to the run, which every
 *   descendant inherits: a process that left the group (`setsid`, a daemon's double fork) is still found.
 * - **Input**: `stdin` bytes are written and the pipe closed; without them standard input is `/dev/null`.
 * - **Output**: stdout and stderr are each captured up to a byte cap (with a truncated flag), or streamed chunk by
 *   chunk to a sink; stderr may share stdout's sink (deliveries one at a time, in arrival order). Past a cap the
 *   rest is dropped, and the run either goes on or is stopped ({@link OutputHandling}); memory stays bounded.
 * - **Termination**: on timeout, on interruption, when the Scope closes, when output passes a cap that stops, when
 *   a sink has enough, and (unless `afterExit: "keep"`) after a normal exit: SIGTERM to the group and to every
 *   marked process, a grace period (ended early once nothing runs), then SIGKILL of the group and of every
 *   escapee, repeated with fresh scans until nothing runs. The marker scan needs Linux's `/proc`; elsewhere only the
 *   group is signalled.
 *
 * Timeouts and the grace period are real time: a child process does not run on the fiber's Clock (a TestClock
 * does not advance it).
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import type * as Duration from "effect/Duration"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as detached from "./internal/detached.js"
import * as interactive from "./internal/interactive.js"
import * as processTree from "./internal/processTree.js"
import * as internal from "./internal/subprocess.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A program and its arguments.
 *
 * @since 0.2.0
 * @category models
 */
export type Argv = readonly [program: string, ...args: Array<string>]

/**
 * What a sink answers for a chunk: nothing to go on, `"enough"` to stop the run (exit {@link Exit} `Stopped`).
 *
 * @since 0.2.0
 * @category models
 */
export type Delivery = void | "enough"

/**
 * How one output stream is handled.
 *
 * @since 0.2.0
 * @category models
 */
export interface OutputHandling {
  /**
   * Receives the stream chunk by chunk, in order (one chunk at a time, also when stderr shares it). Must not fail.
   * Absent: the bytes are captured and returned in the {@link Result}.
   */
  readonly onChunk?: ((chunk: Uint8Array) => Effect.Effect<Delivery>) | undefined
  /**
   * The most bytes delivered to `onChunk` or captured. Default 1 MiB when captured, no limit for a sink (which
   * bounds what it keeps).
   */
  readonly maxBytes?: number | undefined
  /**
   * Past `maxBytes`: `"stop"` (default) terminates the run, whose exit is `OutputLimit`; `"drop"` lets it go on
   * and drops the rest. Either way the stream is flagged truncated.
   */
  readonly overflow?: "stop" | "drop" | undefined
}

/**
 * What to run and how.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  readonly argv: Argv
  readonly cwd: string
  /** The complete environment of the program (undefined values are left out; {@link markerVariable} is added). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Written to standard input, which is then closed. Default: standard input is `/dev/null`. */
  readonly stdin?: string | Uint8Array | undefined
  /** Wall-clock limit; the run is terminated when it passes (exit `TimedOut`). Default: none. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Time between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
  /** Default: captured, up to 1 MiB, stopping past it. */
  readonly stdout?: OutputHandling | undefined
  /**
   * `"stdout"`: delivered with stdout, under stdout's handling and cap. Default: captured, up to 1 MiB, stopping past
   * it.
   */
  readonly stderr?: OutputHandling | "stdout" | undefined
  /**
   * What becomes of processes still running when the program exits by itself. `"terminate"` (default): they are
   * terminated at once, so a background job neither outlives the run nor holds its output open. `"keep"`: they
   * are left running, and the run completes once the program has exited and both output pipes are closed (within
   * the timeout).
   */
  readonly afterExit?: "terminate" | "keep" | undefined
}

/**
 * How a run ended.
 *
 * @since 0.2.0
 * @category models
 */
export type Exit = Data.TaggedEnum<{
  /** The program exited with a code. */
  Exited: { readonly code: number }
  /**
   * The program was killed by a signal it did not get from the run; `code` is `128 + signal number`, as a shell reports
   * it.
   */
  Signaled: { readonly signal: string; readonly code: number }
  /** The timeout passed; every process of the run was terminated. */
  TimedOut: { readonly after: Duration.Duration }
  /** A stream passed its cap with `overflow: "stop"`; its first `limitBytes` were kept and the run was terminated. */
  OutputLimit: { readonly stream: "stdout" | "stderr"; readonly limitBytes: number }
  /** A sink answered `"enough"`; the run was terminated. */
  Stopped: {}
}>

/**
 * Constructors and matchers for {@link Exit}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const Exit = Data.taggedEnum<Exit>()

/**
 * The result of one run.
 *
 * @since 0.2.0
 * @category models
 */
export interface Result {
  readonly exit: Exit
  readonly pid: number
  /** Captured stdout (empty when it went to a sink). */
  readonly stdout: Uint8Array
  /** Captured stderr (empty when it went to a sink or to stdout's). */
  readonly stderr: Uint8Array
  /** Whether stdout (with stderr, when shared) passed its cap. */
  readonly stdoutTruncated: boolean
  readonly stderrTruncated: boolean
  /**
   * Processes still running after the program exited by itself (background jobs), terminated then; 0 when the run
   * ended otherwise, or with `afterExit: "keep"`.
   */
  readonly leftovers: number
  /** Whether output was cut short because a process nobody could find held a pipe open after the end. */
  readonly outputIncomplete: boolean
}

/**
 * The program could not be started (`reason: "spawn"`), or its output could not be read (`"read"`).
 *
 * @since 0.2.0
 * @category errors
 */
export class SubprocessError extends Data.TaggedError("SubprocessError")<{
  readonly reason: "spawn" | "read"
  readonly message: string
  readonly cause?: unknown
}> {}

// ---------------------------------------------------------------------------------------------------------------
// constants
// ---------------------------------------------------------------------------------------------------------------

/**
 * The environment variable that tags every process of a run (its value is unique to the run). Strip it from
 * anything you pass on, as Bash does, so an outer run's marker never leaks into what it did not start.
 *
 * @since 0.2.0
 * @category constants
 */
export const markerVariable: string = processTree.markerVariable

// ---------------------------------------------------------------------------------------------------------------
// running
// ---------------------------------------------------------------------------------------------------------------

/**
 * Runs a program to its end (or its timeout, an output cap, a sink's "enough"). Interrupting the effect
 * terminates every process of the run, as does closing the Scope; either way none survives it (within the limits
 * of the marker scan).
 *
 * @since 0.2.0
 * @category running
 */
export const run: (options: Options) => Effect.Effect<Result, SubprocessError, Scope.Scope> = internal.run

/**
 * What to start with {@link spawn}: a program whose standard input and output the caller speaks over.
 *
 * @since 0.3.0
 * @category models
 */
export interface SpawnOptions {
  readonly argv: Argv
  readonly cwd: string
  /** The complete environment of the program (undefined values are left out; {@link markerVariable} is added). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** Time between SIGTERM and SIGKILL when the Scope closes. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
}

/**
 * A program started by {@link spawn}, still running (or just ended: see `exit`).
 *
 * @since 0.3.0
 * @category models
 */
export interface Running {
  readonly pid: number
  /** The value of {@link markerVariable} in the program's environment (and its descendants'). */
  readonly marker: string
  readonly stdin: NodeJS.WritableStream
  readonly stdout: NodeJS.ReadableStream
  readonly stderr: NodeJS.ReadableStream
  /** Completes when the program exits (`Exited` or `Signaled`). */
  readonly exit: Effect.Effect<Exit>
}

/**
 * Starts a long-lived program whose pipes the caller drives (a language server over stdio), as a scoped resource:
 * closing the Scope terminates the group and every marked process as {@link run} does (SIGTERM, a grace period,
 * SIGKILL), whether the program still runs or has exited leaving children behind. ({@link spawnService} is the
 * unscoped form, for a supervisor that stops and restarts its program itself.)
 *
 * @since 0.3.0
 * @category running
 */
export const spawn: (options: SpawnOptions) => Effect.Effect<Running, SubprocessError, Scope.Scope> = interactive.spawn

/**
 * What {@link spawnService} starts.
 *
 * @since 0.3.0
 * @category models
 */
export interface ServiceOptions {
  readonly argv: Argv
  readonly cwd?: string | undefined
  /** The whole environment of the program (nothing else of this process's is passed). */
  readonly env: Readonly<Record<string, string>>
  /** Between SIGTERM and SIGKILL when it is stopped. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
}

/**
 * A long-lived program with its pipes (stdin, stdout, stderr), marked (and, without Linux's `/proc`, in a process
 * group of its own).
 *
 * @since 0.3.0
 * @category models
 */
export interface Service {
  readonly child: ChildProcessWithoutNullStreams
  /**
   * Ends its whole tree: SIGTERM to every process carrying its marker and every descendant of one (what it forked,
   * even after it exited itself; without `/proc`, its group), a grace period, then SIGKILL. Call it after closing its input when it should get a chance to
   * exit by itself first.
   */
  readonly stop: Effect.Effect<void>
}

/**
 * Starts a long-lived program (an MCP stdio server, say) so that its whole tree can be ended: it carries a marker,
 * and {@link killAllNow} knows it. On Linux it stays in this process's group and session (a session of its own is a
 * scheduler autogroup of its own, slower to answer round trips on a busy machine) and its tree is found by marker and
 * parentage; elsewhere it leads a process group of its own. Start-up failures (no such program) come as the child's
 * `error` event, as with `child_process.spawn`.
 *
 * @since 0.3.0
 * @category running
 */
export const spawnService: (options: ServiceOptions) => Service = internal.spawnService

/**
 * Whether a process runs (exists and is not a zombie).
 *
 * @since 0.3.0
 * @category inspection
 */
export const isRunning: (pid: number) => boolean = processTree.isRunning

/**
 * When a running process started, in clock ticks since boot (Linux `/proc`; undefined elsewhere, and for a process
 * that is gone). A pid and its start time name one process for good: a reused pid has a later start time.
 *
 * @since 0.3.0
 * @category inspection
 */
export const startTimeOf: (pid: number) => number | undefined = processTree.startTimeOf

/**
 * SIGKILL, synchronously and without a grace period, to every process of every run still going in this process
 * (the groups and the escapees): for a signal handler about to exit (the CLI's second Ctrl-C).
 *
 * @since 0.2.0
 * @category running
 */
export const killAllNow: () => void = internal.killAllNow

/**
 * The direct children of a process, read from /proc (empty where there is none to read).
 *
 * @since 0.3.0
 * @category processes
 */
export { childrenOf } from "./internal/processTree.js"

/**
 * What {@link spawnDetached} starts.
 *
 * @since 0.3.0
 * @category models
 */
export interface DetachedOptions {
  readonly argv: Argv
  readonly cwd: string
  /** The complete environment of the program (undefined values are left out; {@link markerVariable} is added). */
  readonly env: Readonly<Record<string, string | undefined>>
}

/**
 * What names a process tree for good, in this process or a later one: the group its program leads (its pid), the
 * marker its processes carry, and a lower bound of their start times (clock ticks since boot).
 *
 * @since 0.3.0
 * @category models
 */
export interface TreeIdentity {
  readonly pid: number
  readonly marker: string
  readonly startTicks: number
}

/**
 * A program started by {@link spawnDetached}.
 *
 * @since 0.3.0
 * @category models
 */
export interface Detached {
  readonly identity: TreeIdentity
  /** Completes when the program exits (while this process runs). */
  readonly exited: Effect.Effect<void>
}

/**
 * How {@link terminateTree} went.
 *
 * @since 0.3.0
 * @category models
 */
export interface TreeTermination {
  /** Processes found running when termination began. */
  readonly found: number
  /** Whether SIGKILL was needed. */
  readonly escalated: boolean
  /** Processes still running when it gave up. */
  readonly survivors: ReadonlyArray<number>
}

/**
 * Starts a program with no pipes to this process (standard input, output and error are `/dev/null`: its argv says
 * where its output goes), leading a process group of its own and marked, so that it may outlive this process (a
 * background task kept between CLI runs) and its whole tree can still be ended from its {@link TreeIdentity} by
 * {@link terminateTree}, here or in a later process. Until then {@link killAllNow} knows it. Nothing ends it on its
 * own: its owner must.
 *
 * @since 0.3.0
 * @category running
 */
export const spawnDetached: (options: DetachedOptions) => Effect.Effect<Detached, SubprocessError> =
  detached.spawnDetached

/**
 * Whether any process of a tree runs (its group, or a process carrying its marker).
 *
 * @since 0.3.0
 * @category inspection
 */
export const treeRuns: (identity: TreeIdentity) => boolean = detached.treeRuns

/**
 * Ends a tree from its identity: SIGTERM to its group and every marked process, a grace period, then SIGKILL, as
 * {@link run}'s teardown does.
 *
 * @since 0.3.0
 * @category running
 */
export const terminateTree: (identity: TreeIdentity, grace: Duration.DurationInput) => Effect.Effect<TreeTermination> =
  detached.terminateTree
