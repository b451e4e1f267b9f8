/**
 * Durable turns across real processes (`fixtures/durableChild.ts`: the CLI's layers, a SQLite runner in the session
 * directory, a test approver on stdin/stdout). Each process is killed with SIGKILL at a chosen moment and a new
 * process runs the same turn on the same session. The oracles, written here:
 * - an unanswered question is asked again (same tool_use, same token) and answering it completes the turn;
 * - a call completed before the kill is not run again (marker files count every run of a command or hook);
 * - a non-idempotent Bash running at the kill is reported "unknown", never run twice; an idempotent Read running
 *   at the kill (in its PostToolUse hook) is run again, as attempt 2;
 * - every tool_use has exactly one tool_result, in model order;
 * - nothing left: no process carrying the test's marker.
 */
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { processesWithMarker, tempDir } from "../support/index.js"
import { bundledProgram } from "../support/programs.js"

/** The child program, bundled once (beforeAll): each of the file's several children starts with plain node. */
let child = ""
beforeAll(async () => {
  child = await bundledProgram(path.join(__dirname, "fixtures/durableChild.ts"))
}, 120_000)
const markerName = "ETR_DURABLE_TEST"
const markerValue = randomBytes(6).toString("hex")

interface Question {
  readonly toolUseId: string
  readonly token: string
}
interface Outcome {
  readonly toolUseId: string
  readonly status: string
  readonly attempt?: number
  readonly result: { readonly tool_use_id: string; readonly content: unknown; readonly is_error?: boolean }
}
interface Ended {
  readonly outcomes: ReadonlyArray<Outcome>
  readonly calls: ReadonlyArray<{ readonly toolUseId: string; readonly attempt: number; readonly state: string }>
}

const start = (cwd: string, turn: unknown, settings?: unknown) => {
  const turnFile = path.join(cwd, "turn.json")
  fs.writeFileSync(turnFile, JSON.stringify(turn))
  const args = [child, cwd, path.join(cwd, "session"), turnFile]
  if (settings !== undefined) {
    fs.writeFileSync(path.join(cwd, "settings.json"), JSON.stringify(settings))
    args.push(path.join(cwd, "settings.json"))
  }
  // The working directory is the child's argument; the bundle's packages resolve from the repository.
  const proc = spawn(process.execPath, args, {
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, [markerName]: markerValue }
  })
  const lines: Array<unknown> = []
  let buffer = ""
  let stderr = ""
  proc.stdout.on("data", (chunk) => {
    buffer += chunk
    let newline: number
    while ((newline = buffer.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, newline)))
      buffer = buffer.slice(newline + 1)
    }
  })
  proc.stderr.on("data", (chunk) => (stderr += chunk))
  const closed = new Promise<number | null>((resolve) => proc.on("close", (code) => resolve(code)))
  const questions = () =>
    lines.flatMap((line) => "question" in (line as object) ? [(line as { question: Question }).question] : [])
  return {
    proc,
    questions,
    stderr: () => stderr,
    answer: (text: string) => proc.stdin.write(`${text}\n`),
    kill: async () => {
      proc.kill("SIGKILL")
      await closed
    },
    ended: async (): Promise<Ended> => {
      const code = await closed
      const last = lines.find((line) => "outcomes" in (line as object)) as Ended | undefined
      if (code !== 0 || last === undefined) throw new Error(`child exited ${code}: ${stderr}`)
      return last
    }
  }
}

const waitFor = async (what: string, check: () => boolean, ms = 45_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const linesOf = (file: string): ReadonlyArray<string> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []

/** One tool_result per tool_use, in model order. */
const expectOneResultEach = (ended: Ended, ids: ReadonlyArray<string>) => {
  expect(ended.outcomes.map((outcome) => outcome.result.tool_use_id)).toEqual(ids)
  expect(ended.outcomes.map((outcome) => outcome.toolUseId)).toEqual(ids)
}

afterEach(() => {
  // Whatever a killed child left running (its Bash, its hook) carries the marker.
  for (const pid of processesWithMarker(`${markerName}=${markerValue}`)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone already
    }
  }
})

describe("durable turns across processes", () => {
  it("a question unanswered at the kill is asked again by a new process; answering completes the turn", async () => {
    const cwd = tempDir("durable-approval")
    const marker = path.join(cwd, "marker.txt")
    const turn = [
      { type: "tool_use", id: "toolu_a", name: "Bash", input: { command: `echo a >> ${marker}` } },
      { type: "tool_use", id: "toolu_b", name: "Bash", input: { command: `echo b >> ${marker}` } }
    ]
    const first = start(cwd, turn)
    await waitFor("the first question", () => first.questions().length === 1)
    expect(first.questions()[0]!.toolUseId).toBe("toolu_a")
    first.answer("allow")
    await waitFor("the second question", () => first.questions().length === 2)
    const asked = first.questions()[1]!
    expect(asked.toolUseId).toBe("toolu_b")
    expect(asked.token).toEqual(expect.any(String))
    expect(linesOf(marker)).toEqual(["a"])
    await first.kill()

    const second = start(cwd, turn)
    await waitFor("the question again", () => second.questions().length === 1)
    // The same question (the same durable deferred), and toolu_a's is not asked again.
    expect(second.questions()[0]).toEqual(asked)
    second.answer("allow")
    const ended = await second.ended()
    expectOneResultEach(ended, ["toolu_a", "toolu_b"])
    expect(ended.outcomes.map((outcome) => outcome.status)).toEqual(["success", "success"])
    // toolu_a ran once, before the kill; toolu_b once, after.
    expect(linesOf(marker)).toEqual(["a", "b"])
    expect(ended.calls.map((call) => [call.toolUseId, call.attempt, call.state]).sort()).toEqual([
      ["toolu_a", 1, "done"],
      ["toolu_b", 1, "done"]
    ])
  }, 120_000)

  it("a Bash running at the kill is reported unknown, a Read running at the kill is run again", async () => {
    const cwd = tempDir("durable-unknown")
    fs.writeFileSync(path.join(cwd, "a.txt"), "hello\n")
    const hookRuns = path.join(cwd, "hook-runs.txt")
    const bashRuns = path.join(cwd, "bash-runs.txt")
    // Read's PostToolUse hook runs inside the call's activity: the first time it waits (and is killed there).
    const settings = {
      permissions: { allow: ["Bash", "Read"] },
      hooks: {
        PostToolUse: [{
          matcher: "Read",
          hooks: [{ type: "command", command: `echo r >> ${hookRuns}; [ $(wc -l < ${hookRuns}) -ge 2 ] || sleep 60` }]
        }]
      }
    }
    const turn = [
      { type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: path.join(cwd, "a.txt") } },
      { type: "tool_use", id: "toolu_bash", name: "Bash", input: { command: `echo x >> ${bashRuns}; sleep 60` } }
    ]
    const first = start(cwd, turn, settings)
    await waitFor("Read's hook", () => linesOf(hookRuns).length === 1)
    await first.kill()

    // The Read is run again (its hook too); then the Bash starts, and this process is killed while it runs.
    const second = start(cwd, turn, settings)
    await waitFor("the Bash", () => linesOf(bashRuns).length === 1)
    expect(linesOf(hookRuns)).toEqual(["r", "r"])
    await second.kill()

    const third = start(cwd, turn, settings)
    const ended = await third.ended()
    expectOneResultEach(ended, ["toolu_read", "toolu_bash"])
    const [read, bash] = ended.outcomes
    expect(read!.status).toBe("success")
    expect(read!.attempt).toBe(2)
    expect(bash!.status).toBe("interrupted")
    expect(bash!.result.is_error).toBe(true)
    expect(String(bash!.result.content)).toContain("unknown: the process stopped while it ran")
    // Never run twice: one Bash run, and the completed Read was not run a third time.
    expect(linesOf(bashRuns)).toEqual(["x"])
    expect(linesOf(hookRuns)).toEqual(["r", "r"])
    expect(ended.calls.map((call) => [call.toolUseId, call.attempt, call.state]).sort()).toEqual([
      ["toolu_bash", 1, "unknown"],
      ["toolu_read", 2, "done"]
    ])
    // The audit log says which attempt ran the Read.
    const audit = linesOf(path.join(cwd, "audit.jsonl")).map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(audit.some((entry) => entry["tool_use_id"] === "toolu_read" && entry["attempt"] === 2)).toBe(true)
  }, 180_000)
})
