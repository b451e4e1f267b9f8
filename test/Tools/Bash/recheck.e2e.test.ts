/**
 * Decisions re-checked when the call runs (issue 22, item 2), end to end in a real git repository: a call planned
 * when the turn arrived, whose plan read the file system (a symlink's target, a `cd` target, a glob's matches, the
 * real path a rule covers), is planned again once an earlier call of the same turn may have written; when the new
 * plan needs another decision it is decided again, asking the person if it now asks. The person here allows only the
 * commands that prepare the trap (`ln`, `touch`, `mkdir`) and refuses everything else.
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
import { FileState } from "../../../src/Session/FileState.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../../src/Tool/Wire.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import * as ReadTool from "../../../src/Tools/Read.js"
import { gitRepo, tempDir } from "./helpers.js"

const SECRET = "RECHECK-SECRET"

const fixture = () => {
  const repo = gitRepo()
  const outside = tempDir("recheck-outside")
  fs.writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`)
  fs.mkdirSync(path.join(repo, "src"))
  fs.writeFileSync(path.join(repo, "src", "a.txt"), "inside\n")
  return { repo, outside }
}

const runtimeIn = (
  cwd: string,
  asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>,
  policy: RulePolicy.RulePolicyOptions
) => {
  const workspace = Workspace.layer({ cwd })
  const store = ResultStore.layer(tempDir("recheck-store"))
  const tools = Layer.mergeAll(BashTool.layer({ killGrace: "500 millis" }), ReadTool.layer).pipe(
    Layer.provide(Layer.mergeAll(workspace, store, FileState.layer()))
  )
  // The person allows what prepares the world, and refuses anything else.
  const approver = Approver.scripted((request) => {
    const command = (request.input as { readonly command?: unknown }).command
    return Effect.succeed(
      typeof command === "string" && /^(ln|touch|mkdir) /.test(command)
        ? ApprovalAnswer.AllowOnce()
        : ApprovalAnswer.Deny({ cancelRun: false })
    )
  }, asked)
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool, ReadTool.Read]), tools)),
    Layer.provide([RulePolicy.layer(policy).pipe(Layer.provide(workspace)), approver, ToolHooks.none, store]),
    Layer.provide(NodeContext.layer)
  )
}

const bash = (id: string, command: string): ToolUseBlock => ({
  type: "tool_use",
  id,
  name: "Bash",
  input: { command, timeout: 20_000 }
})

/** Runs one turn; returns its outcomes and the commands the person was asked about. */
const turn = (
  cwd: string,
  uses: ReadonlyArray<ToolUseBlock>,
  policy: RulePolicy.RulePolicyOptions = { mode: "default" }
) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const outcomes = yield* ToolRuntime.execute(uses).pipe(Effect.provide(runtimeIn(cwd, asked, policy)))
    const questions = (yield* Ref.get(asked)).map((request) => request.toolUseId)
    return { outcomes, questions }
  })

const shows = (outcome: { readonly result: unknown }, text: string) => JSON.stringify(outcome.result).includes(text)

describe("a call planned before an earlier call wrote is planned and decided again", () => {
  it.live(
    "a symlink made earlier in the turn: `cat l` is re-planned, reads outside, asks, and is refused",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        const { outcomes, questions } = yield* turn(repo, [
          bash("toolu_ln", `ln -s ${path.join(outside, "secret.txt")} l`),
          bash("toolu_cat", "cat l")
        ])
        expect(outcomes.map((o) => o.status)).toEqual(["success", "denied"])
        expect(questions).toEqual(["toolu_ln", "toolu_cat"])
        expect(shows(outcomes[1]!, SECRET)).toBe(false)
      }),
    60_000
  )

  it.live(
    "without the earlier write, the same `cat` of a file inside runs without asking (no benign case asks)",
    () =>
      Effect.gen(function*() {
        const { repo } = fixture()
        const { outcomes, questions } = yield* turn(repo, [
          bash("toolu_ln", "ln -s src/a.txt l"),
          bash("toolu_cat", "cat l")
        ])
        expect(outcomes.map((o) => o.status)).toEqual(["success", "success"])
        expect(questions).toEqual(["toolu_ln"])
        expect(shows(outcomes[1]!, "inside")).toBe(true)
      }),
    60_000
  )

  it.live(
    "a `cd` target that an earlier call turned into a link to outside: re-planned, asks, refused",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        const { outcomes, questions } = yield* turn(repo, [
          bash("toolu_ln", `ln -s ${outside} d`),
          bash("toolu_cd", "cd d && cat secret.txt")
        ])
        expect(outcomes.map((o) => o.status)).toEqual(["success", "denied"])
        expect(questions).toEqual(["toolu_ln", "toolu_cd"])
        expect(shows(outcomes[1]!, SECRET)).toBe(false)
      }),
    60_000
  )

  it.live(
    "a glob proof (no match starts with `-`) broken by an earlier call: `wc *` is re-planned and asks",
    () =>
      Effect.gen(function*() {
        const { repo } = fixture()
        fs.rmSync(path.join(repo, "src"), { recursive: true })
        const { outcomes, questions } = yield* turn(repo, [
          bash("toolu_touch", "touch ./--files0-from=README.md"),
          bash("toolu_wc", "wc *")
        ])
        expect(outcomes.map((o) => o.status)).toEqual(["success", "denied"])
        expect(questions).toEqual(["toolu_touch", "toolu_wc"])
      }),
    60_000
  )

  it.live(
    "the real path an allow rule covers: Read(./src/**) does not grant src/link made outside earlier",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        const { outcomes, questions } = yield* turn(repo, [
          bash("toolu_ln", `ln -s ${path.join(outside, "secret.txt")} src/link`),
          { type: "tool_use", id: "toolu_read", name: "Read", input: { file_path: path.join(repo, "src", "link") } }
        ], { mode: "default", cliRules: { allow: ["Read(./src/**)"] } })
        expect(outcomes[0]!.status).toBe("success")
        expect(outcomes[1]!.status).not.toBe("success")
        expect(questions).toEqual(["toolu_ln", "toolu_read"])
        expect(shows(outcomes[1]!, SECRET)).toBe(false)
      }),
    60_000
  )
})
