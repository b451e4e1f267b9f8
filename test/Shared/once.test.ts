/**
 * onceInScope: one run for every caller, whatever happens to the callers; the scope's end stops it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import { onceInScope } from "../../src/Shared/once.js"

describe("onceInScope", () => {
  it.effect("runs once for many callers, at the first demand, and gives them all its value", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let runs = 0
      const gate = yield* Deferred.make<void>()
      const once = yield* onceInScope(
        Effect.as(Effect.zipRight(Effect.sync(() => runs++), Deferred.await(gate)), 7),
        scope
      )
      expect(runs).toBe(0)
      const callers = yield* Effect.forEach(Array.from({ length: 10 }), () => Effect.fork(once))
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Effect.forEach(callers, Fiber.join)).toEqual(Array(10).fill(7))
      expect(yield* once).toBe(7)
      expect(runs).toBe(1)
    }))

  it.effect("a caller interrupted while it runs only stops waiting: the run goes on for the next caller", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let runs = 0
      const started = yield* Deferred.make<void>()
      const gate = yield* Deferred.make<void>()
      const once = yield* onceInScope(
        Effect.as(
          Effect.zipRight(
            Effect.zipRight(Effect.sync(() => runs++), Deferred.succeed(started, undefined)),
            Deferred.await(gate)
          ),
          "done"
        ),
        scope
      )
      const first = yield* Effect.fork(once)
      yield* Deferred.await(started)
      expect(Exit.isInterrupted(yield* Fiber.interrupt(first))).toBe(true)
      const second = yield* Effect.fork(once)
      yield* Deferred.succeed(gate, undefined)
      expect(yield* Fiber.join(second)).toBe("done")
      expect(runs).toBe(1)
    }))

  it.effect("a caller interrupted before the run starts does not leave the others waiting", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const once = yield* onceInScope(Effect.succeed("value"), scope)
      for (let i = 0; i < 5; i++) yield* Fiber.interrupt(yield* Effect.fork(once))
      expect(yield* once).toBe("value")
    }))

  it.effect("a failure is every caller's, and the run is not tried again", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let runs = 0
      const once = yield* onceInScope(Effect.zipRight(Effect.sync(() => runs++), Effect.fail("no")), scope)
      expect(yield* Effect.flip(once)).toBe("no")
      expect(yield* Effect.flip(once)).toBe("no")
      expect(runs).toBe(1)
    }))

  it.effect("closing the scope stops a run still going, and its callers see it interrupted", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      let stopped = false
      const started = yield* Deferred.make<void>()
      const once = yield* onceInScope(
        Effect.onInterrupt(
          Effect.zipRight(Deferred.succeed(started, undefined), Effect.never),
          () => Effect.sync(() => (stopped = true))
        ),
        scope
      )
      const caller = yield* Effect.fork(once)
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      expect(stopped).toBe(true)
      expect(Exit.isInterrupted(yield* Fiber.await(caller))).toBe(true)
    }))
})
