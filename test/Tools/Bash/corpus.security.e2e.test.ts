/**
 * Issue 22's classes end to end: each command goes through the ToolRuntime with the full permission policy in
 * default mode and a denying approver, in a real git repository in a temp dir; a hostile one never runs (the marker
 * it would create, or the file it would overwrite, is checked), a benign one runs without asking.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
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
import { BashTool } from "../../../src/Tools/Bash.js"
import { corpusSandbox, gitRepo, tempDir } from "./helpers.js"

const runtimeIn = (
  cwd: string,
  policy: RulePolicy.RulePolicyOptions,
  asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>
) => {
  const workspace = Workspace.layer({ cwd })
  const tools = BashTool.layer({ killGrace: "500 millis", sandbox: corpusSandbox }).pipe(
    Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(tempDir("bash-sec-store"))))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), tools)),
    Layer.provide([
      RulePolicy.layer(policy).pipe(Layer.provide(workspace)),
      Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked),
      ToolHooks.none,
      ResultStore.layer(tempDir("bash-sec-results"))
    ]),
    Layer.provide(NodeContext.layer)
  )
}

/** Runs the commands one by one; the statuses and whether each was asked. */
const run = (
  cwd: string,
  commands: ReadonlyArray<string>,
  policy: RulePolicy.RulePolicyOptions = { mode: "default" }
) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const outcomes = yield* ToolRuntime.execute(
      commands.map((command, i) => ({ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command } }))
    ).pipe(Effect.provide(runtimeIn(cwd, policy, asked)))
    const askedFor = new Set((yield* Ref.get(asked)).map((request) => (request.input as { command: string }).command))
    return commands.map((command, i) => ({
      command,
      status: outcomes[i]!.status,
      asked: askedFor.has(command),
      text: JSON.stringify(outcomes[i]!.result.content)
    }))
  })

describe("git's repository configuration is untrusted input", () => {
  it.live(
    "a planted fsmonitor, pager, textconv or filter never runs; a clean repository's git runs",
    () =>
      Effect.gen(function*() {
        const plantings = [
          "[core]\n\tfsmonitor = touch PWNED",
          "[core]\n\tpager = touch PWNED",
          "[diff]\n\texternal = touch PWNED",
          "[filter \"x\"]\n\tclean = touch PWNED"
        ]
        for (const planting of plantings) {
          const repo = gitRepo()
          fs.writeFileSync(path.join(repo, ".gitattributes"), "* filter=x diff=x\n")
          fs.appendFileSync(path.join(repo, ".git", "config"), `\n${planting}\n`)
          fs.appendFileSync(path.join(repo, "README.md"), "changed\n")
          const results = yield* run(repo, ["git status", "git diff", "git log -p -1"])
          expect(results.map((result) => [result.command, result.status]), planting).toEqual([
            ["git status", "denied"],
            ["git diff", "denied"],
            ["git log -p -1", "denied"]
          ])
          expect(fs.existsSync(path.join(repo, "PWNED")), planting).toBe(false)
        }
        const clean = gitRepo()
        const results = yield* run(clean, [
          "git status",
          "git log -p -1",
          "LANG=C git log -1",
          "LC_ALL=C.UTF-8 git status"
        ])
        expect(results.map((result) => [result.status, result.asked])).toEqual([
          ["success", false],
          ["success", false],
          ["success", false],
          ["success", false]
        ])
      }),
    60_000
  )
})

describe("a glob is many operands", () => {
  it.live("`uniq in*` asks, and the second match is not overwritten", () =>
    Effect.gen(function*() {
      const repo = gitRepo()
      fs.writeFileSync(path.join(repo, "in1"), "a\na\n")
      fs.writeFileSync(path.join(repo, "in2"), "precious\n")
      const results = yield* run(repo, ["uniq in*", "uniq in1", "xxd in{1,2}"])
      expect(results.map((result) => [result.status, result.asked])).toEqual([
        ["denied", true],
        ["success", false],
        ["denied", true]
      ])
      expect(fs.readFileSync(path.join(repo, "in2"), "utf8")).toBe("precious\n")
    }), 60_000)
})

describe("Read deny rules and listings (Claude Code's behaviour)", () => {
  it.live(
    "`ls` runs while a Read deny rule exists; reading the denied file is denied, not asked",
    () =>
      Effect.gen(function*() {
        const repo = gitRepo()
        fs.writeFileSync(path.join(repo, ".env"), "SECRET=hunter2\n")
        const results = yield* run(repo, ["ls", "ls -la", "pwd && ls -1", "cat .env", "ls < .env", "head README.md"], {
          mode: "default",
          cliRules: { deny: ["Read(./.env)"] }
        })
        expect(results.map((result) => [result.command, result.status])).toEqual([
          ["ls", "success"],
          ["ls -la", "success"],
          ["pwd && ls -1", "success"],
          ["cat .env", "denied"],
          ["ls < .env", "denied"],
          ["head README.md", "denied"]
        ])
        expect(results.slice(0, 3).every((result) => !result.asked)).toBe(true)
        expect(results.find((result) => result.command === "cat .env")!.asked).toBe(false)
        for (const result of results) expect(result.text).not.toContain("hunter2")
      }),
    60_000
  )
})
