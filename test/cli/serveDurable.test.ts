/**
 * `serve --durable --session DIR`: each turn is a durable turn in the session directory. The oracles, written here:
 * - a turn's events and result come as for any turn;
 * - an approval still open when input ends is not denied: the turn gets a `pending` line and the process ends; a new
 *   `serve` of the session sent the same turn asks the same question (same token) and, answered, finishes it;
 * - what completed before is not run again (a PostToolUse hook counts every run of the Read);
 * - a signal leaves the turn pending the same way (nothing is denied or recorded as cancelled);
 * - `exec --durable`: a signal stops the runner at once, its Bash's process tree with it (nothing left running);
 *   the same turn run again reports that Bash "unknown", never runs it twice.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { cleanUp, ensureBuilt, output, processes, run, start, toolUse, waitUntil, workspace } from "./helpers.js"
import type { Running } from "./helpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

type Line = Record<string, unknown> & { readonly type: string }

const lines = (running: Running): ReadonlyArray<Line> =>
  running.stdout().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line)

const send = (running: Running, request: unknown) => running.child.stdin.write(`${JSON.stringify(request)}\n`)

const linesOf = (file: string): ReadonlyArray<string> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []

/** A Read (allowed, its runs counted by a hook) and a Write that asks. */
const setUp = () => {
  const where = workspace()
  const session = path.join(where.dir, "..", "session")
  const runs = path.join(where.dir, "..", "read-runs.txt")
  const settings = path.join(where.dir, "..", "settings.json")
  fs.writeFileSync(
    settings,
    JSON.stringify({
      permissions: { allow: ["Read"] },
      hooks: { PostToolUse: [{ matcher: "Read", hooks: [{ type: "command", command: `echo r >> ${runs}` }] }] }
    })
  )
  const turn = {
    type: "turn",
    id: "t1",
    tool_uses: [
      toolUse("toolu_read", "Read", { file_path: path.join(where.dir, "a.txt") }),
      toolUse("toolu_write", "Write", { file_path: path.join(where.dir, "new.txt"), content: "new\n" })
    ]
  }
  const args = ["serve", "--session", session, "--durable", "--settings", settings, "--no-claude-settings"]
  return { where, runs, turn, args }
}

describe.concurrent("serve --durable", () => {
  it(
    "an approval open at end of input is left pending; a new serve asks it again and finishes the turn",
    async ({ expect }) => {
      const { args, runs, turn, where } = setUp()
      const first = start(where, args)
      send(first, turn)
      // The Read and the Write touch different files, so they run side by side: the Write's question may come before
      // the Read (and its hook) completed. Input ends once both are out.
      await waitUntil(
        "the approval request, and the Read completed with its events",
        () =>
          lines(first).some((line) => line.type === "approval_request") &&
          lines(first).some((line) =>
            line.type === "event" && line["event"] === "completed" && line["tool_use_id"] === "toolu_read"
          )
      )
      const asked = lines(first).find((line) => line.type === "approval_request")!
      expect(asked["tool_use_id"]).toBe("toolu_write")
      expect(asked["token"]).toEqual(expect.any(String))
      first.child.stdin.end()
      const ended = await first.finished
      expect(ended.code).toBe(0)
      expect(lines(first).filter((line) => line.type === "pending").map((line) => line.turn)).toEqual(["t1"])
      expect(lines(first).some((line) => line.type === "result")).toBe(false)
      expect(fs.existsSync(path.join(where.dir, "new.txt"))).toBe(false)
      expect(linesOf(runs)).toEqual(["r"])

      const second = start(where, args)
      send(second, turn)
      await waitUntil("the question again", () => lines(second).some((line) => line.type === "approval_request"))
      const again = lines(second).find((line) => line.type === "approval_request")!
      expect([again["tool_use_id"], again["token"]]).toEqual(["toolu_write", asked["token"]])
      send(second, { type: "approval", id: again["id"], answer: "allow_once" })
      await waitUntil("the result", () => lines(second).some((line) => line.type === "result"))
      const result = lines(second).find((line) => line.type === "result")! as unknown as {
        readonly results: ReadonlyArray<{ readonly tool_use_id: string; readonly content: string }>
      }
      expect(result.results.map((entry) => entry.tool_use_id)).toEqual(["toolu_read", "toolu_write"])
      expect(result.results[0]!.content).toContain("hello")
      expect(fs.readFileSync(path.join(where.dir, "new.txt"), "utf8")).toBe("new\n")
      // The Read completed in the first process and was not run again.
      expect(linesOf(runs)).toEqual(["r"])
      second.child.stdin.end()
      expect((await second.finished).code).toBe(0)
    },
    60_000
  )

  it("a signal while the question is open leaves the turn pending too: nothing is denied", async ({ expect }) => {
    const { args, turn, where } = setUp()
    const first = start(where, args)
    send(first, turn)
    await waitUntil("the approval request", () => lines(first).some((line) => line.type === "approval_request"))
    first.child.kill("SIGTERM")
    const ended = await first.finished
    expect(ended.code).toBe(143)
    expect(lines(first).filter((line) => line.type === "pending").map((line) => line.turn)).toEqual(["t1"])

    const second = start(where, args)
    send(second, turn)
    await waitUntil("the question again", () => lines(second).some((line) => line.type === "approval_request"))
    expect(lines(second).find((line) => line.type === "approval_request")!["tool_use_id"]).toBe("toolu_write")
    second.child.kill("SIGTERM")
    await second.finished
  }, 60_000)

  it(
    "exec --durable: a signal stops the running Bash and its tree at once; run again, its outcome is unknown",
    async ({ expect }) => {
      const where = workspace()
      const session = path.join(where.dir, "..", "session")
      const marker = `etr-durable-sig-${randomBytes(4).toString("hex")}`
      const runs = path.join(where.dir, "bash-runs.txt")
      const turn = [toolUse("toolu_sleep", "Bash", { command: `echo x >> ${runs}; sleep 30 # ${marker}` })]
      const args = ["exec", "--session", session, "--durable", "--approve", "allow", "--no-claude-settings"]
      const first = start(where, args, JSON.stringify(turn))
      await waitUntil("the Bash to start", () => linesOf(runs).length === 1 && fs.existsSync(session), 20_000)
      await waitUntil("its sleep", async () => (await processes(marker)).length > 0, 10_000)
      first.child.kill("SIGTERM")
      const ended = await first.finished
      expect(ended.code).toBe(143)
      expect(ended.stdout).toBe("")
      expect(ended.stderr).toContain("the durable turn is left as it is")
      expect(await processes(marker)).toEqual([])

      const again = output(await run(where, args, turn))
      expect(again.outcomes.map((outcome) => [outcome.tool_use_id, outcome.status])).toEqual([
        ["toolu_sleep", "interrupted"]
      ])
      expect(again.results[0]!.content).toContain("unknown: the process stopped while it ran")
      expect(linesOf(runs)).toEqual(["x"])
    },
    60_000
  )
})
