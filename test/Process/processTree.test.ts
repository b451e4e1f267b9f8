/**
 * How a run's processes are found (src/Process/internal/processTree.ts), with real processes: a daemon (double
 * fork + setsid) found right after the spawn, when only the pids allocated since are looked at, and by a look at
 * every process; a process caught in the middle of an `exec` (its new environment reads empty for a moment) still
 * found; a process with no environment at all neither counted nor waited for.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as processTree from "../../src/Process/internal/processTree.js"
import { tempDir } from "../support/index.js"
import { isAlive, pollFor, readPids } from "../Tools/Bash/helpers.js"

const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" }
const linux = process.platform === "linux"

/** Starts `sh -c script` as a run does: detached (its own group), carrying a fresh marker. */
/** Whatever a test started, killed when it ends however it ends (a failed assertion must not leave a looping process). */
const leftovers = new Set<number>()
const killLeftovers = Effect.sync(() => {
  for (const pid of leftovers) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, "SIGKILL")
      } catch {
        // already gone
      }
    }
  }
  leftovers.clear()
})
const started = (pid: number) => {
  leftovers.add(pid)
  return pid
}

const start = (script: string, marked = true) => {
  const marker = randomUUID()
  const startTicks = processTree.startTicksFloor()
  const spawnedAt = performance.now()
  const child = childProcess.spawn("sh", ["-c", script], {
    env: marked ? { ...env, [processTree.markerVariable]: marker } : env,
    stdio: "ignore",
    detached: true
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  started(child.pid!)
  return { tree: { pgid: child.pid!, marker, startTicks, spawnedAt }, exited }
}

/** Starts `sh -c script` as `spawnService` does on Linux: in our own process group and session, carrying a marker. */
const startInOurGroup = (script: string) => {
  const marker = randomUUID()
  const child = childProcess.spawn("sh", ["-c", script], {
    env: { ...env, [processTree.markerVariable]: marker },
    stdio: "ignore"
  })
  started(child.pid!)
  const tree: processTree.ProcessTree = {
    pgid: child.pid!,
    marker,
    startTicks: processTree.startTicksFloor(),
    spawnedAt: performance.now(),
    sharesGroup: true
  }
  return tree
}

describe.runIf(linux)("processTree", () => {
  it.live("a tree in our group: what descends from it is found even with no environment, and only it is signalled", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("process-tree"), "pid")
      // A child that cleared its environment (no marker) but stays the program's child.
      const tree = startInOurGroup(`env -i /bin/sleep 1000 & echo $! > ${pidFile}; wait`)
      const bare = started((yield* pollFor(() => readPids(pidFile, 1), 10_000))![0]!)
      yield* pollFor(
        () => (fs.readFileSync(`/proc/${bare}/cmdline`, "latin1").startsWith("/bin/sleep") ? true : undefined),
        10_000
      )
      expect([...processTree.scan(tree).found].sort()).toEqual([tree.pgid, bare].sort())
      // Signalling our own group would end this test's process too: only the tree's processes are signalled.
      const termination = yield* processTree.terminate(tree, "2 seconds")
      expect(termination.survivors).toEqual([])
      expect(isAlive(bare)).toBe(false)
      expect(isAlive(tree.pgid)).toBe(false)
    }).pipe(Effect.ensuring(killLeftovers)))

  it.live("a daemon (double fork, setsid) is found right after the spawn and by a look at every process", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("process-tree"), "pid")
      const { exited, tree } = start(`(setsid sleep 1000 >/dev/null 2>&1 & echo $! > ${pidFile})`)
      const daemon = started((yield* pollFor(() => readPids(pidFile, 1), 10_000))![0]!)
      yield* Effect.promise(() => exited)
      // The shell and the intermediate are gone, the group is empty: only the marker names the daemon.
      // Only the pids allocated since the spawn (taken as just now: no wrap of the allocator is possible), then all.
      // (Pending may hold another program of the machine caught mid-exec, another test's child say: not ours.)
      for (const spawnedAt of [performance.now(), undefined]) {
        const scanned = processTree.scan({ ...tree, spawnedAt })
        expect(scanned.found).toEqual([daemon])
        expect(scanned.pending).not.toContain(daemon)
      }
      const termination = yield* processTree.terminate(tree, "2 seconds")
      expect(termination).toEqual({ found: 1, escalated: false, survivors: [] })
      expect(isAlive(daemon)).toBe(false)
    }).pipe(Effect.ensuring(killLeftovers)))

  it.live(
    "a marked process that keeps exec'ing is found by every look, never missed mid-exec",
    () =>
      Effect.gen(function*() {
        const dir = tempDir("process-tree")
        const script = path.join(dir, "again.sh")
        // Replaces itself forever under the same pid: much of its time is spent inside exec.
        fs.writeFileSync(script, `exec /bin/sh ${script}\n`)
        const pidFile = path.join(dir, "pid")
        const { exited, tree } = start(`setsid /bin/sh ${script} & echo $! > ${pidFile}`)
        const looping = started((yield* pollFor(() => readPids(pidFile, 1), 10_000))![0]!)
        yield* Effect.promise(() => exited)
        // Every look sees it, as ours or as mid-exec (never neither: the race that let an escapee go); looks go on
        // until one has caught it mid-exec, so the case is reached.
        let looks = 0
        let caught = 0
        const until = Date.now() + 10_000
        for (; looks < 1_000 || (caught === 0 && Date.now() < until); looks++) {
          const scanned = processTree.scan({ ...tree, spawnedAt: performance.now() })
          // (Pending may also hold another program of the machine caught mid-exec: that is not a miss.)
          expect(scanned.found.filter((pid) => pid !== looping)).toEqual([])
          expect([...scanned.found, ...scanned.pending]).toContain(looping)
          if (scanned.pending.includes(looping)) caught++
        }
        expect(caught).toBeGreaterThan(0)
        // And what waits out the exec answers it as ours.
        for (let i = 0; i < 50; i++) expect(yield* processTree.members(tree)).toEqual([looping])
        const termination = yield* processTree.terminate(tree, "2 seconds")
        expect(termination.survivors).toEqual([])
        expect(isAlive(looping)).toBe(false)
      }).pipe(Effect.ensuring(killLeftovers)),
    30_000
  )

  it.live("a process with an empty environment is neither ours nor waited for", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("process-tree"), "pid")
      // Another run's stranger: started after ours, in a session of its own, with no environment at all.
      const { tree } = start("exec sleep 1000")
      const stranger = start(`setsid env -i /bin/sleep 1000 & echo $! > ${pidFile}`, false)
      const pid = started((yield* pollFor(() => readPids(pidFile, 1), 10_000))![0]!)
      yield* pollFor(
        () => (fs.readFileSync(`/proc/${pid}/cmdline`, "latin1").startsWith("/bin/sleep") ? true : undefined),
        10_000
      )
      const scanned = processTree.scan(tree)
      expect(scanned.found).toEqual([tree.pgid])
      expect(scanned.pending).toEqual([])
      process.kill(pid, "SIGKILL")
      yield* processTree.terminate(tree, "2 seconds")
      yield* processTree.terminate(stranger.tree, "2 seconds")
      expect(isAlive(tree.pgid)).toBe(false)
    }).pipe(Effect.ensuring(killLeftovers)))

  it.live("the start-time floor is at most the start of a process started after it, and within 2 s of it", () =>
    Effect.sync(() => {
      // Taken again after each spawn: the floor is one reading of /proc/uptime plus the monotonic time since.
      for (let i = 0; i < 5; i++) {
        const floor = processTree.startTicksFloor()
        const child = childProcess.spawn("sleep", ["5"], { stdio: "ignore" })
        const pid = started(child.pid!)
        const startTicks = processTree.startTimeOf(pid)!
        expect(startTicks).toBeGreaterThanOrEqual(floor)
        // A second of margin (100 ticks), and rounding: a floor far below would make every scan look at more.
        expect(startTicks - floor).toBeLessThanOrEqual(200)
      }
    }).pipe(Effect.ensuring(killLeftovers)))
})
