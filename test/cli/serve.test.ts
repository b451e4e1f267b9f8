/**
 * `effect-tool-runtime serve`, end to end through the built bundle: JSON lines in and out over one process, three
 * turns sharing the session in memory, an approval answered over the channel, bad lines answered with an error
 * line while the process stays up, end of input ending it cleanly, `--session` persisting between processes, and
 * a signal still answering every tool_use.
 */
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { cleanUp, ensureBuilt, processes, start, toolUse, waitUntil, workspace } from "./helpers.js"
import type { Running, Summary } from "./helpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

type Line = Record<string, unknown> & { readonly type: string }

/** Every line of standard output, each checked to be one JSON object. */
const lines = (running: Running): ReadonlyArray<Line> =>
  running.stdout().split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Line)

const send = (running: Running, request: unknown) =>
  running.child.stdin.write(`${typeof request === "string" ? request : JSON.stringify(request)}\n`)

const resultOf = async (running: Running, turn: string) => {
  await waitUntil(
    `the result of ${turn}`,
    () => lines(running).some((line) => line.type === "result" && line.turn === turn)
  )
  return lines(running).find((line) => line.type === "result" && line.turn === turn) as unknown as {
    readonly results: ReadonlyArray<
      { readonly tool_use_id: string; readonly content: string; readonly is_error?: true }
    >
    readonly outcomes: ReadonlyArray<Summary>
  }
}

describe.concurrent("serve", () => {
  it("three turns over one process share the session: Read, then Edit (approved over the channel), then Read", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    send(serve, { type: "turn", id: "t1", tool_uses: [toolUse("u1", "Read", { file_path: "a.txt" })] })
    const first = await resultOf(serve, "t1")
    expect(first.outcomes[0]!.status).toBe("success")

    send(serve, {
      type: "turn",
      id: "t2",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "editing" },
          toolUse("u2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })
        ]
      }
    })
    await waitUntil("the approval request", () => lines(serve).some((line) => line.type === "approval_request"))
    const request = lines(serve).find((line) => line.type === "approval_request")!
    expect(request).toMatchObject({ turn: "t2", tool_use_id: "u2", tool_name: "Edit" })
    // Events come as they happen: the turn is queued and asked for, and has no result yet.
    expect(lines(serve).some((line) => line.type === "event" && line.turn === "t2" && line.event === "queued")).toBe(
      true
    )
    expect(lines(serve).some((line) => line.type === "result" && line.turn === "t2")).toBe(false)
    send(serve, { type: "approval", id: request.id, answer: "allow_once" })
    const second = await resultOf(serve, "t2")
    expect(second.outcomes[0]).toMatchObject({ status: "success", decision: { behavior: "allow", kind: "User" } })
    expect(fs.readFileSync(path.join(where.dir, "a.txt"), "utf8")).toBe("bye\nworld\n")

    send(serve, { type: "turn", id: "t3", tool_uses: [toolUse("u3", "Read", { file_path: "a.txt" })] })
    const third = await resultOf(serve, "t3")
    expect(third.results[0]!.content).toMatch(/1\tbye/)

    serve.child.stdin.end()
    const finished = await serve.finished
    expect(finished.code).toBe(0)
    const all = lines(serve)
    expect(all[0]).toMatchObject({ type: "ready", persistent: false })
    // Per turn: events before the result; results in the order of the turns.
    expect(all.filter((line) => line.type === "result").map((line) => line.turn)).toEqual(["t1", "t2", "t3"])
    for (const turn of ["t1", "t2", "t3"]) {
      const at = all.findIndex((line) => line.type === "result" && line.turn === turn)
      expect(all.slice(at + 1).some((line) => line.type === "event" && line.turn === turn)).toBe(false)
    }
    expect(fs.existsSync(all[0]!.session as string)).toBe(false)
  })

  it("bad lines get an error line and the process stays up", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    const bad = [
      "not json",
      JSON.stringify({ type: "dance" }),
      JSON.stringify({ type: "turn", id: "b1" }),
      JSON.stringify({ type: "turn", id: "b2", tool_uses: [{ type: "tool_use", name: "Read", input: {} }] }),
      JSON.stringify({ type: "turn", id: "b3", tool_uses: [toolUse("x", "Read", {}), toolUse("x", "Read", {})] }),
      JSON.stringify({ type: "approval", id: "approval-99", answer: "allow_once" }),
      JSON.stringify({ type: "approval", id: "approval-1", answer: "perhaps" })
    ]
    for (const line of bad) send(serve, line)
    send(serve, { type: "turn", id: "ok", tool_uses: [toolUse("u1", "Read", { file_path: "b.txt" })] })
    const ok = await resultOf(serve, "ok")
    expect(ok.results[0]!.content).toContain("bar hello")
    serve.child.stdin.end()
    expect((await serve.finished).code).toBe(0)
    const errors = lines(serve).filter((line) => line.type === "error")
    expect(errors).toHaveLength(bad.length)
    expect(errors.map((line) => line.id)).toEqual([null, null, "b1", "b2", "b3", "approval-99", "approval-1"])
    expect(errors.every((line) => typeof line.message === "string" && !(line.message as string).includes("\n"))).toBe(
      true
    )
    expect(errors[4]!.message).toMatch(/duplicate tool_use id: x/)
  })

  it("a second answer to the same approval gets an error line; the first counts", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    send(serve, { type: "turn", id: "t1", tool_uses: [toolUse("u1", "Bash", { command: "touch ASKED" })] })
    await waitUntil("the approval request", () => lines(serve).some((line) => line.type === "approval_request"))
    const request = lines(serve).find((line) => line.type === "approval_request")!
    // Both on one write: the second arrives before the first is acted on.
    serve.child.stdin.write(
      `${JSON.stringify({ type: "approval", id: request.id, answer: "deny" })}\n${
        JSON.stringify({ type: "approval", id: request.id, answer: "allow_once" })
      }\n`
    )
    const result = await resultOf(serve, "t1")
    expect(result.outcomes[0]!.status).toBe("denied")
    serve.child.stdin.end()
    expect((await serve.finished).code).toBe(0)
    expect(lines(serve).filter((line) => line.type === "error")).toEqual([{
      type: "error",
      id: request.id,
      message: `approval request ${request.id} was already answered; this answer was ignored`
    }])
    expect(fs.existsSync(path.join(where.dir, "ASKED"))).toBe(false)
  })

  it("end of input with a question open: it is denied, the turn's result printed, exit 0", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    send(serve, { type: "turn", id: "t1", tool_uses: [toolUse("u1", "Bash", { command: "touch ASKED" })] })
    await waitUntil("the approval request", () => lines(serve).some((line) => line.type === "approval_request"))
    serve.child.stdin.end()
    const result = await resultOf(serve, "t1")
    expect(result.outcomes[0]!.status).toBe("denied")
    expect(result.results[0]!.content).toMatch(/closed its input/)
    expect((await serve.finished).code).toBe(0)
    expect(fs.existsSync(path.join(where.dir, "ASKED"))).toBe(false)
  })

  it("AskUserQuestion asks the client: a question_request, a wrong answer an error line, the right one the result; end of input declines", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    const questions = [{
      question: "Which database?",
      header: "Database",
      options: [{ label: "Postgres", description: "relational" }, { label: "SQLite", description: "a file" }],
      multiSelect: false
    }]
    send(serve, { type: "turn", id: "t1", tool_uses: [toolUse("q1", "AskUserQuestion", { questions })] })
    await waitUntil("the question request", () => lines(serve).some((line) => line.type === "question_request"))
    const request = lines(serve).find((line) => line.type === "question_request")!
    expect(request).toEqual({ type: "question_request", turn: "t1", id: "question-1", tool_use_id: "q1", questions })
    // An answer to a question that was not asked, or an approval for it, leaves it open.
    send(serve, { type: "answer", id: "question-1", answers: { "Which color?": "red" } })
    send(serve, { type: "approval", id: "question-1", answer: "allow_once" })
    await waitUntil("two error lines", () => lines(serve).filter((line) => line.type === "error").length === 2)
    const errors = lines(serve).filter((line) => line.type === "error")
    expect(errors[0]!.message).toMatch(/"Which color\?" is not one of the questions asked.*still open/)
    expect(errors[1]!.message).toMatch(/question-1 is a question request: answer it with \{"type":"answer"/)
    send(serve, { type: "answer", id: "question-1", answers: { "Which database?": "SQLite" } })
    const first = await resultOf(serve, "t1")
    expect(first.results[0]!.content).toBe(
      "User has answered your questions: \"Which database?\"=\"SQLite\". You can now continue with the user's " +
        "answers in mind."
    )
    // A question still open when input ends is declined, never left hanging.
    send(serve, { type: "turn", id: "t2", tool_uses: [toolUse("q2", "AskUserQuestion", { questions })] })
    await waitUntil("the second question", () => lines(serve).some((line) => line.id === "question-2"))
    serve.child.stdin.end()
    const second = await resultOf(serve, "t2")
    expect(second.results[0]!.content).toMatch(
      /^The user declined to answer your questions: the client closed its input/
    )
    expect((await serve.finished).code).toBe(0)
  })

  it("--session keeps the session between serve processes; stderr stays empty", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const first = start(where, ["serve", "--session", session])
    send(first, { type: "turn", id: "t1", tool_uses: [toolUse("u1", "Read", { file_path: "a.txt" })] })
    await resultOf(first, "t1")
    first.child.stdin.end()
    expect((await first.finished).code).toBe(0)
    const second = start(where, ["serve", "--session", session, "--approve", "allow"])
    send(second, {
      type: "turn",
      id: "t2",
      tool_uses: [toolUse("u2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })]
    })
    const edit = await resultOf(second, "t2")
    expect(edit.outcomes[0]!.status).toBe("success")
    second.child.stdin.end()
    const finished = await second.finished
    expect(finished.code).toBe(0)
    expect(finished.stderr).toBe("")
    expect(lines(second)[0]).toMatchObject({ type: "ready", session, persistent: true })
  })

  it(
    "SIGTERM during a turn: its result comes with every tool_use, then exit 143",
    { timeout: 20_000 },
    async ({ expect }) => {
      const where = workspace()
      const seconds = `20.${randomInt(100_000, 1_000_000)}`
      const serve = start(where, ["serve", "--approve", "allow"])
      send(serve, {
        type: "turn",
        id: "t1",
        tool_uses: [
          toolUse("u1", "Bash", { command: `sleep ${seconds}` }),
          toolUse("u2", "Bash", { command: "touch QUEUED" })
        ]
      })
      await waitUntil("the sleep", async () => (await processes(`sleep ${seconds.replace(".", "\\.")}`)).length > 0)
      serve.child.kill("SIGTERM")
      const finished = await serve.finished
      expect(finished.code).toBe(143)
      const result = lines(serve).find((line) => line.type === "result") as unknown as {
        outcomes: ReadonlyArray<Summary>
      }
      expect(result.outcomes.map((o) => [o.tool_use_id, o.status])).toEqual([["u1", "interrupted"], [
        "u2",
        "interrupted"
      ]])
      expect(fs.existsSync(path.join(where.dir, "QUEUED"))).toBe(false)
    }
  )
})
