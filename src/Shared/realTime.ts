/**
 * Wall-clock waiting for process lifecycle. Child processes run in real time whatever Clock the fiber has (a
 * TestClock does not advance them), so grace periods, timeouts and polling use real timers. And a turn of the event
 * loop, for work that runs long without waiting on anything.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as Option from "effect/Option"

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

/** The Clock of Effect's default services: real time, over `setTimeout`. */
const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/**
 * `Effect.timeoutOption`, cheaper on the live Clock: `effect`'s value, or None when `timeout` passes first (`effect`
 * is then interrupted, its finalizers run). On the live Clock: the effect in a fiber of its own and a real timer,
 * where `Effect.timeoutOption` forks a second fiber to sleep in, races the two and joins the winner's FiberRefs
 * (about a tenth of a Read through the runtime). On any other Clock (a TestClock), which only a fiber sleeping on it
 * can follow, `Effect.timeoutOption`. Either way the effect's FiberRef changes stay its own.
 */
export const timeoutOption = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  timeout: Duration.Duration
): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.clockWith((clock) => {
    const millis = Duration.toMillis(timeout)
    // Past 2^31 - 1 ms `setTimeout` fires at once (Node clamps it to 1 ms); Effect's own timer handles it.
    return clock === liveClock && millis <= MAX_TIMER_MILLIS
      ? timeoutLive(effect, millis)
      : Effect.timeoutOption(effect, timeout)
  })

const timeoutLive = <A, E, R>(effect: Effect.Effect<A, E, R>, millis: number): Effect.Effect<Option.Option<A>, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(effect)), (fiber) => {
      const ended = Effect.async<Option.Option<A>, E>((resume) => {
        let timedOut = false
        const timer = setTimeout(() => {
          timedOut = true
          fiber.unsafeInterruptAsFork(FiberId.none)
        }, millis)
        // An effect that ended on its own as the timer fired keeps its result.
        const observer = (exit: Exit.Exit<A, E>) => {
          clearTimeout(timer)
          resume(timedOut && Exit.isInterrupted(exit) ? Exit.succeed(Option.none()) : Exit.map(exit, Option.some))
        }
        fiber.addObserver(observer)
        return Effect.sync(() => {
          clearTimeout(timer)
          fiber.removeObserver(observer)
        })
      })
      return Effect.onInterrupt(restore(ended), () => Fiber.interrupt(fiber))
    })
  )
