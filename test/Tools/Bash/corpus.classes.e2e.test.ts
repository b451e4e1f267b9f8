/**
 * The hardening classes of the shell corpus (`test/Tools/Shell/corpus.ts`), end to end: each case goes through the
 * ToolRuntime with the full permission policy and a denying approver, inside a real git repository. Hostile cases
 * have no side effect (the working tree is exactly as prepared) and no outside content in any result; benign cases
 * run without asking and succeed.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../../src/Tool/Wire.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import type { BenignCommand, HostileCommand } from "../Shell/corpus.js"
import {
  acceptEditsBenign,
  acceptEditsHostile,
  allowBenign,
  allowHostile,
  allowRules,
  insideReads,
  optionBenign,
  optionHostile,
  outsideReads,
  plantedOptionHostile,
  secondEvaluationBenign,
  secondEvaluationHostile,
  wrapperBenign,
  wrapperHostile
} from "../Shell/corpus.js"
import { corpusSandbox, gitRepo, tempDir } from "./helpers.js"

const SECRET = "TOPSECRET"

/**
 * A git repository with what the classes need: `link` to a directory outside holding a secret, an empty directory,
 * a checksum list naming the outside file, an npm package whose scripts are harmless, and `pwn.sh`, the program a
 * `--script-shell` would run (it creates PWNED).
 */
const fixture = (withLink = true): { readonly repo: string; readonly outside: string } => {
  const repo = gitRepo()
  const outside = tempDir("bash-outside")
  fs.writeFileSync(path.join(outside, `${SECRET}.txt`), `${SECRET}-content\n`)
  fs.writeFileSync(path.join(outside, "data.json"), JSON.stringify({ secret: SECRET }))
  if (withLink) fs.symlinkSync(outside, path.join(repo, "link"))
  fs.mkdirSync(path.join(repo, "empty"))
  fs.writeFileSync(path.join(repo, "empty", ".keep"), "")
  const sum = childProcess.execFileSync("sha256sum", [path.join(outside, `${SECRET}.txt`)]).toString()
  fs.writeFileSync(path.join(repo, "list.sha"), sum)
  fs.writeFileSync(
    path.join(repo, "package.json"),
    JSON.stringify({ name: "fixture", version: "1.0.0", scripts: { test: "echo tested", build: "echo built" } })
  )
  fs.writeFileSync(path.join(repo, "pwn.sh"), "#!/bin/sh\ntouch PWNED\n", { mode: 0o755 })
  childProcess.execFileSync("git", ["config", "user.name", "Test"], { cwd: repo })
  return { repo, outside }
}

/** Every entry of the working tree, recursively (`.git` left out), to compare before and after. */
const tree = (root: string): ReadonlyArray<string> => {
  const entries: Array<string> = []
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === ".git" && dir === root) continue
      const full = path.join(dir, entry.name)
      entries.push(path.relative(root, full))
      if (entry.isDirectory() && !entry.isSymbolicLink()) walk(full)
    }
  }
  walk(root)
  return entries.sort()
}

const runtimeIn = (cwd: string, approver: Layer.Layer<Approver>, policy: RulePolicy.RulePolicyOptions) => {
  const workspace = Workspace.layer({ cwd })
  const tools = BashTool.layer({ killGrace: "500 millis", sandbox: corpusSandbox }).pipe(
    Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(tempDir("bash-classes-store"))))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), tools)),
    Layer.provide([
      RulePolicy.layer(policy).pipe(Layer.provide(workspace)),
      approver,
      ToolHooks.none,
      ResultStore.layer(tempDir("bash-classes-results"))
    ]),
    Layer.provide(NodeContext.layer)
  )
}

const uses = (commands: ReadonlyArray<string>): ReadonlyArray<ToolUseBlock> =>
  commands.map((command, i) => ({
    type: "tool_use",
    id: `toolu_${i}`,
    name: "Bash",
    input: { command, timeout: 20_000 }
  }))

/** Runs hostile commands one by one: none may run, change the tree, or show outside content. */
const expectNoneRun = (
  entries: ReadonlyArray<HostileCommand>,
  policy: RulePolicy.RulePolicyOptions,
  prepare?: (repo: string) => void
) => {
  const { repo, outside } = fixture()
  prepare?.(repo)
  const before = tree(repo)
  const outsideBefore = tree(outside)
  return Effect.gen(function*() {
    const ran: Array<string> = []
    for (const entry of entries) {
      const [outcome] = yield* ToolRuntime.execute(uses([entry.command]))
      if (outcome!.status !== "denied") ran.push(`${entry.command} -> ${outcome!.status}`)
      if (
        JSON.stringify(outcome!.result).includes(`${SECRET}-content`) ||
        JSON.stringify(outcome!.result).includes(`"${SECRET}"`)
      ) {
        ran.push(`${entry.command} -> showed outside content`)
      }
    }
    expect(ran).toEqual([])
    expect(tree(repo)).toEqual(before)
    expect(tree(outside)).toEqual(outsideBefore)
    expect(fs.existsSync(path.join(path.dirname(repo), "PWNED"))).toBe(false)
  }).pipe(Effect.provide(runtimeIn(repo, Approver.denyAll, policy)))
}

/**
 * Runs benign commands in order: none may ask, every one succeeds. `withLink: false` leaves the symlink out (a glob
 * such as `du -sh *` meeting a symlink to outside asks, even where the command would not follow it).
 */
const expectAllRun = (entries: ReadonlyArray<BenignCommand>, policy: RulePolicy.RulePolicyOptions, withLink = true) => {
  const { repo } = fixture(withLink)
  return Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const failed: Array<string> = []
    yield* Effect.gen(function*() {
      for (const entry of entries) {
        const [outcome] = yield* ToolRuntime.execute(uses([entry.command]))
        if (outcome!.status !== "success") {
          failed.push(`${entry.command} -> ${outcome!.status}: ${JSON.stringify(outcome!.result.content)}`)
        }
      }
    }).pipe(
      Effect.provide(runtimeIn(
        repo,
        Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked),
        policy
      ))
    )
    expect((yield* Ref.get(asked)).map((request) => JSON.stringify(request.input))).toEqual([])
    expect(failed).toEqual([])
  })
}

const defaultMode: RulePolicy.RulePolicyOptions = { mode: "default" }
const denyTouch: RulePolicy.RulePolicyOptions = { mode: "bypassPermissions", cliRules: { deny: ["Bash(touch:*)"] } }
const withAllowRules: RulePolicy.RulePolicyOptions = {
  mode: "default",
  cliRules: { allow: allowRules.map((rule) => `Bash(${rule})`) }
}
const acceptEdits: RulePolicy.RulePolicyOptions = { mode: "acceptEdits" }

describe("the hardening classes of the corpus, end to end", () => {
  it.live(
    `1. second evaluation: no hostile command (${secondEvaluationHostile.length}) runs`,
    () => expectNoneRun(secondEvaluationHostile, defaultMode),
    60_000
  )
  it.live(
    `1. second evaluation: every benign command (${secondEvaluationBenign.length}) runs without asking`,
    () => expectAllRun(secondEvaluationBenign, defaultMode),
    60_000
  )

  it.live(
    `2. options by positive list: no hostile command (${optionHostile.length}) runs`,
    () => expectNoneRun(optionHostile, defaultMode),
    60_000
  )
  it.live(
    `2. options by positive list: every benign command (${optionBenign.length}) runs without asking`,
    () => expectAllRun(optionBenign, defaultMode, false),
    60_000
  )
  it.live(
    `2. a glob meeting a file named like an option (${plantedOptionHostile.length}) does not run`,
    () =>
      Effect.forEach(plantedOptionHostile, (entry) =>
        expectNoneRun([entry], defaultMode, (repo) => {
          for (const file of entry.files) fs.writeFileSync(path.join(repo, file), "")
        })),
    60_000
  )

  it.live(
    "1 and 2 in plan and dontAsk modes: no hostile command runs either",
    () =>
      Effect.forEach(
        ["plan", "dontAsk"] as const,
        (mode) => expectNoneRun([...secondEvaluationHostile, ...optionHostile], { mode })
      ),
    120_000
  )

  it.live(
    `3. wrappers and interpreters: no hostile command (${wrapperHostile.length}) gets past \`Bash(touch:*)\`, even in bypassPermissions`,
    () => expectNoneRun(wrapperHostile, denyTouch),
    120_000
  )
  it.live(
    `3. wrappers and interpreters: every benign command (${wrapperBenign.length}) runs under the same deny rule`,
    () => expectAllRun(wrapperBenign, denyTouch),
    60_000
  )

  it.live(
    `4. allow rules: no dangerous form (${allowHostile.length}) is granted`,
    () => expectNoneRun(allowHostile, withAllowRules),
    60_000
  )
  it.live(
    `4. allow rules: every benign command (${allowBenign.length}) is allowed`,
    () => expectAllRun(allowBenign, withAllowRules),
    60_000
  )

  it.live(
    `5. reads stay inside: no outside read (${outsideReads.length}) runs, and no result shows outside content`,
    () => expectNoneRun(outsideReads, defaultMode),
    60_000
  )
  it.live(
    `5. reads stay inside: every inside read (${insideReads.length}) runs without asking`,
    () => expectAllRun(insideReads, defaultMode),
    60_000
  )

  it.live(
    `17.4 acceptEdits: every simple file command inside (${acceptEditsBenign.length}) runs without asking`,
    () => expectAllRun(acceptEditsBenign, acceptEdits),
    60_000
  )
  it.live(
    `17.4 acceptEdits: anything else (${acceptEditsHostile.length}) still asks, and a denying approver refuses it`,
    () => expectNoneRun(acceptEditsHostile, acceptEdits),
    60_000
  )
  it.live(
    "17.4 acceptEdits: outside acceptEdits the same file commands ask",
    () =>
      expectNoneRun(
        acceptEditsBenign.map((entry) => ({ command: entry.command, why: entry.note, source: "17.4" })),
        defaultMode
      ),
    60_000
  )
})
