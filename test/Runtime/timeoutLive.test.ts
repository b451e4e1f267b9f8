/**
 * A tool's timeout on the live Clock, where the runtime runs the call in a fiber of its own beside a real timer
 * (`Effect.timeoutOption` with a TestClock, which `unscoped.test.ts` and others cover): a call past its timeout is
 * interrupted, its finalizers run and its Outcome says TimedOut; a call within it keeps its result and leaves no
 * timer behind; a caller interrupted meanwhile stops the call, finalizers included.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Ref, Schema } from "effect"
import { Approver } from "../../src/Permission/Approver.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { testRuntime } from "../../src/testing/index.js"
import * as Tool from "../../src/Tool/Tool.js"

const Slow = Tool.make("Slow", {
  description: "Waits `ms` milliseconds (real time), holding a resource, then answers.",
  input: Schema.Struct({ ms: Schema.Number }),
  output: Schema.String,
  touchesEnvironment: false,
  timeout: "300 millis"
})

/** A timeout past what `setTimeout` takes (2^31 - 1 ms): it must not fire at once. */
const Patient = Tool.make("Patient", {
  description: "Waits 30 ms, then answers.",
  input: Schema.Struct({}),
  output: Schema.String,
  touchesEnvironment: false,
  timeout: "30 days"
})

const timers = () => process.getActiveResourcesInfo().filter((kind) => kind === "Timeout").length

const use = (id: string, ms: number) => ({ type: "tool_use" as const, id, name: "Slow", input: { ms } })

/**
 * Runs `body` against a runtime with Slow, whose calls count how often the resource was taken (`held`) and let go
 * (`released`), and complete `began` once it is taken.
 */
const withSlow = <A, E>(
  body: (counts: {
    readonly held: Ref.Ref<number>
    readonly released: Ref.Ref<number>
    readonly began: Deferred.Deferred<void>
  }) => Effect.Effect<A, E, ToolRuntime>
) =>
  Effect.gen(function*() {
    const counts = { held: yield* Ref.make(0), released: yield* Ref.make(0), began: yield* Deferred.make<void>() }
    return yield* body(counts).pipe(Effect.provide(testRuntime(
      [Slow],
      Slow.implement({
        call: ({ ms }) =>
          Effect.acquireUseRelease(
            Effect.zipRight(Ref.update(counts.held, (n) => n + 1), Deferred.succeed(counts.began, undefined)),
            () => Effect.as(Effect.sleep(ms), "done"),
            () => Ref.update(counts.released, (n) => n + 1)
          )
      }),
      Approver.allowAll
    )))
  })

describe("a tool's timeout on the live Clock", () => {
  it.live("past it: interrupted, its finalizer run, TimedOut; within it: its result, and no timer left", () =>
    withSlow(({ held, released }) =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const late = yield* rt.executeOne(use("toolu_late", 60_000))
        expect(late.status).toBe("timed_out")
        expect(late.error?._tag).toBe("TimedOut")
        expect(yield* Ref.get(released)).toBe(1)

        const before = timers()
        const quick = yield* rt.executeOne(use("toolu_quick", 1))
        expect([quick.status, quick.result.content]).toEqual(["success", "done"])
        expect(timers()).toBe(before)
        expect(yield* Ref.get(held)).toBe(2)
        expect(yield* Ref.get(released)).toBe(2)
      })
    ))

  it.live("a caller interrupted while the call runs stops it, finalizer included, and leaves no timer", () =>
    withSlow(({ began, released }) =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const before = timers()
        const running = yield* Effect.fork(rt.executeOne(use("toolu_stopped", 60_000)))
        yield* Deferred.await(began)
        yield* Fiber.interrupt(running)
        expect(yield* Ref.get(released)).toBe(1)
        expect(timers()).toBe(before)
      })
    ))
})

describe("a timeout longer than setTimeout takes", () => {
  it.live("does not fire at once: the call runs to its result", () =>
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const outcome = yield* rt.executeOne({ type: "tool_use", id: "toolu_patient", name: "Patient", input: {} })
      expect([outcome.status, outcome.result.content]).toEqual(["success", "waited"])
    }).pipe(Effect.provide(testRuntime(
      [Patient],
      Patient.implement({ call: () => Effect.as(Effect.sleep("30 millis"), "waited") }),
      Approver.allowAll
    ))))
})
