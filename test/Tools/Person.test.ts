import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PassThrough } from "node:stream"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import * as TerminalApprover from "../../src/Permission/TerminalApprover.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { testRuntime } from "../../src/testing/index.js"
import type { QuestionRequest } from "../../src/Tool/Question.js"
import { AskUserQuestion, layer as AskLive } from "../../src/Tools/AskUserQuestion.js"
import * as FileTools from "../../src/Tools/FileTools.js"
import { EnterPlanMode, ExitPlanMode, layer as PlanLive } from "../../src/Tools/PlanMode.js"
import { tempDir } from "../support/index.js"

const run = (name: string, input: unknown, id = `toolu_${name}_${Math.random().toString(36).slice(2)}`) =>
  Effect.flatMap(ToolRuntime, (rt) => rt.executeOne({ type: "tool_use", id, name, input }))
const content = (o: { result: { content: unknown } }) => String(o.result.content)

const questions = [{
  question: "Which database?",
  header: "Database",
  options: [{ label: "Postgres", description: "relational" }, { label: "SQLite", description: "a file" }],
  multiSelect: false
}, {
  question: "Which extras?",
  header: "Extras",
  options: [{ label: "Auth", description: "log in" }, { label: "Cache", description: "fast" }, {
    label: "Queue",
    description: "jobs"
  }],
  multiSelect: true
}]

describe("AskUserQuestion", () => {
  it.effect("asks the person through the Approver and returns the answers", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<QuestionRequest>>([])
      const approver = Approver.answering(
        (request) => Effect.succeed({ _tag: "Answered", answers: { [request.questions[0]!.question]: "SQLite" } }),
        { asked }
      )
      const outcome = yield* run("AskUserQuestion", { questions }).pipe(
        Effect.provide(testRuntime([AskUserQuestion], AskLive, approver))
      )
      expect(outcome.status).toBe("success")
      expect(content(outcome)).toBe(
        "User has answered your questions: \"Which database?\"=\"SQLite\". You can now continue with the user's " +
          "answers in mind."
      )
      expect((yield* Ref.get(asked)).map((r) => r.questions)).toEqual([questions])
    }))

  for (const [name, approver] of [["allowAll", Approver.allowAll], ["denyAll", Approver.denyAll]] as const) {
    it.effect(`without a person (${name}) ends at once with a clear result`, () =>
      Effect.gen(function*() {
        const outcome = yield* run("AskUserQuestion", { questions })
        expect(outcome.status).toBe("success")
        expect(content(outcome)).toContain("No one is available to answer questions")
      }).pipe(Effect.provide(testRuntime([AskUserQuestion], AskLive, approver))))
  }

  it.effect("rejects out-of-range lists (options 2..4, questions 1..4) and duplicate labels", () =>
    Effect.gen(function*() {
      const one = yield* run("AskUserQuestion", {
        questions: [{ ...questions[0], options: [questions[0]!.options[0]] }]
      })
      expect(one.status).toBe("error")
      expect((yield* run("AskUserQuestion", { questions: [] })).status).toBe("error")
      const dup = yield* run("AskUserQuestion", {
        questions: [{ ...questions[0], options: [questions[0]!.options[0], questions[0]!.options[0]] }]
      })
      expect(content(dup)).toContain("Option labels must be unique")
    }).pipe(Effect.provide(testRuntime([AskUserQuestion], AskLive))))

  it.effect("the terminal approver asks each question: a number, several numbers, or the person's own words", () =>
    Effect.scoped(Effect.gen(function*() {
      const input = new PassThrough()
      const output = new PassThrough()
      let shown = ""
      output.on("data", (chunk) => (shown += String(chunk)))
      const approver = yield* TerminalApprover.make(input, output)
      input.write("7\n2\n1,3\n")
      expect(yield* approver.answer!({ toolUseId: "t", questions })).toEqual({
        _tag: "Answered",
        answers: { "Which database?": "SQLite", "Which extras?": "Auth, Queue" }
      })
      expect(shown).toContain("[Database] Which database?")
      expect(shown).toContain("Choose between 1 and 2.")
      input.end("MySQL, please\n")
      expect(yield* approver.answer!({ toolUseId: "u", questions: [questions[0]!] })).toEqual({
        _tag: "Answered",
        answers: { "Which database?": "MySQL, please" }
      })
      const closed = yield* approver.answer!({ toolUseId: "v", questions: [questions[0]!] })
      expect(closed._tag).toBe("Declined")
    })))
})

describe("EnterPlanMode / ExitPlanMode", () => {
  const runtime = (cwd: string, approver: Layer.Layer<Approver>, mode: "default" | "plan" | "dontAsk" = "default") => {
    const tools = [...FileTools.tools, EnterPlanMode, ExitPlanMode] as const
    const live = Layer.merge(FileTools.layer.pipe(Layer.provide(FileState.layer())), PlanLive)
    return ToolRuntime.layer.pipe(
      Layer.provide(Layer.provide(ToolRegistry.layer(tools), live)),
      Layer.provide([RulePolicy.layer({ mode }), approver, ToolHooks.none, ResultStore.layerMemory()]),
      Layer.provide(Workspace.layer({ cwd })),
      Layer.provide(NodeContext.layer)
    )
  }
  const write = (cwd: string) => run("Write", { file_path: path.join(cwd, "a.txt"), content: "x" })

  it.effect("plan mode denies writes; an approved plan leaves it (the mode before is restored)", () => {
    const cwd = tempDir("plan-")
    return Effect.gen(function*() {
      expect((yield* write(cwd)).status).toBe("success")
      const entered = yield* run("EnterPlanMode", {})
      expect(content(entered)).toContain("Entered plan mode")
      const refused = yield* write(cwd)
      expect(refused.status).toBe("denied")
      expect(content(refused)).toContain("plan mode")
      const exit = yield* run("ExitPlanMode", { plan: "1. write a.txt" })
      expect(exit.status).toBe("success")
      expect(content(exit)).toContain("User has approved your plan")
      expect((yield* write(cwd)).status).toBe("success")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("x")
      const notInPlan = yield* run("ExitPlanMode", { plan: "again" })
      expect(content(notInPlan)).toContain("You are not in plan mode")
    }).pipe(Effect.provide(runtime(cwd, Approver.scripted(() => Effect.succeed(ApprovalAnswer.AllowOnce())))))
  })

  it.effect("a refused plan keeps plan mode, and the model is told why; deny-all (no person) refuses", () => {
    const cwd = tempDir("plan-")
    return Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const refusing = Approver.scripted(
        [ApprovalAnswer.Deny({ message: "Add tests to step 2", cancelRun: false })],
        asked
      )
      yield* Effect.gen(function*() {
        const exit = yield* run("ExitPlanMode", { plan: "1. change it" })
        expect(exit.status).toBe("denied")
        expect(content(exit)).toContain("Add tests to step 2")
        expect((yield* write(cwd)).status).toBe("denied")
        const [request] = yield* Ref.get(asked)
        expect(request?.toolName).toBe("ExitPlanMode")
      }).pipe(Effect.provide(runtime(cwd, refusing, "plan")))
      const headless = yield* run("ExitPlanMode", { plan: "1. change it" }).pipe(
        Effect.provide(runtime(cwd, Approver.denyAll, "plan"))
      )
      expect(headless.status).toBe("denied")
    })
  })
})
