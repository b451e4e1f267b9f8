/**
 * The "Done when": every hostile command of the corpus goes through the ToolRuntime with the full
 * permission policy in default mode and a denying approver, inside a fresh git repository, and never runs (the
 * PWNED marker it would create is checked, not only the decision); every benign command runs without asking and
 * succeeds.
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
import type { ToolUseBlock } from "../../../src/Tool/Wire.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import { benign, hostile } from "../Shell/corpus.js"
import { corpusSandbox, gitRepo, tempDir } from "./helpers.js"

const runtimeIn = (
  cwd: string,
  approver: Layer.Layer<Approver>,
  policy: RulePolicy.RulePolicyOptions = { mode: "default" }
) => {
  const workspace = Workspace.layer({ cwd })
  const tools = BashTool.layer({ killGrace: "500 millis", sandbox: corpusSandbox }).pipe(
    Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(tempDir("bash-e2e-store"))))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), tools)),
    Layer.provide([
      RulePolicy.layer(policy).pipe(Layer.provide(workspace)),
      approver,
      ToolHooks.none,
      ResultStore.layer(tempDir("bash-e2e-results"))
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

describe("Read deny rules and Bash", () => {
  it.live("while a Read deny rule exists, read-only commands ask instead of running: `cat .env` cannot leak it", () => {
    const repo = gitRepo()
    fs.writeFileSync(path.join(repo, ".env"), "SECRET=hunter2\n")
    return Effect.gen(function*() {
      const outcomes = yield* ToolRuntime.execute(uses(["cat .env", "grep -r SECRET .", "git status --short"]))
      expect(outcomes.map((outcome) => outcome.status)).toEqual(["denied", "denied", "denied"])
      for (const outcome of outcomes) expect(JSON.stringify(outcome.result)).not.toContain("hunter2")
    }).pipe(
      Effect.provide(runtimeIn(repo, Approver.denyAll, { mode: "default", cliRules: { deny: ["Read(./.env)"] } }))
    )
  })
})

describe("the shell corpus, end to end", () => {
  it.live(`no hostile command (${hostile.length}) runs in default mode with a denying approver`, () => {
    const repo = gitRepo()
    return Effect.gen(function*() {
      const outcomes = yield* ToolRuntime.execute(uses(hostile.map((entry) => entry.command)), { maxConcurrency: 4 })
      const notDenied = outcomes.flatMap((
        outcome,
        i
      ) => (outcome.status === "denied" ? [] : [`${hostile[i]!.command} -> ${outcome.status}`]))
      expect(notDenied).toEqual([])
      expect(fs.existsSync(path.join(repo, "PWNED"))).toBe(false)
      // Nothing at all was written: the working tree is as the commit left it.
      expect(fs.readdirSync(repo).sort()).toEqual([".git", "README.md"])
    }).pipe(Effect.provide(runtimeIn(repo, Approver.denyAll)))
  }, 60_000)

  it.live(`every benign command (${benign.length}) runs without asking, and succeeds`, () => {
    const repo = gitRepo()
    return Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcomes = yield* ToolRuntime.execute(uses(benign.map((entry) => entry.command)), { maxConcurrency: 4 })
        .pipe(
          Effect.provide(
            runtimeIn(repo, Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked))
          )
        )
      expect((yield* Ref.get(asked)).map((request) => JSON.stringify(request.input))).toEqual([])
      const failed = outcomes.flatMap((outcome, i) =>
        outcome.status === "success"
          ? []
          : [`${benign[i]!.command} -> ${outcome.status}: ${JSON.stringify(outcome.result.content)}`]
      )
      expect(failed).toEqual([])
      expect(
        outcomes.every((outcome) => outcome.decision?._tag === "Allow" && outcome.decision.reason._tag === "ReadOnly")
      ).toBe(true)
    })
  }, 60_000)
})
