import { NodeFileSystem } from "@effect/platform-node"
import { SystemError } from "@effect/platform/Error"
import * as FileSystem from "@effect/platform/FileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Option, Schema } from "effect"
import * as Path from "node:path"
import { recordGrants } from "../../src/Settings/Grants.js"
import {
  addRuleToSettingsFile,
  claudeSettingsPaths,
  loadClaudeSettings,
  loadSettingsFile,
  SettingsError,
  SettingsFile,
  SettingsFileKind,
  SourcedRule
} from "../../src/Settings/Settings.js"
import { RuleSource } from "../../src/Tool/Permission.js"
import { makeRule, printRule } from "../../src/Tool/Rule.js"

const tempDir = FileSystem.FileSystem.pipe(Effect.flatMap((fs) => fs.makeTempDirectoryScoped()))

const writeJson = (path: string, value: unknown) =>
  FileSystem.FileSystem.pipe(
    Effect.tap((fs) => fs.makeDirectory(Path.dirname(path), { recursive: true })),
    Effect.flatMap((fs) => fs.writeFileString(path, typeof value === "string" ? value : JSON.stringify(value)))
  )

const readJson = (path: string) =>
  FileSystem.FileSystem.pipe(
    Effect.flatMap((fs) => fs.readFileString(path)),
    Effect.map((text): unknown => JSON.parse(text))
  )

const loadError = (path: string) =>
  loadSettingsFile(path).pipe(
    Effect.flip,
    Effect.map((error) => {
      expect(error).toBeInstanceOf(SettingsError)
      return error.message
    })
  )

describe("rule sources", () => {
  it("every settings file kind is a rule source; the command line and the session are not files", () => {
    expect(SettingsFileKind.literals.every((kind) => Schema.is(RuleSource)(kind))).toBe(true)
    expect(RuleSource.literals.filter((kind) => !Schema.is(SettingsFileKind)(kind))).toEqual(["cliArg", "session"])
    expect(Either.isLeft(Schema.decodeUnknownEither(SettingsFile)({ kind: "cliArg", path: "/p/x.json" }))).toBe(true)
    expect(Either.isLeft(Schema.decodeUnknownEither(SettingsFile)({ kind: "projectSettings" }))).toBe(true)
  })

  it("a sourced rule carries its settings file through encoding", () => {
    const rule = new SourcedRule({
      behavior: "deny",
      rule: makeRule("Bash"),
      text: "Bash",
      source: { kind: "localSettings", path: "/p/.claude/settings.local.json" }
    })
    const encoded = Schema.encodeSync(SourcedRule)(rule)
    expect(encoded.source).toEqual({ kind: "localSettings", path: "/p/.claude/settings.local.json" })
    expect(Schema.decodeUnknownSync(SourcedRule)(encoded)).toEqual(rule)
  })
})

describe("claudeSettingsPaths", () => {
  it("lists user, project and local settings in precedence order", () => {
    expect(claudeSettingsPaths({ home: "/home/me", cwd: "/work/proj" })).toEqual([
      { kind: "userSettings", path: "/home/me/.claude/settings.json" },
      { kind: "projectSettings", path: "/work/proj/.claude/settings.json" },
      { kind: "localSettings", path: "/work/proj/.claude/settings.local.json" }
    ])
  })
})

describe("loadSettingsFile", () => {
  it.scoped("returns None for a missing file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const loaded = yield* loadSettingsFile(Path.join(dir, "nope.json"))
      expect(Option.isNone(loaded)).toBe(true)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("parses rules with their behaviour and source, ignoring unknown keys", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, ".claude", "settings.json")
      yield* writeJson(file, {
        model: "opus",
        env: { FOO: "1" },
        permissions: {
          allow: ["Bash(npm test:*)", "Read(./src/**)", "mcp__github"],
          deny: ["Edit(//etc/**)", "Bash()"],
          ask: ["WebFetch(domain:example.com)"],
          defaultMode: "acceptEdits",
          additionalDirectories: ["../shared"],
          disableBypassPermissionsMode: "disable"
        },
        hooks: {
          PreToolUse: [{ matcher: "Bash|Edit", hooks: [{ type: "command", command: "./check.sh", timeout: 60 }] }],
          Stop: [{ hooks: [{ type: "command", command: "notify" }] }]
        }
      })
      const loaded = Option.getOrThrow(yield* loadSettingsFile(file, "projectSettings"))
      expect(loaded.source).toEqual({ kind: "projectSettings", path: file })
      expect(loaded.settings.permissions?.defaultMode).toBe("acceptEdits")
      expect(loaded.settings.permissions?.additionalDirectories).toEqual(["../shared"])
      expect(loaded.settings.hooks?.PreToolUse?.[0]?.hooks[0]).toEqual({
        type: "command",
        command: "./check.sh",
        timeout: 60
      })
      expect(loaded.rules.map((r) => [r.behavior, printRule(r.rule)])).toEqual([
        ["deny", "Edit(//etc/**)"],
        ["deny", "Bash"],
        ["ask", "WebFetch(domain:example.com)"],
        ["allow", "Bash(npm test:*)"],
        ["allow", "Read(./src/**)"],
        ["allow", "mcp__github"]
      ])
      expect(loaded.rules.every((r) => r.source.kind === "projectSettings" && r.source.path === file)).toBe(true)
      expect(loaded.rules[1]?.text).toBe("Bash()")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("treats an empty file as empty settings", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* writeJson(file, "  \n")
      const loaded = Option.getOrThrow(yield* loadSettingsFile(file))
      expect(loaded.rules).toEqual([])
      expect(loaded.source.kind).toBe("flagSettings")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("names the file and the field path of a wrong type", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, ".claude", "settings.json")
      yield* writeJson(file, { permissions: { allow: ["Bash", "Read", 3] } })
      expect(yield* loadError(file)).toBe(
        `Invalid settings in ${file}: permissions.allow[2]: expected string, got number`
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("reports every problem, including nested hook fields and enum values", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* writeJson(file, {
        permissions: { defaultMode: "yolo", deny: "Bash" },
        hooks: { PreToolUse: [{ hooks: [{ type: "command", timeout: -1 }] }] }
      })
      const message = yield* loadError(file)
      expect(message).toContain(
        "permissions.defaultMode: expected \"default\" | \"manual\" | \"acceptEdits\" | \"plan\" | \"auto\" | \"bypassPermissions\" | \"dontAsk\", got \"yolo\""
      )
      expect(message).toContain("permissions.deny: expected array, got string")
      expect(message).toContain("hooks.PreToolUse[0].hooks[0].command: is required but missing")
      expect(message).toContain("hooks.PreToolUse[0].hooks[0].timeout: expected a positive number, got -1")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("names the file, the field and the rule that does not parse", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* writeJson(file, { permissions: { allow: ["Read"], deny: ["Read", "Bash(rm -rf"] } })
      expect(yield* loadError(file)).toBe(
        `Invalid settings in ${file}: permissions.deny[1]: Invalid permission rule "Bash(rm -rf": ` +
          "missing \")\" to close the \"(\" opened here (at character 5)"
      )
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("fails with InvalidJson for a file that is not JSON", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* writeJson(file, "{ \"permissions\": ")
      const error = yield* Effect.flip(loadSettingsFile(file))
      expect(error.reason).toBe("InvalidJson")
      expect(error.message).toContain(`Settings file ${file} is not valid JSON`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("fails with Unreadable for a path that cannot be read", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const error = yield* Effect.flip(loadSettingsFile(dir))
      expect(error.reason).toBe("Unreadable")
      expect(error.message).toContain(`Cannot read settings file ${dir}`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("loadClaudeSettings", () => {
  it.scoped("loads the standard files that exist, lowest precedence first", () =>
    Effect.gen(function*() {
      const home = yield* tempDir
      const cwd = yield* tempDir
      const [user, , local] = claudeSettingsPaths({ home, cwd })
      yield* writeJson(user!.path, { permissions: { allow: ["Read"] } })
      yield* writeJson(local!.path, { permissions: { deny: ["Read(.env)"] } })
      const loaded = yield* loadClaudeSettings({ home, cwd })
      expect(loaded.map((l) => l.source.kind)).toEqual(["userSettings", "localSettings"])
      expect(loaded.flatMap((l) => l.rules.map((r) => `${r.source.kind}:${r.behavior}:${r.text}`))).toEqual([
        "userSettings:allow:Read",
        "localSettings:deny:Read(.env)"
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("addRuleToSettingsFile", () => {
  it.live("interrupted at any moment, it leaves the file whole and no temporary file (nor does recordGrants)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, ".claude", "settings.local.json")
      const grants = Path.join(dir, "state", "grants.json")
      const fs = yield* FileSystem.FileSystem
      let cut = 0
      // Interrupted after 0, 1, 2, ... turns of the event loop: before the write, during it, between it and the rename.
      for (let turns = 0; turns < 14; turns++) {
        const writes = [
          Effect.ignore(addRuleToSettingsFile(file, "allow", makeRule("Bash", `echo ${turns}:*`))),
          Effect.ignore(recordGrants(grants, file, [`Bash(echo ${turns}:*)`]))
        ]
        for (const write of writes) {
          const fiber = yield* Effect.fork(write)
          for (let i = 0; i < turns; i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
          if (Exit.isInterrupted(yield* Fiber.interrupt(fiber))) cut++
        }
        for (const directory of [Path.dirname(file), Path.dirname(grants)]) {
          const names = (yield* fs.exists(directory)) ? yield* fs.readDirectory(directory) : []
          expect(names.filter((name) => name.endsWith(".tmp")), `after ${turns} turns`).toEqual([])
        }
        if (yield* fs.exists(file)) JSON.parse(yield* fs.readFileString(file))
        if (yield* fs.exists(grants)) JSON.parse(yield* fs.readFileString(grants))
      }
      // The sweep reached writes cut in the middle, not only ones done or not begun.
      expect(cut).toBeGreaterThan(0)
    }).pipe(Effect.provide(NodeFileSystem.layer), Effect.scoped))

  it.scoped("creates the file and its directory when missing", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, ".claude", "settings.local.json")
      const added = yield* addRuleToSettingsFile(file, "allow", makeRule("Bash", "npm test:*"))
      expect(added).toBe(true)
      expect(yield* readJson(file)).toEqual({ permissions: { allow: ["Bash(npm test:*)"] } })
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("appends the rule, keeping every other key", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      const original = {
        model: "opus",
        permissions: { allow: ["Read"], deny: ["Edit(//etc/**)"], disableBypassPermissionsMode: "disable" },
        hooks: { Stop: [{ hooks: [{ type: "command", command: "notify" }] }] }
      }
      yield* writeJson(file, original)
      yield* addRuleToSettingsFile(file, "allow", makeRule("Bash", "python -c \"print(1)\""))
      yield* addRuleToSettingsFile(file, "ask", makeRule("WebFetch", "domain:example.com"))
      expect(yield* readJson(file)).toEqual({
        ...original,
        permissions: {
          ...original.permissions,
          allow: ["Read", "Bash(python -c \"print\\(1\\)\")"],
          ask: ["WebFetch(domain:example.com)"]
        }
      })
      // and the result still loads
      const loaded = Option.getOrThrow(yield* loadSettingsFile(file, "localSettings"))
      expect(loaded.rules.map((r) => r.rule.content)).toContain("python -c \"print(1)\"")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("does not add a rule that is already present in any spelling", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* writeJson(file, { permissions: { allow: ["Bash(*)", "Read(  x  )"] } })
      expect(yield* addRuleToSettingsFile(file, "allow", makeRule("Bash"))).toBe(false)
      expect(yield* addRuleToSettingsFile(file, "allow", makeRule("Read", "  x  "))).toBe(false)
      expect(yield* addRuleToSettingsFile(file, "deny", makeRule("Bash"))).toBe(true)
      expect(yield* readJson(file)).toEqual({ permissions: { allow: ["Bash(*)", "Read(  x  )"], deny: ["Bash"] } })
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("leaves no temporary file behind", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const file = Path.join(dir, "settings.json")
      yield* addRuleToSettingsFile(file, "allow", makeRule("Read"))
      yield* addRuleToSettingsFile(file, "allow", makeRule("Edit"))
      expect(yield* fs.readDirectory(dir)).toEqual(["settings.json"])
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.scoped("refuses to overwrite a file it cannot understand", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const dir = yield* tempDir
      const notJson = Path.join(dir, "a.json")
      const wrongShape = Path.join(dir, "b.json")
      yield* writeJson(notJson, "{ oops")
      yield* writeJson(wrongShape, { permissions: { allow: "Read" } })

      const first = yield* Effect.exit(addRuleToSettingsFile(notJson, "allow", makeRule("Read")))
      const second = yield* Effect.flip(addRuleToSettingsFile(wrongShape, "allow", makeRule("Read")))
      expect(Exit.isFailure(first)).toBe(true)
      expect(second.message).toBe(`Invalid settings in ${wrongShape}: permissions.allow: expected array`)
      expect(yield* fs.readFileString(notJson)).toBe("{ oops")
      expect(yield* readJson(wrongShape)).toEqual({ permissions: { allow: "Read" } })
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("removes the temporary file and reports Unwritable when the rename fails", () =>
    Effect.gen(function*() {
      const written: Array<string> = []
      const removed: Array<string> = []
      const fs = FileSystem.layerNoop({
        readFileString: (path) =>
          Effect.fail(
            new SystemError({
              reason: "NotFound",
              module: "FileSystem",
              method: "readFileString",
              pathOrDescriptor: path
            })
          ),
        makeDirectory: () => Effect.void,
        writeFileString: (path) => Effect.sync(() => void written.push(path)),
        rename: (from) =>
          Effect.fail(
            new SystemError({
              reason: "PermissionDenied",
              module: "FileSystem",
              method: "rename",
              pathOrDescriptor: from
            })
          ),
        remove: (path) => Effect.sync(() => void removed.push(path))
      })
      const error = yield* addRuleToSettingsFile("/proj/.claude/settings.local.json", "allow", makeRule("Read")).pipe(
        Effect.flip,
        Effect.provide(fs)
      )
      expect(error.reason).toBe("Unwritable")
      expect(error.message).toMatch(/^Cannot write settings file \/proj\/\.claude\/settings\.local\.json: /)
      expect(written).toHaveLength(1)
      expect(written[0]).toMatch(/^\/proj\/\.claude\/\.settings\.local\.json\.[0-9a-z]+\.tmp$/)
      expect(removed).toEqual(written)
    }))
})
