/**
 * The classifier approver (auto mode): a language model answers asks in front of the next approver, fail-closed,
 * and only where a person would have been asked. The language model is scripted (the collaborator the tests are
 * not about); the permission policy in the property is the real one.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Ref, Schema, Stream, TestClock } from "effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import * as ClassifierApprover from "../../src/Integrations/ClassifierApprover.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { Outcome } from "../../src/Tool/Outcome.js"
import * as Tool from "../../src/Tool/Tool.js"

/** A language model that answers by script and records the user prompt of every request. */
const scriptedModel = (
  answer: (prompt: string) => Effect.Effect<string, AiError.AiError>,
  prompts?: Ref.Ref<ReadonlyArray<string>>
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) => {
        const prompt = options.prompt.content
          .filter((message) => message.role === "user")
          .flatMap((message) => message.content.map((part) => (part.type === "text" ? part.text : "")))
          .join("\n")
        return Effect.zipRight(
          prompts === undefined ? Effect.void : Ref.update(prompts, (all) => [...all, prompt]),
          Effect.map(answer(prompt), (text) => [{ type: "text" as const, text }])
        )
      },
      streamText: () => Stream.empty
    })
  )

const allowing = (reason = "the user asked for this") => () =>
  Effect.succeed(JSON.stringify({ decision: "allow", reason }))

const Input = Schema.Struct({ target: Schema.String, write: Schema.Boolean })

/** A tool that opts in: its classifier input is the path and what it does. */
const Act = Tool.make("Act", { description: "test", input: Input, output: Schema.String, fileAccess: "edit" })
/** A tool that says nothing: never judged automatically. */
const Quiet = Tool.make("Quiet", { description: "test", input: Input, output: Schema.String })

const actLive = (cwd: string) =>
  Act.implement({
    checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
    traits: (i) => ({ readOnly: !i.write, concurrencySafe: !i.write, destructive: i.target.endsWith(".db") }),
    claims: (
      i
    ) => [
      i.write
        ? Tool.Claim.write(`file:${path.join(cwd, i.target)}`)
        : Tool.Claim.read(`file:${path.join(cwd, i.target)}`)
    ],
    classifierInput: (i) => `${i.write ? "write" : "read"} ${i.target}`,
    call: (i) => Effect.succeed(`did ${i.target}`)
  })
const quietLive = Quiet.implement({
  checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
  call: (i) => Effect.succeed(`did ${i.target}`)
})

/** A recording next approver: the person. */
const person = (asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>, answer: ApprovalAnswer = ApprovalAnswer.AllowOnce()) =>
  Approver.scripted(() => Effect.succeed(answer), asked)

const runtimeWith = (
  model: Layer.Layer<LanguageModel.LanguageModel>,
  next: Layer.Layer<Approver>,
  policy: Layer.Layer<PermissionPolicy> = PermissionPolicy.toolOnly,
  options: ClassifierApprover.ClassifierOptions = {},
  cwd = "/w"
) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Act, Quiet]), Layer.merge(actLive(cwd), quietLive))),
    Layer.provide([
      policy,
      ClassifierApprover.layer(options).pipe(Layer.provide([model, next])),
      ToolHooks.none,
      ResultStore.layerMemory()
    ])
  )

const act = (target: string, write = true, name = "Act") => ({
  type: "tool_use" as const,
  id: `t-${target}`,
  name,
  input: { target, write }
})

describe("ClassifierApprover", () => {
  it.effect("allows a plain ask from the classifier input and the caller's context; the decision names the classifier", () =>
    Effect.gen(function*() {
      const prompts = yield* Ref.make<ReadonlyArray<string>>([])
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const [outcome] = yield* ToolRuntime.execute([act("src/a.ts")]).pipe(
        Effect.provide(
          runtimeWith(scriptedModel(allowing("editing src is the task"), prompts), person(asked), undefined, {
            context: "Fix the bug in src/a.ts."
          })
        )
      )
      expect(outcome!.status).toBe("success")
      expect(outcome!.decision).toEqual({
        _tag: "Allow",
        reason: { _tag: "Classifier", approver: "classifier", message: "editing src is the task" }
      })
      expect(yield* Ref.get(asked)).toEqual([])
      const [prompt] = yield* Ref.get(prompts)
      expect(prompt).toContain("<context>\nFix the bug in src/a.ts.\n</context>")
      expect(prompt).toContain(`<action tool="Act" risk="medium">\nwrite src/a.ts\n</action>`)
    }))

  it.effect("a block denies with the classifier's reason (or asks the person with onBlock: next)", () =>
    Effect.gen(function*() {
      const blocking = scriptedModel(() =>
        Effect.succeed(`{"decision":"block","reason":"It overwrites the user's data."}`)
      )
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const [denied] = yield* ToolRuntime.execute([act("src/a.ts")]).pipe(
        Effect.provide(runtimeWith(blocking, person(asked)))
      )
      expect(denied!.status).toBe("denied")
      expect(denied!.result.content).toBe(
        "<tool_use_error>Permission to use Act was denied: The classifier blocked this action: It overwrites the user's data. Try a safer way, or ask the user.</tool_use_error>"
      )
      const [next] = yield* ToolRuntime.execute([act("src/a.ts")]).pipe(
        Effect.provide(runtimeWith(blocking, person(asked), undefined, { onBlock: "next" }))
      )
      expect(next!.status).toBe("success")
      expect((yield* Ref.get(asked)).map((r) => r.toolName)).toEqual(["Act"])
    }))

  const fallsThrough: ReadonlyArray<readonly [string, Layer.Layer<LanguageModel.LanguageModel>]> = [
    ["an answer that is not JSON", scriptedModel(() => Effect.succeed("Sure, go ahead!"))],
    ["an answer of the wrong shape", scriptedModel(() => Effect.succeed(`{"decision":"yes"}`))],
    [
      "a model error",
      scriptedModel(() =>
        Effect.fail(new AiError.UnknownError({ module: "test", method: "generateText", description: "overloaded" }))
      )
    ]
  ]
  for (const [what, model] of fallsThrough) {
    it.effect(`${what} goes to the next approver`, () =>
      Effect.gen(function*() {
        const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
        const [outcome] = yield* ToolRuntime.execute([act("src/a.ts")]).pipe(
          Effect.provide(runtimeWith(model, person(asked, ApprovalAnswer.Deny({ cancelRun: false }))))
        )
        expect(outcome!.status).toBe("denied")
        expect(outcome!.decision?.reason._tag).toBe("User")
        expect((yield* Ref.get(asked)).length).toBe(1)
      }))
  }

  it.effect("a classifier that takes longer than the timeout goes to the next approver", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const slow = scriptedModel(() => Effect.as(Effect.sleep("1 minute"), `{"decision":"allow","reason":"late"}`))
      const fiber = yield* Effect.fork(
        ToolRuntime.execute([act("src/a.ts")]).pipe(
          Effect.provide(runtimeWith(slow, person(asked), undefined, { timeout: "5 seconds" }))
        )
      )
      yield* TestClock.adjust("5 seconds")
      const [outcome] = yield* Fiber.join(fiber)
      expect(outcome!.decision?.reason).toEqual({ _tag: "User", scope: "once" })
      expect((yield* Ref.get(asked)).length).toBe(1)
    }))

  it.effect("a tool without a classifier input, or a call above maxRisk, is never judged: the model is not even asked", () =>
    Effect.gen(function*() {
      const prompts = yield* Ref.make<ReadonlyArray<string>>([])
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcomes = yield* ToolRuntime.execute([act("src/a.ts", true, "Quiet"), act("data.db")]).pipe(
        Effect.provide(runtimeWith(scriptedModel(allowing(), prompts), person(asked)))
      )
      expect(outcomes.map((o) => o.decision?.reason._tag)).toEqual(["User", "User"])
      expect(yield* Ref.get(prompts)).toEqual([])
      expect((yield* Ref.get(asked)).map((r) => [r.toolName, r.classifierInput, r.risk])).toEqual([[
        "Quiet",
        "",
        "medium"
      ], ["Act", "write data.db", "high"]])
    }))
})

// ---------------------------------------------------------------------------------------------------------------
// the decision table
// ---------------------------------------------------------------------------------------------------------------

const targets = ["src/a.ts", "notes/b.md", ".git/config", ".bashrc", ".claude/settings.json"] as const
const ruleTexts = ["Act", "Edit(src/**)", "Edit(notes/**)", "Edit(.git/**)"] as const
const modes = ["default", "plan", "acceptEdits", "dontAsk"] as const

/** Whether a rule text covers a call, in plain words: the bare tool name covers all, `Edit(dir/**)` its directory. */
const covers = (rule: string, target: string): boolean =>
  rule === "Act" || target.startsWith(`${rule.slice("Edit(".length, -"**)".length)}`)

/** The protected places Claude Code's safety check never lets a write through without asking. */
const isProtected = (target: string): boolean =>
  target.startsWith(".git/") || target === ".bashrc" || target.startsWith(".claude/")

const reached = { refused: 0, judged: 0 }

const rules = fc.oneof({ arbitrary: fc.constant([]), weight: 2 }, {
  arbitrary: fc.subarray([...ruleTexts], { maxLength: 2 }),
  weight: 1
})

describe("the classifier can never allow what the policy refuses before a person is asked", () => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "classifier-table-")))
  it.effect.prop(
    "deny rules, ask rules, safety checks and plan mode hold against a classifier that allows everything",
    {
      target: fc.constantFrom(...targets),
      write: fc.boolean(),
      // Weighted towards the default mode and few rules, so that plain asks (what the classifier judges) are common.
      mode: fc.oneof({ arbitrary: fc.constant("default" as const), weight: 3 }, {
        arbitrary: fc.constantFrom(...modes),
        weight: 2
      }),
      deny: rules,
      ask: rules,
      allow: rules
    },
    ({ allow, ask, deny, mode, target, write }) =>
      Effect.gen(function*() {
        const prompts = yield* Ref.make<ReadonlyArray<string>>([])
        const policy = RulePolicy.layer({ mode, cliRules: { allow, ask, deny } }).pipe(
          Layer.provide(Workspace.layer({ cwd })),
          Layer.provide(NodeContext.layer),
          Layer.orDie
        )
        const [outcome] = yield* ToolRuntime.execute([act(target, write)]).pipe(
          Effect.provide(runtimeWith(scriptedModel(allowing(), prompts), Approver.denyAll, policy, {}, cwd))
        ) as Effect.Effect<ReadonlyArray<Outcome>>
        // The oracle: any of these refuses the call before an automatic approver could speak.
        const refused = deny.some((rule) => covers(rule, target)) ||
          ask.some((rule) => covers(rule, target)) ||
          (write && isProtected(target)) ||
          (mode === "plan" && write)
        if (refused) {
          reached.refused++
          expect(outcome!.status).toBe("denied")
          expect(outcome!.decision?.reason._tag).not.toBe("Classifier")
          expect(yield* Ref.get(prompts)).toEqual([])
        } else if (outcome!.decision?.reason._tag === "Classifier") {
          reached.judged++
          expect(outcome!.status).toBe("success")
        }
      }),
    // 300 runs: with 150 the count of judged calls fell to 4 in one run of the suite (a tail of the draw, not a defect).
    { fastCheck: { numRuns: 300 }, timeout: 60_000 }
  )

  it("the generator reached both refused calls and calls the classifier judged", () => {
    console.log(`classifier table: ${reached.refused} refused, ${reached.judged} judged of 300 runs`)
    expect(reached.refused).toBeGreaterThan(20)
    expect(reached.judged).toBeGreaterThan(5)
  })
})
