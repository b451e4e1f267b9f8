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
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import { timeoutOption } from "../../../Shared/realTime.js"
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
    timeoutOption(scoped, timeout),
    (ran) => Option.isSome(ran) ? Exit.succeed(ran.value) : Exit.fail(new Errors.TimedOut({ tool: name, timeout }))
  )
}

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
