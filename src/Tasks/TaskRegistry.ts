/**
 * Background tasks (the `Tasks` room): commands started with Bash's `run_in_background: true` that go on after the
 * call returned, each with its output in a file, and the registry that knows them. This room owns the registry, the
 * task records and their files; it may import `effect`, `Process/` (the one way processes are started and ended),
 * `Session/` (the session directory) and `Shared/`. The tools that use it live in `Tools/Tasks.ts`, the notification
 * in the agent loop (`Agent/AgentLoop.ts`) and the CLI.
 *
 * - **Start**: the caller (Bash) hands over the argv it would run in the foreground (sandbox wrapping included); the
 *   registry runs it detached through `Subprocess.spawnDetached`, under a small shell that sends its output (stdout
 *   and stderr interleaved, as in the foreground) straight into `<directory>/<id>.log` and writes the exit code to
 *   `<directory>/<id>.exit`. Output never passes through this process's memory.
 * - **Cap**: the kernel keeps the file under the cap (`RLIMIT_FSIZE`, soft and hard, a little over `capBytes`, which also
 *   applies to any other file the task writes: at the default of 5 GiB that is rarely felt); a task that passes
 *   `capBytes` is stopped, its file cut to `capBytes`, and its status says so (`StoppedAtCap`).
 * - **Status**: `Running`, `Exited` (with the code), `Killed` (by TaskStop, by its owner going away, or from outside),
 *   `StoppedAtCap`; start and end times. When the program ends, what it left running is ended too (SIGTERM, grace,
 *   SIGKILL to its group and every marked process).
 * - **Reads**: each read returns the output since the last read, at most `readLimitBytes` of it (the rest of that
 *   stretch is skipped, and the read says how many bytes and where the whole file is); every byte is either returned
 *   exactly once or counted as skipped.
 * - **Notifications**: a task that ends is announced once ({@link TaskRegistry} `takeNotifications`), unless a read
 *   already reported its final status. A task whose output stopped with a last line that looks like a prompt for
 *   input is announced once per stall (the stall watchdog, on the Clock).
 * - **Owner**: closing the registry's scope stops every running task (`onClose: "stop"`, the default); with
 *   `"detach"` (the CLI's `exec --session`) running tasks are left running and their records stay in the directory,
 *   identified by pid, marker and start time, so the next process over the same directory reads and stops them.
 *   {@link TaskRegistry} `stopOnClose` switches a detaching registry back (the CLI does on SIGINT/SIGTERM).
 * - **Sandboxed tasks** ({@link TaskSpec} `sandbox`): the OS sandbox lives in the process that started it (its
 *   proxy, its bridges, the mount points of protected paths). A detaching registry with a `sandboxHost` runs such a
 *   task under a sandbox host of its own (`Process/SandboxHost`: a process in the task's tree that holds the
 *   sandbox as long as the command runs), so it outlives this process like any other task, and ends with its tree.
 *   Otherwise the command is wrapped in this process's sandbox, and the task is stopped when the registry closes,
 *   detaching or not: a sandbox that went with its process would stop protecting what it guards.
 *
 * @since 0.3.0
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as nodeFs from "node:fs"
import * as nodePath from "node:path"
import type { SandboxPolicy, SandboxUnavailable } from "../Process/Sandbox.js"
import * as SandboxHost from "../Process/SandboxHost.js"
import * as Subprocess from "../Process/Subprocess.js"
import { Session } from "../Session/Session.js"
import { realSleep } from "../Shared/realTime.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * Where a task is.
 *
 * @since 0.3.0
 * @category models
 */
export const TaskStatus = Schema.Union(
  Schema.TaggedStruct("Running", {}),
  Schema.TaggedStruct("Exited", { code: Schema.Number }),
  Schema.TaggedStruct("Killed", { by: Schema.Literal("TaskStop", "owner", "outside") }),
  Schema.TaggedStruct("StoppedAtCap", { capBytes: Schema.Number })
)
/**
 * @since 0.3.0
 * @category models
 */
export type TaskStatus = typeof TaskStatus.Type

/**
 * What the registry keeps of a task (also its file `<directory>/<id>.json`).
 *
 * @since 0.3.0
 * @category models
 */
export const TaskRecord = Schema.Struct({
  id: Schema.String,
  command: Schema.String,
  description: Schema.optional(Schema.String),
  pid: Schema.Number,
  marker: Schema.String,
  startTicks: Schema.Number,
  /** When the program itself started (with its pid, it names the process for good: a reused pid starts later). */
  programStartTicks: Schema.optional(Schema.Number),
  /** Milliseconds since the epoch. */
  startedAt: Schema.Number,
  endedAt: Schema.optional(Schema.Number),
  status: TaskStatus,
  outputPath: Schema.String,
  capBytes: Schema.Number,
  /** Bytes of the output already returned or skipped by reads. */
  readOffset: Schema.Number,
  /** Whether the end was announced (a notification, or a read that reported the final status). */
  notified: Schema.Boolean
})
/**
 * @since 0.3.0
 * @category models
 */
export type TaskRecord = typeof TaskRecord.Type

/**
 * What one read of a task's output gives.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskRead {
  readonly task: TaskRecord
  /** The output since the previous read (its last `readLimitBytes` bytes when there was more). */
  readonly output: string
  /** Bytes of this stretch that were left out (they are in `task.outputPath`). */
  readonly skippedBytes: number
  /** The byte offsets this read covered, `[from, to)`; the next read starts at `to`. */
  readonly from: number
  readonly to: number
  /** Whether `block` gave up waiting (the task still runs). */
  readonly waitTimedOut: boolean
}

/**
 * An announcement for the model: a task ended, or stalled at what looks like a prompt.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskNotification {
  readonly kind: "ended" | "stalled"
  readonly task: TaskRecord
  /** The text the model gets (a `<task-notification>` block). */
  readonly text: string
}

/**
 * No task with this id in the registry.
 *
 * @since 0.3.0
 * @category errors
 */
export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{ readonly id: string; readonly message: string }> {}

/**
 * A task could not be started (its directory, or the program).
 *
 * @since 0.3.0
 * @category errors
 */
export class TaskStartError extends Data.TaggedError("TaskStartError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * What to start.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskSpec {
  /** The command as the model wrote it (for the record and the notification). */
  readonly command: string
  readonly description?: string | undefined
  /** The argv that runs it, as it would run in the foreground (a sandbox's wrapping included). */
  readonly argv: Subprocess.Argv
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Run once the task has ended (in this process), or when this registry closes: what else the task held. */
  readonly release?: Effect.Effect<void> | undefined
  /** Run `argv` in the OS sandbox (see the module's "Sandboxed tasks"). Default: unsandboxed. */
  readonly sandbox?: TaskSandbox | undefined
}

/**
 * How a task's command is sandboxed: the policy (what a sandbox host applies) and the way to wrap it in this
 * process's sandbox (where no host is used).
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskSandbox {
  readonly policy: SandboxPolicy
  /** The argv that runs `argv` in this process's sandbox; what the sandbox holds for it is released with the Scope. */
  readonly wrap: (argv: Subprocess.Argv) => Effect.Effect<Subprocess.Argv, SandboxUnavailable, Scope.Scope>
}

/**
 * Options of {@link TaskRegistry.layer}.
 *
 * @since 0.3.0
 * @category models
 */
export interface TaskRegistryOptions {
  /** Where task records and output files live (created 0700). */
  readonly directory: string
  /** The most output bytes a task keeps on disk; past it the task is stopped. Default 5 GiB (Claude Code's). */
  readonly capBytes?: number | undefined
  /** The most bytes one read returns (the rest of its stretch is skipped). Default 30,000. */
  readonly readLimitBytes?: number | undefined
  /** What closing the scope does to running tasks. Default `"stop"`. */
  readonly onClose?: "stop" | "detach" | undefined
  /** Between SIGTERM and SIGKILL. Default 2 seconds. */
  readonly killGrace?: Duration.DurationInput | undefined
  /** Output unchanged this long (on the Clock) with a prompt-like last line is a stall. Default 30 seconds. */
  readonly stallAfter?: Duration.DurationInput | undefined
  /** How often running tasks are checked for their end and their cap (real time). Default 100 ms. */
  readonly pollMillis?: number | undefined
  /**
   * The program that runs a sandbox host (`Process/SandboxHost`; the package's own is {@link TaskRegistry.sandboxHost}): with
   * `onClose: "detach"`, sandboxed tasks run under a host of their own and outlive this process too. Without it they
   * are stopped when the registry closes.
   */
  readonly sandboxHost?: Subprocess.Argv | undefined
}

/**
 * The registry of a session's background tasks.
 *
 * @since 0.3.0
 * @category tags
 */
export class TaskRegistry extends Context.Tag("effect-tool-runtime/TaskRegistry")<TaskRegistry, {
  readonly directory: string
  /** Starts a task; returns at once with its record. */
  readonly start: (spec: TaskSpec) => Effect.Effect<TaskRecord, TaskStartError>
  /** Every task, oldest first, with its current status. */
  readonly list: Effect.Effect<ReadonlyArray<TaskRecord>>
  readonly get: (id: string) => Effect.Effect<TaskRecord, TaskNotFound>
  /**
   * The output since the last read and the status. `block`: first wait for the task to end, at most `timeout` (on
   * the Clock). `filter`: only the lines that match are returned (the others still count as read).
   */
  readonly read: (id: string, options?: {
    readonly block?: boolean | undefined
    readonly timeout?: Duration.DurationInput | undefined
    readonly filter?: RegExp | undefined
  }) => Effect.Effect<TaskRead, TaskNotFound>
  /** Stops a task (SIGTERM to its group and escapees, SIGKILL after the grace); returns its final record. */
  readonly stop: (id: string) => Effect.Effect<TaskRecord, TaskNotFound>
  /** Stops every running task. */
  readonly stopAll: Effect.Effect<void>
  /**
   * The session ends now (`exec --end-session`): every running task is stopped as its owner ended (status `Killed`
   * by `owner`), each announced once.
   */
  readonly endSession: Effect.Effect<void>
  /** The announcements not yet taken (each is taken once). */
  readonly takeNotifications: Effect.Effect<ReadonlyArray<TaskNotification>>
  /** Waits until there is at least one announcement, then takes them all. */
  readonly awaitNotifications: Effect.Effect<ReadonlyArray<TaskNotification>>
  /** Checks every running task now (its end, its cap), instead of at the next poll. */
  readonly refresh: Effect.Effect<void>
  /** A detaching registry stops its tasks when its scope closes after all (a signal came). */
  readonly stopOnClose: Effect.Effect<void>
}>() {
  /**
   * A registry over `options.directory`, for the scope: records left there by an earlier process are restored (a
   * task still running is watched again; one that ended meanwhile is finished and announced).
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layer = (options: TaskRegistryOptions): Layer.Layer<TaskRegistry> =>
    Layer.scoped(TaskRegistry, make(options))

  /**
   * The registry {@link TaskRegistry.layerSession} provides, as an Effect (its tasks handled as `onClose` says when
   * the scope closes): for a program that builds its services in one Layer (each Layer costs a cold start its own
   * construction; see the CLI's `exec`).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly makeSession = (
    options: Omit<TaskRegistryOptions, "directory"> = {}
  ): Effect.Effect<TaskRegistry["Type"], never, Session | Scope.Scope> =>
    Effect.flatMap(Session, (session) => make({ ...options, directory: nodePath.join(session.directory, "tasks") }))

  /**
   * The package's own sandbox host (`Process/SandboxHost`), for {@link TaskRegistryOptions} `sandboxHost`; undefined
   * where it is not built (the sources run directly).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly sandboxHost: () => Subprocess.Argv | undefined = SandboxHost.program

  /**
   * A registry in the session's directory (`<session>/tasks`).
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerSession = (
    options: Omit<TaskRegistryOptions, "directory"> = {}
  ): Layer.Layer<TaskRegistry, never, Session> =>
    Layer.unwrapEffect(
      Effect.map(Session, (session) =>
        TaskRegistry.layer({ ...options, directory: nodePath.join(session.directory, "tasks") }))
    )
}

// ---------------------------------------------------------------------------------------------------------------
// presentation
// ---------------------------------------------------------------------------------------------------------------

/**
 * The status in words: `running`, `exited with code 0`, `killed (TaskStop)`, `stopped at the output cap (1 GiB)`.
 *
 * @since 0.3.0
 * @category presentation
 */
export const describeStatus = (status: TaskStatus): string => {
  switch (status._tag) {
    case "Running":
      return "running"
    case "Exited":
      return `exited with code ${status.code}`
    case "Killed":
      return status.by === "TaskStop"
        ? "killed (stopped with TaskStop)"
        : status.by === "owner"
        ? "killed (its session or runtime ended)"
        : "killed (by a signal from outside)"
    case "StoppedAtCap":
      return `stopped: its output passed the cap of ${status.capBytes} bytes`
  }
}

const endedText = (task: TaskRecord): string =>
  [
    "<task-notification>",
    `<task-id>${task.id}</task-id>`,
    `<command>${task.command}</command>`,
    `<status>${describeStatus(task.status)}</status>`,
    `<output-file>${task.outputPath}</output-file>`,
    `Background task ${task.id} ended (${describeStatus(task.status)}). Read the rest of its output with TaskOutput.`,
    "</task-notification>"
  ].join("\n")

const stalledText = (task: TaskRecord, lastLine: string, after: Duration.Duration): string =>
  [
    "<task-notification>",
    `<task-id>${task.id}</task-id>`,
    `<command>${task.command}</command>`,
    "<status>running, output stalled</status>",
    `Background task ${task.id} has printed nothing for ${
      Duration.format(after)
    } and its last line looks like a prompt for input: ${JSON.stringify(lastLine)}. Its standard input is empty, ` +
    "so nobody can answer it: stop it with TaskStop and run the command non-interactively (a --yes flag, input " +
    "from a file).",
    "</task-notification>"
  ].join("\n")

/** A last line that waits for an answer: ends in `?`, `:`, `>`, `[y/N]`, `(yes/no)`, or names a password. */
const PROMPT = /(?:[?:>]\s*|\[[^\]\n]{1,20}\]\s*|\([^)\n]{1,20}\)\s*)$|password|passphrase/i

/**
 * Whether an output's last line looks like a prompt for input.
 *
 * @since 0.3.0
 * @category presentation
 */
export const looksLikePrompt = (tail: string): string | undefined => {
  if (tail.endsWith("\n") || tail.trim() === "") return undefined
  const line = tail.slice(tail.lastIndexOf("\n") + 1)
  return PROMPT.test(line) ? line : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// the registry
// ---------------------------------------------------------------------------------------------------------------

/**
 * The shell around a task: the command's output straight into the log (appending), a file-size limit just over the
 * cap (`ulimit -f`, soft and hard, in KiB blocks: the task cannot raise it), and the exit code into its own file once the command has ended.
 */
const WRAPPER = [
  "out=$1 blocks=$2 code=$3; shift 3",
  "exec >/dev/null 2>&1 </dev/null",
  "ulimit -f \"$blocks\"",
  "\"$@\" >>\"$out\" 2>&1 </dev/null",
  "s=$?",
  "printf %s \"$s\" >\"$code.tmp\" && mv \"$code.tmp\" \"$code\""
].join("\n")

interface Live {
  record: TaskRecord
  readonly ended: Deferred.Deferred<void>
  readonly lock: Effect.Semaphore
  /** Completes when this process saw the program exit (only for tasks it started). */
  readonly exited: Effect.Effect<void> | undefined
  readonly release: Effect.Effect<void>
  /** Whether it may outlive this process (not a task in this process's sandbox). */
  readonly detachable: boolean
}

/** The exit status of a shell whose command SIGXFSZ (25) killed: the kernel's answer to the cap's file-size limit. */
const sigxfszExit = 128 + 25

const fileSize = (file: string): number => {
  try {
    return nodeFs.statSync(file).size
  } catch {
    return 0
  }
}

const readRange = (file: string, from: number, to: number): Buffer => {
  if (to <= from) return Buffer.alloc(0)
  const buffer = Buffer.alloc(to - from)
  let fd: number | undefined
  try {
    fd = nodeFs.openSync(file, "r")
    const read = nodeFs.readSync(fd, buffer, 0, buffer.length, from)
    return buffer.subarray(0, read)
  } catch {
    return Buffer.alloc(0)
  } finally {
    if (fd !== undefined) nodeFs.closeSync(fd)
  }
}

/** The length of `bytes` without a UTF-8 sequence cut at its end (kept for the next read while the task runs). */
const completeLength = (bytes: Uint8Array): number => {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back]!
    if ((byte & 0xc0) === 0x80) continue
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return need > back ? bytes.length - back : bytes.length
  }
  return bytes.length
}

/** The first index at or after `start` that does not begin inside a UTF-8 sequence. */
const charStart = (bytes: Uint8Array, start: number): number => {
  let at = start
  while (at < bytes.length && at < start + 3 && (bytes[at]! & 0xc0) === 0x80) at++
  return at
}

const exitCodeOf = (file: string): number | undefined => {
  try {
    const text = nodeFs.readFileSync(file, "utf8").trim()
    const code = Number(text)
    return text === "" || !Number.isFinite(code) ? undefined : code
  } catch {
    return undefined
  }
}

const decodeRecord = Schema.decodeUnknownOption(Schema.parseJson(TaskRecord))
const encodeRecord = Schema.encodeSync(Schema.parseJson(TaskRecord))

const make = (options: TaskRegistryOptions): Effect.Effect<TaskRegistry["Type"], never, Scope.Scope> =>
  Effect.gen(function*() {
    const directory = nodePath.resolve(options.directory)
    const capBytes = Math.max(1, Math.floor(options.capBytes ?? 5 * 1024 * 1024 * 1024))
    const readLimit = Math.max(1, Math.floor(options.readLimitBytes ?? 30_000))
    const grace = options.killGrace ?? Duration.seconds(2)
    const stallAfter = Duration.decode(options.stallAfter ?? Duration.seconds(30))
    const pollMillis = Math.max(5, options.pollMillis ?? 100)
    let onClose = options.onClose ?? "stop"
    const scope = yield* Effect.scope
    const tasks = new Map<string, Live>()
    const pending: Array<TaskNotification> = []
    const signal = yield* Queue.sliding<void>(1)

    const exitFile = (record: TaskRecord) => record.outputPath.replace(/\.log$/, ".exit")
    const recordFile = (id: string) => nodePath.join(directory, `${id}.json`)
    const ensureDirectory = () => nodeFs.mkdirSync(directory, { recursive: true, mode: 0o700 })

    const persist = (record: TaskRecord) =>
      Effect.sync(() => {
        try {
          ensureDirectory()
          const file = recordFile(record.id)
          nodeFs.writeFileSync(`${file}.tmp`, encodeRecord(record), { mode: 0o600 })
          nodeFs.renameSync(`${file}.tmp`, file)
        } catch {
          // The record in memory stays right; a later process sees the last one written.
        }
      })

    const announce = (notification: TaskNotification) =>
      Effect.zipRight(Effect.sync(() => void pending.push(notification)), Queue.offer(signal, undefined))

    const identityOf = (record: TaskRecord): Subprocess.TreeIdentity => ({
      pid: record.pid,
      marker: record.marker,
      startTicks: record.startTicks
    })

    /** Ends a running task with a status (under its lock): its tree is ended, the record saved, the end announced. */
    const finish = (live: Live, status: TaskStatus) =>
      Effect.gen(function*() {
        if (live.record.status._tag !== "Running") return
        yield* Subprocess.terminateTree(identityOf(live.record), grace)
        yield* live.release
        if (status._tag === "StoppedAtCap") {
          yield* Effect.sync(() => {
            try {
              nodeFs.truncateSync(live.record.outputPath, capBytes)
            } catch {
              // Gone: nothing to cut.
            }
          })
        }
        const endedAt = yield* Clock.currentTimeMillis
        live.record = { ...live.record, status, endedAt }
        yield* persist(live.record)
        yield* Deferred.succeed(live.ended, undefined)
        yield* announce({ kind: "ended", task: live.record, text: endedText(live.record) })
      })

    /** Whether the task ended (or passed its cap); finishes it if so. */
    const check = (live: Live) =>
      live.lock.withPermits(1)(Effect.gen(function*() {
        if (live.record.status._tag !== "Running") return
        const record = live.record
        if (fileSize(record.outputPath) > record.capBytes) {
          return yield* finish(live, { _tag: "StoppedAtCap", capBytes: record.capBytes })
        }
        const code = exitCodeOf(exitFile(record))
        // Killed by SIGXFSZ: the file-size limit that holds the cap stopped it, whatever the last look at the size.
        if (code === sigxfszExit) return yield* finish(live, { _tag: "StoppedAtCap", capBytes: record.capBytes })
        if (code !== undefined) return yield* finish(live, { _tag: "Exited", code })
        const now = Subprocess.startTimeOf(record.pid)
        if (now !== undefined && (record.programStartTicks === undefined || now === record.programStartTicks)) return
        // Gone: it may have written its code between the two looks.
        const late = exitCodeOf(exitFile(record))
        if (late === sigxfszExit) return yield* finish(live, { _tag: "StoppedAtCap", capBytes: record.capBytes })
        if (late !== undefined) return yield* finish(live, { _tag: "Exited", code: late })
        return yield* finish(live, { _tag: "Killed", by: "outside" })
      }))

    const monitor = (live: Live) =>
      Effect.gen(function*() {
        while (live.record.status._tag === "Running") {
          const wait = realSleep(pollMillis)
          yield* live.exited === undefined ? wait : Effect.raceFirst(wait, live.exited)
          yield* check(live)
        }
      })

    /** Announces a stall once per stretch of unchanged output whose last line looks like a prompt. */
    const watchdog = (live: Live) =>
      Effect.gen(function*() {
        let lastSize = -1
        let told = false
        while (live.record.status._tag === "Running") {
          yield* Effect.sleep(stallAfter)
          if (live.record.status._tag !== "Running") return
          const size = fileSize(live.record.outputPath)
          if (size !== lastSize) {
            lastSize = size
            told = false
            continue
          }
          if (told) continue
          const tail = readRange(live.record.outputPath, Math.max(0, size - 512), size).toString("utf8")
          const line = looksLikePrompt(tail)
          if (line === undefined) continue
          told = true
          yield* announce({ kind: "stalled", task: live.record, text: stalledText(live.record, line, stallAfter) })
        }
      })

    // Interruptible whoever forks them (a start forks them in its uninterruptible part): the registry's close ends
    // them.
    const watch = (live: Live) =>
      Effect.all([
        Effect.forkIn(Effect.interruptible(monitor(live)), scope),
        Effect.forkIn(Effect.interruptible(watchdog(live)), scope)
      ], { discard: true })

    const found = (id: string) =>
      Effect.suspend(() => {
        const live = tasks.get(id)
        return live === undefined
          ? Effect.fail(
            new TaskNotFound({
              id,
              message: `No background task with id ${JSON.stringify(id)} in this session${
                tasks.size === 0 ? " (none was started)" : `; its tasks: ${[...tasks.keys()].join(", ")}`
              }.`
            })
          )
          : Effect.succeed(live)
      })

    // Records an earlier process left: running ones are watched again, ended ones announced if they were not.
    const restore = Effect.gen(function*() {
      let names: Array<string> = []
      try {
        names = nodeFs.readdirSync(directory).filter((name) => name.endsWith(".json")).sort()
      } catch {
        return
      }
      for (const name of names) {
        let text: string
        try {
          text = nodeFs.readFileSync(nodePath.join(directory, name), "utf8")
        } catch {
          continue
        }
        const record = decodeRecord(text)
        if (Option.isNone(record)) continue
        const live: Live = {
          record: record.value,
          ended: yield* Deferred.make<void>(),
          lock: yield* Effect.makeSemaphore(1),
          exited: undefined,
          release: Effect.void,
          detachable: true
        }
        tasks.set(live.record.id, live)
        if (live.record.status._tag === "Running") {
          yield* check(live)
          if (live.record.status._tag === "Running") yield* watch(live)
        } else {
          yield* Deferred.succeed(live.ended, undefined)
          if (!live.record.notified) {
            yield* announce({ kind: "ended", task: live.record, text: endedText(live.record) })
          }
        }
      }
    })
    yield* restore

    const newId = (): string => {
      for (;;) {
        const id = `task_${randomBytes(4).toString("hex")}`
        if (!tasks.has(id)) return id
      }
    }

    /**
     * What runs the task's command, what it holds, and whether it may outlive this process: a sandboxed command runs
     * under a sandbox host when the registry detaches and has one, else in this process's sandbox (which it cannot
     * outlive).
     */
    const programOf = (spec: TaskSpec, id: string) =>
      Effect.gen(function*() {
        const release = spec.release ?? Effect.void
        if (spec.sandbox === undefined) return { argv: spec.argv, release, detachable: true }
        if (onClose === "detach" && options.sandboxHost !== undefined) {
          const request = { id, policy: spec.sandbox.policy }
          return { argv: SandboxHost.argv(options.sandboxHost, request, spec.argv), release, detachable: true }
        }
        const held = yield* Scope.make()
        const argv = yield* spec.sandbox.wrap(spec.argv).pipe(
          Scope.extend(held),
          Effect.mapError((error) => new TaskStartError({ message: error.message, cause: error })),
          Effect.onError(() => Scope.close(held, Exit.void))
        )
        return { argv, release: Effect.zipRight(Scope.close(held, Exit.void), release), detachable: false }
      })

    // From the spawn to the registration nothing may interrupt a start: a task started but not registered runs on
    // with no id to stop it by, and closing the registry does not end it (a person's Esc during a background
    // command did that). Only what comes before the spawn (the sandbox's wrapping) can be interrupted; an
    // interruption that came during the rest stops the task once it is registered.
    const start = (spec: TaskSpec) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const id = newId()
          const outputPath = nodePath.join(directory, `${id}.log`)
          yield* Effect.try({
            try: () => {
              ensureDirectory()
              nodeFs.writeFileSync(outputPath, "", { mode: 0o600, flag: "wx" })
            },
            catch: (cause) =>
              new TaskStartError({ message: `cannot create the task's output file ${outputPath}: ${String(cause)}` })
          })
          const record = yield* started(spec, id, outputPath, restore).pipe(
            // A start that did not get as far as the registry leaves no output file behind.
            Effect.onError(() =>
              Effect.sync(() => {
                if (!tasks.has(id)) nodeFs.rmSync(outputPath, { force: true })
              })
            )
          )
          // Interrupted while it started (the registry finished what it began): the caller cancelled the task, so it
          // is stopped rather than left running with an id nobody was given.
          return yield* Effect.onInterrupt(restore(Effect.succeed(record)), () => Effect.ignore(stop(record.id)))
        })
      ).pipe(Effect.withSpan("TaskRegistry.start"))

    const started = (
      spec: TaskSpec,
      id: string,
      outputPath: string,
      restore: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    ) =>
      Effect.gen(function*() {
        const program = yield* restore(programOf(spec, id))
        const detached = yield* Subprocess.spawnDetached({
          argv: [
            "bash",
            "--norc",
            "--noprofile",
            "-c",
            WRAPPER,
            "task",
            outputPath,
            String(Math.ceil((capBytes + 1) / 1024)),
            outputPath.replace(/\.log$/, ".exit"),
            ...program.argv
          ],
          cwd: spec.cwd,
          env: spec.env
        }).pipe(
          Effect.mapError((error) => new TaskStartError({ message: error.message, cause: error })),
          Effect.onError(() => program.release)
        )
        const startedAt = yield* Clock.currentTimeMillis
        const programStartTicks = Subprocess.startTimeOf(detached.identity.pid)
        const live: Live = {
          record: {
            id,
            command: spec.command,
            ...(spec.description === undefined ? {} : { description: spec.description }),
            pid: detached.identity.pid,
            marker: detached.identity.marker,
            startTicks: detached.identity.startTicks,
            ...(programStartTicks === undefined ? {} : { programStartTicks }),
            startedAt,
            status: { _tag: "Running" },
            outputPath,
            capBytes,
            readOffset: 0,
            notified: false
          },
          ended: yield* Deferred.make<void>(),
          lock: yield* Effect.makeSemaphore(1),
          exited: detached.exited,
          release: yield* Effect.once(program.release),
          detachable: program.detachable
        }
        tasks.set(id, live)
        yield* persist(live.record)
        yield* watch(live)
        return live.record
      })

    const read: TaskRegistry["Type"]["read"] = (id, readOptions = {}) =>
      Effect.gen(function*() {
        const live = yield* found(id)
        yield* check(live)
        let waitTimedOut = false
        if (readOptions.block === true && live.record.status._tag === "Running") {
          const waited = yield* Deferred.await(live.ended).pipe(
            Effect.timeoutOption(readOptions.timeout ?? Duration.seconds(30))
          )
          waitTimedOut = Option.isNone(waited)
          yield* check(live)
        }
        return yield* live.lock.withPermits(1)(Effect.gen(function*() {
          const record = live.record
          const running = record.status._tag === "Running"
          const end = Math.min(fileSize(record.outputPath), record.capBytes)
          const from = Math.min(record.readOffset, end)
          const skippedBytes = Math.max(0, end - from - readLimit)
          let bytes = readRange(record.outputPath, from + skippedBytes, end)
          // A character cut by the end of what was written so far waits for the next read.
          const kept = running ? completeLength(bytes) : bytes.length
          bytes = bytes.subarray(0, kept)
          const to = from + skippedBytes + kept
          // A skip may begin inside a character: its first bytes count as skipped.
          const begin = skippedBytes > 0 ? charStart(bytes, 0) : 0
          let output = bytes.subarray(begin).toString("utf8")
          if (readOptions.filter !== undefined) {
            const filter = readOptions.filter
            output = output.split("\n").filter((line) => filter.test(line)).join("\n")
          }
          live.record = { ...record, readOffset: to }
          // The model sees the end here: no announcement of it any more.
          yield* running ? persist(live.record) : seen(live)
          return {
            task: live.record,
            output,
            skippedBytes: skippedBytes + begin,
            from,
            to,
            waitTimedOut
          } satisfies TaskRead
        }))
      }).pipe(Effect.withSpan("TaskRegistry.read", { attributes: { id } }))

    /** The end of a task was reported to the caller: it is not announced (again). */
    const seen = (live: Live) =>
      Effect.suspend(() => {
        const id = live.record.id
        live.record = { ...live.record, notified: true }
        pending.splice(0, pending.length, ...pending.filter((n) => !(n.kind === "ended" && n.task.id === id)))
        return persist(live.record)
      })

    const stop = (id: string) =>
      Effect.gen(function*() {
        const live = yield* found(id)
        yield* check(live)
        yield* live.lock.withPermits(1)(Effect.gen(function*() {
          yield* finish(live, { _tag: "Killed", by: "TaskStop" })
          // The caller reports the final status: no announcement of it any more.
          yield* seen(live)
        }))
        return live.record
      }).pipe(Effect.withSpan("TaskRegistry.stop", { attributes: { id } }))

    const stopAllBy = (by: "TaskStop" | "owner") =>
      Effect.forEach(
        [...tasks.values()].filter((live) => live.record.status._tag === "Running"),
        (live) => live.lock.withPermits(1)(finish(live, { _tag: "Killed", by })),
        { concurrency: "unbounded", discard: true }
      )

    const takeNotifications = Effect.sync(() => {
      const taken = pending.splice(0, pending.length)
      for (const notification of taken) {
        if (notification.kind !== "ended") continue
        const live = tasks.get(notification.task.id)
        if (live !== undefined) live.record = { ...live.record, notified: true }
      }
      return taken
    }).pipe(
      Effect.tap((taken) =>
        Effect.forEach(
          taken.filter((notification) => notification.kind === "ended"),
          (notification) => {
            const live = tasks.get(notification.task.id)
            return live === undefined ? Effect.void : persist(live.record)
          },
          { discard: true }
        )
      )
    )

    const awaitNotifications: Effect.Effect<ReadonlyArray<TaskNotification>> = Effect.gen(function*() {
      for (;;) {
        const taken = yield* takeNotifications
        if (taken.length > 0) return taken
        yield* Queue.take(signal)
      }
    })

    yield* Effect.addFinalizer(() =>
      onClose === "stop"
        ? stopAllBy("owner")
        : Effect.forEach(
          [...tasks.values()],
          (live) =>
            live.detachable
              ? Effect.zipRight(persist(live.record), live.release)
              : live.lock.withPermits(1)(finish(live, { _tag: "Killed", by: "owner" })),
          { discard: true }
        )
    )

    return {
      directory,
      start,
      list: Effect.sync(() => [...tasks.values()].map((live) => live.record)),
      get: (id) => Effect.map(found(id), (live) => live.record),
      read,
      stop,
      stopAll: stopAllBy("TaskStop"),
      endSession: stopAllBy("owner"),
      takeNotifications,
      awaitNotifications,
      refresh: Effect.suspend(() => Effect.forEach([...tasks.values()], check, { discard: true })),
      stopOnClose: Effect.sync(() => {
        onClose = "stop"
      })
    }
  })
