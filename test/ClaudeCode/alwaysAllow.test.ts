/**
 * "Always allow", across runs. Claude Code writes the rule into `.claude/settings.local.json` and applies that file's
 * allow rules and `defaultMode` on the next run, trusted project or not. This runtime writes the same file, records
 * what it wrote for the person in their own state (`Settings/Grants`), and applies, untrusted, exactly those rules;
 * anything else in a `settings.local.json` (a file that came with the project) waits for trust, deliberately.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { defaultGrantsPath, grantedRules, grantsPathVariable } from "../../src/Settings/Grants.js"
import { formatSettingsWarning, loadClaudeSettings, resolveMode } from "../../src/Settings/Settings.js"
import { Bash, makeSandbox, request, workspaceLayer, Write } from "../Permission/fixtures.js"

const setup = () => {
  const box = makeSandbox()
  const grantsPath = path.join(box.base, "state", "grants.json")
  const local = path.join(box.root, ".claude", "settings.local.json")
  return { box, grantsPath, local }
}

/** One run: load the standard settings (untrusted project), build the policy, decide `command`. */
const nextRun = (where: ReturnType<typeof setup>, command: string) =>
  Effect.gen(function*() {
    const settings = yield* loadClaudeSettings({
      home: where.box.home,
      cwd: where.box.root,
      grantsPath: where.grantsPath
    })
    const policy = yield* RulePolicy.make({ settings, grantsPath: where.grantsPath })
    const verdict = yield* policy.evaluate(request(Bash, { command }))
    return { settings, verdict, warnings: settings.flatMap((s) => s.warnings.map(formatSettingsWarning)) }
  }).pipe(Effect.provide(workspaceLayer(where.box)))

const alwaysAllow = (where: ReturnType<typeof setup>, rules: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const policy = yield* PermissionPolicy
    yield* policy.remember(rules, "always")
  }).pipe(
    Effect.provide(RulePolicy.layer({ localSettingsPath: where.local, grantsPath: where.grantsPath })),
    Effect.provide(workspaceLayer(where.box))
  )

describe("always allow, the next run", () => {
  it.effect("Claude Code applies the rule its always-allow wrote on the next run; so do we, without --trust-project", () => {
    const where = setup()
    return Effect.gen(function*() {
      yield* alwaysAllow(where, ["Bash(npm test:*)"])
      expect(JSON.parse(fs.readFileSync(where.local, "utf8"))).toEqual({ permissions: { allow: ["Bash(npm test:*)"] } })
      const { verdict, warnings } = yield* nextRun(where, "npm test -- --watch=false")
      expect(verdict._tag).toBe("Allow")
      expect(verdict.reason._tag).toBe("Rule")
      expect(warnings.filter((line) => line.includes("allow rule"))).toEqual([])
    })
  })

  it.effect("the record is the person's own: outside the project, 0600, naming the file and the rule", () => {
    const where = setup()
    return Effect.gen(function*() {
      yield* alwaysAllow(where, ["Bash(make:*)", "Bash(make:*)"])
      yield* alwaysAllow(where, ["Bash(make:*)", "Read(./docs/**)"])
      expect(JSON.parse(fs.readFileSync(where.grantsPath, "utf8"))).toEqual({
        version: 1,
        files: { [where.local]: { allow: ["Bash(make:*)", "Read(./docs/**)"] } }
      })
      expect(fs.statSync(where.grantsPath).mode & 0o777).toBe(0o600)
      expect(where.grantsPath.startsWith(where.box.root)).toBe(false)
    })
  })

  it.effect("Claude Code applies allow rules of a settings.local.json that came with the project; we wait for trust", () => {
    const where = setup()
    return Effect.gen(function*() {
      yield* alwaysAllow(where, ["Bash(npm test:*)"])
      // The project's own entries, next to the person's rule (e.g. a committed settings.local.json).
      const json = JSON.parse(fs.readFileSync(where.local, "utf8"))
      json.permissions.allow.push("Bash(curl:*)")
      json.permissions.defaultMode = "acceptEdits"
      json.hooks = { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: "true" }] }] }
      fs.writeFileSync(where.local, JSON.stringify(json))
      const run = yield* nextRun(where, "curl https://example.com")
      expect(run.verdict._tag).not.toBe("Allow")
      expect((yield* nextRun(where, "npm test")).verdict._tag).toBe("Allow")
      expect(run.warnings.some((line) => line.includes("1 allow rule (other than those you allowed always here)")))
        .toBe(true)
      expect(run.warnings.some((line) => line.includes("mode acceptEdits not applied"))).toBe(true)
      expect(run.warnings.some((line) => line.includes("hooks not applied"))).toBe(true)
      expect(resolveMode(run.settings).mode).toBe("default")
    })
  })

  it.effect("a rule recorded for another project's file does not apply here", () => {
    const where = setup()
    const other = setup()
    return Effect.gen(function*() {
      yield* alwaysAllow(other, ["Bash(npm test:*)"])
      fs.mkdirSync(path.dirname(where.local), { recursive: true })
      fs.writeFileSync(where.local, JSON.stringify({ permissions: { allow: ["Bash(npm test:*)"] } }))
      fs.mkdirSync(path.dirname(where.grantsPath), { recursive: true })
      fs.copyFileSync(other.grantsPath, where.grantsPath)
      expect((yield* nextRun(where, "npm test")).verdict._tag).not.toBe("Allow")
    })
  })

  it.effect("Claude Code never takes bypassPermissions from a project file; neither do we, recorded or not", () => {
    const where = setup()
    return Effect.gen(function*() {
      yield* alwaysAllow(where, ["Bash(npm test:*)"])
      const json = JSON.parse(fs.readFileSync(where.local, "utf8"))
      fs.writeFileSync(
        where.local,
        JSON.stringify({ ...json, permissions: { ...json.permissions, defaultMode: "bypassPermissions" } })
      )
      const run = yield* nextRun(where, "rm -rf build")
      expect(resolveMode(run.settings).mode).toBe("default")
      expect(run.verdict._tag).not.toBe("Allow")
      expect(run.warnings.some((line) => line.includes("bypassPermissions is never taken"))).toBe(true)
    })
  })

  it.effect("a record that is not valid fails the load, naming the record", () => {
    const where = setup()
    return Effect.gen(function*() {
      fs.mkdirSync(path.dirname(where.local), { recursive: true })
      fs.writeFileSync(where.local, JSON.stringify({ permissions: { allow: ["Bash(npm test:*)"] } }))
      fs.mkdirSync(path.dirname(where.grantsPath), { recursive: true })
      fs.writeFileSync(where.grantsPath, "{\"version\": 2}")
      const error = yield* Effect.flip(nextRun(where, "npm test"))
      expect(error.message).toContain(where.grantsPath)
    })
  })

  it.effect("the record is write-protected like the settings files (writing it would grant rules)", () => {
    const where = setup()
    return Effect.gen(function*() {
      // Inside the workspace, under an allow rule for every write: only the protection stops it.
      const record = path.join(where.box.root, "grants.json")
      const policy = yield* RulePolicy.make({ grantsPath: record, cliRules: { allow: ["Write"] } })
      expect((yield* policy.evaluate(request(Write, { path: record })))._tag).not.toBe("Allow")
      expect((yield* policy.evaluate(request(Write, { path: path.join(where.box.root, "other.json") })))._tag)
        .toBe("Allow")
    }).pipe(Effect.provide(workspaceLayer(where.box)))
  })

  it("the record lives in the person's config directory unless the variable names another file", () => {
    expect(defaultGrantsPath("/home/ada", {})).toBe("/home/ada/.config/effect-tool-runtime/grants.json")
    expect(defaultGrantsPath("/home/ada", { [grantsPathVariable]: "/tmp/g.json" })).toBe("/tmp/g.json")
  })

  it.effect("no record: nothing granted", () =>
    Effect.map(
      grantedRules("/nonexistent/compat-grants.json", "/x/.claude/settings.local.json"),
      (rules) => expect([...rules]).toEqual([])
    ).pipe(Effect.provide(NodeFileSystem.layer)))
})
