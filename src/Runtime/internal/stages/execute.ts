/**
 * Stage 7, **execute**: the call itself, in a scope of its own, with its timeout.
 *
 * Takes the admitted {@link Call} and the invocation that runs. Marks the call started (its trace, and the Started
 * event with the activity line), moves the run's write log while a call that may write runs (plans made meanwhile
 * are made again before they run), then runs `call` with the decision that let it run (Bash's sandbox follows it):
 * in a scope closed with the call's exit (so interruption and timeouts release what it opened), under the call's
 * timeout (the call's own, else the runtime's, else the tool's). Gives the tool's own Exit for the finish stage, or
 * fails with TimedOut.
 */
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { MAX_TIMER_MILLIS } from "../../../Shared/realTime.js"
import * as Errors from "../../../Tool/Errors.js"
import { isUnscoped } from "../../../Tool/Tool.js"
import { ToolEvent } from "../../Events.js"
import { continueWith, continueWithExit } from "../continuation.js"
import type { AnyInvocation, Call } from "./call.js"

/** Starts the call and gives its Exit, or TimedOut. */
export const execute = (
  call: Call,
  invocation: AnyInvocation
): Effect.Effect<Exit.Exit<unknown, unknown>, Errors.TimedOut> => {
  const { env, name, prepared, trace } = call
  const startedAt = env.clock.unsafeCurrentTimeMillis()
  trace.startedAt = startedAt
  return continueWith(
    env.emit(() =>
      ToolEvent.Started({
        toolUseId: prepared.toolUse.id,
        toolName: name,
        ui: trace.ui,
        activity: activityText(invocation, name),
        at: startedAt
      })
    ),
    () => {
      // A call that may write moves the run's write log (plans made meanwhile are made again before they run).
      const ended = env.writes?.begin(prepared.tool.definition, invocation)
      return ended === undefined ? callWithTimeout(call, invocation) : continueWithExit(
        callWithTimeout(call, invocation),
        (ran) => {
          ended()
          return ran
        }
      )
    }
  )
}

/** A tool's activity line; a renderer that throws shows the name alone. */
const activityText = (invocation: AnyInvocation, name: string): string => {
  try {
    return invocation.activity()
  } catch {
    return name
  }
}

/**
 * The call's Exit, or TimedOut. A call that is already an Exit ran synchronously and needs no scope or timer; one
 * marked `Tool.unscoped` needs no scope.
 */
const callWithTimeout = (
  { context, env, name, prepared, trace }: Call,
  invocation: AnyInvocation
): Effect.Effect<Exit.Exit<unknown, unknown>, Errors.TimedOut> => {
  const call = invocation.call(trace.decision === undefined ? context : { ...context, decision: trace.decision })
  if (Exit.isExit(call)) return Exit.succeed(call)
  const timeout = prepared.timeout ?? env.settings.timeout ?? prepared.tool.definition.timeout
  // A call marked `Tool.unscoped` opens nothing: it runs without a Scope of its own.
  const scoped = Effect.exit(isUnscoped(call) ? call : scopedCall(call))
  // A timer costs a fiber; tools without a finite timeout (the default) do not pay for one.
  if (!Duration.isFinite(timeout)) return scoped
  return Effect.flatMap(
    within(scoped, timeout),
    (ran) => Option.isSome(ran) ? Exit.succeed(ran.value) : Exit.fail(new Errors.TimedOut({ tool: name, timeout }))
  )
}

/** The Clock of Effect's default services: real time, over `setTimeout`. */
const liveClock = Context.get(DefaultServices.liveServices, Clock.Clock)

/**
 * `call`'s value, or None when `timeout` passes first (`call` is then interrupted, its finalizers run). On the live
 * Clock: the call in a fiber of its own and a real timer, where `Effect.timeoutOption` forks a second fiber to sleep
 * in and races the two (about a tenth of a Read through the runtime). On any other Clock (a TestClock), which only a
 * fiber sleeping on it can follow, `Effect.timeoutOption`. Either way the call's FiberRef changes stay its own.
 */
const within = <A>(call: Effect.Effect<A>, timeout: Duration.Duration): Effect.Effect<Option.Option<A>> =>
  Effect.clockWith((clock) => {
    const millis = Duration.toMillis(timeout)
    // Past 2^31 - 1 ms `setTimeout` fires at once (Node clamps it to 1 ms); Effect's own timer handles it.
    return clock === liveClock && millis <= MAX_TIMER_MILLIS
      ? withinLive(call, millis)
      : Effect.timeoutOption(call, timeout)
  })

const withinLive = <A>(call: Effect.Effect<A>, millis: number): Effect.Effect<Option.Option<A>> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.fork(restore(call)), (fiber) => {
      const ended = Effect.async<Option.Option<A>>((resume) => {
        let timedOut = false
        const timer = setTimeout(() => {
          timedOut = true
          fiber.unsafeInterruptAsFork(FiberId.none)
        }, millis)
        // A call that ended on its own as the timer fired keeps its result.
        const observer = (exit: Exit.Exit<A>) => {
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

/**
 * Runs a call in a scope of its own, closed with the call's exit (so interruption and timeouts release resources).
 * This is the hot path of every call: the scope goes into the fiber's context with two FiberRef writes, which is
 * measurably cheaper than `Effect.provideService`'s acquire/release. The write happens inside `onExit`, so the
 * context is restored whatever happens.
 */
const scopedCall = <A, E>(call: Effect.Effect<A, E, Scope.Scope>): Effect.Effect<A, E> =>
  Effect.flatMap(Scope.make(), (scope) =>
    FiberRef.getWith(FiberRef.currentContext, (context) =>
      Effect.onExit(
        Effect.zipRight(
          FiberRef.set(FiberRef.currentContext, Context.add(context, Scope.Scope, scope)),
          call as Effect.Effect<A, E>
        ),
        (exit) => Effect.zipRight(FiberRef.set(FiberRef.currentContext, context), Scope.close(scope, exit))
      )))
