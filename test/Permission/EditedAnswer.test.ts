/**
 * An "edit" answer is a new input (issue 22, item 3): whoever gives it (the terminal, serve, a classifier), the policy
 * decides the edited input again — deny rules, ask rules, safety checks, plan mode, the tool's own check — and the
 * person's allow counts only as an allow for exactly that input. What still asks is asked again, with the edited
 * input; what is denied is denied without running.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { BashTool } from "../../src/Tools/Bash.js"
import * as Write from "../../src/Tools/Write.js"
import { tempDir } from "../support/index.js"

/** The person's answers in order: the first is an edit; later questions get what follows (deny when none is left). */
const run = (
  call: ToolUseBlock,
  answers: ReadonlyArray<ApprovalAnswer>,
  policy: RulePolicy.RulePolicyOptions = { mode: "default" }
) =>
  Effect.gen(function*() {
    const cwd = tempDir("edited-answer")
    fs.mkdirSync(path.join(cwd, ".git"))
    fs.writeFileSync(path.join(cwd, ".git", "config"), "[core]\n")
    const workspace = Workspace.layer({ cwd })
    const store = ResultStore.layer(tempDir("edited-answer-store"))
    const tools = Layer.mergeAll(Write.layer, BashTool.layer({ killGrace: "500 millis" })).pipe(
      Layer.provide(Layer.mergeAll(workspace, store, FileState.layer()))
    )
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const [outcome] = yield* ToolRuntime.execute([call]).pipe(
      Effect.provide(ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(ToolRegistry.layer([Write.Write, BashTool]), tools)),
        Layer.provide([
          RulePolicy.layer(policy).pipe(Layer.provide(workspace)),
          Approver.scripted(answers, asked),
          ToolHooks.none,
          store
        ]),
        Layer.provide(NodeContext.layer)
      ))
    )
    const questions = (yield* Ref.get(asked)).map((request) => request.input)
    return { cwd, outcome: outcome!, questions }
  })

const write = (file: string, content: string): ToolUseBlock => ({
  type: "tool_use",
  id: "toolu_write",
  name: "Write",
  input: { file_path: file, content }
})
const edited = (input: unknown) => ApprovalAnswer.Edit({ input })

describe("an edited answer is decided again by the policy", () => {
  it.effect("an edit into a file a safety check protects asks again (with the edited input), and the refusal holds", () =>
    Effect.gen(function*() {
      const { cwd, outcome, questions } = yield* run(write("notes.txt", "hello\n"), [
        edited({ file_path: ".git/hooks/pre-commit", content: "touch PWNED\n" })
      ])
      expect(outcome.status).toBe("denied")
      expect(questions.map((input) => (input as { readonly content: string }).content)).toEqual([
        "hello\n",
        "touch PWNED\n"
      ])
      expect(fs.existsSync(path.join(cwd, ".git", "hooks"))).toBe(false)
      expect(fs.existsSync(path.join(cwd, "notes.txt"))).toBe(false)
    }))

  it.effect("an edit into a path a deny rule covers is denied by that rule, without asking again", () =>
    Effect.gen(function*() {
      const { cwd, outcome, questions } = yield* run(
        write("notes.txt", "hello\n"),
        [edited({ file_path: "secret/key.txt", content: "x\n" }), ApprovalAnswer.AllowOnce()],
        { mode: "default", cliRules: { deny: ["Edit(./secret/**)"] } }
      )
      expect(outcome.status).toBe("denied")
      expect(JSON.stringify(outcome.result)).toContain("Edit(./secret/**)")
      expect(questions).toHaveLength(1)
      expect(fs.existsSync(path.join(cwd, "secret"))).toBe(false)
    }))

  it.effect("in plan mode, an edit of a read-only command into one that writes is denied", () =>
    Effect.gen(function*() {
      const { cwd, outcome, questions } = yield* run(
        { type: "tool_use", id: "toolu_bash", name: "Bash", input: { command: "cat /etc/hostname" } },
        [edited({ command: "touch PWNED" }), ApprovalAnswer.AllowOnce()],
        { mode: "plan" }
      )
      expect(outcome.status).toBe("denied")
      expect(questions).toHaveLength(1)
      expect(fs.existsSync(path.join(cwd, "PWNED"))).toBe(false)
    }))

  it.effect("an edit into a command an ask rule covers asks again", () =>
    Effect.gen(function*() {
      const { cwd, outcome, questions } = yield* run(
        { type: "tool_use", id: "toolu_bash", name: "Bash", input: { command: "mkdir a" } },
        [edited({ command: "touch PWNED" })],
        { mode: "default", cliRules: { ask: ["Bash(touch:*)"] } }
      )
      expect(outcome.status).toBe("denied")
      expect(questions).toHaveLength(2)
      expect(fs.existsSync(path.join(cwd, "PWNED"))).toBe(false)
    }))

  it.effect("an ordinary edit (what no rule allows) counts as the person's allow for that input: it runs, asked once", () =>
    Effect.gen(function*() {
      const { cwd, outcome, questions } = yield* run(write("notes.txt", "hello\n"), [
        edited({ file_path: "notes.txt", content: "edited\n" })
      ])
      expect(outcome.status).toBe("success")
      expect(outcome.decision).toMatchObject({ _tag: "Allow", reason: { _tag: "User" } })
      expect(questions).toHaveLength(1)
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("edited\n")
    }))
})
