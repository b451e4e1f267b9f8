/**
 * `effect-tool-runtime exec`: one turn. Reads the whole of standard input (as a Stream), runs its tool_use blocks
 * through the runtime, and prints `{"results": [...], "outcomes": [...]}` as one line of JSON. A signal at any moment
 * cancels the run, and every tool_use still gets its outcome; the session (with `--session`) is saved either way.
 *
 * Background tasks (Bash `run_in_background`) outlive the run with `--session DIR`: they keep running, detached and
 * recorded in `DIR/tasks` (pid, marker, start time), and a later `exec --session DIR` reads them (TaskOutput), stops
 * them (TaskStop) and reports, under `task_notifications`, those that ended since; a sandboxed one runs under a
 * sandbox host of its own (`Process/SandboxHost`), which holds its sandbox. A signal stops them with the run, and so
 * does `--end-session` (the session ends after the turn); without `--session` (a temporary session) they end with
 * the run.
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as Layer from "effect/Layer"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as nodeFs from "node:fs"
import type { Approver } from "../Permission/Approver.js"
import * as TerminalApprover from "../Permission/TerminalApprover.js"
import type { ToolEvent } from "../Runtime/Events.js"
import { renderEvent } from "../Runtime/Render.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { Session } from "../Session/Session.js"
import { escapeForDisplay } from "../Shared/display.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type { TaskNotification } from "../Tasks/TaskRegistry.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import { decodeStdin, UsageError } from "./input.js"
import { approverFor, sessionLayer, sessionRuntimeLayer } from "./layer.js"
import type { RuntimeOptions } from "./layer.js"
import { suggestionsRecorder, summary, writeJsonLine } from "./output.js"
import { beforeForcedExit, onFirstSignal } from "./signals.js"

/** How long a signal lets standard input go on arriving (what is already in the pipe) before reading stops. */
const DRAIN_AFTER_SIGNAL = "250 millis"

/**
 * All of standard input, as text. A signal while it is still open stops the reading shortly after (a writer that
 * never closes it must not keep a cancelled run waiting); whatever arrived by then is the input.
 *
 * Read with listeners on the stream, not as a Stream: `NodeStream.toString` would do, but it drops what arrived when
 * it is interrupted, and a Stream costs every cold start a few thousand Effect operations for one string.
 */
export const readStdin: Effect.Effect<string, UsageError> = Effect.async<string, UsageError>((resume) => {
  const stdin = process.stdin
  let text = ""
  let drain: ReturnType<typeof setTimeout> | undefined
  const onData = (chunk: string) => void (text += chunk)
  const onEnd = () => finish(Effect.succeed(text))
  const onError = (error: unknown) =>
    finish(
      Effect.fail(
        new UsageError({
          message: `cannot read standard input: ${error instanceof Error ? error.message : String(error)}`
        })
      )
    )
  const unregister = onFirstSignal(() => {
    drain ??= setTimeout(onEnd, Duration.toMillis(DRAIN_AFTER_SIGNAL))
  })
  const stop = () => {
    unregister()
    clearTimeout(drain)
    stdin.off("data", onData).off("end", onEnd).off("error", onError)
    if (!stdin.closed) stdin.destroy()
  }
  const finish = (result: Effect.Effect<string, UsageError>) => {
    stop()
    resume(result)
  }
  stdin.setEncoding("utf8")
  stdin.on("data", onData).once("end", onEnd).once("error", onError)
  return Effect.sync(stop)
})

/** Removes a temporary session's directory on a forced exit too (the scope's finalizer does it otherwise). */
export const forgetOnForcedExit = Effect.gen(function*() {
  const session = yield* Session
  if (session.persistent) return
  const unregister = beforeForcedExit(() => nodeFs.rmSync(session.directory, { recursive: true, force: true }))
  yield* Effect.addFinalizer(() => Effect.sync(unregister))
})

/**
 * An event on standard error (`--verbose`), shown as the approval prompt shows it: what a tool's input or output
 * holds (controls, bidi, ANSI) is spelled out, never interpreted by the terminal. Waits while a question is on the
 * terminal, so nothing is printed over it.
 */
const printEvent = (lock: Effect.Semaphore, event: ToolEvent): Effect.Effect<void> => {
  const rendered = renderEvent(event)
  const text = rendered === undefined ? undefined : escapeForDisplay(rendered)
  return text === undefined
    ? Effect.void
    : lock.withPermits(1)(Effect.sync(() => void process.stderr.write(`${text}\n`)))
}

/** Tasks that ended since the last run (or during this one), each reported once: the output's `task_notifications`. */
const taskNotificationsJson = (ended: ReadonlyArray<TaskNotification>) =>
  ended.length === 0 ? {} : {
    task_notifications: ended.map((notice) => ({
      task_id: notice.task.id,
      kind: notice.kind,
      status: notice.task.status._tag,
      ...(notice.task.status._tag === "Exited" ? { exit_code: notice.task.status.code } : {}),
      text: notice.text
    }))
  }

/**
 * The tasks to report after the turn: with `--end-session` the session's running tasks are stopped first; then those
 * that ended since the last run (or during this one), each reported once.
 */
const endOfRun = (tasks: TaskRegistry["Type"], options: RuntimeOptions) =>
  Effect.gen(function*() {
    if (options.endSession === true) yield* tasks.endSession
    yield* tasks.refresh
    return taskNotificationsJson(yield* tasks.takeNotifications)
  })

/** Runs `exec`. */
export const exec = (options: RuntimeOptions) =>
  Effect.gen(function*() {
    // Ending the session needs no turn: empty input is no tool_use.
    const toolUses = yield* Effect.flatMap(readStdin, (raw) =>
      options.endSession === true && raw.trim() === ""
        ? Effect.succeed([])
        : Either.match(decodeStdin(raw), { onLeft: Effect.fail, onRight: Effect.succeed }))
    const lock = TerminalApprover.makeTerminalLock()
    const approver = approverFor(options, TerminalApprover.layerAuto({ lock }))
    if (options.durable !== undefined) {
      return yield* execDurable(options, toolUses, approver, lock)
    }
    yield* Effect.scoped(
      Effect.gen(function*() {
        yield* forgetOnForcedExit
        const session = yield* Session
        const tasks = yield* TaskRegistry
        const toolRuntime = yield* ToolRuntime
        const runtime = yield* Effect.runtime<never>()
        const handle = yield* toolRuntime.start(toolUses, { mode: options.scheduling })
        // A signal that came earlier cancels at once: every call "never ran".
        const unregister = onFirstSignal(() => {
          // A signal ends the tasks too: nothing the run started outlives it.
          Runtime.runSync(runtime)(tasks.stopOnClose)
          Runtime.runFork(runtime)(handle.cancel)
        })
        yield* Effect.addFinalizer(() => Effect.sync(unregister))
        const suggestions = suggestionsRecorder()
        const printer = yield* Effect.forkScoped(Stream.runForEach(handle.events, (event) => {
          suggestions.record(event)
          return options.verbose ? printEvent(lock, event) : Effect.void
        }))
        const outcomes = yield* handle.await
        // The events stream ends with the run: wait for the last lines to be printed.
        yield* Fiber.join(printer)
        yield* session.checkpoint
        const ended = yield* endOfRun(tasks, options)
        yield* writeJsonLine({
          results: outcomes.map((outcome) => outcome.result),
          outcomes: outcomes.map((outcome) => summary(outcome, suggestions.of(outcome.toolUseId))),
          ...ended
        })
      }).pipe(
        Effect.provide(
          sessionRuntimeLayer(
            options,
            approver,
            options.sessionDir === undefined
              ? { onClose: "stop" }
              : { onClose: "detach", sandboxHost: TaskRegistry.sandboxHost() }
          )
        )
      )
    )
  })

/**
 * `exec --durable`: the turn runs as a durable turn in the session directory (or the Postgres database). The same
 * turn run again (after the process died) resumes it: what completed is not run again, and an unanswered question
 * is asked again. A signal stops the runner at once (the calls running are interrupted, their process trees
 * stopped) and leaves the turn as it is: run again, a call that was running is run again if it is idempotent, else
 * reported "unknown".
 */
const execDurable = <E>(
  options: RuntimeOptions,
  toolUses: ReadonlyArray<ToolUseBlock>,
  approver: Layer.Layer<Approver, E>,
  lock: Effect.Semaphore
) =>
  Effect.gen(function*() {
    // Loaded only here: the durable dependencies stay out of every other start.
    const { durableRun, durableRuntimeLayer } = yield* Effect.promise(() => import("./durable.js"))
    const work = Effect.scoped(
      Effect.gen(function*() {
        const session = yield* Session
        const tasks = yield* TaskRegistry
        const run = yield* durableRun
        const suggestions = suggestionsRecorder()
        const outcomes = yield* run({
          toolUses,
          mode: options.scheduling,
          onEvent: (event) => {
            suggestions.record(event)
            return options.verbose ? printEvent(lock, event) : Effect.void
          }
        })
        yield* session.checkpoint
        const ended = yield* endOfRun(tasks, options)
        yield* writeJsonLine({
          results: outcomes.map((outcome) => outcome.result),
          outcomes: outcomes.map((outcome) => summary(outcome, suggestions.of(outcome.toolUseId))),
          ...ended
        })
      }).pipe(
        Effect.provide(durableRuntimeLayer(options, approver)),
        Effect.provide(
          TaskRegistry.layerSession({ onClose: "detach", sandboxHost: TaskRegistry.sandboxHost() })
        ),
        Effect.provide(sessionLayer(options))
      )
    )
    const fiber = yield* Effect.fork(work)
    const unregister = onFirstSignal(() => Effect.runFork(Fiber.interrupt(fiber)))
    const exit = yield* Fiber.await(fiber).pipe(Effect.ensuring(Effect.sync(unregister)))
    if (Exit.isFailure(exit) && Exit.isInterrupted(exit)) {
      process.stderr.write(
        "effect-tool-runtime: stopped by a signal; the durable turn is left as it is: run the same turn again " +
          "with this --session to resume it\n"
      )
      return
    }
    return yield* exit
  })
