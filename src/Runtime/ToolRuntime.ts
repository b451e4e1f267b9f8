/**
 * The ToolRuntime runs the tool_use blocks of one model turn: every call goes through the one-call pipeline, the
 * scheduler decides what may run together, and the run yields exactly one Outcome per tool_use, in model order,
 * plus a stream of events as they happen.
 *
 * ```ts
 * const outcomes = yield* ToolRuntime.execute(toolUses)            // all at once
 * const handle = yield* ToolRuntime.start(streamOfToolUses)        // while the model streams (blocks or ToolUseParts)
 * yield* handle.cancel                                             // every tool_use still gets an Outcome
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { ToolHooks } from "../Hooks/ToolHooks.js"
import { Approver } from "../Permission/Approver.js"
import { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import { ResultStore } from "../Session/ResultStore.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import { AuditLog } from "./AuditLog.js"
import { ToolEvent } from "./Events.js"
import { continueWith as andThen } from "./internal/continuation.js"
import { makeWriteLog } from "./internal/freshness.js"
import type { WriteLog } from "./internal/freshness.js"
import {
  availabilityCache,
  availabilityOnce,
  interrupted,
  isParked,
  isTracing,
  prepare,
  run,
  runScheduled,
  traceOf,
  tracesCalls
} from "./internal/pipeline.js"
import type { Admission, AnyInvocation, Parked, PipelineEnv, Prepared, Trace } from "./internal/pipeline.js"
import { DependencyGraph, isExclusive, makeNode, widens } from "./internal/scheduler.js"
import type { Node, SchedulingMode } from "./internal/scheduler.js"
import { assemble } from "./Preview.js"
import type { ToolUsePart } from "./Preview.js"
import { RuntimeConfig } from "./RuntimeConfig.js"
import type { RuntimeSettings } from "./RuntimeConfig.js"

export type { SchedulingMode } from "./internal/scheduler.js"

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Default `"conflict-aware"`. */
  readonly mode?: SchedulingMode | undefined
  /** How many calls may run at once; default from {@link RuntimeConfig} (10). */
  readonly maxConcurrency?: number | undefined
  /** A per-call timeout overriding the tool's default. */
  readonly timeoutFor?: ((toolUse: ToolUseBlock) => Duration.DurationInput | undefined) | undefined
  /** Cancel the rest of the run when an outcome satisfies this. Default: never (siblings are independent). */
  readonly cancelSiblingsWhen?: ((outcome: Outcome) => boolean) | undefined
}

/**
 * A running turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunHandle<E = never> {
  /** Outcomes in model order, each as soon as it and all before it exist. */
  readonly outcomes: Stream.Stream<Outcome, E>
  /** Events as they happen (not held back by ordering). Single consumer. */
  readonly events: Stream.Stream<ToolEvent>
  /** Interrupts running calls, never starts queued ones; every tool_use still gets an Outcome. */
  readonly cancel: Effect.Effect<void>
  /**
   * A soft interrupt (a person typed a new message mid-turn): running calls whose tool's `interruptBehavior` is
   * `"cancel"` are interrupted, those with `"block"` (the default: Bash, edits) finish; calls that have not started
   * executing never do, and tool_uses that arrive later are not run. Every tool_use still gets an Outcome.
   *
   * @since 0.2.0
   */
  readonly interrupt: Effect.Effect<void>
  /** All outcomes, in model order, once the input has ended and every call has finished. */
  readonly await: Effect.Effect<ReadonlyArray<Outcome>, E>
}

/**
 * The ToolRuntime service.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Schema } from "effect"
 * import {
 *   Approver,
 *   PermissionPolicy,
 *   ResultStore,
 *   Tool,
 *   ToolHooks,
 *   ToolRegistry,
 *   ToolRuntime
 * } from "effect-tool-runtime"
 *
 * const Echo = Tool.make("Echo", {
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 * const EchoLive = Echo.implement({
 *   traits: () => ({ readOnly: true, concurrencySafe: true }),
 *   call: ({ text }) => Effect.succeed(text)
 * })
 *
 * // The runtime over a registry, a policy, an approver for what the policy asks about, hooks and a result store.
 * const Runtime = ToolRuntime.layer.pipe(
 *   Layer.provide(Layer.mergeAll(
 *     ToolRegistry.layer([Echo]).pipe(Layer.provide(EchoLive)),
 *     PermissionPolicy.toolOnly,
 *     Approver.denyAll,
 *     ToolHooks.none,
 *     ResultStore.layerMemory()
 *   ))
 * )
 *
 * // One model turn's tool_use blocks in, one Outcome per tool_use out, in model order.
 * export const program = ToolRuntime.execute([
 *   { type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hello" } },
 *   { type: "tool_use", id: "toolu_2", name: "Ecko", input: { text: "hello" } }
 * ]).pipe(
 *   // ["success", "error"]: no tool is named Ecko
 *   Effect.map((outcomes) => outcomes.map((outcome) => outcome.status)),
 *   Effect.provide(Runtime)
 * )
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ToolRuntime extends Context.Tag("effect-tool-runtime/ToolRuntime")<
  ToolRuntime,
  {
    /** Starts a run; its fibers belong to the Scope (closing it interrupts and cleans up everything). */
    readonly start: <E = never>(
      toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
      options?: RunOptions
    ) => Effect.Effect<RunHandle<E>, never, Scope.Scope>
    /** Runs tool_uses to completion; the outcomes are in model order. */
    readonly execute: <E = never>(
      toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
      options?: RunOptions
    ) => Effect.Effect<ReadonlyArray<Outcome>, E>
    /** Runs one tool_use. */
    readonly executeOne: (toolUse: ToolUseBlock, options?: RunOptions) => Effect.Effect<Outcome>
  }
>() {
  /**
   * The runtime over the registry, policy, approver, hooks and result store in context.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer: Layer.Layer<
    ToolRuntime,
    never,
    ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore
  > = Layer.effect(ToolRuntime, Effect.suspend(() => make))

  /**
   * Runs tool_uses to completion with the runtime in context.
   *
   * @since 0.1.0
   * @category accessors
   */
  static readonly execute = <E = never>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
    options?: RunOptions
  ): Effect.Effect<ReadonlyArray<Outcome>, E, ToolRuntime> =>
    Effect.flatMap(ToolRuntime, (runtime) => runtime.execute(toolUses, options))

  /**
   * Starts a run with the runtime in context.
   *
   * @since 0.1.0
   * @category accessors
   */
  static readonly start = <E = never>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
    options?: RunOptions
  ): Effect.Effect<RunHandle<E>, never, ToolRuntime | Scope.Scope> =>
    Effect.flatMap(ToolRuntime, (runtime) => runtime.start(toolUses, options))
}

/** A call the scheduler holds: its place in the dependency graph, the prepared call, and how far it got. */
interface Task {
  readonly node: Node
  readonly call: Prepared
  readonly trace: Trace
  /** How the pipeline asks to execute, with the input that will run. */
  readonly admission: Admission
  /**
   * Where the call is: `waiting` for its dependencies, `queued` for a worker, `gate` (a worker runs its stages up to
   * admission), `parking` (admission said wait; its worker has not let go yet), `parked` (waits, holding no worker),
   * `executing`. Only a `waiting` or `parked` call is handed to the workers when its last dependency finishes.
   */
  state: "waiting" | "queued" | "gate" | "parking" | "parked" | "executing"
  /** Released while `parking`: its worker resumes it at once. */
  releasedWhileParking: boolean
  /** The rest of a parked call's run, once it is released again. */
  resume: Effect.Effect<Outcome | Parked> | undefined
}

/**
 * How a run publishes its events: to its listeners (when it has any) and to the audit log (when there is one).
 * Events are built lazily, so a run that nobody listens to and nothing audits does not build them.
 */
const emitter = (
  audit: AuditLog["Type"],
  publish: ((event: ToolEvent) => Effect.Effect<unknown>) | undefined
): PipelineEnv["emit"] => {
  if (!audit.enabled) return publish === undefined ? () => Effect.void : (event) => Effect.asVoid(publish(event()))
  if (publish === undefined) return (event) => audit.record(event())
  return (event) => {
    const built = event()
    return Effect.zipRight(audit.record(built), Effect.asVoid(publish(built)))
  }
}

const timeoutOf = (options: RunOptions, toolUse: ToolUseBlock): Duration.Duration | undefined => {
  const timeout = options.timeoutFor?.(toolUse)
  return timeout === undefined ? undefined : Duration.decode(timeout)
}

const make = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const policy = yield* PermissionPolicy
  const approver = yield* Approver
  const hooks = yield* ToolHooks
  const store = yield* ResultStore
  // One person, one question at a time: shared by every run of this runtime.
  const approvalLock = yield* Effect.makeSemaphore(1)

  /** What the pipeline runs with: the runtime's services, this run's settings, clock, events and cancellation. */
  const makeEnv = (
    settings: RuntimeSettings,
    clock: Clock.Clock,
    emit: PipelineEnv["emit"],
    cancelRun: Effect.Effect<void>,
    traced: boolean,
    availability: PipelineEnv["availability"],
    writes?: WriteLog
  ): PipelineEnv => ({
    // One snapshot per run: tools that appear or go (MCP's tools/list_changed) do not change a run under way.
    registry: registry.snapshot(),
    policy,
    approver,
    hooks,
    store,
    settings,
    clock,
    emit,
    withApprovalLock: approvalLock.withPermits(1),
    cancelRun,
    traced,
    availability,
    writes
  })

  /** Starts a run; `withEvents: false` when nobody can listen (execute), so events are never built. */
  const startRun = <E>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
    options: RunOptions,
    withEvents: boolean
  ): Effect.Effect<RunHandle<E>, never, Scope.Scope> =>
    Effect.gen(function*() {
      const settings = yield* RuntimeConfig
      const mode = options.mode ?? "conflict-aware"
      const cap = Math.max(1, options.maxConcurrency ?? settings.maxConcurrency)
      const events = yield* Effect.acquireRelease(
        Queue.unbounded<Exit.Exit<ToolEvent, Option.Option<never>>>(),
        Queue.shutdown
      )
      const ordered = yield* Effect.acquireRelease(
        Queue.unbounded<Exit.Exit<Outcome, Option.Option<E>>>(),
        Queue.shutdown
      )
      // Calls whose conflicts have all finished, for the workers to take; `undefined` tells a worker to stop.
      const ready = yield* Effect.acquireRelease(Queue.unbounded<Task | undefined>(), Queue.shutdown)
      const all = yield* Deferred.make<ReadonlyArray<Outcome>, E>()
      const graph = new DependencyGraph()
      const tasks: Array<Task | undefined> = []
      const outcomes: Array<Outcome | undefined> = []
      let delivered = 0
      let settled = 0
      let inputEnd: Exit.Exit<void, E> | undefined = undefined
      let cancelled = false
      /**
       * The workers: fibers taking ready calls, started as needed up to `cap`, so at most `cap` calls run and none
       * waits while a worker could be started for it.
       */
      const workers: Array<Fiber.RuntimeFiber<void>> = []
      let busy = 0
      /** Calls handed to the queue and not yet taken by a worker. */
      let waiting = 0
      const runScope = yield* Effect.scope

      const audit = yield* AuditLog
      const env = makeEnv(
        settings,
        yield* Effect.clock,
        emitter(audit, withEvents ? (event) => Queue.offer(events, Exit.succeed(event)) : undefined),
        Effect.suspend(() => cancelOthers),
        yield* isTracing,
        availabilityCache(),
        makeWriteLog()
      )

      /** Records an outcome, releases the calls that waited for it, and delivers outcomes in model order. */
      const settle = (index: number, outcome: Outcome): Effect.Effect<void> => {
        if (outcomes[index] !== undefined) return Effect.void
        outcomes[index] = outcome
        settled++
        const task = tasks[index]
        const released: Array<Task> = []
        if (task !== undefined) {
          for (const node of graph.finish(task.node)) {
            const next = tasks[node.index]!
            // A call being parked right now resumes in its own worker as soon as it has parked; a call that is queued
            // or in its gate is already on its way (its admission looks at its dependencies again).
            if (next.state === "parking") next.releasedWhileParking = true
            else if (next.state === "waiting" || next.state === "parked") released.push(next)
          }
        }
        const inOrder: Array<Exit.Exit<Outcome, Option.Option<E>>> = []
        while (outcomes[delivered] !== undefined) inOrder.push(Exit.succeed(outcomes[delivered++]!))
        // Outcomes that cancelling produced do not cancel again; the run still ends when the last one settles.
        let next = !cancelled && options.cancelSiblingsWhen?.(outcome) === true
          ? Effect.zipRight(cancelOthers, maybeFinish)
          : maybeFinish
        if (inOrder.length > 0) next = Effect.zipRight(Queue.offerAll(ordered, inOrder), next)
        if (!cancelled && released.length > 0) next = Effect.zipRight(enqueue(released), next)
        return next
      }

      /** Once the input has ended and every call has its outcome: end the streams, stop the workers. */
      const maybeFinish = Effect.suspend(() => {
        if (inputEnd === undefined || settled < outcomes.length) return Effect.void
        const end = inputEnd
        inputEnd = undefined
        return Effect.all([
          Queue.offer(
            ordered,
            Exit.isSuccess(end) ? Exit.fail(Option.none()) : Exit.failCause(Cause.map(end.cause, Option.some))
          ),
          Queue.offer(events, Exit.fail(Option.none())),
          Queue.offerAll(ready, workers.map(() => undefined)),
          Deferred.done(all, Exit.as(end, outcomes as ReadonlyArray<Outcome>))
        ], { discard: true })
      })

      /**
       * Stops the run: no call starts from now on; every call but the caller's own (a person's "deny and stop" must
       * still report its call) and those `spare` lets finish is interrupted, and gets its outcome from its trace:
       * started, or never ran. Spared calls report their own outcome when they finish.
       */
      const stop = (spare: (task: Task) => boolean): Effect.Effect<void> =>
        Effect.withFiberRuntime<void>((self) => {
          // Decided in one synchronous step, with `cancelled` set first: no call can start executing in between.
          cancelled = true
          const own = workers.find((worker) => worker.id() === self.id()) === undefined
            ? undefined
            : running.get(self.id())
          const spared = new Set<Task>()
          const others = workers.filter((worker) => {
            if (worker.id() === self.id()) return false
            const task = running.get(worker.id())
            if (task !== undefined && spare(task)) {
              spared.add(task)
              return false
            }
            return true
          })
          // All at once: one by one, a call released by a finishing one could start before its own turn came.
          return Effect.zipRight(
            Fiber.interruptAll(others),
            Effect.forEach(tasks, (task) =>
              // `tasks` has holes where a call had its outcome at once (unknown tool, invalid input).
              task === undefined || task === own || spared.has(task) || outcomes[task.node.index] !== undefined
                ? Effect.void
                : Effect.flatMap(interrupted(env, task.call, task.trace), (outcome) =>
                  settle(task.node.index, outcome)), { discard: true })
          )
        })

      /** Cancels everything (see {@link stop}). */
      const cancelOthers: Effect.Effect<void> = Effect.suspend(() =>
        stop(() =>
          false
        )
      )

      /** A soft interrupt: executing calls whose tool blocks interrupts finish; everything else stops. */
      const interruptRun: Effect.Effect<void> = Effect.suspend(() =>
        stop((task) =>
          task.state === "executing" && task.call.tool.service.interruptBehavior === "block"
        )
      )

      const running = new Map<FiberId.FiberId, Task>()
      const worker = Effect.withFiberRuntime<void>((self) =>
        Effect.gen(function*() {
          while (!cancelled) {
            const task = yield* Queue.take(ready)
            if (task === undefined || cancelled) return
            waiting--
            busy++
            running.set(self.id(), task)
            const resume = task.resume
            task.resume = undefined
            task.state = "gate"
            let result: Outcome | Parked = yield* (resume ?? runScheduled(env, task.call, task.trace, task.admission))
            while (isParked(result) && task.releasedWhileParking) {
              task.releasedWhileParking = false
              task.state = "gate"
              result = yield* result.resume
            }
            running.delete(self.id())
            busy--
            if (isParked(result)) {
              // Waits, holding no worker, until the calls it now waits for have finished.
              task.resume = result.resume
              task.state = "parked"
              continue
            }
            yield* settle(task.node.index, result)
          }
        })
      )

      /** Hands ready calls to the workers, starting more (up to the cap) when too few are idle. */
      const enqueue = (ready_: ReadonlyArray<Task>): Effect.Effect<void> => {
        for (const task of ready_) task.state = "queued"
        waiting += ready_.length
        // Every worker not running a call will take one waiting call: start enough for the rest.
        const missing = Math.min(waiting - (workers.length - busy), cap - workers.length)
        const start = missing <= 0 ?
          Effect.void :
          Effect.forEach(
            Array.from({ length: missing }),
            () => Effect.map(Effect.forkIn(worker, runScope), (fiber) => void workers.push(fiber)),
            { discard: true }
          )
        return Effect.zipRight(start, Queue.offerAll(ready, ready_))
      }

      /**
       * Right before a call executes, with the input that will run: an input that now claims more (or must run
       * alone) is registered again; a call that must wait (for those claims, or because an earlier call's rewrite put
       * it behind that call) is parked; otherwise it starts.
       */
      const admit = (task: Task, invocation: AnyInvocation): boolean => {
        const node = task.node
        // A stopped run starts nothing: the call parks for good, and the stop reports it as never started.
        if (cancelled) {
          task.state = "parking"
          return true
        }
        if (invocation !== task.call.invocation) {
          const exclusive = isExclusive(mode, invocation.claims, invocation.traits.concurrencySafe)
          const claims = mode === "batched" ? [] : invocation.claims
          if (!node.exclusive && (exclusive || widens(node.claims, claims))) graph.replan(node, claims, exclusive)
        }
        if (node.pending > 0) {
          task.state = "parking"
          return true
        }
        task.state = "executing"
        node.started = true
        return false
      }

      const schedule = (toolUse: ToolUseBlock, index: number): Effect.Effect<void> => {
        const receivedAt = env.clock.unsafeCurrentTimeMillis()
        outcomes.push(undefined)
        return andThen(
          env.emit(() => ToolEvent.Queued({ toolUseId: toolUse.id, name: toolUse.name, at: receivedAt })),
          () =>
            andThen(prepare(env, toolUse, receivedAt, timeoutOf(options, toolUse)), (prepared) => {
              if (Either.isLeft(prepared)) return settle(index, prepared.left)
              const call = prepared.right
              const trace = traceOf(call)
              if (cancelled) return Effect.flatMap(interrupted(env, call, trace), (outcome) => settle(index, outcome))
              const { claims, traits } = call.invocation
              const node = makeNode(
                index,
                isExclusive(mode, claims, traits.concurrencySafe),
                mode === "batched" ? [] : claims
              )
              const task: Task = {
                node,
                call,
                trace,
                admission: { admit: (invocation) => admit(task, invocation) },
                state: "waiting",
                releasedWhileParking: false,
                resume: undefined
              }
              tasks[index] = task
              return graph.add(node) ? enqueue([task]) : Effect.void
            })
        )
      }

      // An array needs no stream machinery: most turns arrive whole.
      const intake: Effect.Effect<void, E> = Symbol.iterator in toolUses
        ? Effect.forEach(toolUses as Iterable<ToolUseBlock>, schedule, { discard: true })
        : Stream.runForEach(
          // Streamed parts are previewed as they come; a tool_use is scheduled once it is complete.
          // Nobody can listen to a run without events (execute): its previews are never built.
          Stream.zipWithIndex(assemble(
            registry,
            toolUses as Stream.Stream<ToolUseBlock | ToolUsePart, E>,
            withEvents
              ? (preview) =>
                env.emit(() => ToolEvent.Previewed({ ...preview, at: env.clock.unsafeCurrentTimeMillis() }))
              : undefined
          )),
          ([toolUse, index]) => schedule(toolUse, index)
        )
      yield* Effect.forkScoped(
        Effect.flatMap(Effect.exit(intake), (end) => {
          inputEnd = end
          return maybeFinish
        })
      )

      return {
        outcomes: Stream.fromQueue(ordered).pipe(Stream.flattenExitOption),
        events: Stream.fromQueue(events).pipe(Stream.flattenExitOption),
        cancel: cancelOthers,
        interrupt: interruptRun,
        await: Deferred.await(all)
      } satisfies RunHandle<E>
    })

  const start = <E>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
    options: RunOptions = {}
  ) =>
    startRun(toolUses, options, true).pipe(
      Effect.withSpan("ToolRuntime.start", { attributes: { "run.mode": options.mode ?? "conflict-aware" } })
    )

  const execute = <E>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock | ToolUsePart, E>,
    options: RunOptions = {}
  ) =>
    Effect.scoped(Effect.flatMap(startRun(toolUses, options, false), (handle) => handle.await)).pipe(
      Effect.withSpan("ToolRuntime.execute", { attributes: { "run.mode": options.mode ?? "conflict-aware" } })
    )

  // One call needs no scheduler: straight through the pipeline, with no event consumer.
  const executeOne = (toolUse: ToolUseBlock, options: RunOptions = {}): Effect.Effect<Outcome> =>
    // Settings, clock and tracer read off the fiber at once: one step instead of three on the hot path.
    Effect.withFiberRuntime((fiber) => {
      const settings = Context.get(fiber.currentContext as Context.Context<RuntimeConfig>, RuntimeConfig)
      const clock = Context.get(fiber.currentDefaultServices, Clock.Clock)
      const audit = Context.get(fiber.currentContext as Context.Context<AuditLog>, AuditLog)
      const env = makeEnv(
        settings,
        clock,
        emitter(audit, undefined),
        Effect.void,
        tracesCalls(fiber.currentTracer),
        availabilityOnce
      )
      return Effect.flatMap(
        prepare(env, toolUse, clock.unsafeCurrentTimeMillis(), timeoutOf(options, toolUse)),
        (prepared) => Either.isLeft(prepared) ? Effect.succeed(prepared.left) : run(env, prepared.right)
      )
    })

  return { start, execute, executeOne }
})
