/**
 * Wall-clock waiting for process lifecycle. Child processes run in real time whatever Clock the fiber has (a
 * TestClock does not advance them), so grace periods, timeouts and polling use real timers. And a turn of the event
 * loop, for work that runs long without waiting on anything.
 */
import * as Effect from "effect/Effect"

/**
 * Waits `millis` of real time; interruptible (the timer is cleared). Past 2^31 - 1 ms, in steps: `setTimeout` fires
 * a longer delay at once.
 */
export const realSleep = (millis: number): Effect.Effect<void> =>
  millis > MAX_TIMER_MILLIS
    ? Effect.zipRight(realSleep(MAX_TIMER_MILLIS), Effect.suspend(() => realSleep(millis - MAX_TIMER_MILLIS)))
    : Effect.async<void>((resume) => {
      const timer = setTimeout(() => resume(Effect.void), Math.max(0, millis))
      return Effect.sync(() => clearTimeout(timer))
    })

/** The longest delay `setTimeout` takes as given: past it, Node fires the timer after 1 ms. */
export const MAX_TIMER_MILLIS = 2 ** 31 - 1

/**
 * A turn of the event loop (a macrotask): timers, I/O and other fibers get to run, and the fiber can be interrupted
 * here. `Effect.yieldNow` lets only other fibers run, in a microtask, not timers or I/O.
 */
export const nextTurn: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})
