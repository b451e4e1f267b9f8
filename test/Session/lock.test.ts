/**
 * The session lock with real processes: N processes x M turns on one session directory, each turn a take of the
 * lock, an update of the state and a checkpoint. Every update is kept (the oracle: the final log holds exactly every
 * `process-turn` entry), and no two processes are ever inside at once (each turn holds an exclusive `inside` file).
 * A holder killed with SIGKILL is taken over; a lock held by a live process is never taken over; a lock is released
 * only by its owner.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fc from "effect/FastCheck"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SessionLock from "../../src/Session/internal/lock.js"
import { Session } from "../../src/Session/Session.js"

const worker = path.join(__dirname, "fixtures/lockWorker.ts")

const tempDir = (prefix: string): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)))

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

const startWorker = (directory: string, id: string, turns: string) => {
  const child = spawn(process.execPath, ["--import", "tsx", worker, directory, id, turns], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const finished = new Promise<Ran>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr })))
  return { child, stdout: () => stdout, finished }
}

const waitFor = async (what: string, check: () => boolean, ms = 30_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const logOf = (directory: string): ReadonlyArray<string> =>
  (JSON.parse(fs.readFileSync(path.join(directory, "session.json"), "utf8")) as { state: { log: Array<string> } })
    .state.log

describe("session lock, real processes", () => {
  it(
    "N processes x M turns: every update kept, never two inside at once; a SIGKILLed holder is taken over",
    () =>
      fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 2, max: 4 }),
          fc.integer({ min: 1, max: 4 }),
          fc.boolean(),
          async (processes, turns, killHolder) => {
            const directory = tempDir("etr-lock")
            try {
              if (killHolder) {
                const holder = startWorker(directory, "holder", "hold")
                await waitFor("the holder to take the session", () => holder.stdout().includes("holding"))
                holder.child.kill("SIGKILL")
                await holder.finished
                // Its lock stays behind, naming a dead owner.
                expect(fs.existsSync(path.join(directory, "session.lock"))).toBe(true)
              }
              const workers = Array.from(
                { length: processes },
                (_, n) => startWorker(directory, `p${n}`, String(turns))
              )
              const results = await Promise.all(workers.map((w) => w.finished))
              for (const result of results) expect(result).toMatchObject({ code: 0, stderr: "" })
              const expected = Array.from({ length: processes }, (_, p) =>
                Array.from({ length: turns }, (_, t) => `p${p}-${t}`)).flat()
              expect([...logOf(directory)].sort()).toEqual(expected.sort())
              // Each process's turns in its own order.
              for (let p = 0; p < processes; p++) {
                expect(
                  logOf(directory).filter((entry) =>
                    entry.startsWith(`p${p}-`)
                  )
                ).toEqual(
                  Array.from({ length: turns }, (_, t) => `p${p}-${t}`)
                )
              }
              expect(fs.existsSync(path.join(directory, "session.lock"))).toBe(false)
              expect(fs.readdirSync(directory).filter((name) => name.endsWith(".tmp"))).toEqual([])
            } finally {
              fs.rmSync(directory, { recursive: true, force: true })
            }
          }
        ),
        { numRuns: 3 }
      ),
    240_000
  )
})

describe("session lock, one process", () => {
  it.effect("the lock holds its owner from the start; a live holder is waited for, then named; release is the owner's", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-lock1")
      const file = path.join(directory, "session.lock")
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(Session.layer({ directory }), scope)
      const owner = SessionLock.parseOwner(fs.readFileSync(file, "utf8"))
      expect(owner).toMatchObject({ pid: process.pid })
      expect(owner!.start).toBeTypeOf("number")
      // A second take in this process waits for the (live) holder, then fails naming it.
      const busy = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "50 millis" })))
      )
      expect(busy.message).toMatch(new RegExp(`in use by process ${process.pid} \\(.*\\); gave up after waiting`))
      expect(busy.message).not.toContain("\n")
      // Someone else's lock (the parent of this process runs) is never removed by our release.
      const other = JSON.stringify({ pid: process.ppid, start: null, nonce: "x", since: 0, command: "other" })
      fs.writeFileSync(file, other)
      yield* Scope.close(scope, Exit.void)
      expect(fs.readFileSync(file, "utf8")).toBe(other)
      const stillBusy = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "0 millis" })))
      )
      expect(stillBusy.message).toContain(`in use by process ${process.ppid} (other`)
      fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.effect("stale only when provably dead: a dead pid, or a live pid that started at another time; unreadable is never stale", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-lock2")
      const file = path.join(directory, "session.lock")
      // No process has pid 2^22 + 1 on Linux's default pid_max: dead (the 0.2 format: just a pid).
      fs.writeFileSync(file, "4194305\n")
      yield* Effect.scoped(Layer.build(Session.layer({ directory })))
      expect(fs.existsSync(file)).toBe(false)
      // Our own pid with another start time: a reused pid, so the owner is dead.
      fs.writeFileSync(file, JSON.stringify({ pid: process.pid, start: 1, nonce: "old", since: 0, command: "" }))
      expect(SessionLock.isDead(SessionLock.parseOwner(fs.readFileSync(file, "utf8"))!)).toBe(true)
      yield* Effect.scoped(Layer.build(Session.layer({ directory })))
      expect(fs.existsSync(file)).toBe(false)
      // A live pid with its true start time is alive.
      const parent = { pid: process.ppid, start: null, nonce: "", since: Number.NaN, command: "" }
      expect(SessionLock.isDead(parent)).toBe(false)
      // A lock that cannot be read (empty: what 0.2 left when killed between create and write) is not taken over.
      fs.writeFileSync(file, "")
      const unreadable = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "0 millis" })))
      )
      expect(unreadable.message).toContain("cannot read; remove it if no other process uses the session")
      expect(fs.readFileSync(file, "utf8")).toBe("")
      fs.rmSync(directory, { recursive: true, force: true })
    }))
})
