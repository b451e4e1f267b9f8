/**
 * The run's permit gate: never more permits out than it has, a released permit goes to the waiter with the highest
 * priority (then the earliest), an exclusive request gets every permit, and an interrupted waiter loses its place
 * without losing a permit. The oracle is a plain list: the waiters sorted, the first served while it fits.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber } from "effect"
import { PermitGate } from "../../src/Runtime/internal/permits.js"

interface Holder {
  readonly id: number
  held: number
  readonly need: number
  readonly priority: number
}

/** One step of a scenario: a holder asks, the holder granted longest ago gives its permits back, or a waiter leaves. */
type Step =
  | { readonly _tag: "take"; readonly need: number; readonly priority: number }
  | { readonly _tag: "release" }
  | { readonly _tag: "leave"; readonly pick: number }

const arbitraryStep = (capacity: number): fc.Arbitrary<Step> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        _tag: fc.constant("take" as const),
        need: fc.oneof(fc.constant(1), fc.constant(1), fc.constant(capacity)),
        priority: fc.integer({ min: 0, max: 3 })
      })
    },
    { weight: 2, arbitrary: fc.constant({ _tag: "release" as const }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("leave" as const), pick: fc.nat() }) }
  )

const arbitraryScenario = fc.integer({ min: 1, max: 3 }).chain((capacity) =>
  fc.record({
    capacity: fc.constant(capacity),
    steps: fc.array(arbitraryStep(capacity), { minLength: 15, maxLength: 40 })
  })
)

/** How often the property met a grant that skipped an earlier waiter for a higher priority. */
const reached = { runs: 0, overtaken: 0 }

describe("PermitGate", () => {
  it.effect.prop(
    "permits never exceed the capacity, go to the best waiter first, and none is lost",
    [arbitraryScenario],
    ([{ capacity, steps }]) =>
      Effect.gen(function*() {
        const gate = new PermitGate<Holder>(capacity, (holder) => holder.priority, () => 0)
        // The oracle's state, in plain words.
        let free = capacity
        const waiting: Array<Holder> = []
        const holding: Array<Holder> = []
        const granted: Array<number> = []
        const expected: Array<number> = []
        const fibers = new Map<number, Fiber.RuntimeFiber<void>>()
        const everyone: Array<Holder> = []
        let overtaken = false
        const serve = () => {
          for (;;) {
            const best = [...waiting].sort((a, b) => b.priority - a.priority || a.id - b.id)[0]
            if (best === undefined || Math.min(best.need, capacity) > free) return
            if (waiting.some((other) => other.id < best.id)) overtaken = true
            waiting.splice(waiting.indexOf(best), 1)
            free -= Math.min(best.need, capacity)
            holding.push(best)
            expected.push(best.id)
          }
        }
        let next = 0
        for (const step of steps) {
          if (step._tag === "take") {
            const holder: Holder = { id: next++, held: 0, need: step.need, priority: step.priority }
            waiting.push(holder)
            everyone.push(holder)
            serve()
            const fiber = yield* Effect.fork(
              Effect.tap(gate.take(holder, holder.need, holder.id), () => Effect.sync(() => granted.push(holder.id)))
            )
            fibers.set(holder.id, fiber)
          } else if (step._tag === "release") {
            const holder = holding.shift()
            if (holder === undefined) continue
            free += Math.min(holder.need, capacity)
            serve()
            gate.release(holder)
          } else {
            if (waiting.length === 0) continue
            const holder = waiting[step.pick % waiting.length]!
            waiting.splice(waiting.indexOf(holder), 1)
            serve()
            yield* Fiber.interrupt(fibers.get(holder.id)!)
          }
          // Let every granted fiber see its grant.
          yield* Effect.yieldNow()
          yield* Effect.yieldNow()
          expect(granted).toEqual(expected)
          const out = holding.reduce((sum, holder) => sum + holder.held, 0)
          expect(out).toBe(capacity - free)
          expect(out).toBeLessThanOrEqual(capacity)
        }
        reached.runs++
        if (overtaken) reached.overtaken++
        // Everything given back (a waiter may be served as the ones before it leave): the gate is whole again.
        for (const fiber of fibers.values()) yield* Fiber.interrupt(fiber)
        for (const holder of everyone) gate.release(holder)
        expect(gate.tryTake({ id: -1, held: 0, need: capacity, priority: 0 }, capacity)).toBe(true)
      }),
    { fastCheck: { numRuns: 200 }, timeout: 120_000 }
  )

  it("...and in at least 60% of its runs a later waiter overtook an earlier one on priority", () => {
    expect(reached.overtaken / reached.runs).toBeGreaterThanOrEqual(0.6)
  })

  it.effect("priorities are read again when the epoch moves", () =>
    Effect.gen(function*() {
      const priorities = new Map<number, number>([[1, 0], [2, 1]])
      let epoch = 0
      const gate = new PermitGate<Holder>(1, (holder) => priorities.get(holder.id)!, () => epoch)
      const first: Holder = { id: 0, held: 0, need: 1, priority: 0 }
      expect(gate.tryTake(first, 1)).toBe(true)
      const order: Array<number> = []
      for (const id of [1, 2]) {
        yield* Effect.fork(
          Effect.tap(gate.take({ id, held: 0, need: 1, priority: 0 }, 1, id), () => Effect.sync(() => order.push(id)))
        )
      }
      yield* Effect.yieldNow()
      // 2 ranked higher when it queued; now 1 has the longer chain behind it.
      priorities.set(1, 5)
      epoch++
      gate.release(first)
      yield* Effect.yieldNow()
      expect(order).toEqual([1])
    }))
})
