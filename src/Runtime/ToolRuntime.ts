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
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import type * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { ToolHooks } from "../Hooks/ToolHooks.js"
import { Approver } from "../Permission/Approver.js"
import { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import { ResultStore } from "../Session/ResultStore.js"
import { nextTurn } from "../Shared/realTime.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import { AuditLog } from "./AuditLog.js"
import { DurableExecution } from "./DurableExecution.js"
import { ToolEvent } from "./Events.js"
import { Assembler } from "./internal/assembler.js"
import { continueWith, continueWithExit } from "./internal/continuation.js"
import { makeWriteLog } from "./internal/freshness.js"
import type { WriteLog } from "./internal/freshness.js"
import { PermitGate } from "./internal/permits.js"
import {
  availabilityCache,
  availabilityOnce,
  interrupted,
  isParked,
  prepare,
  run,
  runScheduled,
  traceOf,
  tracesCalls
} from "./internal/pipeline.js"
import type { Admission, AnyInvocation, Parked, PipelineEnv, Prepared, Trace } from "./internal/pipeline.js"
import { DependencyGraph, isExclusive, isWaiting, makeNode, widens } from "./internal/scheduler.js"
import type { Node, SchedulingMode } from "./internal/scheduler.js"
import { assemble } from "./Preview.js"
import type { Preview, ToolUsePart } from "./Preview.js"
import { RuntimeConfig } from "./RuntimeConfig.js"
import type { RuntimeSettings } from "./RuntimeConfig.js"

export type { SchedulingMode } from "./internal/scheduler.js"

/**
 * The tool_uses of one run: all at once (an array), or as the model streams them (complete blocks and
 * {@link ToolUsePart}s), from a Stream or a Mailbox. A Mailbox is read without stream machinery: what a loop that
 * offers the reply's parts as they arrive should give (`AgentLoop` does).
 *
 * @since 0.3.0
 * @category models
 */
export type RunInput<E = never> =
  | Iterable<ToolUseBlock>
  | Stream.Stream<ToolUseBlock | ToolUsePart, E>
  | Mailbox.ReadonlyMailbox<ToolUseBlock | ToolUsePart, E>

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
      toolUses: RunInput<E>,
      options?: RunOptions
    ) => Effect.Effect<RunHandle<E>, never, Scope.Scope>
    /** Runs tool_uses to completion; the outcomes are in model order. */
    readonly execute: <E = never>(
      toolUses: RunInput<E>,
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
    toolUses: RunInput<E>,
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
    toolUses: RunInput<E>,
    options?: RunOptions
  ): Effect.Effect<RunHandle<E>, never, ToolRuntime | Scope.Scope> =>
    Effect.flatMap(ToolRuntime, (runtime) => runtime.start(toolUses, options))
}

/** A call of a run: its place in the dependency graph, the prepared call, and how far it got. */
interface Task {
  readonly node: Node
  readonly call: Prepared
  readonly trace: Trace
  /** How the pipeline asks to execute, with the input that will run. */
  readonly admission: Admission
  /** Permits it holds (the gate writes this). */
  held: number
  /** Its fiber, unless it ran to its Outcome at once (a call whose stages are all synchronous). */
  fiber: Fiber.RuntimeFiber<void> | undefined
  /** The rest of a parked call's run: what it resumes with once its new predecessors have finished. */
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
  // A durable turn's layer (optional): calls and questions go through it.
  const durable = Option.getOrUndefined(yield* Effect.serviceOption(DurableExecution))
  // One person, one question at a time: shared by every run of this runtime.
  const approvalLock = yield* Effect.makeSemaphore(1)

  /** What the pipeline runs with: the runtime's services, this run's settings, clock, events and cancellation. */
  const makeEnv = (
    settings: RuntimeSettings,
    clock: Clock.Clock,
    emit: PipelineEnv["emit"],
    listened: boolean,
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
    listened,
    withApprovalLock: approvalLock.withPermits(1),
    cancelRun,
    traced,
    availability,
    writes,
    durable
  })

  /**
   * A run: its scheduling state, the intake that schedules its tool_uses, and the handle's operations. Made
   * synchronously from what the starting fiber knows (`RunContext`); the caller decides where the intake runs (a fiber
   * of its own for `start`, the caller's own fiber for `execute`) and what owns the calls' fibers (`calls`).
   * `streams` is absent when nobody can listen (`execute`): events are then never built, outcomes never queued.
   *
   * A fiber per call, forked in the run's FiberSet (`calls`): it waits for its predecessors' "done" signals, takes
   * its permits (one, or all for a call that runs alone) from the run's {@link PermitGate}, runs the pipeline, gives
   * the permits back and settles its Outcome, which signals the calls that wait for it. A call that a rewrite
   * re-planned parks at its admission: it gives its permits back, waits for its new predecessors, and takes permits
   * again to go on.
   * A call that may start at once and whose stages are all synchronous (a trivial tool) needs no fiber at all.
   */
  const makeRun = <E>(
    toolUses: RunInput<E>,
    options: RunOptions,
    context: RunContext,
    calls: FiberSet.FiberSet<void>,
    streams: RunStreams<E> | undefined
  ): Run<E> => {
    const { audit, clock, settings, traced } = context
    const events = streams?.events
    const ordered = streams?.ordered
    const mode = options.mode ?? "conflict-aware"
    const cap = Math.max(1, options.maxConcurrency ?? settings.maxConcurrency)
    /** Awaited only by a caller that comes before the end (made then). */
    let all: Deferred.Deferred<ReadonlyArray<Outcome>, E> | undefined = undefined
    /** The run's end, once there is one (what `all` completes with). */
    let result: Exit.Exit<ReadonlyArray<Outcome>, E> | undefined = undefined
    const graph = new DependencyGraph()
    const gate = new PermitGate<Task>(cap, (task) => graph.chainBehind(task.node), () => graph.epoch)
    const tasks: Array<Task | undefined> = []
    const outcomes: Array<Outcome | undefined> = []
    let delivered = 0
    let settled = 0
    let inputEnd: Exit.Exit<void, E> | undefined = undefined
    let cancelled = false
    /** Calls registered and neither executing nor settled yet. */
    let unadmitted = 0

    const env = makeEnv(
      settings,
      clock,
      emitter(audit, events === undefined ? undefined : (event) => Effect.sync(() => events.unsafeOffer(event))),
      audit.enabled || events !== undefined,
      Effect.suspend(() => cancelOthers),
      traced,
      availabilityCache(),
      makeWriteLog()
    )

    /**
     * Records an outcome, signals the calls that wait for it, and delivers outcomes in model order. The
     * bookkeeping is synchronous, so a fiber interrupted right after it cannot lose an outcome.
     */
    const settle = (index: number, outcome: Outcome): Effect.Effect<void> => {
      if (outcomes[index] !== undefined) return Effect.void
      outcomes[index] = outcome
      settled++
      const task = tasks[index]
      if (task !== undefined) {
        if (!task.node.started) unadmitted--
        graph.finish(task.node)
      }
      const start = delivered
      while (outcomes[delivered] !== undefined) delivered++
      if (delivered > start) ordered?.unsafeOfferAll(outcomes.slice(start, delivered) as Array<Outcome>)
      // Outcomes that cancelling produced do not cancel again; the run still ends when the last one settles.
      if (!cancelled && options.cancelSiblingsWhen?.(outcome) === true) {
        return Effect.zipRight(cancelOthers, Effect.sync(maybeFinish))
      }
      maybeFinish()
      return Effect.void
    }

    /** Once the input has ended and every call has its outcome: end the streams and the run. */
    const maybeFinish = (): void => {
      if (inputEnd === undefined || settled < outcomes.length) return
      const end = inputEnd
      inputEnd = undefined
      ordered?.unsafeDone(end)
      events?.unsafeDone(Exit.void)
      result = Exit.as(end, outcomes as ReadonlyArray<Outcome>)
      if (all !== undefined) Deferred.unsafeDone(all, result)
    }

    /**
     * Stops the run: no call starts from now on; every call but the caller's own (a person's "deny and stop" must
     * still report its call) and those `spare` lets finish is interrupted, and gets its outcome from its trace:
     * started, or never ran. Spared calls report their own outcome when they finish. (The permits of interrupted
     * calls are not given back: a stopped run starts nothing.)
     */
    const stop = (spare: (task: Task) => boolean): Effect.Effect<void> =>
      Effect.withFiberRuntime<void>((self) => {
        // Decided in one synchronous step, with `cancelled` set first: no call can start executing in between.
        cancelled = true
        const stopping: Array<Task> = []
        for (const task of tasks) {
          // `tasks` has holes where a call had its outcome at once (unknown tool, invalid input).
          if (task === undefined || task.fiber === self || outcomes[task.node.index] !== undefined) continue
          if (!spare(task)) stopping.push(task)
        }
        // All at once: one by one, a call released by a finishing one could start before its own turn came.
        return Effect.zipRight(
          Fiber.interruptAll(stopping.flatMap((task) => task.fiber === undefined ? [] : [task.fiber])),
          Effect.forEach(
            stopping,
            (task) =>
              outcomes[task.node.index] !== undefined
                ? Effect.void
                : Effect.flatMap(
                  interrupted(env, task.call, task.trace),
                  (outcome) => settle(task.node.index, outcome)
                ),
            { discard: true }
          )
        )
      })

    /** Cancels everything (see {@link stop}). */
    const cancelOthers: Effect.Effect<void> = Effect.suspend(() => stop(() => false))

    /** A soft interrupt: executing calls whose tool blocks interrupts finish; everything else stops. */
    const interruptRun: Effect.Effect<void> = Effect.suspend(() =>
      stop((task) => task.node.started && task.call.tool.service.interruptBehavior === "block")
    )

    /** A call that runs alone takes every permit: nothing else runs beside it, not even a gate. */
    const permitsFor = (task: Task): number => task.node.exclusive ? cap : 1

    /** The call has run as far as it can with its permits: give them back, then settle it or park it. */
    const ran = (task: Task, result: Outcome | Parked): Effect.Effect<void> => {
      if (!isParked(result)) {
        const settling = settle(task.node.index, result)
        // The calls its end made ready ask for its permits first: they may have the longest chains behind them.
        if (!gate.contended || !task.node.dependents.some((next) => !isWaiting(next))) {
          gate.release(task)
          return settling
        }
        return Effect.zipRight(settling, Effect.zipRight(Effect.yieldNow(), Effect.sync(() => gate.release(task))))
      }
      gate.release(task)
      // Parked by a stopped run (its own call, which the stop leaves to report itself): it never starts.
      if (cancelled) return Effect.flatMap(interrupted(env, task.call, task.trace), (o) => settle(task.node.index, o))
      task.resume = result.resume
      return waitAndRun(task)
    }

    /** A call's fiber: wait for every predecessor, take the permits, run (or resume) the pipeline. */
    const waitAndRun = (task: Task): Effect.Effect<void> =>
      continueWith(
        graph.predecessorsDone(task.node),
        () =>
          continueWith(gate.take(task, permitsFor(task), task.node.index), () => {
            const resume = task.resume
            task.resume = undefined
            return continueWith(
              resume ?? runScheduled(env, task.call, task.trace, task.admission),
              (result) => ran(task, result)
            )
          })
      )

    /**
     * Calls that complete where they are launched run one after the other in the intake, never waiting: every
     * {@link SLICE_MS} of that the event loop gets a turn, so that timers (a caller's timeout), I/O and other fibers
     * run, and the run can be interrupted, during a long turn of them.
     */
    let sliceStart = performance.now()
    const turnIfLong = (settled: Effect.Effect<void>): Effect.Effect<void> => {
      if (performance.now() - sliceStart < SLICE_MS) return settled
      return Effect.zipRight(
        settled,
        Effect.zipRight(nextTurn, Effect.sync(() => void (sliceStart = performance.now())))
      )
    }

    const fork = (task: Task, body: Effect.Effect<void>): Effect.Effect<void> =>
      Effect.map(FiberSet.run(calls, body), (fiber) => {
        task.fiber = fiber
      })

    /**
     * Starts a registered call. A call that may start at once and finds a permit free runs its stages right here:
     * when they are all synchronous (a trivial tool), its Outcome is there at once and it needs no fiber; otherwise
     * (its stages suspended, or it parked) the fiber it gets goes on from there, holding the permit.
     */
    const launch = (task: Task, ready: boolean): Effect.Effect<void> => {
      // Only when no earlier call is still before its admission: such a call may yet be re-planned into a conflict
      // with this one, and must get the chance to put it behind itself (its fiber runs first).
      if (!ready || unadmitted > 1 || !gate.tryTake(task, permitsFor(task))) {
        const forked = fork(
          task,
          Effect.suspend(() => waitAndRun(task))
        )
        return ready ? Effect.zipRight(forked, Effect.yieldNow()) : forked
      }
      const flow = runScheduled(env, task.call, task.trace, task.admission)
      if (Exit.isExit(flow)) {
        const exit = flow as Exit.Exit<Outcome | Parked>
        if (Exit.isSuccess(exit) && !isParked(exit.value)) {
          return turnIfLong(ran(task, exit.value))
        }
      }
      return Effect.zipRight(fork(task, continueWith(flow, (result) => ran(task, result))), Effect.yieldNow())
    }

    /**
     * Right before a call executes, with the input that will run: an input that now claims more (or must run
     * alone) is registered again; a call that must wait (for those claims, or because an earlier call's rewrite put
     * it behind that call) is parked; otherwise it starts.
     */
    const admit = (task: Task, invocation: AnyInvocation): boolean => {
      const node = task.node
      // A stopped run starts nothing: the call parks for good, and is reported as never started.
      if (cancelled) return true
      if (invocation !== task.call.invocation) {
        const exclusive = isExclusive(mode, invocation.claims, invocation.traits.concurrencySafe)
        const claims = mode === "batched" ? [] : invocation.claims
        if (!node.exclusive && (exclusive || widens(node.claims, claims))) graph.replan(node, claims, exclusive)
      }
      if (isWaiting(node)) return true
      node.started = true
      unadmitted--
      return false
    }

    const schedule = (toolUse: ToolUseBlock, index: number): Effect.Effect<void> => {
      const receivedAt = env.clock.unsafeCurrentTimeMillis()
      outcomes.push(undefined)
      return continueWith(
        env.emit(() => ToolEvent.Queued({ toolUseId: toolUse.id, name: toolUse.name, at: receivedAt })),
        () =>
          continueWith(prepare(env, toolUse, receivedAt, timeoutOf(options, toolUse)), (prepared) => {
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
              held: 0,
              fiber: undefined,
              resume: undefined
            }
            tasks[index] = task
            unadmitted++
            return launch(task, graph.add(node))
          })
      )
    }

    /** An array's tool_uses one after the other, continued synchronously while scheduling them is. */
    const scheduleAll = (iterator: Iterator<ToolUseBlock>, index: number): Effect.Effect<void> => {
      for (;;) {
        const next = iterator.next()
        if (next.done === true) return Effect.void
        const scheduled = schedule(next.value, index++)
        if (!Exit.isExit(scheduled)) return Effect.flatMap(scheduled, () => scheduleAll(iterator, index))
      }
    }

    // Nobody can listen to a run without events (execute): its previews are never built.
    const onPreview = events !== undefined
      ? (preview: Preview) =>
        env.emit(() => ToolEvent.Previewed({ ...preview, at: env.clock.unsafeCurrentTimeMillis() }))
      : undefined

    /** A Mailbox's parts as they come, each batch taken at once; a tool_use is scheduled once it is complete. */
    const fromMailbox = (mailbox: Mailbox.ReadonlyMailbox<ToolUseBlock | ToolUsePart, E>): Effect.Effect<void, E> => {
      const assembler = new Assembler(registry, onPreview)
      let index = 0
      const scheduleBlocks = (blocks: ReadonlyArray<ToolUseBlock>) =>
        Effect.forEach(blocks, (toolUse) => schedule(toolUse, index++), { discard: true })
      const take: Effect.Effect<void, E> = Effect.flatMap(mailbox.takeAll, ([parts, done]) =>
        Effect.zipRight(
          Effect.forEach(parts, (part) => Effect.flatMap(assembler.step(part), scheduleBlocks), { discard: true }),
          done ? Effect.suspend(() => scheduleBlocks(assembler.rest())) : take
        ))
      return take
    }

    // An array needs no stream machinery: most turns arrive whole. (A Mailbox is an Effect, so iterable: it is
    // told apart first.)
    const intake: Effect.Effect<void, E> = Mailbox.isReadonlyMailbox<ToolUseBlock | ToolUsePart, E>(toolUses)
      ? fromMailbox(toolUses)
      : Symbol.iterator in toolUses
      ? Effect.suspend(() => scheduleAll((toolUses as Iterable<ToolUseBlock>)[Symbol.iterator](), 0))
      : Stream.runForEach(
        // Streamed parts are previewed as they come; a tool_use is scheduled once it is complete.
        Stream.zipWithIndex(assemble(registry, toolUses as Stream.Stream<ToolUseBlock | ToolUsePart, E>, onPreview)),
        ([toolUse, index]) => schedule(toolUse, index)
      )

    return {
      intake: continueWithExit(intake, (end) => {
        inputEnd = end
        maybeFinish()
        return Effect.void
      }),
      end: () => result ?? Deferred.await(all ??= Deferred.unsafeMake(context.fiberId)),
      cancel: cancelOthers,
      interrupt: interruptRun
    }
  }

  const start = <E>(
    toolUses: RunInput<E>,
    options: RunOptions = {}
  ): Effect.Effect<RunHandle<E>, never, Scope.Scope> =>
    withRunSpan(
      "ToolRuntime.start",
      options,
      (context) =>
        Effect.gen(function*() {
          // Shut down with the run's scope. Added to the scope itself: `acquireRelease`'s finalizer first restores the
          // acquiring fiber's FiberRefs (a diff and a patch of all of them), which a mailbox's shutdown does not need.
          const scope = yield* Effect.scope
          const events = yield* Mailbox.make<ToolEvent>()
          const ordered = yield* Mailbox.make<Outcome, E>()
          yield* Scope.addFinalizer(scope, Effect.zipRight(ordered.shutdown, events.shutdown))
          // The calls' fibers are interrupted together when the run's scope closes (each closes its own scope). A
          // FiberSet does that without a fiber per finalizer, which a scope closed in parallel forks.
          const calls = yield* FiberSet.make<void>()
          const run = makeRun(toolUses, options, context, calls, { events, ordered })
          yield* Effect.forkScoped(run.intake)
          return {
            outcomes: Mailbox.toStream(ordered),
            events: Mailbox.toStream(events),
            cancel: run.cancel,
            interrupt: run.interrupt,
            await: Effect.suspend(run.end)
          } satisfies RunHandle<E>
        })
    )

  // The intake runs in the caller's fiber: a turn whose calls are all synchronous runs without a fiber of its own.
  const execute = <E>(
    toolUses: RunInput<E>,
    options: RunOptions = {}
  ): Effect.Effect<ReadonlyArray<Outcome>, E> =>
    withRunSpan("ToolRuntime.execute", options, (context) =>
      isOneCall(toolUses) ?
        Effect.map(runAlone(toolUses[0]!, options, context, true), (outcome) => [outcome]) :
        // The calls' fibers are interrupted together when the run ends or the caller is interrupted.
        Effect.scoped(Effect.flatMap(FiberSet.make<void>(), (calls) => {
          const run = makeRun(toolUses, options, context, calls, undefined)
          return continueWith(run.intake, run.end)
        })))

  // One call needs no scheduler: straight through the pipeline, with no event consumer.
  /**
   * One call straight through the pipeline: nothing runs beside it or before it, so it needs no scheduler, no
   * fiber and no scope of its own (the call's own scope is the execute stage's). `queued`: it is a run's call, whose
   * Queued event goes to the audit log as a scheduled call's does.
   */
  const runAlone = (
    toolUse: ToolUseBlock,
    options: RunOptions,
    { audit, clock, settings, traced }: RunContext,
    queued: boolean
  ): Effect.Effect<Outcome> => {
    const env = makeEnv(
      settings,
      clock,
      emitter(audit, undefined),
      audit.enabled,
      Effect.void,
      traced,
      availabilityOnce
    )
    const receivedAt = clock.unsafeCurrentTimeMillis()
    return continueWith(
      queued
        ? env.emit(() => ToolEvent.Queued({ toolUseId: toolUse.id, name: toolUse.name, at: receivedAt }))
        : Effect.void,
      () =>
        continueWith(
          prepare(env, toolUse, receivedAt, timeoutOf(options, toolUse)),
          (prepared) => Either.isLeft(prepared) ? Exit.succeed(prepared.left) : run(env, prepared.right)
        )
    )
  }

  const executeOne = (toolUse: ToolUseBlock, options: RunOptions = {}): Effect.Effect<Outcome> =>
    // Settings, clock and tracer read off the fiber at once: one step instead of three on the hot path.
    Effect.withFiberRuntime((fiber) => runAlone(toolUse, options, runContextOf(fiber), false))

  return { start, execute, executeOne }
})

/** How long calls completing where they are launched may hold the event loop before it gets a turn. */
const SLICE_MS = 10

/** A turn of one tool_use, given whole: it needs no scheduler. */
const isOneCall = (
  toolUses: RunInput<unknown>
): toolUses is ReadonlyArray<ToolUseBlock> => Array.isArray(toolUses) && toolUses.length === 1

/** What a run reads off the fiber that starts it, in one step. */
interface RunContext {
  readonly settings: RuntimeSettings
  readonly clock: Clock.Clock
  readonly audit: AuditLog["Type"]
  readonly traced: boolean
  readonly fiberId: FiberId.FiberId
}

const runContextOf = (fiber: Fiber.RuntimeFiber<unknown, unknown>): RunContext => ({
  settings: Context.get(fiber.currentContext as Context.Context<RuntimeConfig>, RuntimeConfig),
  clock: Context.get(fiber.currentDefaultServices, Clock.Clock),
  audit: Context.get(fiber.currentContext as Context.Context<AuditLog>, AuditLog),
  traced: tracesCalls(fiber.currentTracer),
  fiberId: fiber.id()
})

/**
 * A run with what its fiber knows, in a span of its own when the program installed a tracer (Effect's built-in one
 * exports nothing, and a span costs more than a trivial turn: `bench/pipeline`).
 */
const withRunSpan = <A, E, R>(
  name: string,
  options: RunOptions,
  body: (context: RunContext) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime((fiber) => {
    const context = runContextOf(fiber)
    return context.traced
      ? Effect.withSpan(body(context), name, { attributes: { "run.mode": options.mode ?? "conflict-aware" } })
      : body(context)
  })

/** The streams of a run somebody can listen to (`start`). */
interface RunStreams<E> {
  readonly events: Mailbox.Mailbox<ToolEvent>
  readonly ordered: Mailbox.Mailbox<Outcome, E>
}

/** A run made by `makeRun`. */
interface Run<E> {
  /** Schedules every tool_use as it comes; ends when the input has (never fails: the run's end carries it). */
  readonly intake: Effect.Effect<void>
  /** The outcomes once every call has one: at once when the run has ended. */
  readonly end: () => Effect.Effect<ReadonlyArray<Outcome>, E>
  readonly cancel: Effect.Effect<void>
  readonly interrupt: Effect.Effect<void>
}
