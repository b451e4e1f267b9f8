/**
 * Finding and killing every process a subprocess started, including those that left its process group: the
 * machinery behind `Subprocess`'s teardown.
 *
 * A subprocess's processes are recognised two ways:
 * - **by process group**: the program is spawned detached, so it leads a group of its own (`pgid = pid`), and every
 *   child that does not ask otherwise stays in it;
 * - **by marker**: its environment carries a variable with a value unique to the run ({@link markerVariable});
 *   children inherit it, so a process that moved to another group or session (`setsid`, a daemon's double fork,
 *   `nohup ... &` then `setsid`) is still found by scanning `/proc/<pid>/environ` for it;
 * - **by parentage**, for a program that stays in the caller's group ({@link ProcessTree.sharesGroup}): with no group
 *   of its own, a descendant of a marked process that cleared its environment is still its tree's while its parent
 *   lives.
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
import * as os from "node:os"
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
  /** The spawned program's pid: the id of the process group it leads, unless {@link sharesGroup}. */
  readonly pgid: number
  /**
   * Whether the program stayed in the caller's process group and session (spawned without `detached`): there is no
   * group to signal, and the tree is what carries the marker and what descends from it. Needs `/proc`
   * ({@link scansProcesses}). Default false.
   */
  readonly sharesGroup?: boolean | undefined
  /** The value of {@link markerVariable} in the run's environment. */
  readonly marker: string
  /**
   * A lower bound of the start time of any process of the run ({@link startTicksFloor} taken before the spawn):
   * only processes started since are checked for the marker, which keeps a scan cheap. Default 0 (all).
   */
  readonly startTicks?: number
  /**
   * `performance.now()` taken before the spawn: for a while after it, only the pids allocated since are looked at
   * (see {@link scan}). Absent: every process is.
   */
  readonly spawnedAt?: number | undefined
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

/**
 * Whether processes can be found by marker and parentage (Linux `/proc`): without it a tree is only its group, so
 * its program must lead one ({@link ProcessTree.sharesGroup} false).
 *
 * @since 0.3.0
 * @category inspection
 */
export const scansProcesses: boolean = hasProc

const statBuffer = Buffer.alloc(4096)

/**
 * State, process group and start time (clock ticks since boot) from `/proc/<pid>/stat`, or undefined when the
 * process is gone. Read with one `read` into a shared buffer: `readFileSync` is several times slower on procfs.
 */
const readStat = (
  pid: number
):
  | {
    readonly state: string
    readonly ppid: number
    readonly pgid: number
    readonly flags: number
    readonly startTicks: number
    /** Where the environment starts and ends in the process's memory (fields 50, 51): 0 while an exec sets it up. */
    readonly envStart: number
    readonly envEnd: number
  }
  | undefined =>
{
  let fd: number | undefined
  try {
    fd = fs.openSync(`/proc/${pid}/stat`, "r")
    const length = fs.readSync(fd, statBuffer, 0, statBuffer.length, 0)
    const stat = statBuffer.toString("latin1", 0, length)
    // The command name (field 2) may contain spaces and parentheses: fields resume after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return {
      state: fields[0] ?? "",
      ppid: Number(fields[1]),
      pgid: Number(fields[2]),
      flags: Number(fields[6]),
      startTicks: Number(fields[19]),
      envStart: Number(fields[47] ?? -1),
      envEnd: Number(fields[48] ?? -1)
    }
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
  const base = uptimeBase()
  if (base === undefined) return 0
  const uptime = base.seconds + (performance.now() - base.at) / 1000
  return Math.max(0, Math.floor((uptime - 1) * TICKS_PER_SECOND))
}

/**
 * `/proc/uptime` read once, with the monotonic time of the reading: uptime later is at least that plus the
 * monotonic time elapsed (the boot clock runs on through a suspend, the monotonic one does not), so the floor stays
 * a floor without a read of `/proc` per run. Undefined without `/proc`.
 */
const uptimeBase = (() => {
  let base: { readonly seconds: number; readonly at: number } | undefined | null = null
  return () => {
    if (base !== null) return base
    base = undefined
    if (!hasProc) return base
    try {
      const at = performance.now()
      const seconds = Number(fs.readFileSync("/proc/uptime", "latin1").split(" ")[0])
      if (Number.isFinite(seconds)) base = { seconds, at }
    } catch {
      // No floor: every process is checked.
    }
    return base
  }
})()

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

/** One look at `/proc` for a tree: what is surely its, and what cannot be told yet. */
export interface Scan {
  /** Running members of the group, and running processes that carry the marker. */
  readonly found: ReadonlyArray<number>
  /**
   * Processes in the middle of an `exec` (the new program's environment is not set up yet, so it reads empty):
   * whether they carry the marker is known once the exec is done ({@link members} waits for it).
   */
  readonly pending: ReadonlyArray<number>
}

const readPid = (path: string): number | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(path, "r")
    const length = fs.readSync(fd, statBuffer, 0, 32, 0)
    const value = Number.parseInt(statBuffer.toString("latin1", 0, length), 10)
    return Number.isFinite(value) ? value : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** The highest pid the kernel hands out; pids are allocated in increasing order, wrapping around past it. */
const pidMax = (hasProc ? readPid("/proc/sys/kernel/pid_max") : undefined) ?? 32_768

/**
 * How long after a spawn every pid allocated since is known to lie between the spawned pid and the last allocated
 * one (`/proc/sys/kernel/ns_last_pid`): as long as fewer than `pid_max` pids were allocated, the allocator has not
 * come around again. Counted at 100,000 pids (processes and threads) per second per core, above what a machine
 * sustains; past it a scan looks at every process.
 */
const rangeBudgetMs = (pidMax / (100_000 * Math.max(1, os.availableParallelism()))) * 1000

/** Whether `pid` was allocated after `first` and up to `last`, on the allocator's circle. */
const inRange = (pid: number, first: number, last: number): boolean =>
  first <= last ? pid >= first && pid <= last : pid >= first || pid <= last

const environBuffer = Buffer.alloc(64 * 1024)

/**
 * Whether a process's environment carries `needle`: true, false, or "pending" while it is in the middle of an `exec`
 * (a race seen under load, where an escapee exec'ing at the scan went unnoticed): its environment reads empty both
 * when the old program's memory is already gone and when the new one's is not set up yet. A process that cannot be
 * read (another user's, gone) is not ours.
 */
const carries = (pid: number, needle: Buffer): boolean | "pending" => {
  let fd: number | undefined
  try {
    fd = fs.openSync(`/proc/${pid}/environ`, "r")
    // Read in pieces, keeping an overlap so a needle across two pieces is seen.
    let position = 0
    let kept = 0
    for (;;) {
      const length = fs.readSync(fd, environBuffer, kept, environBuffer.length - kept, position)
      if (length === 0) break
      const end = kept + length
      if (environBuffer.subarray(0, end).includes(needle)) return true
      position += length
      kept = Math.min(end, needle.length - 1)
      environBuffer.copy(environBuffer, 0, end - kept, end)
    }
    if (position > 0) return false
  } catch {
    return false
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
  // Read empty: truly no environment (`env -i`) when its program's memory says so (start = end, set), else an exec.
  // An exec passes through "start = end, set" too: the kernel sets both to the same address before it lays out the
  // strings (binfmt_elf's create_elf_tables), then moves the end. So an empty environment must stay empty for a
  // moment before it counts as one: a short, bounded wait, paid only for processes that read empty.
  const until = performance.now() + EMPTY_SETTLE_MS
  for (;;) {
    const stat = readStat(pid)
    if (stat === undefined || isDead(stat.state)) return false
    if (stat.envEnd === 0 || stat.envStart !== stat.envEnd) return "pending"
    if (performance.now() >= until) return false
  }
}

/** How long an environment must read empty (start = end) before it counts as truly empty rather than mid-exec. */
const EMPTY_SETTLE_MS = 2

/** Kernel threads have no environment (and are never ours): PF_KTHREAD in the flags of stat. */
const PF_KTHREAD = 0x00200000

/** A process without the marker, with its parent: a tree that shares its group claims it when the parent is its. */
type Unmarked = readonly [pid: number, ppid: number]

const classify = (
  pid: number,
  tree: ProcessTree,
  needle: Buffer,
  found: Array<number>,
  pending: Array<number>,
  unmarked?: Array<Unmarked>
): void => {
  const stat = readStat(pid)
  if (stat === undefined || isDead(stat.state)) return
  if (tree.sharesGroup !== true && stat.pgid === tree.pgid) return void found.push(pid)
  if (stat.startTicks < (tree.startTicks ?? 0) || (stat.flags & PF_KTHREAD) !== 0) return
  const marked = carries(pid, needle)
  if (marked === true) found.push(pid)
  else if (marked === "pending") pending.push(pid)
  else unmarked?.push([pid, stat.ppid])
}

/** Adds to `found` every unmarked process descending from a found one (children of a child included). */
const adoptDescendants = (found: Array<number>, unmarked: ReadonlyArray<Unmarked>): void => {
  const ours = new Set(found)
  for (let grew = unmarked.length > 0; grew;) {
    grew = false
    for (const [pid, ppid] of unmarked) {
      if (!ours.has(pid) && ours.has(ppid)) {
        ours.add(pid)
        found.push(pid)
        grew = true
      }
    }
  }
}

/**
 * One look at the processes of a tree, synchronous. Every process of a run was started after its program, so
 * shortly after the spawn (see {@link rangeBudgetMs}) only the pids allocated since are looked at, and none when
 * nothing was started since (the common case of a short command); later, or without a spawn time, all of them.
 * Without `/proc`, only the group leader can be checked.
 *
 * @since 0.3.0
 * @category inspection
 */
export const scan = (tree: ProcessTree): Scan => {
  if (!hasProc) {
    const runs = tree.sharesGroup === true ? isRunning(tree.pgid) : groupExists(tree.pgid)
    return { found: runs ? [tree.pgid] : [], pending: [] }
  }
  const needle = Buffer.from(`${markerVariable}=${tree.marker}\0`)
  const found: Array<number> = []
  const pending: Array<number> = []
  const unmarked: Array<Unmarked> | undefined = tree.sharesGroup === true ? [] : undefined
  const last = tree.spawnedAt !== undefined && performance.now() - tree.spawnedAt < rangeBudgetMs
    ? readPid("/proc/sys/kernel/ns_last_pid")
    : undefined
  if (last === tree.pgid) {
    classify(tree.pgid, tree, needle, found, pending)
    return { found, pending }
  }
  let entries: Array<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return { found, pending }
  }
  for (const entry of entries) {
    const first = entry.charCodeAt(0)
    if (first < 48 || first > 57) continue
    const pid = Number(entry)
    if (pid === process.pid || (last !== undefined && !inRange(pid, tree.pgid, last))) continue
    classify(pid, tree, needle, found, pending, unmarked)
  }
  if (unmarked !== undefined) adoptDescendants(found, unmarked)
  return { found, pending }
}

/** How long {@link members} waits for processes in the middle of an exec, re-reading them every millisecond. */
const PENDING_LIMIT_MS = 1_000

/**
 * The running processes of a tree: members of its group (for a tree that shares the caller's group: descendants of
 * its processes), and processes whose environment carries its marker.
 * A process caught in the middle of an `exec` is looked at again until its new environment is readable (bounded;
 * one that never becomes readable is not counted as ours).
 *
 * @since 0.1.0
 * @category inspection
 */
export const members = (tree: ProcessTree): Effect.Effect<ReadonlyArray<number>> =>
  Effect.suspend(() => {
    const first = scan(tree)
    if (first.pending.length === 0) return Effect.succeed(first.found)
    const needle = Buffer.from(`${markerVariable}=${tree.marker}\0`)
    const found = [...first.found]
    let pending = first.pending
    const until = Date.now() + PENDING_LIMIT_MS
    const loop: Effect.Effect<ReadonlyArray<number>> = Effect.suspend(() => {
      const still: Array<number> = []
      for (const pid of pending) classify(pid, tree, needle, found, still)
      pending = still
      return pending.length === 0 || Date.now() >= until ? Effect.succeed(found) : Effect.zipRight(realSleep(1), loop)
    })
    return Effect.zipRight(realSleep(1), loop)
  })

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

const signal = (pids: Iterable<number>, tree: ProcessTree, sig: NodeJS.Signals): void => {
  // A tree in the caller's group has no group to signal (its pgid, a pid, may even lead someone else's by now).
  if (tree.sharesGroup !== true) {
    try {
      process.kill(-tree.pgid, sig)
    } catch {
      // The group is empty (or only zombies remain).
    }
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
    const initial = yield* members(tree)
    if (initial.length === 0) return { found: 0, escalated: false, survivors: [] }
    yield* Effect.sync(() => signal(initial, tree, "SIGTERM"))
    const deadline = Date.now() + Duration.toMillis(Duration.decode(grace))
    let watched = initial
    for (let poll = 0; Date.now() < deadline; poll++) {
      watched = watched.filter(isRunning)
      if (watched.length === 0) {
        // Whatever forked in the meantime is found by a last scan.
        const late = yield* members(tree)
        if (late.length === 0) return { found: initial.length, escalated: false, survivors: [] }
        signal(late, tree, "SIGTERM")
        watched = late
      }
      yield* realSleep(Math.min(POLL_MS[Math.min(poll, POLL_MS.length - 1)]!, Math.max(0, deadline - Date.now())))
    }
    let remaining = yield* members(tree)
    for (let round = 0; round < KILL_ROUNDS && remaining.length > 0; round++) {
      signal(remaining, tree, "SIGKILL")
      yield* realSleep(round < 5 ? 2 : 10)
      remaining = yield* members(tree)
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
  signal(scan(tree).found, tree, "SIGKILL")
}
