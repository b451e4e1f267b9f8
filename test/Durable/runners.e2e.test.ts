/**
 * Durable turns on two runner processes sharing one real Postgres (a throwaway cluster on 127.0.0.1, see
 * test/support/postgres.ts; `.ci/run` installs the Debian package). Runner A executes 20 sessions' turns of 10 calls
 * each; their workflows are spread over A and B by shard; B is killed with SIGKILL mid-way and A takes its shards
 * over. The `Mark` tool (fixtures/runnerChild.ts) is not idempotent and appends `<tool_use_id> <runner>` to a marker
 * file each time it runs. The oracles, written here:
 * - every tool_use has exactly one outcome, in model order, in every turn;
 * - no call ran twice (no id twice in the marker file); every successful call ran exactly once; a call that was
 *   running on B when it died is reported "unknown", never run again;
 * - the work was spread (both runners ran calls) and B's turns were finished by A (a session with calls marked by
 *   B before the kill and by A after it).
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { cleanUp, ensureBuilt, output, run, toolUse, workspace } from "../cli/helpers.js"
import { tempDir } from "../support/index.js"
import { freePort, type Postgres, postgresBin, startPostgres } from "../support/postgres.js"
import { bundledProgram } from "../support/programs.js"

/** The runner program, bundled once (beforeAll): the runners start with plain node. */
let child = ""
const bin = postgresBin()
if (bin === undefined) {
  console.warn("skipping the Postgres runner tests: no PostgreSQL server binaries (apt: postgresql)")
}

interface Runner {
  readonly proc: ChildProcess
  readonly lines: Array<Record<string, unknown>>
  readonly stderr: () => string
}

const startRunner = (url: string, port: number, name: string, markerFile: string): Runner => {
  const proc = spawn(process.execPath, [child, url, String(port), name, markerFile], {
    stdio: ["pipe", "pipe", "pipe"]
  })
  const lines: Array<Record<string, unknown>> = []
  let buffer = ""
  let stderr = ""
  proc.stdout!.on("data", (chunk) => {
    buffer += chunk
    let newline: number
    while ((newline = buffer.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, newline)) as Record<string, unknown>)
      buffer = buffer.slice(newline + 1)
    }
  })
  proc.stderr!.on("data", (chunk) => (stderr += chunk))
  return { proc, lines, stderr: () => stderr }
}

const waitFor = async (what: string, check: () => boolean, runners: ReadonlyArray<Runner>, ms = 60_000) => {
  const until = Date.now() + ms
  while (!check()) {
    const dead = runners.find((runner) => runner.proc.exitCode !== null)
    if (dead !== undefined) throw new Error(`a runner exited while waiting for ${what}: ${dead.stderr()}`)
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const marks = (file: string): ReadonlyArray<{ readonly id: string; readonly runner: string }> =>
  fs.existsSync(file)
    ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "").map((line) => {
      const [id, runner] = line.split(" ")
      return { id: id!, runner: runner! }
    })
    : []

/** How many backends hold advisory locks (a runner holds one per shard it owns). */
const lockHolders = (url: string): number =>
  Number(
    execFileSync(path.join(bin!, "psql"), [
      url,
      "-At",
      "-c",
      "SELECT count(DISTINCT pid) FROM pg_locks WHERE locktype = 'advisory'"
    ], { encoding: "utf8" }).trim()
  )

describe.skipIf(bin === undefined)("durable turns on two runners over Postgres", () => {
  let pg: Postgres
  const runners: Array<Runner> = []
  beforeAll(async () => {
    ;[pg, child] = await Promise.all([
      startPostgres(bin!),
      bundledProgram(path.join(__dirname, "fixtures/runnerChild.ts")),
      ensureBuilt()
    ])
  }, 300_000)
  afterAll(() => {
    // The runners and any CLI child a failed test left, before their database goes.
    for (const runner of runners) runner.proc.kill("SIGKILL")
    cleanUp()
    pg?.stop()
  })

  it(
    "200 calls of 20 sessions complete, each at most once; a killed runner's turns are finished by the other",
    async () => {
      const markerFile = path.join(tempDir("runners"), "marks.txt")
      const url = pg.database("runners")
      const a = startRunner(url, await freePort(), "A", markerFile)
      const b = startRunner(url, await freePort(), "B", markerFile)
      runners.push(a, b)
      await waitFor("both runners", () => a.lines.length > 0 && b.lines.length > 0, runners)
      // The shards are shared once both runners hold some (each holds one advisory lock per shard).
      await waitFor("shards on both runners", () => lockHolders(url) >= 2, runners)

      const turns = Array.from({ length: 20 }, (_, s) => ({
        session: `session-${s}`,
        toolUses: Array.from({ length: 10 }, (_, c) => ({
          type: "tool_use",
          id: `toolu_s${s}_c${c}`,
          name: "Mark",
          input: { waitMs: 30 }
        }))
      }))
      a.proc.stdin!.write(`${JSON.stringify({ turns })}\n`)
      await waitFor("B to run some calls", () => marks(markerFile).filter((mark) => mark.runner === "B").length >= 20, [
        a,
        b
      ])
      const beforeKill = marks(markerFile)
      b.proc.kill("SIGKILL")
      await waitFor("A to finish every turn", () => a.lines.length > 1, [a], 90_000)
      a.proc.kill("SIGKILL")

      const outcomes = a.lines[1]!["outcomes"] as ReadonlyArray<
        ReadonlyArray<{ readonly toolUseId: string; readonly status: string; readonly content: unknown }>
      >
      // One outcome per tool_use, in model order, in every turn.
      expect(outcomes.map((turn) => turn.map((outcome) => outcome.toolUseId))).toEqual(
        turns.map((turn) => turn.toolUses.map((toolUse) => toolUse.id))
      )
      const all = outcomes.flat()
      const ran = marks(markerFile)
      const runs = new Map<string, number>()
      for (const mark of ran) runs.set(mark.id, (runs.get(mark.id) ?? 0) + 1)
      // Never twice.
      expect([...runs].filter(([, count]) => count > 1)).toEqual([])
      for (const outcome of all) {
        if (outcome.status === "success") {
          expect(runs.get(outcome.toolUseId)).toBe(1)
        } else {
          // Running on B when it died: reported unknown, not run again.
          expect(outcome.status).toBe("interrupted")
          expect(String(outcome.content)).toContain("unknown: the process stopped while it ran")
        }
      }
      expect(all.filter((outcome) => outcome.status === "success").length).toBeGreaterThan(150)
      // Spread over both runners, and B's sessions finished by A.
      const byB = new Set(beforeKill.filter((mark) => mark.runner === "B").map((mark) => mark.id.split("_c")[0]))
      expect(beforeKill.some((mark) => mark.runner === "A")).toBe(true)
      const finishedByA = ran.slice(beforeKill.length).filter((mark) =>
        mark.runner === "A" && byB.has(mark.id.split("_c")[0]!)
      )
      expect(finishedByA.length).toBeGreaterThan(0)
    },
    180_000
  )

  it(
    "exec --durable postgres://: the turn is kept in the database; the same turn again attaches, nothing runs twice",
    async () => {
      const where = workspace()
      const session = path.join(where.dir, "..", "session")
      const marker = path.join(where.dir, "ran.txt")
      // Its own database: a cluster's runners must all provide the same tools (the runner children above do not).
      const url = pg.database("exec_attach")
      const turn = [
        toolUse("toolu_read", "Read", { file_path: path.join(where.dir, "a.txt") }),
        toolUse("toolu_bash", "Bash", { command: `echo ran >> ${marker}` })
      ]
      const args = [
        "exec",
        "--session",
        session,
        "--durable",
        url,
        "--approve",
        "allow",
        "--no-claude-settings"
      ]
      const first = output(await run(where, args, turn))
      expect(first.outcomes.map((outcome) => outcome.status)).toEqual(["success", "success"])
      const second = output(await run(where, args, turn))
      expect(second.results).toEqual(first.results)
      expect(fs.readFileSync(marker, "utf8")).toBe("ran\n")
      // Recorded in the shared database, not in the session directory.
      expect(fs.existsSync(path.join(session, "durable.sqlite"))).toBe(false)
      const recorded = execFileSync(path.join(bin!, "psql"), [
        url,
        "-At",
        "-c",
        "SELECT tool_use_id || ' ' || attempt || ' ' || state FROM effect_tool_runtime_calls " +
        "WHERE tool_use_id IN ('toolu_read', 'toolu_bash') ORDER BY tool_use_id"
      ], { encoding: "utf8" }).trim().split("\n")
      expect(recorded).toEqual(["toolu_bash 1 done", "toolu_read 1 done"])
    },
    120_000
  )

  it("exec --durable with a database it cannot reach, or an address in use, says so (no password shown)", async () => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const turn = [toolUse("toolu_1", "Read", { file_path: path.join(where.dir, "a.txt") })]
    const unreachable = await run(where, [
      "exec",
      "--session",
      session,
      "--durable",
      "postgres://app:hunter2@127.0.0.1:1/db",
      "--no-claude-settings"
    ], turn)
    expect(unreachable.code).toBe(2)
    expect(unreachable.stdout).toBe("")
    expect(unreachable.stderr).toContain("the durable store postgres://app:***@127.0.0.1:1/db cannot be used")
    expect(unreachable.stderr).not.toContain("hunter2")

    const taken = net.createServer()
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve))
    const port = (taken.address() as net.AddressInfo).port
    try {
      const inUse = await run(where, [
        "exec",
        "--session",
        session,
        "--durable",
        pg.database("exec_errors"),
        "--runner-address",
        `127.0.0.1:${port}`,
        "--no-claude-settings"
      ], turn)
      expect(inUse.code).toBe(2)
      expect(inUse.stderr).toContain(`the durable runner cannot listen at 127.0.0.1:${port}`)
    } finally {
      taken.close()
    }
  }, 120_000)
})
