/**
 * The settings loader's judgement: unknown keys and tool names, file rules read as Claude Code reads them, malformed
 * rules, `~`, the trust given to a repository's files, the mode that applies, and recording trust.
 */
import { NodeFileSystem } from "@effect/platform-node"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import * as Path from "node:path"
import {
  addTrustedProject,
  applyTrust,
  checkRuleToolName,
  decodeSettingsJson,
  formatSettingsWarning,
  isProjectTrusted,
  isTrusted,
  readFileRule,
  resolveMode
} from "../../src/Settings/Settings.js"
import type { LoadedSettings, SettingsFileKind } from "../../src/Settings/Settings.js"
import { makeRule, printRule } from "../../src/Tool/Rule.js"

const decode = (json: unknown, kind: SettingsFileKind = "projectSettings", path = "/p/.claude/settings.json") =>
  decodeSettingsJson(json, { kind, path }, { home: "/home/me" })

const loaded = (
  json: unknown,
  kind: SettingsFileKind = "projectSettings",
  path = "/p/.claude/settings.json"
): LoadedSettings => Either.getOrThrowWith(decode(json, kind, path), (error) => new Error(error.message))

const warnings = (json: unknown) => loaded(json).warnings.map(formatSettingsWarning)

describe("unknown keys", () => {
  it("a near miss of a known key stops the load with one line naming the key meant, at every level", () => {
    const failure = (json: unknown) => Either.match(decode(json), { onLeft: (e) => e.message, onRight: () => "loaded" })
    expect(
      failure({
        permissions: { Deny: ["Bash(rm:*)"], alow: [] },
        hook: {},
        hooks: {
          PreTooluse: [],
          PreToolUse: [{ matcher: "Bash", hook: [], hooks: [{ type: "command", command: "x", timout: 3 }] }]
        }
      })
    ).toBe(
      "Invalid settings in /p/.claude/settings.json: hook: unknown setting, did you mean hooks?; " +
        "permissions.Deny: unknown permissions key, did you mean deny?; " +
        "permissions.alow: unknown permissions key, did you mean allow?; " +
        "hooks.PreTooluse: unknown hook event, did you mean PreToolUse?; " +
        "hooks.PreToolUse[0].hook: unknown hook matcher key, did you mean hooks?; " +
        "hooks.PreToolUse[0].hooks[0].timout: unknown command hook key, did you mean timeout?"
    )
    for (
      const [json, line] of [
        [{ permission: { deny: ["Bash(rm:*)"] } }, "permission: unknown setting, did you mean permissions?"],
        [{ permissions: { DENY: ["Read(./.env)"] } }, "permissions.DENY: unknown permissions key, did you mean deny?"],
        // A Cyrillic е in `dеny`.
        [{ permissions: { "d\u0435ny": ["Read(./.env)"] } }, "unknown permissions key, did you mean deny?"],
        [{ permissions: { deny: ["BASH(rm:*)"] } }, "unknown tool \"BASH\", did you mean Bash?"],
        [{ permissions: { deny: ["READ(./.env)"] } }, "unknown tool \"READ\", did you mean Read?"],
        // Cyrillic а and е, a zero-width space, fullwidth letters.
        [{ permissions: { deny: ["B\u0430sh(rm:*)"] } }, "did you mean Bash?"],
        [{ permissions: { deny: ["R\u0435\u0430d(./.env)"] } }, "did you mean Read?"],
        [{ permissions: { deny: ["Ba\u200bsh(rm:*)"] } }, "did you mean Bash?"],
        [{ permissions: { ask: ["\uff37\uff45\uff42\uff26\uff45\uff54\uff43\uff48"] } }, "did you mean WebFetch?"]
      ] as const
    ) {
      const message = failure(json)
      expect(message, JSON.stringify(json)).toContain(line)
      expect(message.split("\n")).toHaveLength(1)
    }
  })

  it("name no key when none is near, and documented keys need no comment", () => {
    expect(warnings({ zzzqqq: 1 })).toEqual(["/p/.claude/settings.json: zzzqqq: unknown setting (ignored)"])
    expect(
      warnings({
        model: "opus",
        env: { A: "1" },
        statusLine: {},
        enabledPlugins: {},
        permissions: { disableBypassPermissionsMode: "disable" }
      })
    ).toEqual([])
  })
})

describe("tool names in rules", () => {
  it("a name one edit from a known tool is an error naming it", () => {
    expect(checkRuleToolName("bash")).toEqual({ _tag: "Error", message: "unknown tool \"bash\", did you mean Bash?" })
    expect(checkRuleToolName("Websearch")._tag).toBe("Error")
    const error = decode({ permissions: { allow: ["Read"], deny: ["bash(rm:*)"] } })
    expect(Either.isLeft(error) && error.left.message).toBe(
      "Invalid settings in /p/.claude/settings.json: permissions.deny[0]: \"bash(rm:*)\": unknown tool \"bash\", did you mean Bash?"
    )
  })

  it("Claude Code tools this runtime lacks, unconfigured MCP servers and far names are kept with a warning", () => {
    const file = loaded({
      permissions: { allow: ["WebSearch", "Task", "mcp__github__create_issue", "mcp__serena", "FrobnicateAll"] }
    })
    expect(file.rules.map((rule) => rule.text)).toEqual([
      "WebSearch",
      "Task",
      "mcp__github__create_issue",
      "mcp__serena",
      "FrobnicateAll"
    ])
    expect(file.warnings.map((warning) => warning.field)).toEqual([
      "permissions.allow[0]",
      "permissions.allow[1]",
      "permissions.allow[2]",
      "permissions.allow[3]",
      "permissions.allow[4]"
    ])
    expect(checkRuleToolName("mcp__serena", { mcpServers: ["serena"] })._tag).toBe("Ok")
    expect(checkRuleToolName("Deploy", { knownTools: ["Deploy"] })._tag).toBe("Ok")
  })

  it.prop("a name one substitution from a runtime tool is always an error", [
    fc.constantFrom("Read", "Write", "Edit", "Glob", "Grep", "Bash"),
    fc.nat(),
    fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  ], ([tool, at, char]) => {
    const i = at % tool.length
    const name = `${tool.slice(0, i)}${char}${tool.slice(i + 1)}`
    if (name === tool || ["Grep", "Read"].includes(name)) return
    expect(checkRuleToolName(name)._tag).toBe("Error")
  })
})

describe("file rules as Claude Code reads them", () => {
  it("Write/MultiEdit deny and ask rules are read as Edit, Glob/Grep/LS ones as Read", () => {
    expect(printRule(readFileRule("deny", makeRule("Write", ".env")).rule!)).toBe("Edit(.env)")
    expect(printRule(readFileRule("ask", makeRule("MultiEdit", "src/**")).rule!)).toBe("Edit(src/**)")
    expect(printRule(readFileRule("deny", makeRule("Glob", "./secrets/**")).rule!)).toBe("Read(./secrets/**)")
    expect(readFileRule("deny", makeRule("Write", ".env")).warning).toContain("is read as Edit(.env)")
  })

  it("their allow rules have no effect, with a warning saying what to write instead; whole-tool rules stay", () => {
    const read = readFileRule("allow", makeRule("Write", "src/**"))
    expect(read.rule).toBeUndefined()
    expect(read.warning).toContain("write Edit(src/**) instead")
    expect(readFileRule("allow", makeRule("Write")).rule?.toolName).toBe("Write")
    expect(readFileRule("allow", makeRule("Bash", "ls")).warning).toBeUndefined()
  })
})

describe("malformed rules", () => {
  it("an allow rule is dropped with a warning; the rest loads", () => {
    const file = loaded({ permissions: { allow: ["Bash(npm test", "Edit(docs/**)"] } })
    expect(file.rules.map((rule) => rule.text)).toEqual(["Edit(docs/**)"])
    expect(formatSettingsWarning(file.warnings[0]!)).toBe(
      "/p/.claude/settings.json: permissions.allow[0]: Invalid permission rule \"Bash(npm test\": missing \")\" to close the \"(\" opened here (at character 5); the rule is dropped"
    )
  })

  it("a deny or ask rule stops the load, one line per problem naming the field", () => {
    const error = decode({ permissions: { ask: ["Bash(git push"], deny: ["Read(x"] } })
    expect(Either.isLeft(error) && error.left.message).toBe(
      "Invalid settings in /p/.claude/settings.json: permissions.deny[0]: Invalid permission rule \"Read(x\": missing \")\" to close the \"(\" opened here (at character 5); " +
        "permissions.ask[0]: Invalid permission rule \"Bash(git push\": missing \")\" to close the \"(\" opened here (at character 5)"
    )
  })

  it("an invalid hook matcher or if condition stops the load, naming the field", () => {
    const error = decode({
      hooks: { PostToolUse: [{ matcher: "Edit(", hooks: [{ type: "command", command: "x", if: "Bash(" }] }] }
    })
    expect(Either.isLeft(error) && error.left.message).toMatch(
      /^Invalid settings in \/p\/\.claude\/settings\.json: hooks\.PostToolUse\[0\]\.matcher: invalid regular expression "Edit\(": .*; hooks\.PostToolUse\[0\]\.hooks\[0\]\.if: Invalid permission rule "Bash\("/
    )
  })
})

describe("paths", () => {
  it("~ in additionalDirectories is the home directory", () => {
    expect(
      loaded({ permissions: { additionalDirectories: ["~/shared", "~", "../x", "/abs"] } }).settings.permissions
        ?.additionalDirectories
    ).toEqual(["/home/me/shared", "/home/me", "../x", "/abs"])
  })
})

describe("trust", () => {
  const repo = {
    permissions: {
      allow: ["Bash(make:*)"],
      deny: ["Read(./.env)"],
      ask: ["Bash(git push:*)"],
      additionalDirectories: ["/"],
      defaultMode: "acceptEdits"
    },
    hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "x" }] }] }
  }

  it("an untrusted repository file keeps its deny and ask rules and nothing permissive", () => {
    const judged = applyTrust(loaded(repo), false)
    expect(judged.trusted).toBe(false)
    expect(judged.rules.map((rule) => `${rule.behavior} ${rule.text}`)).toEqual([
      "deny Read(./.env)",
      "ask Bash(git push:*)"
    ])
    expect(judged.settings.hooks).toBeUndefined()
    expect(judged.settings.permissions?.additionalDirectories).toBeUndefined()
    expect(judged.settings.permissions?.defaultMode).toBeUndefined()
    expect(judged.warnings.map((warning) => warning.field)).toEqual([
      "permissions.defaultMode",
      "permissions.allow",
      "hooks",
      "permissions.additionalDirectories"
    ])
  })

  it("a trusted one keeps everything but bypassPermissions; files outside the repository pass unchanged", () => {
    expect(applyTrust(loaded(repo), true).rules).toHaveLength(3)
    const bypass = applyTrust(
      loaded({ permissions: { defaultMode: "bypassPermissions" } }, "localSettings", "/p/.claude/settings.local.json"),
      true
    )
    expect(bypass.settings.permissions?.defaultMode).toBeUndefined()
    const user = loaded(repo, "userSettings", "/home/me/.claude/settings.json")
    expect(applyTrust(user, false)).toBe(user)
    // plan and default need no trust.
    expect(applyTrust(loaded({ permissions: { defaultMode: "plan" } }), false).settings.permissions?.defaultMode).toBe(
      "plan"
    )
  })

  it("trustedProjects trusts a listed project and what is inside it, ~ expanded", () => {
    const user = { trustedProjects: ["~/work", "/srv/app"] }
    expect(isTrusted(user, "/home/me/work/repo", "/home/me")).toBe(true)
    expect(isTrusted(user, "/srv/app", "/home/me")).toBe(true)
    expect(isTrusted(user, "/srv/application", "/home/me")).toBe(false)
    expect(isTrusted(user, "/home/me", "/home/me")).toBe(false)
    expect(isTrusted(undefined, "/srv/app", "/home/me")).toBe(false)
  })

  it.scoped("addTrustedProject records trust that isProjectTrusted then reads", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const home = yield* fs.makeTempDirectoryScoped()
      const project = Path.join(home, "repo")
      const userFile = Path.join(home, ".claude", "settings.json")
      yield* fs.makeDirectory(Path.dirname(userFile), { recursive: true })
      yield* fs.writeFileString(userFile, JSON.stringify({ model: "opus" }))
      expect(yield* isProjectTrusted({ home, cwd: project })).toBe(false)
      expect(yield* isProjectTrusted({ home, cwd: project, trustProject: true })).toBe(true)
      expect(yield* addTrustedProject(userFile, project)).toBe(true)
      expect(yield* addTrustedProject(userFile, project)).toBe(false)
      expect(JSON.parse(yield* fs.readFileString(userFile))).toEqual({ model: "opus", trustedProjects: [project] })
      expect(yield* isProjectTrusted({ home, cwd: Path.join(project, "sub") })).toBe(true)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("modes", () => {
  const withMode = (
    defaultMode: string,
    kind: SettingsFileKind = "userSettings"
  ) => [loaded({ permissions: { defaultMode } }, kind)]

  it("manual is default; auto is default with a warning unless a classifier is configured", () => {
    expect(resolveMode(withMode("manual"))).toEqual({ mode: "default", warnings: [] })
    expect(resolveMode(withMode("auto")).mode).toBe("default")
    expect(resolveMode(withMode("auto")).warnings[0]).toContain(
      "mode auto (from /p/.claude/settings.json) needs a classifier approver"
    )
    expect(resolveMode(withMode("auto"), { classifier: true })).toEqual({ mode: "default", warnings: [] })
  })

  it("the last file wins, the command line over all; a repository file never gives bypassPermissions", () => {
    expect(resolveMode([...withMode("plan"), ...withMode("acceptEdits")]).mode).toBe("acceptEdits")
    expect(resolveMode(withMode("plan"), { requested: "dontAsk" }).mode).toBe("dontAsk")
    expect(resolveMode(withMode("bypassPermissions", "projectSettings")).mode).toBe("default")
    expect(resolveMode(withMode("bypassPermissions", "userSettings")).mode).toBe("bypassPermissions")
  })

  it("disableBypassPermissionsMode refuses bypassPermissions from anywhere, saying why", () => {
    const settings = [loaded({ permissions: { disableBypassPermissionsMode: "disable" } }, "projectSettings")]
    const resolved = resolveMode(settings, { requested: "bypassPermissions" })
    expect(resolved.mode).toBe("default")
    expect(resolved.warnings[0]).toContain("disabled by /p/.claude/settings.json")
  })
})
