/**
 * Wall-clock waiting for process lifecycle. Child processes run in real time whatever Clock the fiber has (a
 * TestClock does not advance them), so grace periods, timeouts and polling use real timers.
 */
import * as Effect from "effect/Effect"

/** Waits `millis` of real time; interruptible (the timer is cleared). */
export const realSleep = (millis: number): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const timer = setTimeout(() => resume(Effect.void), Math.max(0, millis))
    return Effect.sync(() => clearTimeout(timer))
  })
