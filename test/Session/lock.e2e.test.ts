/**
 * The session lock with real processes: N processes x M turns on one session directory, each turn a take of the
 * lock, an update of the state and a checkpoint (`fixtures/lockWorker.ts`). The oracles, written here:
 * - every update kept: the final log holds exactly every `process-turn` entry, each process's in its own order;
 * - never two at once: the trace (one O_APPEND line as a process enters and as it leaves) alternates
 *   `enter X` / `leave X` of the same turn, and no worker found another inside (exit 3);
 * - a holder killed with SIGKILL while the others wait is taken over (its owner is provably dead);
 * - nothing left: no lock, no temporary file, no process carrying the test's marker.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { processesWithMarker, tempDir } from "../support/index.js"
import { bundledProgram } from "../support/programs.js"

const worker = bundledProgram(path.join(__dirname, "fixtures/lockWorker.ts"))
const marker = `ETR_LOCK_TEST=${randomBytes(6).toString("hex")}`

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stderr: string
}

const startWorker = async (directory: string, id: string, turns: string) => {
  const child = spawn(process.execPath, [await worker, directory, id, turns], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, [marker.split("=")[0]!]: marker.split("=")[1]! }
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

/** The trace alternates `enter X` and `leave X`: never two inside at once. The turns, in the order they ran. */
const turnsOfTrace = (directory: string): ReadonlyArray<string> => {
  const lines = fs.readFileSync(path.join(directory, "trace"), "utf8").trim().split("\n")
  const ran: Array<string> = []
  for (let i = 0; i < lines.length; i += 2) {
    const enter = /^enter (.+)$/.exec(lines[i]!)
    expect(enter, `line ${i} of the trace: ${lines[i]}`).not.toBeNull()
    expect(lines[i + 1], `after ${lines[i]}`).toBe(`leave ${enter![1]}`)
    ran.push(enter![1]!)
  }
  return ran
}

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
            const holder = killHolder ? await startWorker(directory, "holder", "hold") : undefined
            if (holder !== undefined) {
              await waitFor("the holder to take the session", () => holder.stdout().includes("holding"))
            }
            const workers = await Promise.all(Array.from(
              { length: processes },
              (_, n) => startWorker(directory, `p${n}`, String(turns))
            ))
            if (holder !== undefined) {
              // The others are running (and waiting for the lock) when the holder dies.
              await waitFor("the workers to start", () => workers.every((w) => w.stdout().includes("started")))
              holder.child.kill("SIGKILL")
              expect((await holder.finished).signal).toBe("SIGKILL")
            }
            const results = await Promise.all(workers.map((w) => w.finished))
            for (const result of results) expect(result).toMatchObject({ code: 0, stderr: "" })
            const expected = Array.from({ length: processes }, (_, p) =>
              Array.from({ length: turns }, (_, t) => `p${p}-${t}`)).flat()
            const log = logOf(directory)
            expect([...log].sort()).toEqual([...expected].sort())
            // The log is in the order the turns ran, as the trace saw it.
            expect(turnsOfTrace(directory)).toEqual(log)
            for (let p = 0; p < processes; p++) {
              expect(log.filter((entry) =>
                entry.startsWith(`p${p}-`)
              )).toEqual(
                Array.from({ length: turns }, (_, t) => `p${p}-${t}`)
              )
            }
            expect(fs.existsSync(path.join(directory, "session.lock"))).toBe(false)
            expect(fs.readdirSync(directory).filter((name) => name.includes(".tmp") || name.endsWith(".break")))
              .toEqual([])
            expect(processesWithMarker(marker)).toEqual([])
          }
        ),
        // The holder-killed case always, then drawn ones.
        { numRuns: 4, examples: [[3, 3, true]] }
      ),
    240_000
  )
})
