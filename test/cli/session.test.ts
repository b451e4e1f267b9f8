/**
 * The CLI's edges, end to end through the built bundle: `--session` across invocations, temporary sessions removed,
 * Claude Code's settings loaded by default and "allow always" honoured by the next run, malformed rules and
 * settings as one line and exit 2, stdout only JSON when the runtime logs, every tool_use answered whenever a
 * signal comes, a second signal killing what ignores SIGTERM.
 */
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { afterAll, beforeAll, describe, it } from "vitest"
import { cleanUp, ensureBuilt, output, processes, run, start, toolUse, waitUntil, workspace } from "./helpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

const cmdline = (pid: number): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, "utf8")
  } catch {
    return ""
  }
}

const sessionsIn = (tmp: string): ReadonlyArray<string> => {
  const root = fs.readdirSync(tmp).find((name) => name.startsWith("effect-tool-runtime-"))
  return root === undefined ? [] : fs.readdirSync(path.join(tmp, root))
}

describe.concurrent("exec --session", () => {
  it("Read in one exec and Edit in the next works with --session; without it the Edit is refused as unread", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const read = output(
      await run(where, ["exec", "--session", session], [toolUse("t1", "Read", { file_path: "a.txt" })])
    )
    expect(read.outcomes[0]!.status).toBe("success")
    const edit = toolUse("t2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })
    const without = output(await run(where, ["exec", "--approve", "allow"], [edit]))
    expect(without.results[0]!.content).toMatch(/not been read yet/)
    const withSession = output(await run(where, ["exec", "--session", session, "--approve", "allow"], [edit]))
    expect(withSession.outcomes[0]!.status).toBe("success")
    expect(fs.readFileSync(path.join(where.dir, "a.txt"), "utf8")).toBe("bye\nworld\n")
  })

  it("plan mode lasts with the session: entered in one exec, still on in the next; left with approval, off even under --mode plan", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const write = (id: string) => toolUse(id, "Write", { file_path: `${id}.txt`, content: "x" })
    const entered = output(
      await run(where, ["exec", "--session", session], [toolUse("p1", "EnterPlanMode", {})])
    )
    expect(entered.outcomes[0]!.status).toBe("success")
    // The next run is given no mode, and still is in plan mode: the write is refused for it, even with --approve allow.
    const refused = output(await run(where, ["exec", "--session", session, "--approve", "allow"], [write("w1")]))
    expect(refused.outcomes[0]!.decision!.reason).toContain("plan")
    expect(fs.existsSync(path.join(where.dir, "w1.txt"))).toBe(false)
    const left = output(
      await run(where, ["exec", "--session", session, "--approve", "allow"], [
        toolUse("p2", "ExitPlanMode", { plan: "1. write w2.txt" })
      ])
    )
    expect(left.outcomes[0]!.status).toBe("success")
    // The person approved leaving: a run configured for plan mode starts in default (asked, here allowed).
    const after = output(
      await run(where, ["exec", "--session", session, "--mode", "plan", "--approve", "allow"], [write("w2")])
    )
    expect(after.outcomes[0]!.status).toBe("success")
    expect(fs.readFileSync(path.join(where.dir, "w2.txt"), "utf8")).toBe("x")
    // Without the session, --mode plan is plan mode.
    const fresh = output(await run(where, ["exec", "--mode", "plan", "--approve", "allow"], [write("w3")]))
    expect(fresh.outcomes[0]!.decision!.reason).toContain("plan")
  })

  it("a damaged session file: exit 2, one line naming it, nothing run, the file left alone", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    fs.mkdirSync(session)
    fs.writeFileSync(path.join(session, "session.json"), "{\"version\":1,\"state\":")
    const finished = await run(where, ["exec", "--session", session, "--approve", "allow"], [
      toolUse("t1", "Bash", { command: "touch EXECUTED" })
    ])
    expect(finished.code).toBe(2)
    expect(finished.stdout).toBe("")
    expect(finished.stderr).toMatch(/^effect-tool-runtime: [^\n]*session\.json[^\n]*damaged[^\n]*\n$/)
    expect(fs.existsSync(path.join(where.dir, "EXECUTED"))).toBe(false)
    expect(fs.readFileSync(path.join(session, "session.json"), "utf8")).toBe("{\"version\":1,\"state\":")
  })

  it("a session in use by another process: exit 2 naming it, nothing run", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const serve = start(where, ["serve", "--session", session])
    await waitUntil("serve to be ready", () => serve.stdout().includes("\"ready\""))
    const finished = await run(where, ["exec", "--session", session, "--session-wait", "0.3", "--approve", "allow"], [
      toolUse("t1", "Bash", { command: "touch EXECUTED" })
    ])
    expect(finished.code).toBe(2)
    expect(finished.stderr).toMatch(
      new RegExp(
        `^effect-tool-runtime: [^\\n]*in use by process ${serve.child.pid} \\([^\\n]*serve[^\\n]*\\); ` +
          `gave up after waiting 300ms\\n$`
      )
    )
    expect(fs.existsSync(path.join(where.dir, "EXECUTED"))).toBe(false)
    serve.child.stdin.end()
    expect((await serve.finished).code).toBe(0)
    expect(fs.existsSync(path.join(session, "session.lock"))).toBe(false)
  })

  it("a second process waits for the session (--session-wait), then runs once the first has ended", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const serve = start(where, ["serve", "--session", session])
    await waitUntil("serve to be ready", () => serve.stdout().includes("\"ready\""))
    const waiting = start(
      where,
      ["exec", "--session", session, "--session-wait", "30", "--approve", "allow"],
      JSON.stringify([toolUse("t1", "Bash", { command: "touch EXECUTED" })])
    )
    await delay(500)
    // Still waiting: nothing ran while serve holds the session.
    expect(fs.existsSync(path.join(where.dir, "EXECUTED"))).toBe(false)
    serve.child.stdin.end()
    expect((await serve.finished).code).toBe(0)
    const out = output(await waiting.finished)
    expect(out.outcomes[0]!.status).toBe("success")
    expect(fs.existsSync(path.join(where.dir, "EXECUTED"))).toBe(true)
    expect(fs.existsSync(path.join(session, "session.lock"))).toBe(false)
  })

  it("a temporary session's directory is gone when exec ends, large output included", async ({ expect }) => {
    const where = workspace()
    const out = output(await run(where, ["exec"], [toolUse("t1", "Bash", { command: "seq 1 30000" })]))
    expect(out.outcomes[0]!.persisted_path).not.toBeNull()
    expect(out.outcomes[0]!.persisted_path!.startsWith(where.tmp)).toBe(true)
    expect(fs.existsSync(out.outcomes[0]!.persisted_path!)).toBe(false)
    expect(sessionsIn(where.tmp)).toEqual([])
  })

  it("the model reads back saved output within the session without asking", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const first = output(
      await run(where, ["exec", "--session", session], [toolUse("t1", "Bash", { command: "seq 1 30000" })])
    )
    const saved = first.outcomes[0]!.persisted_path!
    expect(path.dirname(saved)).toBe(path.join(session, "results"))
    expect(first.results[0]!.content).toContain(saved)
    // No --approve and no terminal: anything that asked would be denied.
    const again = output(
      await run(where, ["exec", "--session", session], [
        toolUse("t2", "Read", { file_path: saved, offset: 29_999, limit: 2 })
      ])
    )
    expect(again.outcomes[0]!.status).toBe("success")
    expect(again.results[0]!.content).toMatch(/29999\t29999\n\s*30000\t30000/)
    const elsewhere = output(
      await run(where, ["exec"], [toolUse("t3", "Read", { file_path: saved, offset: 1, limit: 1 })])
    )
    expect(elsewhere.outcomes[0]!.status).toBe("denied")
    expect(elsewhere.outcomes[0]!.suggestions.length).toBeGreaterThan(0)
  })
})

describe.concurrent("settings by default", () => {
  it("loads .claude/settings.json and ~/.claude/settings.json unless --no-claude-settings", async ({ expect }) => {
    const where = workspace()
    fs.mkdirSync(path.join(where.dir, ".claude"))
    fs.writeFileSync(
      path.join(where.dir, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Read(./b.txt)"] } })
    )
    fs.mkdirSync(path.join(where.home, ".claude"))
    fs.writeFileSync(
      path.join(where.home, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Grep"] } })
    )
    const uses = [toolUse("t1", "Read", { file_path: "b.txt" }), toolUse("t2", "Grep", { pattern: "hello" })]
    const loaded = output(await run(where, ["exec"], uses))
    expect(loaded.outcomes.map((o) => o.status)).toEqual(["denied", "denied"])
    expect(loaded.outcomes[0]!.decision!.reason).toContain("Read(./b.txt)")
    const skipped = output(await run(where, ["exec", "--no-claude-settings"], uses))
    expect(skipped.outcomes.map((o) => o.status)).toEqual(["success", "success"])
  })

  it("Claude Code honours 'always allow' in the next run; so do we: answered over serve, honoured by the next exec untrusted", async ({ expect }) => {
    const where = workspace()
    const serve = start(where, ["serve"])
    serve.child.stdin.write(
      `${JSON.stringify({ type: "turn", id: "t1", tool_uses: [toolUse("u1", "Bash", { command: "touch one" })] })}\n`
    )
    await waitUntil("the approval request", () => serve.stdout().includes("\"approval_request\""))
    const request = JSON.parse(serve.stdout().split("\n").find((line) => line.includes("\"approval_request\""))!) as {
      id: string
      suggestions: Array<string>
    }
    expect(request.suggestions.length).toBeGreaterThan(0)
    serve.child.stdin.end(`${JSON.stringify({ type: "approval", id: request.id, answer: "allow_always" })}\n`)
    expect((await serve.finished).code).toBe(0)
    expect(fs.existsSync(path.join(where.dir, "one"))).toBe(true)
    expect(JSON.parse(fs.readFileSync(path.join(where.dir, ".claude", "settings.local.json"), "utf8"))).toMatchObject({
      permissions: { allow: request.suggestions }
    })
    fs.rmSync(path.join(where.dir, "one"))
    // No --approve, no terminal, no --trust-project: only the saved rule can allow it. It lives in the project's
    // .claude/settings.local.json, and the person's own record (under HOME) says this runtime wrote it for them.
    expect(fs.existsSync(path.join(where.home, ".config", "effect-tool-runtime", "grants.json"))).toBe(true)
    const next = output(await run(where, ["exec"], [toolUse("u2", "Bash", { command: "touch one" })]))
    expect(next.outcomes[0]).toMatchObject({ status: "success", decision: { behavior: "allow", kind: "Rule" } })
    expect(fs.existsSync(path.join(where.dir, "one"))).toBe(true)
  })
})

describe.concurrent("one line and exit 2", () => {
  const cases: ReadonlyArray<readonly [string, (dir: string) => ReadonlyArray<string>, RegExp]> = [
    ["a malformed --allow rule", () => ["--allow", "Bash(touch"], /Invalid permission rule "Bash\(touch"/],
    ["a malformed --deny rule", () => ["--deny", "Read(./a.txt"], /Invalid permission rule "Read\(\.\/a\.txt"/],
    // A malformed deny rule stops the load (fail closed); a malformed allow rule is dropped with a warning.
    ["a malformed rule in a settings file", (dir) => {
      fs.writeFileSync(path.join(dir, "s.json"), JSON.stringify({ permissions: { deny: ["Bash(touch"] } }))
      return ["--settings", "s.json"]
    }, /s\.json.*Bash\(touch/],
    ["a settings file that is not JSON", (dir) => {
      fs.writeFileSync(path.join(dir, "s.json"), "{")
      return ["--settings", "s.json"]
    }, /s\.json/],
    ["a malformed rule in .claude/settings.json (loaded by default)", (dir) => {
      fs.mkdirSync(path.join(dir, ".claude"), { recursive: true })
      fs.writeFileSync(
        path.join(dir, ".claude", "settings.json"),
        JSON.stringify({ permissions: { deny: ["Bash(("] } })
      )
      return []
    }, /settings\.json/],
    ["an unknown flag", () => ["--frobnicate"], /frobnicate/],
    ["a bad --mode", () => ["--mode", "yolo"], /--mode/],
    ["a missing --cwd", () => ["--cwd", "/nonexistent/dir"], /--cwd/]
  ]
  it.for(cases)("%s", async ([, args, reason], { expect }) => {
    const where = workspace()
    for (const command of ["exec", "serve"]) {
      const finished = await run(where, [command, "--approve", "allow", ...args(where.dir)], [
        toolUse("t1", "Bash", { command: "touch EXECUTED" })
      ])
      expect(finished.code).toBe(2)
      expect(finished.stdout).toBe("")
      expect(finished.stderr).toMatch(/^effect-tool-runtime: [^\n]+\n$/)
      expect(finished.stderr).toMatch(reason)
      expect(finished.stderr).not.toMatch(/internal error|\bat .*\.js:\d+/)
      expect(fs.existsSync(path.join(where.dir, "EXECUTED"))).toBe(false)
    }
  })
})

describe.concurrent("standard output is only JSON", () => {
  // No built-in tool defects on bad input any more (issue 15 part 9): a runtime log is made by a store that cannot write.
  it("when the runtime logs: the log goes to stderr with --verbose, nowhere without", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session-quiet")
    fs.mkdirSync(session)
    fs.writeFileSync(path.join(session, "results"), "a file where the results directory should be")
    const uses = [toolUse("t1", "Bash", { command: "seq 1 30000" }), toolUse("t2", "Read", { file_path: "a.txt" })]
    const quiet = await run(where, ["exec", "--session", session], uses)
    expect(output(quiet).outcomes.map((o) => o.status)).toEqual(["success", "success"])
    expect(quiet.stderr).toBe("")
  })

  it("--audit FILE keeps every event and outcome as JSON lines, and stdout stays only the results", async ({ expect }) => {
    const where = workspace()
    const audit = path.join(where.dir, "..", "audit.jsonl")
    const out = output(await run(where, ["exec", "--audit", audit], [toolUse("t1", "Read", { file_path: "a.txt" })]))
    expect(out.outcomes.map((o) => o.status)).toEqual(["success"])
    const entries = fs.readFileSync(audit, "utf8").trim().split("\n").map((line) =>
      JSON.parse(line) as { event: string; tool_use_id: string; status?: string }
    )
    expect(entries.filter((e) => e.event === "Completed").map((e) => [e.tool_use_id, e.status])).toEqual([[
      "t1",
      "success"
    ]])
    expect(entries.map((e) => e.event)).toContain("Started")
  })

  it("when the result store cannot write", async ({ expect }) => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    fs.mkdirSync(session)
    fs.writeFileSync(path.join(session, "results"), "a file where the results directory should be")
    const finished = await run(where, ["exec", "--session", session, "--verbose"], [
      toolUse("t1", "Bash", { command: "seq 1 30000" })
    ])
    const out = output(finished)
    expect(out.outcomes[0]!.status).toBe("success")
    expect(out.outcomes[0]!.persisted_path).toBeNull()
    expect(finished.stderr).toMatch(/level=WARN .*could not be stored/)
  })

  it("plain string content and content of any block type are accepted", async ({ expect }) => {
    const where = workspace()
    const none = output(await run(where, ["exec"], { role: "assistant", content: "Nothing to run." }))
    expect(none).toEqual({ results: [], outcomes: [] })
    const mixed = output(
      await run(where, ["exec"], {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "hm", signature: "x" },
          { type: "text", text: "reading" },
          toolUse("t1", "Read", { file_path: "a.txt" }),
          {
            type: "server_tool_use",
            id: "s1",
            name: "web_search",
            input: {}
          }
        ]
      })
    )
    expect(mixed.results.map((r) => r.tool_use_id)).toEqual(["t1"])
  })
})

describe("signals", () => {
  const signals = ["SIGINT", "SIGTERM"] as const
  // Random moments from 50 to 1,500 ms after the start, both signals; two tool_uses: a long one and one behind it.
  const moments = Array.from(
    { length: 8 },
    (_, i) => [signals[i % 2]!, i === 0 ? 50 : i === 1 ? 60 : randomInt(50, 1_500)] as const
  )
  it.concurrent.for(moments)(
    "%s %i ms after the start: one outcome per tool_use, exit 130/143",
    { timeout: 20_000 },
    async ([signal, ms], { expect }) => {
      const where = workspace()
      const seconds = `20.${randomInt(100_000, 1_000_000)}`
      const running = start(
        where,
        ["exec", "--approve", "allow"],
        JSON.stringify([
          toolUse("t1", "Bash", { command: `sleep ${seconds}` }),
          toolUse("t2", "Bash", { command: "touch QUEUED" }),
          toolUse("t3", "Read", { file_path: "a.txt" })
        ])
      )
      // Node's own start-up, before any JavaScript runs, cannot be covered: wait until the launcher has run (it sets
      // the process title right after installing the handlers), then keep to the chosen moment if it is later.
      const spawned = Date.now()
      await waitUntil("the launcher", () => cmdline(running.child.pid!).startsWith("effect-tool-runtime"), 10_000)
      await delay(Math.max(0, ms - (Date.now() - spawned)))
      running.child.kill(signal)
      const out = output(await running.finished, signal === "SIGINT" ? 130 : 143)
      expect(out.outcomes.map((o) => o.tool_use_id)).toEqual(["t1", "t2", "t3"])
      expect(out.outcomes[0]!.status).toBe("interrupted")
      expect(out.results[1]!.content).toMatch(/never ran/)
      expect(fs.existsSync(path.join(where.dir, "QUEUED"))).toBe(false)
      expect(await processes(`sleep ${seconds.replace(".", "\\.")}`)).toEqual([])
      expect(sessionsIn(where.tmp)).toEqual([])
    }
  )

  it("a signal while standard input is still open: what arrived is the input, every tool_use answered, exit 130", {
    timeout: 20_000
  }, async ({ expect }) => {
    const where = workspace()
    const running = start(where, ["exec", "--approve", "allow"])
    running.child.stdin.write(
      JSON.stringify([toolUse("t1", "Bash", { command: "touch NEVER" }), toolUse("t2", "Read", { file_path: "a.txt" })])
    )
    await waitUntil("the launcher", () => cmdline(running.child.pid!).startsWith("effect-tool-runtime"), 10_000)
    await delay(300)
    running.child.kill("SIGINT")
    const out = output(await running.finished, 130)
    expect(out.outcomes.map((o) => [o.tool_use_id, o.status])).toEqual([["t1", "interrupted"], ["t2", "interrupted"]])
    expect(out.results.every((r) => /never ran/.test(r.content))).toBe(true)
    expect(fs.existsSync(path.join(where.dir, "NEVER"))).toBe(false)
  })

  it(
    "a second signal SIGKILLs a process tree that ignores SIGTERM, then exits",
    { timeout: 20_000 },
    async ({ expect }) => {
      const where = workspace()
      const seconds = `40.${randomInt(100_000, 1_000_000)}`
      const pattern = `sleep ${seconds.replace(".", "\\.")}`
      const running = start(
        where,
        ["exec", "--approve", "allow", "--verbose"],
        JSON.stringify([
          toolUse("t1", "Bash", { command: `trap '' TERM; sleep ${seconds} & trap '' TERM; wait` })
        ])
      )
      await waitUntil(
        "the sleep to run",
        async () => (await processes(pattern)).length > 0 && running.stderr().includes("[t1]")
      )
      running.child.kill("SIGINT")
      await delay(300)
      running.child.kill("SIGINT")
      // Well before the 2 s grace after SIGTERM would have ended it.
      await waitUntil("the tree to be gone", async () => (await processes(pattern)).length === 0, 900)
      const finished = await running.finished
      expect(finished.code).toBe(130)
    }
  )
})
