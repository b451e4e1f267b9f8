import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as path from "node:path"
import type { HookOpinion, PolicyVerdict } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import type { RuleLists, RulePolicyOptions } from "../../src/Permission/RulePolicy.js"
import type { PermissionMode } from "../../src/Settings/Settings.js"
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

const rulePool = [
  "Bash",
  "Bash(rm:*)",
  "Bash(git log:*)",
  "Bash(npm test:*)",
  "Bash(ls)",
  "Bash(*)",
  "Edit",
  "Edit(./src/**)",
  "Edit(./secrets/**)",
  "Edit(/src/**)",
  "Edit(~/**)",
  "Edit(//**)",
  "Read",
  "Read(./secrets/**)",
  "Read(*.txt)",
  "Write",
  "Write(./src/**)",
  "Grep",
  "WebFetch",
  "WebFetch(domain:example.com)",
  "mcp__srv",
  "mcp__srv__lookup",
  "mcp__other",
  "Echo",
  "Say"
] as const

const check = fc.constantFrom(undefined, "allow", "deny", "ask", "passthrough")
const filePath = fc.constantFrom(
  "src/a.ts",
  "secrets/key.txt",
  path.join(root, ".git/config"),
  path.join(outside, "x.txt"),
  path.join(home, ".bashrc"),
  "notes.txt"
)

const call: fc.Arbitrary<readonly [Tool.Any, unknown]> = fc.oneof(
  fc.record({
    command: fc.constantFrom("ls", "rm -rf x", "git log --oneline", "git logout", "npm test && rm x", "echo hi | sh"),
    check
  }).map((input) => [Bash, input] as const),
  fc.record({ path: filePath, check }).chain((input) =>
    fc.constantFrom(Read, Edit, Write, Grep).map((tool) => [tool, input] as const)
  ),
  fc.record({ url: fc.constantFrom("https://example.com/a", "https://evil.test/"), check }).map((input) =>
    [WebFetch, input] as const
  ),
  fc.record({ q: fc.string(), check }).map((input) => [McpTool, input] as const),
  fc.record({ text: fc.string() }).map((input) => [Echo, input] as const)
)

const ruleLists: fc.Arbitrary<RuleLists> = fc.record({
  allow: fc.subarray([...rulePool], { maxLength: 4 }),
  deny: fc.subarray([...rulePool], { maxLength: 3 }),
  ask: fc.subarray([...rulePool], { maxLength: 3 })
})

const mode = fc.constantFrom<PermissionMode>("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")
const hookOpinion = fc.option(
  fc.record({
    behavior: fc.constantFrom<HookOpinion["behavior"]>("allow", "deny", "ask"),
    hook: fc.constant("h"),
    message: fc.string()
  }),
  { nil: undefined }
)

const scenario = fc.record({ project: ruleLists, cli: ruleLists, mode, call, hook: hookOpinion })
type Scenario = typeof scenario extends fc.Arbitrary<infer A> ? A : never

/**
 * Scenarios that also hold a deny or ask rule naming the call's tool (in the project file or on the command line), so
 * the properties about what such a rule guarantees meet their case in nearly every run (counted below).
 */
const scenarioWithRule = (behaviors: ReadonlyArray<"deny" | "ask">): fc.Arbitrary<Scenario> =>
  fc.tuple(scenario, fc.constantFrom(...behaviors), fc.constantFrom("project" as const, "cli" as const)).map(
    ([s, behavior, where]) => {
      const lists = s[where]
      return { ...s, [where]: { ...lists, [behavior]: [...(lists[behavior] ?? []), s.call[0].definition.name] } }
    }
  )

const reached = { allowOverride: [0, 0], hookDeny: [0, 0] }

const optionsOf = (
  s: Scenario,
  extra?: { readonly behavior: "allow" | "deny" | "ask"; readonly rule: string }
): RulePolicyOptions => ({
  settings: [settingsFrom({ permissions: s.project }, path.join(root, ".claude/settings.json"))],
  cliRules: extra === undefined
    ? s.cli
    : { ...s.cli, [extra.behavior]: [...(s.cli[extra.behavior] ?? []), extra.rule] },
  mode: s.mode
})

const verdict = (options: RulePolicyOptions, s: Scenario, hook: HookOpinion | undefined): PolicyVerdict =>
  Effect.runSync(
    Effect.flatMap(RulePolicy.make(options), (policy) => policy.evaluate(request(s.call[0], s.call[1], hook))).pipe(
      Effect.provide(workspaceLayer(box))
    )
  )

const byRule = (v: PolicyVerdict, behavior: "deny" | "ask") =>
  v.reason._tag === "Rule" && v.reason.behavior === behavior

describe("RulePolicy: properties", () => {
  it.prop("adding a deny rule never turns a call that was not allowed into an allowed one", [
    scenario,
    fc.constantFrom(...rulePool)
  ], ([s, rule]) => {
    const before = verdict(optionsOf(s), s, s.hook)
    const after = verdict(optionsOf(s, { behavior: "deny", rule }), s, s.hook)
    if (before._tag !== "Allow") expect(after._tag).not.toBe("Allow")
  }, { fastCheck: { numRuns: 300 }, timeout: 60_000 })

  it.prop("adding an ask rule never turns a call that was not allowed into an allowed one", [
    scenario,
    fc.constantFrom(...rulePool)
  ], ([s, rule]) => {
    const before = verdict(optionsOf(s), s, s.hook)
    const after = verdict(optionsOf(s, { behavior: "ask", rule }), s, s.hook)
    if (before._tag !== "Allow") expect(after._tag).not.toBe("Allow")
  }, { fastCheck: { numRuns: 300 }, timeout: 60_000 })

  it.prop("adding an allow rule never overrides a deny or ask rule", [
    scenarioWithRule(["deny", "deny", "deny", "ask"]),
    fc.constantFrom(...rulePool)
  ], ([s, rule]) => {
    const before = verdict(optionsOf(s), s, s.hook)
    reached.allowOverride[1]!++
    if (!byRule(before, "deny") && !byRule(before, "ask")) return
    reached.allowOverride[0]!++
    const after = verdict(optionsOf(s, { behavior: "allow", rule }), s, s.hook)
    expect(after._tag).toBe(before._tag)
    expect(after.reason).toEqual(before.reason)
  }, { fastCheck: { numRuns: 300 }, timeout: 60_000 })

  it("...and in at least 80% of its runs a deny or ask rule decided", () => {
    expect(reached.allowOverride[0]! / reached.allowOverride[1]!).toBeGreaterThanOrEqual(0.8)
  })

  it.prop("no hook output allows what a deny rule denies", [scenarioWithRule(["deny"]), hookOpinion], ([s, hook]) => {
    const without = verdict(optionsOf(s), s, undefined)
    reached.hookDeny[1]!++
    if (!byRule(without, "deny")) return
    reached.hookDeny[0]!++
    const withHook = verdict(optionsOf(s), s, hook)
    expect(withHook._tag).toBe("Deny")
    expect(withHook.reason).toEqual(without.reason)
  }, { fastCheck: { numRuns: 300 }, timeout: 60_000 })

  it("...and in at least 80% of its runs a deny rule decided", () => {
    expect(reached.hookDeny[0]! / reached.hookDeny[1]!).toBeGreaterThanOrEqual(0.8)
  })

  it.prop("a hook's allow never bypasses an ask rule, the tool's deny or non-overridable ask, or a safety check", [
    scenario
  ], ([s]) => {
    const without = verdict(optionsOf(s), s, undefined)
    const kind = without.reason._tag
    if (without._tag === "Allow" || kind === "Default" || (kind === "Mode" && without.reason.mode === "dontAsk")) return
    // The tool's overridable ask is answered by allow rules and a hook's allow, by design.
    if (kind === "Tool" && without._tag === "Ask" && (s.call[1] as { check?: string }).check === "ask") return
    const withAllow = verdict(optionsOf(s), s, { behavior: "allow", hook: "h", message: "ok" })
    expect(withAllow._tag).toBe(without._tag)
    expect(withAllow.reason).toEqual(without.reason)
  }, { fastCheck: { numRuns: 300 }, timeout: 60_000 })

  it.prop("dontAsk never asks", [scenario], ([s]) => {
    expect(verdict(optionsOf({ ...s, mode: "dontAsk" }), s, s.hook)._tag).not.toBe("Ask")
  })

  it.prop("plan mode never allows a call that is not read-only", [scenario], ([s]) => {
    const v = verdict(optionsOf({ ...s, mode: "plan" }), s, s.hook)
    const [tool, input] = s.call
    const readOnly = !tool.definition.touchesEnvironment || request(tool, input).invocation.traits.readOnly
    if (!readOnly) expect(v._tag).toBe("Deny")
  })
})
