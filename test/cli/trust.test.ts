/**
 * `exec --claude-settings` and the trust model, end to end through the built binary: a cloned repository's settings
 * cannot allow, hook or switch modes until the person trusts the project; its deny rules hold either way; warnings
 * go to standard error, one line each.
 */
import { execFile, execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"

const execFileAsync = promisify(execFile)
const root = path.resolve(import.meta.dirname, "../..")
const main = path.join(root, "dist/cli/main.js")

beforeAll(async () => {
  await execFileAsync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: root })
}, 120_000)

const makeRepo = () => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-trust-")))
  const repo = path.join(base, "repo")
  const home = path.join(base, "home")
  fs.mkdirSync(path.join(repo, ".claude"), { recursive: true })
  fs.mkdirSync(path.join(home, ".claude"), { recursive: true })
  execFileSync("git", ["init", "-q"], { cwd: repo })
  const hookLog = path.join(base, "hook-ran")
  fs.writeFileSync(
    path.join(repo, ".claude", "settings.json"),
    JSON.stringify({
      permissions: {
        allow: ["Bash(touch:*)"],
        deny: ["Bash(rm:*)"],
        zzzqqq: ["Bash(curl:*)"],
        additionalDirectories: ["/"]
      },
      hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `touch ${hookLog}` }] }] }
    })
  )
  // A committed settings.local.json must not switch on bypassPermissions either.
  fs.writeFileSync(
    path.join(repo, ".claude", "settings.local.json"),
    JSON.stringify({ permissions: { defaultMode: "bypassPermissions" } })
  )
  return { base, repo, home, hookLog }
}

const run = async (cwd: string, home: string, args: ReadonlyArray<string>, command: string) => {
  const child = execFile(process.execPath, [main, "exec", "--claude-settings", "--approve", "deny", ...args], {
    cwd,
    env: { ...process.env, HOME: home }
  })
  child.stdin!.end(JSON.stringify([{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command } }]))
  const [stdout, stderr] = await new Promise<[string, string]>((resolve) => {
    let out = ""
    let err = ""
    child.stdout!.on("data", (c) => out += c)
    child.stderr!.on("data", (c) => err += c)
    child.on("close", () => resolve([out, err]))
  })
  const output = JSON.parse(stdout) as {
    outcomes: ReadonlyArray<{ status: string; decision: { reason: string } | null }>
  }
  return { outcome: output.outcomes[0]!, stderr }
}

describe("exec and the trust model", () => {
  it(
    "an untrusted repository's allow rules, hooks and mode do not apply; its deny rules do; warnings go to stderr",
    async () => {
      const { home, hookLog, repo } = makeRepo()
      const touched = await run(repo, home, [], "touch made-by-model")
      expect(touched.outcome.status).toBe("denied")
      expect(fs.existsSync(path.join(repo, "made-by-model"))).toBe(false)
      expect(fs.existsSync(hookLog)).toBe(false)
      const lines = touched.stderr.trim().split("\n")
      const settingsFile = path.join(repo, ".claude", "settings.json")
      expect(lines).toContain(
        `effect-tool-runtime: warning: ${settingsFile}: permissions.zzzqqq: unknown permissions key (ignored)`
      )
      expect(lines.some((line) =>
        line.startsWith(
          `effect-tool-runtime: warning: ${settingsFile}: permissions.allow: 1 allow rule not applied: this project is not trusted`
        )
      )).toBe(true)
      expect(lines.some((line) => line.includes("hooks: hooks not applied"))).toBe(true)
      expect(lines.some((line) =>
        line.includes(
          "settings.local.json: permissions.defaultMode: bypassPermissions is never taken from a repository's settings"
        )
      )).toBe(true)
      const removed = await run(repo, home, ["--trust-project"], "rm -f x")
      expect(removed.outcome.decision?.reason).toContain("deny rule `Bash(rm:*)` from projectSettings")
    },
    60_000
  )

  it(
    "--trust-project, or trustedProjects in the user's settings, applies them (bypassPermissions still not)",
    async () => {
      const { home, hookLog, repo } = makeRepo()
      const touched = await run(repo, home, ["--trust-project"], "touch made-by-model")
      expect(touched.outcome.status).toBe("success")
      expect(fs.existsSync(hookLog)).toBe(true)
      expect(touched.outcome.decision?.reason).toContain("allow rule `Bash(touch:*)` from projectSettings")

      fs.rmSync(hookLog)
      fs.writeFileSync(path.join(home, ".claude", "settings.json"), JSON.stringify({ trustedProjects: ["~/../repo"] }))
      const again = await run(repo, home, [], "touch second")
      expect(again.outcome.status).toBe("success")
      expect(fs.existsSync(hookLog)).toBe(true)
      // bypassPermissions from the repository never applies: a command no rule allows is still asked (and denied).
      expect((await run(repo, home, [], "make")).outcome.status).toBe("denied")
    },
    60_000
  )
})

describe("exec and configuration errors", () => {
  const failing = async (settings: unknown) => {
    const { base, home, repo } = makeRepo()
    const file = path.join(base, "team.json")
    fs.writeFileSync(file, JSON.stringify(settings))
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [main, "exec", "--settings", file, "--approve", "deny"],
        { cwd: repo, env: { ...process.env, HOME: home } },
        (error, _stdout, stderr) =>
          resolve({ code: error === null ? 0 : (error as { code?: number }).code ?? null, stderr })
      )
      child.stdin!.end("[]")
    })
    return { ...result, file }
  }

  it("an invalid hook matcher is one line naming the file and the field, with no stack", async () => {
    const { code, file, stderr } = await failing({
      hooks: { PreToolUse: [{ matcher: "Bash(", hooks: [{ type: "command", command: "true" }] }] }
    })
    expect(code).toBe(2)
    expect(stderr.trim().split("\n")).toHaveLength(1)
    expect(stderr).toMatch(
      new RegExp(
        `^effect-tool-runtime: Invalid settings in ${
          file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
        }: hooks\\.PreToolUse\\[0\\]\\.matcher: invalid regular expression "Bash\\(": `
      )
    )
    expect(stderr).not.toContain("internal error")
  }, 30_000)

  it("a malformed deny rule stops the run; a malformed allow rule is a warning", async () => {
    const denied = await failing({ permissions: { deny: ["Bash(rm -rf"] } })
    expect(denied.code).toBe(2)
    expect(denied.stderr).toContain(`${denied.file}: permissions.deny[0]: Invalid permission rule`)
    const allowed = await failing({ permissions: { allow: ["Bash(rm -rf"] } })
    expect(allowed.code).toBe(0)
    expect(allowed.stderr).toContain(
      `warning: ${allowed.file}: permissions.allow[0]: Invalid permission rule "Bash(rm -rf"`
    )
  }, 30_000)
})
