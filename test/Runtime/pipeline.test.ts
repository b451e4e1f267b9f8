import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, FastCheck as fc, Layer, Ref, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { RuntimeConfig } from "../../src/Runtime/RuntimeConfig.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { testRuntime } from "../../src/testing/index.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"

const use = (name: string, input: unknown, id = "toolu_1"): ToolUseBlock => ({ type: "tool_use", id, name, input })

const Echo = Tool.make("Echo", {
  description: "Repeats text.",
  aliases: ["Say"],
  input: Schema.Struct({
    text: Schema.String,
    times: Schema.optional(Schema.Int.pipe(Schema.between(1, 5))),
    style: Schema.optional(Schema.Literal("plain", "loud")),
    meta: Schema.optional(Schema.Struct({ tags: Schema.Array(Schema.String), level: Schema.Number }))
  }),
  output: Schema.String,
  touchesEnvironment: false
})

const EchoLive = Echo.implement({
  validate: (
    input
  ) => (input.text === "forbidden"
    ? Tool.reject("The text `forbidden` cannot be echoed; choose other words.")
    : Effect.succeed(input)),
  call: ({ style, text, times }) => Effect.succeed((style === "loud" ? text.toUpperCase() : text).repeat(times ?? 1))
})

const Boom = Tool.make("Boom", {
  description: "Dies.",
  input: Schema.Struct({ how: Schema.Literal("throw", "die", "fail", "hang", "deny", "ask") }),
  timeout: "1 second",
  touchesEnvironment: true
})

const BoomLive = Boom.implement({
  checkPermissions: ({ how }) =>
    Effect.succeed(
      how === "deny"
        ? PermissionCheck.deny("Boom refuses to deny-mode calls.")
        : how === "ask"
        ? PermissionCheck.ask("Boom wants to ask.")
        : PermissionCheck.allow()
    ),
  call: ({ how }) => {
    switch (how) {
      case "throw":
        return Effect.sync(() => {
          throw new Error("secret internal detail")
        })
      case "die":
        return Effect.die("kaboom")
      case "fail":
        return Effect.fail(new Tool.ToolError({ message: "The disk is full." }))
      case "hang":
        return Effect.never
      default:
        return Effect.succeed("ran")
    }
  }
})

const runtime = (approver: Layer.Layer<Approver> = Approver.denyAll) =>
  testRuntime([Echo, Boom], Layer.mergeAll(EchoLive, BoomLive), approver)

const text = (outcome: { readonly result: { readonly content: unknown } }) => outcome.result.content as string

describe("one-call pipeline: model-facing errors", () => {
  it.effect("an unknown tool names it and the closest tools", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Ecko", { text: "x" })))
      expect(outcome.status).toBe("error")
      expect(outcome.result.is_error).toBe(true)
      expect(text(outcome)).toBe(
        "<tool_use_error>Error: No such tool available: Ecko. Closest available tools: Echo.</tool_use_error>"
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("an alias resolves to the tool", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Say", { text: "hi" })))
      expect(outcome.status).toBe("success")
      expect(outcome.toolName).toBe("Echo")
      expect(outcome.requestedName).toBe("Say")
      expect(text(outcome)).toBe("hi")
    }).pipe(Effect.provide(runtime())))

  it.effect("invalid input lists one line per problem with the parameter path", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) =>
        rt.executeOne(
          use("Echo", { times: "three", extra: true, style: "quiet", meta: { tags: ["a", 1], level: "high" } })
        ))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toBe(
        [
          "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):",
          "An unexpected parameter `extra` was provided",
          "The required parameter `text` is missing",
          "The parameter `times` type is expected as `number` but provided as `string`",
          "The parameter `style` is invalid: expected one of \"plain\" | \"loud\", got \"quiet\"",
          "The parameter `meta.tags[1]` type is expected as `string` but provided as `number`",
          "The parameter `meta.level` type is expected as `number` but provided as `string`</tool_use_error>"
        ].join("\n")
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("a failed refinement carries its message", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Echo", { text: "x", times: 9 })))
      expect(text(outcome)).toBe(
        "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe parameter `times` is invalid: Expected a number between 1 and 5, actual 9</tool_use_error>"
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("input that is not a JSON object says so", () =>
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      for (const [input, kind] of [[["a"], "array"], ["text", "string"], [null, "null"], [3, "number"]] as const) {
        const outcome = yield* rt.executeOne(use("Echo", input))
        expect(text(outcome)).toBe(
          `<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe input must be a JSON object, but was provided as \`${kind}\`</tool_use_error>`
        )
      }
    }).pipe(Effect.provide(runtime())))

  it.effect("a validation failure is the tool's own message", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Echo", { text: "forbidden" })))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toBe(
        "<tool_use_error>The text `forbidden` cannot be echoed; choose other words.</tool_use_error>"
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("the tool's deny is a denial with its reason", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "deny" })))
      expect(outcome.status).toBe("denied")
      expect(outcome.decision?._tag).toBe("Deny")
      expect(text(outcome)).toBe(
        "<tool_use_error>Permission to use Boom was denied: Boom refuses to deny-mode calls.</tool_use_error>"
      )
      expect(outcome.executedInput).toEqual({ how: "deny" })
      expect(outcome.timings.startedAt).toBeUndefined()
    }).pipe(Effect.provide(runtime())))

  it.effect("an ask goes to the approver; its deny is reported with the approver's message", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "ask" })))
      expect(outcome.status).toBe("denied")
      expect(text(outcome)).toBe(
        "<tool_use_error>Permission to use Boom was denied: No one was available to approve Boom; it was denied.</tool_use_error>"
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("an ask allowed by the approver runs, and the decision names the user", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "ask" }))).pipe(
        Effect.provide(runtime(Approver.scripted([ApprovalAnswer.AllowOnce()], asked)))
      )
      expect(outcome.status).toBe("success")
      expect(outcome.decision).toMatchObject({ _tag: "Allow", reason: { _tag: "User", scope: "once" } })
      expect((yield* Ref.get(asked)).map((r) => r.message)).toEqual(["Boom wants to ask."])
    }))

  it.effect("an approver's edit runs the edited input, validated again, and keeps both inputs", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "ask" }))).pipe(
        Effect.provide(runtime(Approver.scripted([ApprovalAnswer.Edit({ input: { how: "fail" } })])))
      )
      expect(outcome.originalInput).toEqual({ how: "ask" })
      expect(outcome.executedInput).toEqual({ how: "fail" })
      expect(text(outcome)).toBe("<tool_use_error>The disk is full.</tool_use_error>")
      const invalid = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "ask" }))).pipe(
        Effect.provide(runtime(Approver.scripted([ApprovalAnswer.Edit({ input: { how: 1 } })])))
      )
      expect(invalid.status).toBe("error")
      expect(invalid.timings.startedAt).toBeUndefined()
    }))

  it.effect("a tool's typed failure is its rendered message", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Boom", { how: "fail" })))
      expect(outcome.status).toBe("error")
      expect(outcome.error?._tag).toBe("ToolFailed")
      expect(text(outcome)).toBe("<tool_use_error>The disk is full.</tool_use_error>")
    }).pipe(Effect.provide(runtime())))

  it.effect("a defect gives the model a generic message and the cause to the log", () =>
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      for (const how of ["throw", "die"] as const) {
        const outcome = yield* rt.executeOne(use("Boom", { how }))
        expect(outcome.status).toBe("error")
        expect(text(outcome)).toBe(
          "<tool_use_error>Boom ran, but failed with an internal error before its result could be reported. Its effects may have happened; check before retrying.</tool_use_error>"
        )
        expect(text(outcome)).not.toContain("secret")
        expect(outcome.error?._tag).toBe("Defect")
      }
    }).pipe(Effect.provide(runtime())))

  it.effect("a tool that throws in any stage, or interrupts itself, still gets exactly one Outcome (execute and executeOne)", () =>
    Effect.gen(function*() {
      const stages = [
        "validate",
        "checkPermissions",
        "traits",
        "claims",
        "toModel",
        "renderResult",
        "schema",
        "interrupt"
      ] as const
      const Fragile = Tool.make("Fragile", {
        description: "Breaks where told.",
        input: Schema.Struct({
          where: Schema.Literal(...stages).pipe(Schema.filter((where) => {
            if (where === "schema") throw new Error("a filter that throws")
            return true
          }))
        }),
        touchesEnvironment: false
      })
      const boom = (stage: string, where: string) => {
        if (stage === where) throw new Error(`thrown in ${stage}`)
      }
      const FragileLive = Fragile.implement({
        validate: (
          input
        ) => (input.where === "interrupt" ? Effect.interrupt : (boom("validate", input.where), Effect.succeed(input))),
        checkPermissions: (input) => (boom("checkPermissions", input.where), Effect.succeed(PermissionCheck.allow())),
        traits: (input) => (boom("traits", input.where), { concurrencySafe: true }),
        claims: (input) => (boom("claims", input.where), []),
        toModel: (_, input) => (boom("toModel", input.where), "ok"),
        renderResult: (_, input) => (boom("renderResult", input.where), []),
        call: () => Effect.succeed("done")
      })
      const turn = stages.map((where, i) => use("Fragile", { where }, `toolu_${i}`))
      const outcomes = yield* Effect.flatMap(
        ToolRuntime,
        (rt) => rt.execute([...turn, use("Echo", { text: "sibling" }, "toolu_sibling")])
      ).pipe(
        Effect.provide(testRuntime([Fragile, Echo], Layer.mergeAll(FragileLive, EchoLive)))
      )
      expect(outcomes.map((o) => o.toolUseId)).toEqual([...turn.map((u) => u.id), "toolu_sibling"])
      expect(outcomes.slice(0, -1).map((o) => o.status)).toEqual([
        "error",
        "error",
        "error",
        "error",
        "error",
        "error",
        "error",
        "interrupted"
      ])
      expect(outcomes.at(-1)!.status).toBe("success")
      for (const outcome of outcomes) expect(JSON.stringify(outcome.result)).not.toContain("thrown in")
      for (const [i] of stages.entries()) {
        const one = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(turn[i]!)).pipe(
          Effect.provide(testRuntime([Fragile], FragileLive))
        )
        expect(one.status).toBe(outcomes[i]!.status)
      }
    }))

  it.effect("a call past its timeout is stopped and reported as timed out", () =>
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const fiber = yield* Effect.fork(rt.executeOne(use("Boom", { how: "hang" })))
      yield* TestClock.adjust(Duration.seconds(1))
      const outcome = yield* fiber.await.pipe(Effect.flatten)
      expect(outcome.status).toBe("timed_out")
      expect(text(outcome)).toBe(
        "<tool_use_error>Boom timed out after 1s and was stopped. It may have had partial effects.</tool_use_error>"
      )
    }).pipe(Effect.provide(runtime())))

  it.effect("UI blocks and audit text come from one source", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) =>
        rt.executeOne(use("Echo", { text: "hello", style: "loud" })))
      expect(outcome.audit).toContain("HELLO")
      expect(outcome.audit).toContain("Echo(")
      expect(outcome.ui.length).toBeGreaterThan(1)
    }).pipe(Effect.provide(runtime())))

  it.effect("empty output becomes an explicit (no output)", () =>
    Effect.gen(function*() {
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Echo", { text: "" })))
      expect(outcome.result.content).toBe("(no output)")
    }).pipe(Effect.provide(runtime())))
})

describe("one-call pipeline: properties", () => {
  const jsonValue = fc.jsonValue({ maxDepth: 4 })
  const nearlyValid = fc.record(
    {
      text: fc.oneof(fc.string(), jsonValue),
      times: fc.oneof(fc.integer({ min: -2, max: 8 }), jsonValue),
      style: fc.oneof(fc.constantFrom("plain", "loud", "LOUD"), jsonValue),
      meta: fc.oneof(
        fc.record({ tags: fc.array(fc.oneof(fc.string(), jsonValue)), level: fc.oneof(fc.double(), jsonValue) }),
        jsonValue
      ),
      extra: jsonValue
    },
    { requiredKeys: [] }
  )

  it.effect.prop(
    "any JSON input yields exactly one Outcome and never fails or dies",
    [fc.oneof(jsonValue, nearlyValid), fc.constantFrom("Echo", "Say", "Boom", "Nope")],
    ([input, name]) =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const outcomes = yield* rt.execute([use(name, input, "toolu_p")])
        expect(outcomes).toHaveLength(1)
        expect(outcomes[0]!.toolUseId).toBe("toolu_p")
        expect(outcomes[0]!.result.tool_use_id).toBe("toolu_p")
        expect(["success", "error", "denied"]).toContain(outcomes[0]!.status)
        if (outcomes[0]!.status !== "success") expect(outcomes[0]!.result.is_error).toBe(true)
      }).pipe(Effect.provide(runtime())),
    { fastCheck: { numRuns: 300 }, timeout: 60_000 }
  )
})

describe("result store and context budget", () => {
  const Big = Tool.make("Big", {
    description: "Prints n characters.",
    input: Schema.Struct({ size: Schema.Int, limit: Schema.optional(Schema.Number) }),
    output: Schema.String,
    maxResultChars: 5_000,
    touchesEnvironment: false
  })
  const line = "0123456789abcdef-é€😀\n"
  const BigLive = Big.implement({
    call: ({ size }) => Effect.succeed(line.repeat(Math.ceil(size / line.length)).slice(0, size))
  })

  it.effect.prop(
    "results over the limit are persisted byte-identical and the preview stays within the limit",
    [fc.integer({ min: 0, max: 40_000 }), fc.integer({ min: 1_000, max: 50_000 })],
    ([size, runtimeLimit]) =>
      Effect.gen(function*() {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etr-store-"))
        const layer = ToolRuntime.layer.pipe(
          Layer.provide(Layer.provide(ToolRegistry.layer([Big]), BigLive)),
          Layer.provide([
            PermissionPolicy.toolOnly,
            Approver.denyAll,
            ToolHooks.none,
            ResultStore.layer(dir).pipe(Layer.provide(NodeContext.layer))
          ])
        )
        const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Big", { size }, "toolu_big")))
          .pipe(
            Effect.provide(layer),
            Effect.provideService(RuntimeConfig, {
              maxResultChars: runtimeLimit,
              previewChars: 2_000,
              maxConcurrency: 10,
              timeout: undefined
            })
          )
        const full = outcome.output as string
        const limit = Math.min(5_000, runtimeLimit)
        const content = outcome.result.content as string
        expect(content.length).toBeLessThanOrEqual(Math.max(limit, "(no output)".length))
        if (full.length > limit) {
          expect(outcome.persistedPath).toBe(path.join(dir, "toolu_big.txt"))
          expect(fs.readFileSync(outcome.persistedPath!)).toEqual(Buffer.from(full, "utf8"))
          expect(content).toContain(`Full output saved to: ${outcome.persistedPath}`)
          expect(content.startsWith("<persisted-output>")).toBe(true)
        } else {
          expect(outcome.persistedPath).toBeUndefined()
          expect(content).toBe(full === "" ? "(no output)" : full)
        }
        fs.rmSync(dir, { recursive: true, force: true })
      }),
    { fastCheck: { numRuns: 60 }, timeout: 60_000 }
  )

  it.effect("a stored result is never overwritten: a second result with the same id gets a new file", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etr-store-"))
      const store = yield* Effect.provide(ResultStore, ResultStore.layer(dir).pipe(Layer.provide(NodeContext.layer)))
      const first = yield* store.persist("toolu_same", "one")
      const second = yield* store.persist("toolu_same", "two")
      const hostile = yield* store.persist("../../etc/passwd", "three")
      expect(first).not.toBe(second)
      expect(fs.readFileSync(first, "utf8")).toBe("one")
      expect(fs.readFileSync(second, "utf8")).toBe("two")
      expect(path.dirname(hostile)).toBe(dir)
      fs.rmSync(dir, { recursive: true, force: true })
    }))

  it.effect("when the store cannot write, the model gets a truncated result that says so", () =>
    Effect.gen(function*() {
      const blocker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "etr-store-")), "not-a-dir")
      fs.writeFileSync(blocker, "a file where the directory should be")
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(ToolRegistry.layer([Big]), BigLive)),
        Layer.provide([
          PermissionPolicy.toolOnly,
          Approver.denyAll,
          ToolHooks.none,
          ResultStore.layer(blocker).pipe(Layer.provide(NodeContext.layer))
        ])
      )
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Big", { size: 20_000 }))).pipe(
        Effect.provide(layer)
      )
      expect(outcome.status).toBe("success")
      expect(outcome.persistedPath).toBeUndefined()
      const content = outcome.result.content as string
      expect(content.length).toBeLessThanOrEqual(5_000)
      expect(content).toMatch(
        /\[Output truncated: .* in all; the full output could not be saved \(cannot create the result directory/
      )
    }))
})

describe("tools as services", () => {
  it.effect("any tool can be replaced by a test double through its Layer", () =>
    Effect.gen(function*() {
      const double = Layer.succeed(Echo, Echo.service({ call: () => Effect.succeed("from the double") }))
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use("Echo", { text: "real" }))).pipe(
        Effect.provide(testRuntime([Echo], double))
      )
      expect(outcome.result.content).toBe("from the double")
    }))

  it("fills conservative defaults", () => {
    const service = Boom.service({
      checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
      call: () => Effect.succeed("x")
    })
    expect(service.plan({ how: "fail" }).traits).toEqual({
      readOnly: false,
      concurrencySafe: false,
      destructive: false,
      openWorld: false
    })
    expect(service.plan({ how: "fail" }).claims).toEqual([Tool.Claim.world])
    expect(Boom.definition.touchesEnvironment).toBe(true)
    expect(Echo.definition.maxResultChars).toBe(50_000)
  })

  it("a tool that touches the environment must define checkPermissions (compile-time)", () => {
    const Touchy = Tool.make("Touchy", { description: "d", input: Schema.Struct({}) })
    // @ts-expect-error checkPermissions is required for a tool that touches the environment
    Touchy.service({ call: () => Effect.succeed(1) })
    const Explicit = Tool.make("Explicit", { description: "d", input: Schema.Struct({}), touchesEnvironment: true })
    // @ts-expect-error checkPermissions is required for a tool that touches the environment
    Explicit.implement({ call: () => Effect.succeed(1) })
    // @ts-expect-error a plan of a tool that touches the environment must bind checkPermissions
    Touchy.service({ plan: () => ({ call: () => Effect.succeed(1) }) })
    Touchy.service({
      plan: () => ({
        call: () => Effect.succeed(1),
        checkPermissions: () => Effect.succeed(PermissionCheck.passthrough())
      })
    })
    const Pure = Tool.make("Pure", { description: "d", input: Schema.Struct({}), touchesEnvironment: false })
    expect(Pure.service({ call: () => Effect.succeed(1) }).plan({}).traits).toMatchObject({ readOnly: false })
  })
})
