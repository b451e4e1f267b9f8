/**
 * `Tool.unscoped`: a call that opens nothing runs without a Scope of its own (the runtime's per-call Scope costs a
 * copy of the fiber's services), yet interruption and timeouts still stop it; and only a call that requires nothing
 * can be marked.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Ref, Schema, Scope, TestClock } from "effect"
import { Approver } from "../../src/Permission/Approver.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { testRuntime } from "../../src/testing/index.js"
import * as Tool from "../../src/Tool/Tool.js"

const Probe = Tool.make("Probe", {
  description: "Says whether its call had a Scope.",
  input: Schema.Struct({ marked: Schema.Boolean }),
  output: Schema.String,
  touchesEnvironment: false
})

const Hang = Tool.make("Hang", {
  description: "Never answers; says when it is stopped.",
  input: Schema.Struct({}),
  output: Schema.String,
  touchesEnvironment: false,
  timeout: "1 second"
})

const runtime = (
  stopped: Ref.Ref<number>,
  began: Ref.Ref<number>,
  seen: Ref.Ref<ReadonlyArray<Option.Option<Scope.Scope>>>
) =>
  testRuntime(
    [Probe, Hang],
    Layer.mergeAll(
      Probe.implement({
        traits: () => ({ readOnly: true, concurrencySafe: true }),
        call: ({ marked }) => {
          // Asynchronous, so whatever Scope the runtime gives the call is in place while it runs.
          const probe = Effect.zipRight(
            Effect.yieldNow(),
            Effect.flatMap(Effect.serviceOption(Scope.Scope), (scope) => Ref.update(seen, (all) => [...all, scope]))
          ).pipe(Effect.as("ran"))
          return marked ? Tool.unscoped(probe) : probe
        }
      }),
      Hang.implement({
        call: () =>
          Tool.unscoped(
            Effect.zipRight(
              Ref.update(began, (n) => n + 1),
              Effect.async<string>(() => Ref.update(stopped, (n) => n + 1))
            )
          )
      })
    ),
    Approver.denyAll
  )

const use = (id: string, name: "Probe" | "Hang", input: object) => ({ type: "tool_use" as const, id, name, input })

describe("Tool.unscoped", () => {
  it.effect("a marked call runs without a Scope of its own; an unmarked one gets one", () =>
    Effect.gen(function*() {
      const seen = yield* Ref.make<ReadonlyArray<Option.Option<Scope.Scope>>>([])
      const { alone, inRun } = yield* Effect.gen(function*() {
        const rt = yield* ToolRuntime
        yield* rt.executeOne(use("toolu_1", "Probe", { marked: true }))
        yield* rt.executeOne(use("toolu_2", "Probe", { marked: false }))
        const alone = yield* Ref.getAndSet(seen, [])
        const outcomes = yield* rt.execute([
          use("toolu_3", "Probe", { marked: true }),
          use("toolu_4", "Probe", { marked: true }),
          use("toolu_5", "Probe", { marked: false }),
          use("toolu_6", "Probe", { marked: false })
        ])
        expect(outcomes.map((outcome) => outcome.status)).toEqual(["success", "success", "success", "success"])
        return { alone, inRun: yield* Ref.get(seen) }
      }).pipe(Effect.provide(runtime(yield* Ref.make(0), yield* Ref.make(0), seen)))
      // Alone: no Scope at all for the marked call, one for the other.
      expect(alone.map(Option.isSome)).toEqual([false, true])
      // In a run (which has a Scope of its own): the marked calls see only the run's, the same one; each unmarked
      // call has its own.
      const scopes = inRun.map((scope) => Option.getOrThrow(scope))
      expect(scopes[0]).toBe(scopes[1])
      expect(new Set(scopes).size).toBe(3)
    }))

  it.effect("a marked call is still stopped by its timeout and by a cancelled run", () =>
    Effect.gen(function*() {
      const stopped = yield* Ref.make(0)
      const began = yield* Ref.make(0)
      const [timedOut, cancelled] = yield* Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const timing = yield* Effect.fork(rt.executeOne(use("toolu_1", "Hang", {})))
        yield* TestClock.adjust("2 seconds")
        const timedOut = yield* Fiber.join(timing)
        const handle = yield* rt.start([use("toolu_2", "Hang", {})], { timeoutFor: () => "1 hour" })
        while ((yield* Ref.get(began)) < 2) yield* Effect.yieldNow()
        yield* handle.cancel
        return [timedOut, (yield* handle.await)[0]!] as const
      }).pipe(
        Effect.scoped,
        Effect.provide(runtime(stopped, began, yield* Ref.make<ReadonlyArray<Option.Option<Scope.Scope>>>([])))
      )
      expect(timedOut.error?._tag).toBe("TimedOut")
      expect(cancelled.status).toBe("interrupted")
      expect(yield* Ref.get(stopped)).toBe(2)
    }))

  it("only a call that requires nothing can be marked (compile-time)", () => {
    // @ts-expect-error a call that needs a Scope cannot be marked unscoped
    Tool.unscoped(Effect.addFinalizer(() => Effect.void))
    expect(Tool.isUnscoped(Tool.unscoped(Effect.sync(() => 1)))).toBe(true)
    expect(Tool.isUnscoped(Effect.sync(() => 1))).toBe(false)
  })
})
