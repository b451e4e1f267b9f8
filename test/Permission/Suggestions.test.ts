/**
 * The rule a prompt suggests is the rule that satisfies the same call next time: for any call that asks with a
 * suggestion, adding that suggestion (as "allow for the session" does) makes the same call allowed, unless a deny
 * rule or a non-overridable ask applies. Real built-in tools (Read, Write, Glob, Grep,
 * Bash) on a real directory tree, plus custom tools that ask with suggestions.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, ManagedRuntime, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import type { PolicyRequest, PolicyVerdict } from "../../src/Permission/PermissionPolicy.js"
import type { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { loadSettings } from "../../src/Settings/Settings.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import { builtinLayer, builtinTools } from "../../src/Tools/index.js"

// -----------------------------------------------------------------------------
// a real tree
// -----------------------------------------------------------------------------

const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-suggest-")))
const project = path.join(base, "project")
const home = path.join(base, "home")
const outside = path.join(base, "outside")
for (
  const file of [
    "project/src/a.ts",
    "project/README.md",
    "outside/notes.txt",
    "outside/deep/er/x.md",
    "home/.zshrc",
    "home/notes/n.md"
  ]
) {
  fs.mkdirSync(path.dirname(path.join(base, file)), { recursive: true })
  fs.writeFileSync(path.join(base, file), "x\n")
}
fs.mkdirSync(path.join(project, ".git"))
fs.symlinkSync(outside, path.join(project, "linked-outside"))

// -----------------------------------------------------------------------------
// custom tools that ask with suggestions
// -----------------------------------------------------------------------------

/** Asks, overridably, suggesting `Deploy(<target>)`. */
const Deploy = Tool.make("Deploy", { description: "Deploys.", input: Schema.Struct({ target: Schema.String }) })
const DeployLive = Deploy.service({
  checkPermissions: ({ target }) => Effect.succeed(PermissionCheck.ask(`deploy to ${target}?`, [`Deploy(${target})`])),
  matchesRule: (content, { target }) => content === target,
  call: () => Effect.succeed("ok")
})

/** Asks, not overridably, though it suggests a rule (`Wipe(<disk>)`): no rule may answer it. */
const Wipe = Tool.make("Wipe", { description: "Wipes a disk.", input: Schema.Struct({ disk: Schema.String }) })
const WipeLive = Wipe.service({
  checkPermissions: ({ disk }) =>
    Effect.succeed(PermissionCheck.ask(`wipe ${disk}?`, [`Wipe(${disk})`], { overridable: false })),
  matchesRule: (content, { disk }) => content === disk,
  call: () => Effect.succeed("ok")
})

/** No opinion, no matcher: the policy asks and suggests the bare tool name. */
const Notify = Tool.make("Notify", { description: "Notifies.", input: Schema.Struct({ text: Schema.String }) })
const NotifyLive = Notify.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  call: () => Effect.succeed("ok")
})

const tools = [...builtinTools, Deploy, Wipe, Notify] as const
const workspace = Workspace.layer({ cwd: project, home })
const services = ToolRegistry.layer(tools).pipe(
  Layer.provide(
    Layer.mergeAll(
      builtinLayer(),
      Layer.succeed(Deploy, DeployLive),
      Layer.succeed(Wipe, WipeLive),
      Layer.succeed(Notify, NotifyLive)
    )
  ),
  Layer.provide(ResultStore.layerMemory()),
  Layer.provideMerge(workspace),
  Layer.provideMerge(NodeContext.layer)
)
const runtime = ManagedRuntime.make(services)
afterAll(() => runtime.dispose())

// -----------------------------------------------------------------------------
// generators: each call carries what the oracle needs to know about it, by construction
// -----------------------------------------------------------------------------

interface Call {
  readonly tool: string
  readonly input: Record<string, unknown>
  /** The tool's ask cannot be answered by rules. */
  readonly strict: boolean
}

// Writes the safety checks protect are left out: their ask suggests no rule, so they never reach the property.
const call = (tool: string, input: Record<string, unknown>, flags: { readonly strict?: boolean } = {}): Call => ({
  tool,
  input,
  strict: flags.strict ?? false
})

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,7}$/)

const outsidePath = fc.constantFrom(
  path.join(outside, "notes.txt"),
  path.join(outside, "deep/er/x.md"),
  path.join(outside, "new.txt"),
  path.join(home, ".zshrc"),
  path.join(home, "notes/n.md"),
  path.join(project, "linked-outside/notes.txt"),
  path.join(base, "sibling.txt")
)
const insidePath = fc.oneof(fc.constantFrom("src/a.ts", "README.md", "src/new.ts"), name.map((n) => `src/${n}.ts`))

const bashCommand = fc.oneof(
  fc.constantFrom(
    "make",
    "make test",
    "npm test",
    "npm run build",
    "git commit -m wip",
    "git push origin main",
    "mkdir -p build/out",
    "touch notes.md",
    "rm -rf dist",
    "python3 script.py",
    "cargo build --release",
    "docker compose up -d",
    "node scripts/gen.js"
  ),
  fc.tuple(fc.constantFrom("make", "npm run", "cargo", "pnpm", "go"), name).map(([command, arg]) => `${command} ${arg}`)
)

const calls: fc.Arbitrary<Call> = fc.oneof(
  { weight: 3, arbitrary: outsidePath.map((file) => call("Read", { file_path: file })) },
  {
    weight: 2,
    arbitrary: fc.oneof(outsidePath, insidePath).map((file) => call("Write", { file_path: file, content: "x\n" }))
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(outside, path.join(outside, "deep"), home).map((dir) =>
      call("Glob", { pattern: "**/*.md", path: dir })
    )
  },
  { weight: 1, arbitrary: fc.constantFrom(outside, home).map((dir) => call("Grep", { pattern: "x", path: dir })) },
  { weight: 3, arbitrary: bashCommand.map((command) => call("Bash", { command })) },
  { weight: 2, arbitrary: name.map((target) => call("Deploy", { target })) },
  { weight: 1, arbitrary: name.map((disk) => call("Wipe", { disk }, { strict: true })) },
  { weight: 1, arbitrary: name.map((text) => call("Notify", { text })) }
)

/** Restrictive rules that, by construction, apply to no generated call (other tools, places nothing lives in). */
const inertRestrictive = fc.subarray([
  "Bash(shutdown:*)",
  "Read(//nonexistent-place/**)",
  "Edit(//nonexistent-place/**)",
  "Deploy(never-generated-0)",
  "mcp__other"
])

const scenario = fc.record({
  call: calls,
  mode: fc.constantFrom("default", "default", "default", "acceptEdits", "plan"),
  deny: inertRestrictive,
  ask: inertRestrictive,
  /** Also deny, or put an ask rule on, exactly what the prompt suggests: then the deny or the ask must win. */
  restrictSuggestion: fc.constantFrom<"none" | "deny" | "ask">(
    "none",
    "none",
    "none",
    "none",
    "none",
    "none",
    "none",
    "deny",
    "ask"
  )
})

// -----------------------------------------------------------------------------
// the property
// -----------------------------------------------------------------------------

const evaluate = (policy: PermissionPolicy["Type"], c: Call) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const tool = Option.getOrThrow(registry.lookup(c.tool))
    const context: Tool.CallContext = {
      toolUseId: "toolu_1",
      toolName: c.tool,
      progress: () => Effect.void,
      isReadDenied: () => false
    }
    const invocation = tool.service.plan(c.input)
    const request: PolicyRequest = {
      definition: tool.definition,
      invocation,
      toolCheck: yield* invocation.checkPermissions(context),
      hook: undefined,
      context
    }
    return yield* policy.evaluate(request)
  })

const inRuntime = <A, E>(effect: Effect.Effect<A, E, Layer.Layer.Success<typeof services>>) =>
  Effect.promise(() => runtime.runPromise(effect))

let runs = 0
let reached = 0
const reachedBy = { allow: 0, deny: 0, ask: 0 }

describe("suggested rules", () => {
  it.effect.prop(
    "adding the rule a prompt suggests allows the same call, unless a deny or a non-overridable ask applies",
    [scenario],
    ([s]) =>
      Effect.gen(function*() {
        runs++
        const options = { cliRules: { deny: s.deny, ask: s.ask }, mode: s.mode as "default" }
        const first = yield* inRuntime(Effect.flatMap(RulePolicy.make(options), (policy) => evaluate(policy, s.call)))
        if (first._tag !== "Ask" || first.suggestions.length === 0) return
        reached++
        reachedBy[s.restrictSuggestion === "none" ? (s.call.strict ? "ask" : "allow") : s.restrictSuggestion]++
        const suggestions = first.suggestions
        const verdict: PolicyVerdict = yield* inRuntime(Effect.gen(function*() {
          const restricted = s.restrictSuggestion === "none"
            ? options.cliRules
            : {
              ...options.cliRules,
              [s.restrictSuggestion]: [...options.cliRules[s.restrictSuggestion], ...suggestions]
            }
          const policy = yield* RulePolicy.make({ ...options, cliRules: restricted })
          yield* policy.remember(suggestions, "session")
          return yield* evaluate(policy, s.call)
        }))
        // The oracle, in plain words: a deny of the suggested rule denies; an ask rule on it, or a non-overridable ask,
        // still asks; otherwise the saved suggestion allows the call. (The other generated deny and ask rules apply to no
        // generated call, by construction.)
        if (s.restrictSuggestion === "deny") expect(verdict._tag).toBe("Deny")
        else if (s.restrictSuggestion === "ask" || s.call.strict) expect(verdict._tag).toBe("Ask")
        else expect({ verdict: verdict._tag, suggestions }).toEqual({ verdict: "Allow", suggestions })
      }),
    { fastCheck: { numRuns: 300 }, timeout: 60_000 }
  )

  it.effect("a suggestion saved with \"allow always\" allows the same call in the next run, trusted or not (the person's record)", () =>
    inRuntime(Effect.gen(function*() {
      const read = call("Read", { file_path: path.join(outside, "notes.txt") })
      const first = yield* Effect.flatMap(RulePolicy.make({}), (policy) => evaluate(policy, read))
      expect(first._tag).toBe("Ask")
      if (first._tag !== "Ask") return
      yield* Effect.flatMap(RulePolicy.make({}), (policy) => policy.remember(first.suggestions, "always"))
      const saved = JSON.parse(fs.readFileSync(path.join(project, ".claude/settings.local.json"), "utf8"))
      expect(saved.permissions.allow).toEqual(first.suggestions)
      const nextRun = (trustProject: boolean) =>
        Effect.gen(function*() {
          const settings = yield* loadSettings({ claudeSettings: true, cwd: project, home, trustProject })
          return (yield* Effect.flatMap(RulePolicy.make({ settings }), (policy) => evaluate(policy, read)))._tag
        })
      expect(yield* nextRun(true)).toBe("Allow")
      // Untrusted too: the person's own record lists the rule as written for them (Settings/Grants)...
      expect(yield* nextRun(false)).toBe("Allow")
      // ...and without that record the local settings file's allow rules wait for trust.
      fs.rmSync(path.join(home, ".config"), { recursive: true })
      expect(yield* nextRun(false)).toBe("Ask")
      fs.rmSync(path.join(project, ".claude"), { recursive: true })
    })))

  // About 83% of generated runs reach it. With 300 runs a share of 83% has a standard deviation of about 2.2 points,
  // so an 80% floor failed about one run in twelve; 70% is six deviations away and still fails a generator that
  // stops reaching the case.
  it("the generator reaches a call that asks with a suggestion in at least 70% of runs", () => {
    expect(runs).toBeGreaterThan(0)
    const share = reached / runs
    console.log(
      `suggested-rule property: ${reached}/${runs} runs (${
        (share * 100).toFixed(1)
      }%) asked with a suggestion; expected allow ${reachedBy.allow}, deny ${reachedBy.deny}, ask ${reachedBy.ask}`
    )
    expect(share).toBeGreaterThanOrEqual(0.7)
    // Every branch of the oracle is reached.
    expect(Math.min(reachedBy.allow, reachedBy.deny, reachedBy.ask)).toBeGreaterThan(0)
  })
})
