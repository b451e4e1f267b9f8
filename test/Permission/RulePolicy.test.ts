import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { HookOpinion, PolicyVerdict } from "../../src/Permission/PermissionPolicy.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import type { RulePolicyOptions } from "../../src/Permission/RulePolicy.js"
import { loadSettings, resolveMode } from "../../src/Settings/Settings.js"
import { describeReason } from "../../src/Tool/Permission.js"
import type * as Tool from "../../src/Tool/Tool.js"
import {
  Bash,
  Echo,
  Edit,
  Grep,
  makeSandbox,
  McpTool,
  Read,
  request,
  settingsFrom,
  WebFetch,
  workspaceLayer,
  Write
} from "./fixtures.js"

const box = makeSandbox()
const { home, outside, root } = box
const projectSettings = path.join(root, ".claude", "settings.json")
const inRoot = (...parts: Array<string>) => path.join(root, ...parts)

const policy = (options: RulePolicyOptions) =>
  Effect.runSync(RulePolicy.make(options).pipe(Effect.provide(workspaceLayer(box))))

const verdictOf = (options: RulePolicyOptions, tool: Tool.Any, input: unknown, hook?: HookOpinion): PolicyVerdict =>
  Effect.runSync(policy(options).evaluate(request(tool, input, hook)))

const hook = (behavior: HookOpinion["behavior"]): HookOpinion => ({
  behavior,
  hook: "guard.sh",
  message: `the hook says ${behavior}`
})

const project = (permissions: Record<string, unknown>) => ({
  settings: [settingsFrom({ permissions }, projectSettings)]
})

/** `Tag:ReasonTag`, plus what the reason says, for compact assertions. */
const summary = (verdict: PolicyVerdict) => `${verdict._tag}:${verdict.reason._tag}`

interface Row {
  readonly name: string
  readonly options: RulePolicyOptions
  readonly tool: Tool.Any
  readonly input: unknown
  readonly hook?: HookOpinion["behavior"]
  readonly expected: string
  /** A substring of the reason's description. */
  readonly says?: string
}

const rows: ReadonlyArray<Row> = [
  // 1. deny tier
  {
    name: "a whole-tool deny rule denies",
    options: project({ deny: ["Bash"] }),
    tool: Bash,
    input: { command: "ls" },
    expected: "Deny:Rule",
    says: "deny rule `Bash` from projectSettings"
  },
  {
    name: "a content deny rule denies a matching call",
    options: project({ deny: ["Read(./secrets/**)"] }),
    tool: Read,
    input: { path: "secrets/key.txt" },
    expected: "Deny:Rule"
  },
  {
    name: "a deny rule beats an allow rule for the same tool",
    options: project({ allow: ["Read"], deny: ["Read(./secrets/**)"] }),
    tool: Read,
    input: { path: "secrets/key.txt" },
    expected: "Deny:Rule"
  },
  {
    name: "a deny rule holds in bypassPermissions",
    options: { ...project({ deny: ["Edit(./src/**)"] }), mode: "bypassPermissions" },
    tool: Edit,
    input: { path: "src/a.ts" },
    expected: "Deny:Rule"
  },
  {
    name: "a deny rule beats a hook's allow",
    options: project({ deny: ["Bash(rm:*)"] }),
    tool: Bash,
    input: { command: "rm -rf x" },
    hook: "allow",
    expected: "Deny:Rule"
  },
  {
    name: "a hook's deny denies, naming the hook",
    options: project({ allow: ["Bash"] }),
    tool: Bash,
    input: { command: "ls" },
    hook: "deny",
    expected: "Deny:Hook",
    says: "hook guard.sh"
  },
  {
    name: "the tool's deny denies despite an allow rule",
    options: project({ allow: ["Edit"] }),
    tool: Edit,
    input: { path: "src/a.ts", check: "deny" },
    expected: "Deny:Tool"
  },
  {
    name: "the tool's deny beats an ask rule (deny before ask)",
    options: project({ ask: ["Edit"] }),
    tool: Edit,
    input: { path: "src/a.ts", check: "deny" },
    expected: "Deny:Tool"
  },
  {
    name: "the tool's deny holds in bypassPermissions",
    options: { mode: "bypassPermissions" },
    tool: Edit,
    input: { path: "src/a.ts", check: "deny" },
    expected: "Deny:Tool"
  },
  {
    name: "plan mode denies a call that is not read-only",
    options: { mode: "plan" },
    tool: Edit,
    input: { path: inRoot("src/a.ts") },
    expected: "Deny:Mode",
    says: "plan"
  },
  {
    name: "plan mode denies despite an allow rule",
    options: { ...project({ allow: ["Edit"] }), mode: "plan" },
    tool: Edit,
    input: { path: inRoot("src/a.ts") },
    expected: "Deny:Mode"
  },
  {
    name: "plan mode denies rather than asks for a protected write",
    options: { mode: "plan" },
    tool: Edit,
    input: { path: inRoot(".git/config") },
    expected: "Deny:Mode"
  },
  {
    name: "plan mode runs a read-only call inside the workspace",
    options: { mode: "plan" },
    tool: Read,
    input: { path: inRoot("src/a.ts") },
    expected: "Allow:ReadOnly"
  },
  {
    name: "plan mode runs a tool that touches nothing",
    options: { mode: "plan" },
    tool: Echo,
    input: { text: "hi" },
    expected: "Allow:Default"
  },

  // 2. ask tier
  {
    name: "an ask rule asks despite an allow rule",
    options: project({ allow: ["Edit"], ask: ["Edit(./src/**)"] }),
    tool: Edit,
    input: { path: "src/a.ts" },
    expected: "Ask:Rule",
    says: "ask rule `Edit(./src/**)`"
  },
  {
    name: "an ask rule asks in bypassPermissions",
    options: { ...project({ ask: ["Bash(git push:*)"] }), mode: "bypassPermissions" },
    tool: Bash,
    input: { command: "git push origin main" },
    expected: "Ask:Rule"
  },
  {
    name: "a hook's ask asks despite an allow rule",
    options: project({ allow: ["Bash"] }),
    tool: Bash,
    input: { command: "ls" },
    hook: "ask",
    expected: "Ask:Hook"
  },
  {
    name: "a hook's ask never skips a deny rule",
    options: project({ deny: ["Bash(curl:*)"] }),
    tool: Bash,
    input: { command: "curl x" },
    hook: "ask",
    expected: "Deny:Rule"
  },
  {
    name: "the tool's overridable ask is answered by an allow rule",
    options: project({ allow: ["Edit"] }),
    tool: Edit,
    input: { path: "src/a.ts", check: "ask" },
    expected: "Allow:Rule"
  },
  {
    name: "the tool's overridable ask is answered by a hook's allow",
    options: {},
    tool: Edit,
    input: { path: "src/a.ts", check: "ask" },
    hook: "allow",
    expected: "Allow:Hook"
  },
  {
    name: "the tool's overridable ask is not answered by acceptEdits",
    options: { mode: "acceptEdits" },
    tool: Edit,
    input: { path: "src/a.ts", check: "ask" },
    expected: "Ask:Tool"
  },
  {
    name: "the tool's non-overridable ask asks despite an allow rule",
    options: project({ allow: ["Edit"] }),
    tool: Edit,
    input: { path: "src/a.ts", check: "askStrict" },
    expected: "Ask:Tool"
  },
  {
    name: "the tool's non-overridable ask asks in bypassPermissions",
    options: { mode: "bypassPermissions" },
    tool: Edit,
    input: { path: "src/a.ts", check: "askStrict" },
    expected: "Ask:Tool"
  },

  // 3. safety checks
  {
    name: "a write into .git asks despite an allow rule",
    options: project({ allow: ["Edit"] }),
    tool: Edit,
    input: { path: inRoot(".git/config") },
    expected: "Ask:SafetyCheck",
    says: ".git"
  },
  {
    name: "a write to a shell profile asks in bypassPermissions",
    options: { mode: "bypassPermissions" },
    tool: Write,
    input: { path: path.join(home, ".bashrc") },
    expected: "Ask:SafetyCheck",
    says: "shell profile"
  },
  {
    name: "a write to .zprofile asks in bypassPermissions",
    options: { mode: "bypassPermissions" },
    tool: Write,
    input: { path: path.join(home, ".zprofile") },
    expected: "Ask:SafetyCheck"
  },
  {
    name: "a write to the settings file asks in acceptEdits",
    options: { mode: "acceptEdits" },
    tool: Edit,
    input: { path: inRoot(".claude/settings.json") },
    expected: "Ask:SafetyCheck"
  },
  {
    name: "a write to ~/.ssh asks despite a hook's allow",
    options: {},
    tool: Write,
    input: { path: path.join(home, ".ssh/authorized_keys") },
    hook: "allow",
    expected: "Ask:SafetyCheck"
  },
  {
    name: "a write to .gitconfig asks",
    options: project({ allow: ["Write"] }),
    tool: Write,
    input: { path: path.join(home, ".gitconfig") },
    expected: "Ask:SafetyCheck"
  },
  {
    name: "a settings file in use is protected wherever it is",
    options: {
      settings: [settingsFrom({}, path.join(outside, "team.json"), "flagSettings")],
      mode: "bypassPermissions"
    },
    tool: Write,
    input: { path: path.join(outside, "team.json") },
    expected: "Ask:SafetyCheck",
    says: "settings file"
  },
  {
    name: "reading .git needs no safety check",
    options: {},
    tool: Read,
    input: { path: inRoot(".git/HEAD") },
    expected: "Allow:ReadOnly"
  },

  // 4. mode
  {
    name: "bypassPermissions allows an edit outside the workspace",
    options: { mode: "bypassPermissions" },
    tool: Edit,
    input: { path: path.join(outside, "x") },
    expected: "Allow:Mode",
    says: "bypassPermissions"
  },
  {
    name: "bypassPermissions allows a shell command",
    options: { mode: "bypassPermissions" },
    tool: Bash,
    input: { command: "make" },
    expected: "Allow:Mode"
  },
  {
    name: "acceptEdits allows an edit inside the workspace",
    options: { mode: "acceptEdits" },
    tool: Edit,
    input: { path: inRoot("src/a.ts") },
    expected: "Allow:Mode",
    says: "acceptEdits"
  },
  {
    name: "acceptEdits allows a write tool (fileAccess edit)",
    options: { mode: "acceptEdits" },
    tool: Write,
    input: { path: inRoot("src/new.ts") },
    expected: "Allow:Mode"
  },
  {
    name: "acceptEdits asks for an edit outside the workspace",
    options: { mode: "acceptEdits" },
    tool: Edit,
    input: { path: path.join(outside, "x") },
    expected: "Ask:Default"
  },
  {
    name: "acceptEdits asks for a shell command",
    options: { mode: "acceptEdits" },
    tool: Bash,
    input: { command: "make" },
    expected: "Ask:Default"
  },

  // 5. allow rules
  {
    name: "a content allow rule allows, naming rule, source and file",
    options: project({ allow: ["Edit(./src/**)"] }),
    tool: Edit,
    input: { path: "src/a.ts" },
    expected: "Allow:Rule",
    says: `allow rule \`Edit(./src/**)\` from projectSettings (${projectSettings})`
  },
  {
    name: "a `/` rule is anchored at the settings file's project",
    options: project({ allow: ["Edit(/src/**)"] }),
    tool: Edit,
    input: { path: inRoot("src/a.ts") },
    expected: "Allow:Rule"
  },
  {
    name: "a command-line allow rule allows",
    options: { cliRules: { allow: ["Bash(npm test:*)"] } },
    tool: Bash,
    input: { command: "npm test -- --watch=false" },
    expected: "Allow:Rule",
    says: "cliArg"
  },
  {
    name: "a session allow rule allows",
    options: { sessionRules: { allow: ["WebFetch"] } },
    tool: WebFetch,
    input: { url: "https://example.com" },
    expected: "Allow:Rule",
    says: "session"
  },
  {
    name: "a hook's allow allows when no rule objects",
    options: {},
    tool: Bash,
    input: { command: "make" },
    hook: "allow",
    expected: "Allow:Hook"
  },
  {
    name: "an MCP server-wide rule allows the server's tools",
    options: project({ allow: ["mcp__srv"] }),
    tool: McpTool,
    input: { q: "x" },
    expected: "Allow:Rule"
  },
  {
    name: "an MCP server-wide deny denies the server's tools",
    options: project({ deny: ["mcp__srv__*"] }),
    tool: McpTool,
    input: { q: "x" },
    expected: "Deny:Rule"
  },
  {
    name: "a rule naming an alias governs the tool",
    options: project({ deny: ["Say"] }),
    tool: Echo,
    input: { text: "x" },
    expected: "Deny:Rule"
  },
  {
    name: "Read rules govern tools that read files",
    options: project({ deny: ["Read(./secrets/**)"] }),
    tool: Grep,
    input: { path: inRoot("secrets/key.txt") },
    expected: "Deny:Rule"
  },
  {
    name: "Edit rules govern tools that edit files",
    options: project({ allow: ["Edit(./src/**)"] }),
    tool: Write,
    input: { path: inRoot("src/b.ts") },
    expected: "Allow:Rule"
  },
  {
    name: "an Edit allow rule for a tool without a matcher needs every claimed file covered",
    options: project({ allow: ["Edit(./src/**)"] }),
    tool: Write,
    input: { path: inRoot("lib/b.ts") },
    expected: "Ask:Default"
  },
  {
    name: "a deny rule for a tool that cannot read rule content covers the whole tool",
    options: project({ deny: ["WebFetch(domain:evil.example)"] }),
    tool: WebFetch,
    input: { url: "https://good.example" },
    expected: "Deny:Rule"
  },
  {
    name: "an allow rule for a tool that cannot read rule content never matches",
    options: project({ allow: ["WebFetch(domain:good.example)"] }),
    tool: WebFetch,
    input: { url: "https://good.example" },
    expected: "Ask:Default"
  },

  // 6. read-only auto-allow
  {
    name: "a read-only call inside the workspace runs",
    options: {},
    tool: Read,
    input: { path: "src/a.ts" },
    expected: "Allow:ReadOnly"
  },
  {
    name: "a read-only call outside the workspace asks",
    options: {},
    tool: Read,
    input: { path: path.join(outside, "x") },
    expected: "Ask:Default"
  },
  {
    name: "read-only auto-allow can be switched off",
    options: { readOnlyAutoAllow: false },
    tool: Read,
    input: { path: "src/a.ts" },
    expected: "Ask:Default"
  },
  {
    name: "an open-world read-only call is not auto-allowed",
    options: {},
    tool: WebFetch,
    input: { url: "https://example.com" },
    expected: "Ask:Default"
  },

  // 7. the tool's allow
  {
    name: "the tool's allow allows",
    options: {},
    tool: Edit,
    input: { path: path.join(outside, "x"), check: "allow" },
    expected: "Allow:Tool"
  },
  {
    name: "a tool that touches nothing runs",
    options: {},
    tool: Echo,
    input: { text: "x" },
    expected: "Allow:Default"
  },

  // 8. ask
  { name: "an edit with no rule asks", options: {}, tool: Edit, input: { path: "src/a.ts" }, expected: "Ask:Default" },
  {
    name: "a shell command with no rule asks",
    options: {},
    tool: Bash,
    input: { command: "make" },
    expected: "Ask:Default"
  },

  // dontAsk
  {
    name: "dontAsk denies what would ask",
    options: { mode: "dontAsk" },
    tool: Edit,
    input: { path: "src/a.ts" },
    expected: "Deny:Mode",
    says: "dontAsk"
  },
  {
    name: "dontAsk denies what an ask rule asks",
    options: { ...project({ ask: ["Bash"] }), mode: "dontAsk" },
    tool: Bash,
    input: { command: "ls" },
    expected: "Deny:Mode"
  },
  {
    name: "dontAsk denies a protected write",
    options: { mode: "dontAsk" },
    tool: Edit,
    input: { path: inRoot(".git/hooks/pre-commit") },
    expected: "Deny:Mode"
  },
  {
    name: "dontAsk still allows what a rule allows",
    options: { ...project({ allow: ["Bash(ls)"] }), mode: "dontAsk" },
    tool: Bash,
    input: { command: "ls" },
    expected: "Allow:Rule"
  },
  {
    name: "dontAsk still auto-allows read-only calls",
    options: { mode: "dontAsk" },
    tool: Read,
    input: { path: "src/a.ts" },
    expected: "Allow:ReadOnly"
  }
]

describe("RulePolicy: the decision table", () => {
  for (const row of rows) {
    it(row.name, () => {
      const verdict = verdictOf(row.options, row.tool, row.input, row.hook === undefined ? undefined : hook(row.hook))
      expect(summary(verdict)).toBe(row.expected)
      if (row.says !== undefined) expect(describeReason(verdict.reason)).toContain(row.says)
    })
  }

  it("an Allow carries the tool's rewritten input, whichever step allowed", () => {
    const verdict = verdictOf(project({ allow: ["Edit"] }), Edit, { path: "src/a.ts", check: "allow" })
    expect(verdict._tag).toBe("Allow")
    if (verdict._tag === "Allow") expect(verdict.updatedInput).toEqual({ path: "src/a.ts.rewritten", check: "allow" })
  })

  it("a default ask suggests a rule for the directory of a file tool's claims", () => {
    const verdict = verdictOf({}, Edit, { path: "src/a.ts" })
    expect(verdict._tag === "Ask" && verdict.suggestions).toEqual([`Edit(/${inRoot("src")}/**)`])
  })

  it("a default ask suggests the tool's own suggestions when it has them", () => {
    const verdict = verdictOf({}, Edit, { path: "src/a.ts", check: "ask" })
    expect(verdict._tag === "Ask" && verdict.suggestions).toEqual(["Fake(suggested)"])
  })

  it("an ask from an ask rule suggests nothing (no allow rule could change it)", () => {
    const verdict = verdictOf(project({ ask: ["Bash"] }), Bash, { command: "ls" })
    expect(verdict._tag === "Ask" && verdict.suggestions).toEqual([])
  })

  it("the mode defaults to the settings' defaultMode, highest precedence last", () => {
    const settings = [
      settingsFrom({ permissions: { defaultMode: "plan" } }, path.join(home, ".claude/settings.json"), "userSettings"),
      settingsFrom(
        { permissions: { defaultMode: "acceptEdits" } },
        inRoot(".claude/settings.local.json"),
        "localSettings"
      )
    ]
    expect(summary(verdictOf({ settings }, Edit, { path: inRoot("src/a.ts") }))).toBe("Allow:Mode")
    expect(Effect.runSync(policy({ settings: settings.slice(0, 1) }).readOnlyOnly)).toBe(true)
    expect(Effect.runSync(policy({ settings, mode: "plan" }).readOnlyOnly)).toBe(true)
  })

  it("a project or local settings file cannot turn on bypassPermissions", () => {
    const settings = [settingsFrom({ permissions: { defaultMode: "bypassPermissions" } }, projectSettings)]
    expect(resolveMode(settings).mode).toBe("default")
    expect(summary(verdictOf({ settings }, Bash, { command: "make" }))).toBe("Ask:Default")
    // A committed settings.local.json is the repository's too.
    const local = [
      settingsFrom(
        { permissions: { defaultMode: "bypassPermissions" } },
        inRoot(".claude/settings.local.json"),
        "localSettings"
      )
    ]
    expect(resolveMode(local).mode).toBe("default")
  })

  it("reports the rule from the earliest source when several match", () => {
    const options: RulePolicyOptions = {
      settings: [
        settingsFrom(
          { permissions: { deny: ["Bash(rm:*)"] } },
          path.join(home, ".claude/settings.json"),
          "userSettings"
        )
      ],
      cliRules: { deny: ["Bash"] }
    }
    const verdict = verdictOf(options, Bash, { command: "rm x" })
    expect(describeReason(verdict.reason)).toContain("from cliArg")
  })
})

describe("RulePolicy: rule sources", () => {
  it("a command-line rule that does not parse fails the layer with a clear message", () => {
    const error = Effect.runSync(
      Effect.flip(RulePolicy.make({ cliRules: { deny: ["Bash(rm"] } }).pipe(Effect.provide(workspaceLayer(box))))
    )
    expect(error.message).toBe(
      "Invalid permission rule \"Bash(rm\": missing \")\" to close the \"(\" opened here (at character 5)"
    )
  })

  it.effect("a malformed settings file fails loading, naming the file and the field", () =>
    Effect.gen(function*() {
      const file = path.join(box.base, "bad-settings.json")
      fs.writeFileSync(file, JSON.stringify({ permissions: { allow: "Bash", defaultMode: "yolo" } }))
      const error = yield* Effect.flip(loadSettings({ files: [file], cwd: root, home }))
      expect(error.message).toContain(file)
      expect(error.message).toContain("permissions.allow: expected array")
      expect(error.message).toContain("permissions.defaultMode")
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("a settings file given by name must exist", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(loadSettings({ files: ["missing.json"], cwd: root, home }))
      expect(error.message).toBe(`Cannot read settings file ${inRoot("missing.json")}: the file does not exist`)
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it.effect("loads Claude Code's standard locations and the given files, in precedence order", () =>
    Effect.gen(function*() {
      const dir = path.join(box.base, "std")
      fs.mkdirSync(path.join(dir, "proj/.claude"), { recursive: true })
      fs.mkdirSync(path.join(dir, "home/.claude"), { recursive: true })
      fs.writeFileSync(
        path.join(dir, "home/.claude/settings.json"),
        JSON.stringify({ permissions: { allow: ["Read"] } })
      )
      fs.writeFileSync(
        path.join(dir, "proj/.claude/settings.local.json"),
        JSON.stringify({ permissions: { deny: ["Bash"] } })
      )
      fs.writeFileSync(path.join(dir, "extra.json"), JSON.stringify({ permissions: { ask: ["Edit"] } }))
      const loaded = yield* loadSettings({
        claudeSettings: true,
        files: ["../extra.json"],
        cwd: path.join(dir, "proj"),
        home: path.join(dir, "home")
      })
      expect(loaded.map((l) => [l.source.kind, l.rules.map((r) => r.text)])).toEqual([
        ["userSettings", ["Read"]],
        ["localSettings", ["Bash"]],
        ["flagSettings", ["Edit"]]
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})

describe("RulePolicy: remember", () => {
  const layer = (options: RulePolicyOptions) => RulePolicy.layer(options).pipe(Layer.provide(workspaceLayer(box)))

  it.effect("a session rule is honoured by the next call", () =>
    Effect.gen(function*() {
      const policy = yield* PermissionPolicy
      expect((yield* policy.evaluate(request(Bash, { command: "make build" })))._tag).toBe("Ask")
      yield* policy.remember(["Bash(make:*)"], "session")
      const verdict = yield* policy.evaluate(request(Bash, { command: "make build" }))
      expect(summary(verdict)).toBe("Allow:Rule")
      expect(describeReason(verdict.reason)).toContain("from session")
    }).pipe(Effect.provide(layer({}))))

  it.effect("a remembered rule never overrides a deny rule", () =>
    Effect.gen(function*() {
      const policy = yield* PermissionPolicy
      yield* policy.remember(["Bash"], "session")
      expect(summary(yield* policy.evaluate(request(Bash, { command: "rm -rf x" })))).toBe("Deny:Rule")
    }).pipe(Effect.provide(layer(project({ deny: ["Bash(rm:*)"] })))))

  it.effect("an always rule is written to the local settings file and honoured at once", () => {
    const local = path.join(box.base, "always", ".claude", "settings.local.json")
    fs.mkdirSync(path.dirname(local), { recursive: true })
    fs.writeFileSync(local, JSON.stringify({ env: { KEEP: "1" }, permissions: { allow: ["Read"] } }))
    return Effect.gen(function*() {
      const policy = yield* PermissionPolicy
      yield* policy.remember(["Bash(npm run lint:*)", "Bash(npm run lint:*)"], "always")
      const written = JSON.parse(fs.readFileSync(local, "utf8"))
      expect(written).toEqual({ env: { KEEP: "1" }, permissions: { allow: ["Read", "Bash(npm run lint:*)"] } })
      expect(fs.readdirSync(path.dirname(local))).toEqual(["settings.local.json"])
      const verdict = yield* policy.evaluate(request(Bash, { command: "npm run lint" }))
      expect(describeReason(verdict.reason)).toBe(`allow rule \`Bash(npm run lint:*)\` from localSettings (${local})`)
    }).pipe(Effect.provide(layer({ localSettingsPath: local })))
  })

  it.effect("an unparsable remembered rule fails with PolicyUpdateError", () =>
    Effect.gen(function*() {
      const policy = yield* PermissionPolicy
      const error = yield* Effect.flip(policy.remember(["Bash("], "session"))
      expect(error._tag).toBe("PolicyUpdateError")
      expect(error.message).toContain("Invalid permission rule")
    }).pipe(Effect.provide(layer({}))))

  it.effect("a local settings file that cannot be written fails remember, and the session still has the rule", () => {
    const blocker = path.join(box.base, "blocker")
    fs.writeFileSync(blocker, "a file, not a directory")
    return Effect.gen(function*() {
      const policy = yield* PermissionPolicy
      const error = yield* Effect.flip(policy.remember(["Bash(make:*)"], "always"))
      expect(error.message).toContain(path.join(blocker, "settings.local.json"))
      expect(summary(yield* policy.evaluate(request(Bash, { command: "make" })))).toBe("Allow:Rule")
    }).pipe(Effect.provide(layer({ localSettingsPath: path.join(blocker, "settings.local.json") })))
  })
})
