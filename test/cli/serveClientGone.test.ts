/**
 * `serve` when its client goes away mid-turn: a broken standard output (EPIPE) is the client cancelling. The running
 * turn and the queued one are cancelled, the process trees they started are stopped (a forking Bash command, found
 * by its unique command line), every call is in the audit log with its outcome, and the process exits 141 with one
 * line on standard error. Closing standard output alone does the same; closing standard input alone still finishes
 * the turn (see serve.test.ts).
 */
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { cleanUp, ensureBuilt, processes, start, toolUse, waitUntil, workspace } from "./helpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

const auditEntries = (file: string) =>
  fs.readFileSync(file, "utf8").trim().split("\n").map((line) =>
    JSON.parse(line) as { event: string; tool_use_id: string; status?: string }
  )

describe.concurrent("serve, the client gone mid-turn", () => {
  it.for(
    [
      ["the client exits (standard input and output closed)", true],
      ["the client closes standard output only", false]
    ] as const
  )("%s: turns cancelled, trees stopped, audited, exit 141", async ([, closeInput], { expect }) => {
    const where = workspace()
    const audit = path.join(where.dir, "..", "audit.jsonl")
    const seconds = `30.${randomInt(100_000, 1_000_000)}`
    const pattern = `sleep ${seconds.replace(".", "\\.")}`
    const serve = start(where, ["serve", "--approve", "allow", "--audit", audit])
    serve.child.stdin.write(
      `${
        JSON.stringify({
          type: "turn",
          id: "t1",
          tool_uses: [
            toolUse("u1", "Bash", { command: `sleep ${seconds} & sleep ${seconds}; wait` }),
            toolUse("u2", "Bash", { command: "touch NEVER" })
          ]
        })
      }\n${JSON.stringify({ type: "turn", id: "t2", tool_uses: [toolUse("u3", "Read", { file_path: "a.txt" })] })}\n`
    )
    await waitUntil("the commands to run", async () => (await processes(pattern)).length >= 2, 20_000)
    await waitUntil("the started event", () => serve.stdout().includes("\"started\""))
    serve.child.stdout.destroy()
    if (closeInput) serve.child.stdin.end()
    const finished = await serve.finished
    expect(finished.code).toBe(141)
    expect(finished.stderr).toMatch(/^effect-tool-runtime: the client closed standard output \(EPIPE\)[^\n]*\n$/)
    expect(await processes(pattern)).toEqual([])
    expect(fs.existsSync(path.join(where.dir, "NEVER"))).toBe(false)
    const completed = auditEntries(audit).filter((entry) => entry.event === "Completed")
    expect(completed.map((entry) => [entry.tool_use_id, entry.status]).sort()).toEqual([
      ["u1", "interrupted"],
      ["u2", "interrupted"],
      ["u3", "interrupted"]
    ])
  })
})
