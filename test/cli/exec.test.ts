/**
 * `effect-tool-runtime exec`, end to end: the built binary (`dist/cli/main.js`) runs as a child process in a fresh
 * temporary workspace, with its tool_use blocks piped to standard input. Pins down the contract of issue 3 section 6
 * (ordering, unknown tools, invalid input, unusable stdin, SIGINT/SIGTERM) and issue 4 section 7 (permission flags).
 *
 * Every child is spawned `detached` (a new session, so no controlling terminal): without `--approve` the CLI would
 * otherwise ask on the developer's terminal and the test would hang.
 */
import * as Schema from "effect/Schema"
import { execFile, execFileSync, spawn } from "node:child_process"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, it } from "vitest"
import { escapeForDisplay } from "../../src/Permission/TerminalApprover.js"

const execFileAsync = promisify(execFile)

const root = path.resolve(__dirname, "../..")
const main = path.join(root, "dist/bin/effect-tool-runtime.js")

// -----------------------------------------------------------------------------
// the binary
// -----------------------------------------------------------------------------

const newestSource = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .reduce((newest, file) => Math.max(newest, fs.statSync(path.join(dir, file)).mtimeMs), 0)

/** `npm test` builds before vitest; a developer running vitest alone may have a missing or stale build. */
const ensureBuilt = async (): Promise<void> => {
  const built = fs.existsSync(main) ? fs.statSync(main).mtimeMs : -1
  if (built >= newestSource(path.join(root, "src"))) return
  try {
    await execFileAsync("npm", ["run", "build"], { cwd: root })
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string }
    throw new Error(`building dist/ failed:\n${stdout}${stderr}`)
  }
}

// -----------------------------------------------------------------------------
// output
// -----------------------------------------------------------------------------

const ToolResult = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: Schema.String,
  is_error: Schema.optional(Schema.Literal(true))
})

const OutcomeSummary = Schema.Struct({
  tool_use_id: Schema.String,
  name: Schema.String,
  status: Schema.Literal("success", "error", "denied", "interrupted", "timed_out"),
  decision: Schema.NullOr(
    Schema.Struct({ behavior: Schema.Literal("allow", "deny"), reason: Schema.String, kind: Schema.String })
  ),
  duration_ms: Schema.NonNegative,
  persisted_path: Schema.NullOr(Schema.String),
  suggestions: Schema.Array(Schema.String)
})

/** Exactly the keys the issue names: excess properties are an error. */
const ExecOutput = Schema.Struct({ results: Schema.Array(ToolResult), outcomes: Schema.Array(OutcomeSummary) })
type ExecOutput = typeof ExecOutput.Type

// -----------------------------------------------------------------------------
// running it
// -----------------------------------------------------------------------------

interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

interface Running {
  readonly child: ChildProcessWithoutNullStreams
  readonly stderr: () => string
  readonly finished: Promise<Finished>
}

const children = new Set<ChildProcessWithoutNullStreams>()

const start = (cwd: string, args: ReadonlyArray<string>, stdin: string): Running => {
  // A home of its own: Claude Code's user settings are loaded by default, and the developer's must not leak in.
  const child = spawn(process.execPath, [main, "exec", ...args], {
    cwd,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: cwd }
  })
  children.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => {
      children.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
  child.stdin.end(stdin)
  return { child, stderr: () => stderr, finished }
}

const exec = (cwd: string, args: ReadonlyArray<string>, stdin: unknown): Promise<Finished> =>
  start(cwd, args, typeof stdin === "string" ? stdin : JSON.stringify(stdin)).finished

/** A completed run: exit 0 and standard output exactly one JSON object of the documented shape. */
const succeeded = (run: Finished, code = 0): ExecOutput => {
  if (run.code !== code) throw new Error(`exec exited with ${run.code ?? run.signal}; stderr:\n${run.stderr}`)
  const lines = run.stdout.split("\n")
  if (lines.length !== 2 || lines[1] !== "") {
    throw new Error(`standard output is not one line of JSON:\n${run.stdout.slice(0, 2000)}`)
  }
  return Schema.decodeUnknownSync(ExecOutput, { onExcessProperty: "error" })(JSON.parse(lines[0]!))
}

const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use", id, name, input })

/** Polls until `check` holds, failing after `limitMs`. */
const waitUntil = async (what: string, check: () => Promise<boolean> | boolean, limitMs = 10_000): Promise<void> => {
  const deadline = Date.now() + limitMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`)
    await delay(50)
  }
}

/** Pids of processes whose full command line matches the pattern (pgrep exits 1 when none does). */
const processes = async (pattern: string): Promise<ReadonlyArray<string>> => {
  try {
    const { stdout } = await execFileAsync("pgrep", ["-f", pattern])
    return stdout.split("\n").filter((line) => line !== "")
  } catch (error) {
    if ((error as { code?: unknown }).code === 1) return []
    throw error
  }
}

// -----------------------------------------------------------------------------
// workspaces
// -----------------------------------------------------------------------------

const workspaces: Array<string> = []

/** A fresh directory with a.txt and b.txt; with `git`, committed, plus an untracked c.txt. */
const workspace = (options: { readonly git?: boolean } = {}): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-cli-")))
  workspaces.push(dir)
  fs.writeFileSync(path.join(dir, "a.txt"), "hello\nworld\n")
  fs.writeFileSync(path.join(dir, "b.txt"), "foo\nbar hello\n")
  if (options.git === true) {
    const git = (...args: Array<string>) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@e", "-c", "commit.gpgsign=false", ...args], {
        cwd: dir,
        stdio: "ignore"
      })
    git("init", "-q")
    git("add", "-A")
    git("commit", "-q", "-m", "init")
    fs.writeFileSync(path.join(dir, "c.txt"), "untracked\n")
  }
  return dir
}

const exists = (dir: string, file: string) => fs.existsSync(path.join(dir, file))

beforeAll(ensureBuilt, 180_000)

afterAll(() => {
  // A test that failed or timed out must not leave its child running (not afterEach: the tests run concurrently).
  for (const child of children) child.kill("SIGKILL")
  for (const dir of workspaces) fs.rmSync(dir, { recursive: true, force: true })
})

// -----------------------------------------------------------------------------
// tests
// -----------------------------------------------------------------------------

describe.concurrent("exec", () => {
  describe("a completed run", () => {
    it("prints one result and one outcome per tool_use, in tool_use order, and exits 0", async ({ expect }) => {
      const dir = workspace({ git: true })
      const out = succeeded(
        await exec(dir, [], [
          toolUse("toolu_status", "Bash", { command: "git status --short" }),
          toolUse("toolu_read_a", "Read", { file_path: path.join(dir, "a.txt") }),
          toolUse("toolu_grep", "Grep", { pattern: "hello" }),
          toolUse("toolu_read_b", "Read", { file_path: "b.txt" })
        ])
      )
      const ids = ["toolu_status", "toolu_read_a", "toolu_grep", "toolu_read_b"]
      expect(out.results.map((r) => r.tool_use_id)).toEqual(ids)
      expect(out.outcomes.map((o) => [o.tool_use_id, o.name, o.status])).toEqual([
        ["toolu_status", "Bash", "success"],
        ["toolu_read_a", "Read", "success"],
        ["toolu_grep", "Grep", "success"],
        ["toolu_read_b", "Read", "success"]
      ])
      expect(out.outcomes.every((o) => o.decision?.behavior === "allow" && o.persisted_path === null)).toBe(true)
      const [status, readA, grep, readB] = out.results.map((r) => r.content)
      expect(status).toContain("?? c.txt")
      expect(readA).toMatch(/1\thello\n\s*2\tworld/)
      expect(grep).toContain("a.txt")
      expect(grep).toContain("b.txt")
      expect(readB).toContain("bar hello")
      expect(out.results.some((r) => r.is_error === true)).toBe(false)
    })

    it("takes the tool_use blocks of an assistant message and ignores its other blocks", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, [], {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look at both files." },
            toolUse("toolu_b", "Read", { file_path: "b.txt" }),
            { type: "text", text: "and" },
            toolUse("toolu_a", "Read", { file_path: "a.txt" })
          ]
        })
      )
      expect(out.results.map((r) => r.tool_use_id)).toEqual(["toolu_b", "toolu_a"])
      expect(out.results[0]!.content).toContain("bar hello")
      expect(out.results[1]!.content).toContain("world")
    })

    it("answers an unknown tool with an error naming the closest tool, and still exits 0", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, [], [
          toolUse("toolu_x", "Reed", { file_path: "a.txt" }),
          toolUse("toolu_a", "Read", { file_path: "a.txt" })
        ])
      )
      expect(out.results[0]).toMatchObject({ tool_use_id: "toolu_x", is_error: true })
      expect(out.results[0]!.content).toMatch(/No such tool available: Reed.*\bRead\b/)
      expect(out.outcomes[0]).toMatchObject({ name: "Reed", status: "error", decision: null })
      expect(out.outcomes[1]).toMatchObject({ name: "Read", status: "success" })
    })

    it("answers invalid input with an InputValidationError naming the parameter, and still exits 0", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, [], [toolUse("toolu_missing", "Bash", {}), toolUse("toolu_type", "Read", { file_path: 5 })])
      )
      expect(out.results.map((r) => r.is_error)).toEqual([true, true])
      expect(out.results[0]!.content).toMatch(
        /^<tool_use_error>InputValidationError: [\s\S]*required parameter `command` is missing[\s\S]*<\/tool_use_error>$/
      )
      expect(out.results[1]!.content).toMatch(
        /^<tool_use_error>InputValidationError: [\s\S]*`file_path`[\s\S]*`string`[\s\S]*`number`/
      )
      expect(out.outcomes.map((o) => o.status)).toEqual(["error", "error"])
    })
  })

  describe("unusable standard input", () => {
    const touch = toolUse("toolu_touch", "Bash", { command: "touch EXECUTED" })
    const cases: ReadonlyArray<readonly [string, string, RegExp]> = [
      ["not JSON", `[${JSON.stringify(touch)}, {"type":"tool_use",`, /not JSON/],
      [
        "an object that is not an assistant message",
        JSON.stringify({ role: "user", content: [touch] }),
        /array of tool_use blocks or an assistant message/
      ],
      [
        "a block without an id",
        JSON.stringify([touch, { type: "tool_use", name: "Read", input: { file_path: "a.txt" } }]),
        /\bid\b/
      ],
      [
        "duplicate tool_use ids",
        JSON.stringify([touch, toolUse("toolu_touch", "Read", { file_path: "a.txt" })]),
        /duplicate tool_use id: toolu_touch/
      ],
      ["empty", "", /empty/],
      ["only whitespace", " \n\t\n", /empty/]
    ]
    it.for(cases)(
      "%s: exit 2, one line on stderr, nothing on stdout, nothing executed",
      async ([, stdin, reason], { expect }) => {
        const dir = workspace()
        const run = await exec(dir, ["--approve", "allow"], stdin)
        expect(run.code).toBe(2)
        expect(run.stdout).toBe("")
        expect(run.stderr).toMatch(/^effect-tool-runtime: [^\n]+\n$/)
        expect(run.stderr).toMatch(reason)
        expect(exists(dir, "EXECUTED")).toBe(false)
      }
    )
  })

  describe("a signal mid-run", () => {
    it.for(["SIGINT", "SIGTERM"] as const)(
      "%s cancels the run: the running call and the queued one are interrupted, the child process is gone, exit 130/143",
      { timeout: 20_000 },
      async (signal, { expect }) => {
        const dir = workspace()
        // Unique arguments, so pgrep finds this test's sleep and no other (bash execs a lone simple command).
        const seconds = `30.${randomInt(100_000, 1_000_000)}`
        const sleepPattern = `sleep ${seconds.replace(".", "\\.")}`
        const run = start(
          dir,
          ["--approve", "allow", "--verbose"],
          JSON.stringify([
            toolUse("toolu_sleep", "Bash", { command: `sleep ${seconds}` }),
            // Not read-only, so it conflicts with the running Bash call and waits behind it.
            toolUse("toolu_queued", "Bash", { command: "touch QUEUED" })
          ])
        )
        await waitUntil(
          "the sleep to run",
          async () => (await processes(`^${sleepPattern}$`)).length > 0 && run.stderr().includes("[toolu_sleep]")
        )
        run.child.kill(signal)
        const out = succeeded(await run.finished, signal === "SIGINT" ? 130 : 143)

        expect(out.results.map((r) => r.tool_use_id)).toEqual(["toolu_sleep", "toolu_queued"])
        expect(out.outcomes.map((o) => o.status)).toEqual(["interrupted", "interrupted"])
        const [running, queued] = out.results
        expect(running!.is_error).toBe(true)
        expect(running!.content).toMatch(/interrupted.*while running/)
        expect(running!.content).not.toMatch(/never ran/)
        expect(queued!.is_error).toBe(true)
        expect(queued!.content).toMatch(/never ran/)
        expect(exists(dir, "QUEUED")).toBe(false)
        // Neither the sleep nor a shell around it outlives the run.
        expect(await processes(sleepPattern)).toEqual([])
      }
    )
  })

  describe("permission flags", () => {
    it("--deny RULE denies a matching call with a reason naming the rule, and only that call", async ({ expect }) => {
      const dir = workspace()
      fs.writeFileSync(path.join(dir, "secret.txt"), "s3cret\n")
      const out = succeeded(
        await exec(dir, ["--deny", "Read(./secret.txt)"], [
          toolUse("toolu_secret", "Read", { file_path: "secret.txt" }),
          toolUse("toolu_a", "Read", { file_path: "a.txt" })
        ])
      )
      expect(out.outcomes[0]).toMatchObject({ status: "denied", decision: { behavior: "deny", kind: "Rule" } })
      expect(out.outcomes[0]!.decision!.reason).toContain("Read(./secret.txt)")
      expect(out.results[0]!.is_error).toBe(true)
      expect(out.results[0]!.content).toContain("Read(./secret.txt)")
      expect(out.results[0]!.content).not.toContain("s3cret")
      expect(out.outcomes[1]!.status).toBe("success")
    })

    it("--approve deny denies a call that needs approval, and it does not run", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, ["--approve", "deny"], [toolUse("toolu_touch", "Bash", { command: "touch x" })])
      )
      expect(out.outcomes[0]).toMatchObject({ status: "denied", decision: { behavior: "deny" } })
      expect(out.results[0]!.is_error).toBe(true)
      expect(exists(dir, "x")).toBe(false)
    })

    it("--approve allow lets a call that needs approval run", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, ["--approve", "allow"], [toolUse("toolu_touch", "Bash", { command: "touch x" })])
      )
      expect(out.outcomes[0]).toMatchObject({ status: "success", decision: { behavior: "allow" } })
      expect(exists(dir, "x")).toBe(true)
    })

    it("--mode plan denies a Write even with --approve allow", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, ["--mode", "plan", "--approve", "allow"], [
          toolUse("toolu_write", "Write", { file_path: path.join(dir, "new.txt"), content: "x" })
        ])
      )
      expect(out.outcomes[0]).toMatchObject({ status: "denied", decision: { behavior: "deny", kind: "Mode" } })
      expect(out.outcomes[0]!.decision!.reason).toContain("plan")
      expect(exists(dir, "new.txt")).toBe(false)
    })

    it("an unknown option exits 2 with one line naming it, before anything runs", async ({ expect }) => {
      const dir = workspace()
      const run = await exec(dir, ["--aprove", "allow"], [
        toolUse("toolu_touch", "Bash", { command: "touch EXECUTED" })
      ])
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr).toBe("effect-tool-runtime: Unknown option '--aprove' (see --help)\n")
      expect(fs.existsSync(path.join(dir, "EXECUTED"))).toBe(false)
    })

    it("--settings with a malformed file exits 2 naming the file and the field, before anything runs", async ({ expect }) => {
      const dir = workspace()
      const settings = path.join(dir, "settings.json")
      fs.writeFileSync(settings, JSON.stringify({ permissions: { allow: "Bash(touch:*)" } }))
      const run = await exec(dir, ["--settings", settings, "--approve", "allow"], [
        toolUse("toolu_touch", "Bash", { command: "touch EXECUTED" })
      ])
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr).toMatch(/^effect-tool-runtime: [^\n]+\n$/)
      expect(run.stderr).toContain(settings)
      expect(run.stderr).toContain("permissions.allow")
      expect(exists(dir, "EXECUTED")).toBe(false)
    })

    it("without --approve and without a terminal, a call that asks is denied at once", async ({ expect }) => {
      const dir = workspace()
      const out = succeeded(
        await exec(dir, [], [
          toolUse("toolu_touch", "Bash", { command: "touch x" }),
          toolUse("toolu_a", "Read", { file_path: "a.txt" })
        ])
      )
      expect(out.outcomes[0]).toMatchObject({ status: "denied", decision: { behavior: "deny" } })
      expect(out.results[0]!.content).toMatch(/no terminal/)
      expect(out.outcomes[1]!.status).toBe("success")
      expect(exists(dir, "x")).toBe(false)
    }, 20_000)
  })

  describe("--verbose", () => {
    it("writes what a person would see to stderr; stdout stays exactly one JSON object", async ({ expect }) => {
      const dir = workspace()
      const run = await exec(dir, ["--verbose"], [
        toolUse("toolu_a", "Read", { file_path: "a.txt" }),
        toolUse("toolu_grep", "Grep", { pattern: "hello" })
      ])
      const out = succeeded(run)
      expect(out.results.map((r) => r.tool_use_id)).toEqual(["toolu_a", "toolu_grep"])
      expect(run.stderr).toMatch(/^● Read \S*a\.txt\s+\[toolu_a\]$/m)
      expect(run.stderr).toMatch(/^✓ Read success/m)
      expect(run.stderr).toMatch(/^✓ Grep success/m)
    })

    it("escapes tool input and output exactly as the approval prompt does: controls and bidi shown, never interpreted", async ({ expect }) => {
      const dir = workspace()
      // A name a terminal would rewrite: a right-to-left override, an ANSI "erase line", a carriage return.
      const name = "a\u202etxt.exe\x1b[2K\rb.txt"
      fs.writeFileSync(path.join(dir, name), "line \x1b[31mred\x1b[0m \u2066x\n")
      const run = await exec(dir, ["--verbose"], [
        toolUse("toolu_a", "Read", { file_path: name }),
        toolUse("toolu_g", "Grep", { pattern: "red", output_mode: "content" })
      ])
      succeeded(run)
      expect(run.stderr).toContain(escapeForDisplay(name))
      expect(escapeForDisplay(name)).toBe("a<U+202E>txt.exe\\x1b[2K\\rb.txt")
      const raw = Array.from(run.stderr).filter((char) => /[\p{Cc}\p{Cf}]/u.test(char) && char !== "\n")
      expect(raw).toEqual([])
    })

    it("without --verbose, stderr stays empty", async ({ expect }) => {
      const dir = workspace()
      const run = await exec(dir, [], [toolUse("toolu_a", "Read", { file_path: "a.txt" })])
      succeeded(run)
      expect(run.stderr).toBe("")
    })
  })

  describe("large output", () => {
    it("stores the full output in the session's results directory and points to it", async ({ expect }) => {
      const dir = workspace()
      const sessionDir = path.join(dir, ".session")
      const out = succeeded(
        await exec(dir, ["--session", sessionDir], [toolUse("toolu_seq", "Bash", { command: "seq 1 20000" })])
      )
      const full = `${Array.from({ length: 20_000 }, (_, i) => i + 1).join("\n")}\n`
      const result = out.results[0]!
      expect(out.outcomes[0]!.status).toBe("success")
      expect(result.content.length).toBeLessThan(full.length)
      const stored = out.outcomes[0]!.persisted_path
      expect(stored).not.toBeNull()
      expect(path.dirname(stored!)).toBe(path.join(sessionDir, "results"))
      expect(result.content).toContain(stored)
      expect(fs.readFileSync(stored!, "utf8")).toBe(full)
    })
  })
})
