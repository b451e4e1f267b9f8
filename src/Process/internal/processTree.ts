/**
 * Finding and killing every process a subprocess started, including those that left its process group: the
 * machinery behind `Subprocess`'s teardown.
 *
 * A subprocess's processes are recognised two ways:
 * - **by process group**: the program is spawned detached, so it leads a group of its own (`pgid = pid`), and every
 *   child that does not ask otherwise stays in it;
 * - **by marker**: its environment carries a variable with a value unique to the run ({@link markerVariable});
 *   children inherit it, so a process that moved to another group or session (`setsid`, a daemon's double fork,
 *   `nohup ... &` then `setsid`) is still found by scanning `/proc/<pid>/environ` for it.
 *
 * Limits, documented rather than hidden: the marker scan needs Linux's `/proc` (elsewhere only the group is
 * killed); a process that empties or rewrites its environment before `exec` (`env -i cmd`, `env -u VAR cmd`)
 * carries no marker, and if it also left the group it escapes; a process of another user cannot be read. A
 * cgroup per run, or Bash's bubblewrap sandbox (its PID namespace dies with the call), closes those gaps.
 *
 * Zombies are treated as dead: a killed orphan stays a zombie until PID 1 reaps it, and some container PID 1s
 * never do, although the process no longer runs.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import { realSleep } from "../../Shared/realTime.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The name of the environment variable that tags every process of a run.
 *
 * @since 0.1.0
 * @category constants
 */
export const markerVariable = "EFFECT_TOOL_RUNTIME_CALL"

/**
 * What identifies the processes of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProcessTree {
  /** The process group the spawned program leads (its pid). */
  readonly pgid: number
  /** The value of {@link markerVariable} in the run's environment. */
  readonly marker: string
  /**
   * A lower bound of the start time of any process of the run ({@link startTicksFloor} taken before the spawn):
   * only processes started since are checked for the marker, which keeps a scan cheap. Default 0 (all).
   */
  readonly startTicks?: number
}

/**
 * How a tree was terminated.
 *
 * @since 0.1.0
 * @category models
 */
export interface Termination {
  /** Processes found running when termination began. */
  readonly found: number
  /** Whether SIGKILL was needed (something outlived SIGTERM and the grace period). */
  readonly escalated: boolean
  /** Processes still running when we gave up (0 unless something forks faster than we kill). */
  readonly survivors: ReadonlyArray<number>
}

// ---------------------------------------------------------------------------------------------------------------
// inspection
// ---------------------------------------------------------------------------------------------------------------

const hasProc = (() => {
  try {
    return process.platform === "linux" && fs.statSync("/proc/self/stat").isFile()
  } catch {
    return false
  }
})()

const statBuffer = Buffer.alloc(4096)

/**
 * State, process group and start time (clock ticks since boot) from `/proc/<pid>/stat`, or undefined when the
 * process is gone. Read with one `read` into a shared buffer: `readFileSync` is several times slower on procfs.
 */
const readStat = (
  pid: number
):
  | { readonly state: string; readonly ppid: number; readonly pgid: number; readonly startTicks: number }
  | undefined =>
{
  let fd: number | undefined
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, "r")
    const length = fs.readSync(fd, statBuffer, 0, statBuffer.length, 0)
    const stat = statBuffer.toString("latin1", 0, length)
    // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { state: fields[0] ?? "", ppid: Number(fields[1]), pgid: Number(fields[2]), startTicks: Number(fields[19]) }
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Clock ticks per second of `/proc/<pid>/stat` start times; 100 on every mainstream Linux. */
const TICKS_PER_SECOND = 100

/**
 * Now, in `/proc` clock ticks since boot, minus a second of margin: a process that started before this cannot
 * belong to a run started after it.
 *
 * @since 0.1.0
 * @category inspection
 */
export const startTicksFloor = (): number => {
  if (!hasProc) return 0
  try {
    const uptime = Number(fs.readFileSync("/proc/uptime", "latin1").split(" ")[0])
    return Number.isFinite(uptime) ? Math.max(0, Math.floor((uptime - 1) * TICKS_PER_SECOND)) : 0
  } catch {
    return 0
  }
}

const isDead = (state: string) => state === "Z" || state === "X" || state === "x"

/**
 * When a running process started (clock ticks since boot, from `/proc/<pid>/stat`): with its pid, it names one
 * process for good, since a pid is reused only by a process that starts later. Undefined when the process is gone
 * (or a zombie), or without `/proc`.
 *
 * @since 0.3.0
 * @category inspection
 */
export const startTimeOf = (pid: number): number | undefined => {
  if (!hasProc) return undefined
  const stat = readStat(pid)
  return stat === undefined || isDead(stat.state) || !Number.isFinite(stat.startTicks) ? undefined : stat.startTicks
}

/**
 * Whether a process exists and is not a zombie.
 *
 * @since 0.1.0
 * @category inspection
 */
export const isRunning = (pid: number): boolean => {
  if (hasProc) {
    const stat = readStat(pid)
    return stat !== undefined && !isDead(stat.state)
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * The running processes of a tree: members of its group, and processes whose environment carries its marker.
 * Without `/proc`, only the group leader can be checked.
 *
 * @since 0.1.0
 * @category inspection
 */
export const members = (tree: ProcessTree): ReadonlyArray<number> => {
  if (!hasProc) return groupExists(tree.pgid) ? [tree.pgid] : []
  const needle = Buffer.from(`${markerVariable}=${tree.marker}\0`)
  const found: Array<number> = []
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  for (const entry of entries) {
    const first = entry.charCodeAt(0)
    if (first < 48 || first > 57) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    const stat = readStat(pid)
    if (stat === undefined || isDead(stat.state)) continue
    if (stat.pgid === tree.pgid) {
      found.push(pid)
      continue
    }
    if (stat.startTicks < (tree.startTicks ?? 0)) continue
    try {
      if (fs.readFileSync(`/proc/${pid}/environ`).includes(needle)) found.push(pid)
    } catch {
      // Gone, a kernel thread, or another user's process: none of them is ours.
    }
  }
  return found
}

/**
 * The running direct children of a process (Linux `/proc`; elsewhere none).
 *
 * @since 0.2.0
 * @category inspection
 */
export const childrenOf = (parent: number): ReadonlyArray<number> => {
  if (!hasProc) return []
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const children: Array<number> = []
  for (const entry of entries) {
    const first = entry.charCodeAt(0)
    if (first < 48 || first > 57) continue
    const stat = readStat(Number(entry))
    if (stat !== undefined && stat.ppid === parent && !isDead(stat.state)) children.push(Number(entry))
  }
  return children
}

const groupExists = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

const signal = (pids: Iterable<number>, pgid: number, sig: NodeJS.Signals): void => {
  try {
    process.kill(-pgid, sig)
  } catch {
    // The group is empty (or only zombies remain).
  }
  for (const pid of pids) {
    try {
      process.kill(pid, sig)
    } catch {
      // Already gone.
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// termination
// ---------------------------------------------------------------------------------------------------------------

/** Waits between checks during the grace period: short first (most programs exit at once on SIGTERM), then 20 ms. */
const POLL_MS = [2, 5, 10, 20] as const
const KILL_ROUNDS = 100

/**
 * Terminates every process of a tree: SIGTERM to the group and to every marked process, a grace period for them
 * to exit (ended early once none runs), then SIGKILL, repeated with fresh scans until nothing runs (a bounded
 * number of rounds, so a fork bomb cannot hold the caller forever; survivors are reported).
 *
 * The grace wait is bounded but **not** interruptible: this runs in finalizers, where an interruptible region
 * of an already interrupted fiber ends at once, which would skip the grace period entirely.
 *
 * @since 0.1.0
 * @category termination
 */
export const terminate = (tree: ProcessTree, grace: Duration.DurationInput): Effect.Effect<Termination> =>
  Effect.gen(function*() {
    const initial = members(tree)
    if (initial.length === 0) return { found: 0, escalated: false, survivors: [] }
    yield* Effect.sync(() => signal(initial, tree.pgid, "SIGTERM"))
    const deadline = Date.now() + Duration.toMillis(Duration.decode(grace))
    let watched = initial
    for (let poll = 0; Date.now() < deadline; poll++) {
      watched = watched.filter(isRunning)
      if (watched.length === 0) {
        // Whatever forked in the meantime is found by a last scan.
        const late = members(tree)
        if (late.length === 0) return { found: initial.length, escalated: false, survivors: [] }
        signal(late, tree.pgid, "SIGTERM")
        watched = late
      }
      yield* realSleep(Math.min(POLL_MS[Math.min(poll, POLL_MS.length - 1)]!, Math.max(0, deadline - Date.now())))
    }
    let remaining = members(tree)
    for (let round = 0; round < KILL_ROUNDS && remaining.length > 0; round++) {
      signal(remaining, tree.pgid, "SIGKILL")
      yield* realSleep(round < 5 ? 2 : 10)
      remaining = members(tree)
    }
    if (remaining.length > 0) {
      yield* Effect.logWarning(`Subprocess: ${remaining.length} process(es) survived SIGKILL: ${remaining.join(", ")}`)
    }
    return { found: initial.length, escalated: true, survivors: remaining }
  })

/**
 * SIGKILL, at once and synchronously, to a tree's group and every marked process: for a signal handler that has no
 * time left for a grace period.
 *
 * @since 0.2.0
 * @category termination
 */
export const killNow = (tree: ProcessTree): void => {
  signal(members(tree), tree.pgid, "SIGKILL")
}
