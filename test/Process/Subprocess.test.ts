/**
 * Subprocess with real child processes (no mocks): teardown of the whole tree on interruption, timeout, output
 * caps and a sink's "enough"; escalation to SIGKILL after the grace; bounded capture; stdin; exit codes and
 * signals; what becomes of background jobs after a normal exit.
 *
 * The grace period is OS-level real time (a child process does not run on the fiber's Clock, so a TestClock
 * cannot advance it): the escalation tests use a short real grace and say so. Liveness is checked right after the
 * effect returns, because the run only returns (or its interruption only completes) once its teardown found
 * nothing running; where a kill is asynchronous (killAllNow) a bounded poll waits for it. `isAlive` is
 * `kill(pid, 0)` plus a look at `/proc`, so a zombie no reaper collects counts as dead.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import * as fc from "effect/FastCheck"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Subprocess from "../../src/Process/Subprocess.js"
import { tempDir } from "../support/index.js"
// Liveness that tells a zombie (a killed orphan PID 1 may never reap) from a running process; bounded polling.
import { isAlive, pollFor, readPids } from "../Tools/Bash/helpers.js"

const cwd = tempDir("subprocess")
const env = { PATH: process.env.PATH ?? "/usr/bin:/bin" }

const sh = (script: string, options: Partial<Subprocess.Options> = {}): Subprocess.Options => ({
  argv: ["sh", "-c", script],
  cwd,
  env,
  ...options
})
const run = (options: Subprocess.Options) => Effect.scoped(Subprocess.run(options))
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

const roles = ["shell", "child", "grandchild", "escapee", "stubborn"] as const
type Tree = Readonly<Record<(typeof roles)[number], number>>

/** The pids of a {@link tree} by role, once all five are written. */
const readTree = (file: string): Tree | undefined => {
  let lines: ReadonlyArray<string>
  try {
    lines = fs.readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "")
  } catch {
    return undefined
  }
  const found = Object.fromEntries(lines.map((line) => line.split(" ")).map(([role, pid]) => [role, Number(pid)]))
  return roles.every((role) => role in found) ? (found as Tree) : undefined
}
const pidsOf = (tree: Tree): ReadonlyArray<number> => roles.map((role) => tree[role])

/**
 * The shell, a child in its group that starts a grandchild, a `setsid` escapee (another session, so another
 * group), and one that ignores SIGTERM, each written as `role pid` to `pidFile` (in no set order); once all five
 * are written, `tail`.
 */
const tree = (pidFile: string, tail = "sleep 1000") =>
  [
    `echo shell $$ >> ${pidFile}`,
    `sh -c 'sleep 1000 & echo grandchild $! >> ${pidFile}; wait' & echo child $! >> ${pidFile}`,
    `setsid sleep 1000 & echo escapee $! >> ${pidFile}`,
    `(trap '' TERM; exec sleep 1000) & echo stubborn $! >> ${pidFile}`,
    `while [ "$(wc -l < ${pidFile})" -lt 5 ]; do :; done`,
    `echo started`,
    tail
  ].join("\n")

describe("Subprocess", () => {
  it.live("interrupting the run kills the whole group, a grandchild and a setsid escapee included", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const fiber = yield* Effect.fork(run(sh(tree(pidFile), { killGrace: "300 millis" })))
      const started = yield* pollFor(() => readTree(pidFile), 10_000)
      const pids = pidsOf(started)
      expect(pids.filter(isAlive)).toHaveLength(5)
      // The escapee really left the group: its process group is not the shell's.
      const pgidOf = (pid: number) =>
        Number(fs.readFileSync(`/proc/${pid}/stat`, "latin1").split(") ")[1]!.split(" ")[2])
      expect(pgidOf(started.escapee)).not.toBe(started.shell)
      expect(pgidOf(started.grandchild)).toBe(started.shell)
      yield* Fiber.interrupt(fiber)
      expect(pids.filter(isAlive)).toEqual([])
    }))

  it.live("a process that ignores SIGTERM is SIGKILLed after the grace (a real 400 ms grace: the kill is OS-level)", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const started = Date.now()
      const result = yield* run(
        sh(`trap '' TERM; echo $$ > ${pidFile}; sleep 1000 & wait; sleep 1000`, {
          timeout: "200 millis",
          killGrace: "400 millis"
        })
      )
      const took = Date.now() - started
      expect(result.exit).toEqual(Subprocess.Exit.TimedOut({ after: expect.anything() }))
      expect(took).toBeGreaterThanOrEqual(200 + 400)
      expect(took).toBeLessThan(10_000)
      expect(isAlive(readPids(pidFile, 1)![0]!)).toBe(false)
    }))

  it.live("a process that ends on SIGTERM does not wait for the grace", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const result = yield* run(sh("sleep 1000", { timeout: "100 millis", killGrace: "20 seconds" }))
      expect(result.exit._tag).toBe("TimedOut")
      expect(Date.now() - started).toBeLessThan(10_000)
    }))

  it.live("captured output past the cap is dropped and flagged; the run goes on with overflow drop; memory stays bounded", () =>
    Effect.gen(function*() {
      const heapBefore = process.memoryUsage().heapUsed
      const result = yield* run(
        sh("head -c 100000000 /dev/zero | tr '\\0' a; echo done >&2", {
          stdout: { maxBytes: 65_536, overflow: "drop" }
        })
      )
      expect(result.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      expect(result.stdout.length).toBe(65_536)
      expect(text(result.stdout)).toBe("a".repeat(65_536))
      expect(result.stdoutTruncated).toBe(true)
      expect(text(result.stderr)).toBe("done\n")
      expect(result.stderrTruncated).toBe(false)
      // 100 MB went through; memory held 64 KiB of it (the rest is garbage the GC may not have collected yet).
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * 1024 * 1024)
    }))

  it.live("with overflow stop, output past the cap ends the run: OutputLimit, the first bytes kept, nothing left running", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const result = yield* run(sh(`echo $$ > ${pidFile}; yes`, { stderr: "stdout", stdout: { maxBytes: 10_000 } }))
      expect(result.exit).toEqual(Subprocess.Exit.OutputLimit({ stream: "stdout", limitBytes: 10_000 }))
      expect(text(result.stdout)).toBe("y\n".repeat(5_000))
      expect(result.stdoutTruncated).toBe(true)
      expect(isAlive(readPids(pidFile, 1)![0]!)).toBe(false)
    }))

  it.live.prop(
    "whatever the output size and the cap: the captured bytes are the first min(size, cap), truncated exactly when size > cap",
    [fc.integer({ min: 0, max: 300_000 }), fc.integer({ min: 0, max: 300_000 })],
    ([size, cap]) =>
      Effect.gen(function*() {
        const result = yield* run(
          sh(`head -c ${size} /dev/zero | tr '\\0' x`, { stdout: { maxBytes: cap, overflow: "drop" } })
        )
        expect(result.stdout.length).toBe(Math.min(size, cap))
        expect(result.stdout.every((byte) => byte === 120)).toBe(true)
        expect(result.stdoutTruncated).toBe(size > cap)
      }),
    { fastCheck: { numRuns: 30 }, timeout: 60_000 }
  )

  it.live("a sink gets every chunk in order; answering enough stops the run and kills the tree", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const seen: Array<string> = []
      const result = yield* run(sh(tree(pidFile, "i=0; while :; do i=$((i+1)); echo line $i; done"), {
        killGrace: "300 millis",
        stdout: {
          onChunk: (chunk) =>
            Effect.sync(() => {
              seen.push(text(chunk))
              return seen.join("").includes("line 500\n") ? "enough" : undefined
            })
        }
      }))
      expect(result.exit).toEqual(Subprocess.Exit.Stopped())
      expect(result.stdout.length).toBe(0)
      const lines = seen.join("").split("\n")
      expect(lines.slice(0, 3)).toEqual(["started", "line 1", "line 2"])
      expect(lines.slice(1, 501)).toEqual(Array.from({ length: 500 }, (_, i) => `line ${i + 1}`))
      expect(pidsOf(readTree(pidFile)!).filter(isAlive)).toEqual([])
    }))

  it.live("stdin is delivered and closed; without it, standard input is empty", () =>
    Effect.gen(function*() {
      const fed = yield* run({ argv: ["cat"], cwd, env, stdin: "{\"hook\": \"json\"}\n" })
      expect(fed.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      expect(text(fed.stdout)).toBe("{\"hook\": \"json\"}\n")
      const empty = yield* run(sh("cat; echo end"))
      expect(text(empty.stdout)).toBe("end\n")
      // A program that never reads its input is no error.
      const ignoring = yield* run(sh("exit 0", { stdin: "x".repeat(1024 * 1024) }))
      expect(ignoring.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
    }))

  it.live("exit codes and signals are reported", () =>
    Effect.gen(function*() {
      expect((yield* run(sh("exit 3"))).exit).toEqual(Subprocess.Exit.Exited({ code: 3 }))
      expect((yield* run(sh("kill -9 $$"))).exit).toEqual(Subprocess.Exit.Signaled({ signal: "SIGKILL", code: 137 }))
      expect((yield* run(sh("kill -TERM $$"))).exit).toEqual(Subprocess.Exit.Signaled({ signal: "SIGTERM", code: 143 }))
      const spawnFailure = yield* Effect.flip(run({ argv: ["/nonexistent/program"], cwd, env }))
      expect(spawnFailure).toMatchObject({ _tag: "SubprocessError", reason: "spawn" })
      expect(spawnFailure.message).toContain("cannot start /nonexistent/program")
    }))

  it.live("the environment is the given one, with the run's marker", () =>
    Effect.gen(function*() {
      const result = yield* run(
        sh(`echo "\${HOME-unset} \${KEPT-unset}"; printenv ${Subprocess.markerVariable}`, {
          env: { ...env, KEPT: "yes", DROPPED: undefined }
        })
      )
      const [vars, marker] = text(result.stdout).split("\n")
      expect(vars).toBe("unset yes")
      expect(marker).toMatch(/^[0-9a-f-]{36}$/)
    }))

  it.live("after a normal exit, background jobs are terminated (and counted), unless afterExit is keep", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const result = yield* run(sh(tree(pidFile, "echo finished"), { killGrace: "300 millis" }))
      expect(text(result.stdout)).toBe("started\nfinished\n")
      expect(result.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      // The shell is gone; its child, the grandchild, the escapee and the stubborn one were left.
      expect(result.leftovers).toBe(4)
      expect(pidsOf(readTree(pidFile)!).filter(isAlive)).toEqual([])

      const keptFile = path.join(tempDir("subprocess-pids"), "pids")
      const kept = yield* run(
        sh(`setsid sleep 1000 >/dev/null 2>&1 & echo $! > ${keptFile}; echo bye`, { afterExit: "keep" })
      )
      expect(text(kept.stdout)).toBe("bye\n")
      const survivor = readPids(keptFile, 1)![0]!
      expect(isAlive(survivor)).toBe(true)
      process.kill(survivor, "SIGKILL")
    }))

  it.live("stdout and stderr are captured apart, each whole and in order, however their writes interleave", () =>
    Effect.gen(function*() {
      const result = yield* run(sh(`i=1; while [ $i -le 300 ]; do echo o$i; echo e$i >&2; i=$((i+1)); done`))
      const lines = (prefix: string) => Array.from({ length: 300 }, (_, i) => `${prefix}${i + 1}\n`).join("")
      expect(text(result.stdout)).toBe(lines("o"))
      expect(text(result.stderr)).toBe(lines("e"))
      expect(result.outputIncomplete).toBe(false)
    }))

  it.live("output held open by a process no look can find: the run ends after the drain limit, output marked incomplete", () =>
    Effect.gen(function*() {
      // A new session and an empty environment (no marker), reparented once the shell exits: nothing finds it,
      // and it holds the pipe open. The run waits for the output's end only so long (2 s, real time).
      const pidFile = path.join(tempDir("subprocess-pids"), "stray")
      const result = yield* run(sh(`setsid env -i sh -c 'echo $$ > ${pidFile}; exec sleep 30' & echo last`))
      const stray = readPids(pidFile, 1)
      expect(stray).toBeDefined()
      process.kill(stray![0]!, "SIGKILL")
      expect(result.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      expect(text(result.stdout)).toBe("last\n")
      expect(result.outputIncomplete).toBe(true)
      expect(result.leftovers).toBe(0)
    }))

  it.live("a stray process that writes on past the drain limit loses its pipe: it gets SIGPIPE, not a pipe held open", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "writer")
      const result = yield* run(
        sh(`setsid env -i sh -c 'echo $$ > ${pidFile}; exec yes' & echo last`, {
          stdout: { onChunk: () => Effect.void }
        })
      )
      const writer = readPids(pidFile, 1)![0]!
      expect(result.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      expect(result.outputIncomplete).toBe(true)
      // The run let go of the pipe: `yes` dies of its next write instead of blocking on a full pipe for good.
      const died = yield* Effect.either(pollFor(() => (isAlive(writer) ? undefined : true), 5_000))
      if (isAlive(writer)) process.kill(writer, "SIGKILL")
      expect(died._tag).toBe("Right")
    }))

  it.live("runs interrupted in the middle of their output leave no pipe open", () =>
    Effect.gen(function*() {
      const descriptors = () => fs.readdirSync("/proc/self/fd").length
      const before = descriptors()
      for (let i = 0; i < 20; i++) {
        const first = yield* Deferred.make<void>()
        const fiber = yield* Effect.fork(run(sh("yes", {
          // Slower than `yes`: the pipe is full and the stream holds unread data when the run is interrupted.
          stdout: { onChunk: () => Effect.zipRight(Deferred.succeed(first, undefined), Effect.sleep("1 millis")) }
        })))
        yield* Deferred.await(first)
        yield* Fiber.interrupt(fiber)
      }
      // Closing a pipe completes a moment after its destroy: bounded wait for the count to come back.
      const settled = yield* Effect.either(pollFor(() => (descriptors() <= before + 2 ? true : undefined), 5_000))
      expect({ settled: settled._tag, open: descriptors() - before }).toMatchObject({ settled: "Right" })
    }))

  it.live("a timeout past what setTimeout takes (some 24 days) does not end the run at once", () =>
    Effect.gen(function*() {
      const result = yield* run(sh("sleep 0.05; echo done", { timeout: "30 days" }))
      expect(result.exit).toEqual(Subprocess.Exit.Exited({ code: 0 }))
      expect(text(result.stdout)).toBe("done\n")
    }))

  it.live("killAllNow SIGKILLs every run still going, escapees and SIGTERM-ignoring processes included", () =>
    Effect.gen(function*() {
      const pidFile = path.join(tempDir("subprocess-pids"), "pids")
      const done = yield* Deferred.make<void>()
      const fiber = yield* Effect.fork(run(sh(tree(pidFile))).pipe(Effect.ensuring(Deferred.succeed(done, undefined))))
      const pids = pidsOf(yield* pollFor(() => readTree(pidFile), 10_000))
      Subprocess.killAllNow()
      // SIGKILL is delivered asynchronously: wait (bounded) for the processes to go.
      yield* pollFor(() => (pids.some(isAlive) ? undefined : true), 5_000)
      expect(pids.filter(isAlive)).toEqual([])
      // The run itself sees its shell killed.
      const exit = yield* Fiber.join(fiber)
      expect(exit.exit).toEqual(Subprocess.Exit.Signaled({ signal: "SIGKILL", code: 137 }))
      expect(yield* Deferred.isDone(done)).toBe(true)
    }))
})
