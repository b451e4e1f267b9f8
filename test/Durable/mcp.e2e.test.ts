/**
 * `serve --mcp --durable --session DIR` across real processes: the built CLI on stdio with the SDK's own `Client`,
 * each call named by Claude Code's `_meta["claudecode/toolUseId"]`. The server is killed with SIGKILL at a chosen
 * moment; a new server on the same session gets the same calls again. The oracles, written here:
 * - a question unanswered at the kill is asked again through elicitation (the same message, the same token) when the
 *   client sends the call again, and answering it completes the call; a call completed before the kill is not run
 *   again (a marker file counts every run) and gives the same result;
 * - a non-idempotent Bash running at the kill is reported "unknown", never run twice; an idempotent Read running at
 *   the kill (in its PostToolUse hook) is run again, as attempt 2 (the audit log says so);
 * - a question open when the client goes away (a clean end of the connection) is not answered "denied";
 * - a malformed call id is a clear JSON-RPC error; a call with none still runs.
 */
import { afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { bin, ensureBuilt, waitUntil, workspace } from "../cli/helpers.js"
import { processesWithMarker } from "../support/index.js"

const markerName = "ETR_DURABLE_MCP_TEST"
const markerValue = randomBytes(6).toString("hex")

interface Question {
  readonly message: string
  readonly token: unknown
}

type Where = ReturnType<typeof workspace>

/** One server process of the session, with a client that answers approval forms with `answer` (or never). */
const serve = async (
  where: Where,
  args: ReadonlyArray<string>,
  answer: (question: Question) => ElicitResult | "wait"
) => {
  const questions: Array<Question> = []
  const client = new Client({ name: "test", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    const question = {
      message: request.params.message,
      token: (request.params._meta as Record<string, unknown> | undefined)?.["effect-tool-runtime/approvalToken"]
    }
    questions.push(question)
    const answered = answer(question)
    return answered === "wait" ? new Promise<ElicitResult>(() => {}) : answered
  })
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      bin,
      "serve",
      "--mcp",
      "--cwd",
      where.dir,
      "--session",
      path.join(where.dir, "..", "session"),
      "--durable",
      "--audit",
      path.join(where.dir, "..", "audit.jsonl"),
      ...args
    ],
    cwd: where.dir,
    env: { ...process.env, HOME: where.home, TMPDIR: where.tmp, [markerName]: markerValue } as Record<string, string>,
    stderr: "pipe"
  })
  await client.connect(transport)
  const call = (id: string | undefined, name: string, input: Record<string, unknown>) =>
    client.callTool({
      name,
      arguments: input,
      ...(id === undefined ? {} : { _meta: { "claudecode/toolUseId": id } })
    })
  return {
    questions,
    call,
    close: () => client.close(),
    /** SIGKILL: no finalizer runs, no answer is written. */
    kill: async () => {
      const closed = new Promise<void>((resolve) => (client.onclose = () => resolve()))
      process.kill(transport.pid!, "SIGKILL")
      await closed
    }
  }
}

const allowOnce: ElicitResult = { action: "accept", content: { decision: "allow_once" } }

const linesOf = (file: string): ReadonlyArray<string> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []

const textOf = (result: unknown): string =>
  (((result as { readonly content?: unknown }).content ?? []) as ReadonlyArray<{ type: string; text?: string }>)
    .flatMap((block) => (block.type === "text" ? [block.text ?? ""] : []))
    .join("\n")

const auditOf = (where: Where) =>
  linesOf(path.join(where.dir, "..", "audit.jsonl")).map((line) => JSON.parse(line) as Record<string, unknown>)

beforeAll(ensureBuilt, 300_000)

afterEach(() => {
  // Whatever a killed server left running (its Bash, its hook) carries the marker.
  for (const pid of processesWithMarker(`${markerName}=${markerValue}`)) {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // gone already
    }
  }
})

describe("serve --mcp --durable", () => {
  it(
    "a question unanswered at the kill is asked again when the call is sent again; completed calls are not run again",
    async () => {
      const where = workspace()
      const marker = path.join(where.dir, "marker.txt")
      const first = await serve(where, [], (question) => (question.message.includes("echo zero") ? allowOnce : "wait"))
      const done = await first.call("toolu_zero", "Bash", { command: `echo zero >> ${marker}` })
      expect(done.isError).not.toBe(true)
      expect(linesOf(marker)).toEqual(["zero"])
      const pending = first.call("toolu_one", "Bash", { command: `echo one >> ${marker}` }).catch((error) => error)
      await waitUntil("the second question", () => first.questions.length === 2, 45_000)
      const asked = first.questions[1]!
      expect(asked.message).toContain("echo one")
      expect(asked.token).toEqual(expect.any(String))
      await first.kill()
      await pending

      const second = await serve(where, [], () => allowOnce)
      // Completed before the kill: the recorded result, no question, not run again.
      const again = await second.call("toolu_zero", "Bash", { command: `echo zero >> ${marker}` })
      expect(textOf(again)).toBe(textOf(done))
      expect(second.questions).toEqual([])
      expect(linesOf(marker)).toEqual(["zero"])
      // The open question: asked again, the same one, and answering it completes the call.
      const resumed = await second.call("toolu_one", "Bash", { command: `echo one >> ${marker}` })
      expect(second.questions).toEqual([asked])
      expect(resumed.isError).not.toBe(true)
      expect(linesOf(marker)).toEqual(["zero", "one"])
      await second.close()
      const completed = auditOf(where).filter((entry) => entry["tool_use_id"] === "toolu_one" && "status" in entry)
      expect(completed.map((entry) => [entry["status"], entry["attempt"]])).toEqual([["success", 1]])
    },
    120_000
  )

  it("a Bash running at the kill is reported unknown, a Read running at the kill is run again", async () => {
    const where = workspace()
    const hookRuns = path.join(where.dir, "hook-runs.txt")
    const bashRuns = path.join(where.dir, "bash-runs.txt")
    const settings = path.join(where.dir, "..", "settings.json")
    // Read's PostToolUse hook runs inside the call's activity: the first time it waits (and is killed there).
    fs.writeFileSync(
      settings,
      JSON.stringify({
        permissions: { allow: ["Bash", "Read"] },
        hooks: {
          PostToolUse: [{
            matcher: "Read",
            hooks: [{ type: "command", command: `echo r >> ${hookRuns}; [ $(wc -l < ${hookRuns}) -ge 2 ] || sleep 60` }]
          }]
        }
      })
    )
    const args = ["--settings", settings]
    const read = { file_path: path.join(where.dir, "a.txt") }
    const bash = { command: `echo x >> ${bashRuns}; sleep 60` }

    const first = await serve(where, args, () => "wait")
    const reading = first.call("toolu_read", "Read", read).catch((error) => error)
    const running = first.call("toolu_bash", "Bash", bash).catch((error) => error)
    await waitUntil("Read's hook", () => linesOf(hookRuns).length === 1, 45_000)
    await first.kill()
    await Promise.all([reading, running])

    // The Read is run again (its hook too); then the Bash starts, and this server is killed while it runs.
    const second = await serve(where, args, () => "wait")
    const reread = await second.call("toolu_read", "Read", read)
    expect(reread.isError).not.toBe(true)
    expect(textOf(reread)).toContain("hello")
    expect(linesOf(hookRuns)).toEqual(["r", "r"])
    const runningAgain = second.call("toolu_bash", "Bash", bash).catch((error) => error)
    await waitUntil("the Bash", () => linesOf(bashRuns).length === 1, 45_000)
    await second.kill()
    await runningAgain

    const third = await serve(where, args, () => "wait")
    const unknown = await third.call("toolu_bash", "Bash", bash)
    expect(unknown.isError).toBe(true)
    expect(textOf(unknown)).toContain("unknown: the process stopped while it ran")
    // The completed Read gives its result and is not run a third time; the Bash never ran twice.
    expect(textOf(await third.call("toolu_read", "Read", read))).toBe(textOf(reread))
    expect(linesOf(hookRuns)).toEqual(["r", "r"])
    expect(linesOf(bashRuns)).toEqual(["x"])
    await third.close()
    expect(auditOf(where).some((entry) => entry["tool_use_id"] === "toolu_read" && entry["attempt"] === 2)).toBe(true)
  }, 180_000)

  it("a question open when the client goes away is not denied: the next server asks it again", async () => {
    const where = workspace()
    const marker = path.join(where.dir, "marker.txt")
    const first = await serve(where, [], () => "wait")
    const pending = first.call("toolu_gone", "Bash", { command: `echo gone >> ${marker}` }).catch((error) => error)
    await waitUntil("the question", () => first.questions.length === 1, 45_000)
    await first.close()
    await pending

    const second = await serve(where, [], () => allowOnce)
    const resumed = await second.call("toolu_gone", "Bash", { command: `echo gone >> ${marker}` })
    expect(second.questions).toEqual(first.questions)
    expect(resumed.isError).not.toBe(true)
    expect(linesOf(marker)).toEqual(["gone"])
    await second.close()
  }, 120_000)

  it("a malformed call id is refused by name; a call without one runs", async () => {
    const where = workspace()
    const server = await serve(where, ["--allow", "Read"], () => "wait")
    await expect(server.call("toolu one", "Read", { file_path: path.join(where.dir, "a.txt") })).rejects.toThrow(
      "_meta[\"claudecode/toolUseId\"] must be 1 to 128 letters, digits or _.:- (it names the call across restarts)"
    )
    const plain = await server.call(undefined, "Read", { file_path: path.join(where.dir, "a.txt") })
    expect(textOf(plain)).toContain("hello")
    await server.close()
  }, 60_000)
})
