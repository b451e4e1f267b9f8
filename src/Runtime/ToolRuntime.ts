/**
 * The ToolRuntime runs the tool_use blocks of one model turn: every call goes through the one-call pipeline, the
 * scheduler decides what may run together, and the run yields exactly one Outcome per tool_use, in model order,
 * plus a stream of events as they happen.
 *
 * ```ts
 * const outcomes = yield* ToolRuntime.execute(toolUses)            // all at once
 * const handle = yield* ToolRuntime.start(streamOfToolUses)        // while the model streams
 * yield* handle.cancel                                             // every tool_use still gets an Outcome
 * ```
 *
 * @since 0.1.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberSet from "effect/FiberSet"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import { Approver } from "./Approver.js"
import { ToolEvent } from "./Events.js"
import { interrupted, prepare, run, traceOf } from "./internal/pipeline.js"
import type { PipelineEnv } from "./internal/pipeline.js"
import { DependencyGraph, isExclusive } from "./internal/scheduler.js"
import type { Node, SchedulingMode } from "./internal/scheduler.js"
import { PermissionPolicy } from "./PermissionPolicy.js"
import { ResultStore } from "./ResultStore.js"
import { RuntimeConfig } from "./RuntimeConfig.js"
import { ToolHooks } from "./ToolHooks.js"
import { ToolRegistry } from "./ToolRegistry.js"

export type { SchedulingMode } from "./internal/scheduler.js"

/**
 * Options of one run.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunOptions {
  /** Default `"conflict-aware"`. */
  readonly mode?: SchedulingMode
  /** How many calls may run at once; default from {@link RuntimeConfig} (10). */
  readonly maxConcurrency?: number
  /** A per-call timeout overriding the tool's default. */
  readonly timeoutFor?: (toolUse: ToolUseBlock) => Duration.DurationInput | undefined
  /** Cancel the rest of the run when an outcome satisfies this. Default: never (siblings are independent). */
  readonly cancelSiblingsWhen?: (outcome: Outcome) => boolean
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
  /** All outcomes, in model order, once the input has ended and every call has finished. */
  readonly await: Effect.Effect<ReadonlyArray<Outcome>, E>
}

/**
 * The ToolRuntime service.
 *
 * @since 0.1.0
 * @category tags
 */
export class ToolRuntime extends Context.Tag("effect-tool-runtime/ToolRuntime")<
  ToolRuntime,
  {
    /** Starts a run; its fibers belong to the Scope (closing it interrupts and cleans up everything). */
    readonly start: <E = never>(
      toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>,
      options?: RunOptions
    ) => Effect.Effect<RunHandle<E>, never, Scope.Scope>
    /** Runs tool_uses to completion; the outcomes are in model order. */
    readonly execute: <E = never>(
      toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>,
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
  static readonly layer: Layer.Layer<ToolRuntime, never, ToolRegistry | PermissionPolicy | Approver | ToolHooks | ResultStore> =
    Layer.effect(ToolRuntime, Effect.suspend(() => make))

  /**
   * Runs tool_uses to completion with the runtime in context.
   *
   * @since 0.1.0
   * @category accessors
   */
  static readonly execute = <E = never>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>,
    options?: RunOptions
  ): Effect.Effect<ReadonlyArray<Outcome>, E, ToolRuntime> => Effect.flatMap(ToolRuntime, (runtime) => runtime.execute(toolUses, options))

  /**
   * Starts a run with the runtime in context.
   *
   * @since 0.1.0
   * @category accessors
   */
  static readonly start = <E = never>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>,
    options?: RunOptions
  ): Effect.Effect<RunHandle<E>, never, ToolRuntime | Scope.Scope> => Effect.flatMap(ToolRuntime, (runtime) => runtime.start(toolUses, options))
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

  const start = <E>(
    toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>,
    options: RunOptions = {}
  ): Effect.Effect<RunHandle<E>, never, Scope.Scope> =>
    Effect.gen(function*() {
      const settings = yield* RuntimeConfig
      const mode = options.mode ?? "conflict-aware"
      const cap = Math.max(1, options.maxConcurrency ?? settings.maxConcurrency)
      const permits = yield* Effect.makeSemaphore(cap)
      const events = yield* Effect.acquireRelease(Queue.unbounded<Exit.Exit<ToolEvent, Option.Option<never>>>(), Queue.shutdown)
      const ordered = yield* Effect.acquireRelease(Queue.unbounded<Exit.Exit<Outcome, Option.Option<E>>>(), Queue.shutdown)
      // Each tool_use's pending Outcome, in model order; `undefined` marks the end of the input.
      const slots = yield* Effect.acquireRelease(Queue.unbounded<Effect.Effect<Outcome> | undefined>(), Queue.shutdown)
      // Every call's fiber; cancelling interrupts them (closing their scopes), and so does closing the run's Scope.
      const fibers = yield* FiberSet.make<Outcome, never>()
      const graph = new DependencyGraph()
      const all = yield* Deferred.make<ReadonlyArray<Outcome>, E>()
      let cancelled = false

      /** Interrupts every call but the caller's own fiber (a person's "deny and stop" must still report its call). */
      const cancelOthers = Effect.withFiberRuntime<void>((self) => {
        cancelled = true
        return Effect.forEach(fibers, (fiber) => (fiber.id() === self.id() ? Effect.void : Fiber.interrupt(fiber)), { discard: true })
      })

      const env: PipelineEnv = {
        registry,
        policy,
        approver,
        hooks,
        store,
        settings,
        clock: yield* Effect.clock,
        emit: (event) => Queue.offer(events, Exit.succeed(event())),
        withApprovalLock: approvalLock.withPermits(1),
        cancelRun: cancelOthers
      }

      const schedule = (toolUse: ToolUseBlock, index: number) =>
        Effect.gen(function*() {
          const receivedAt = env.clock.unsafeCurrentTimeMillis()
          yield* env.emit(() => ToolEvent.Queued({ toolUseId: toolUse.id, name: toolUse.name, at: receivedAt }))
          const prepared = yield* prepare(env, toolUse, receivedAt, timeoutOf(options, toolUse))
          if (Either.isLeft(prepared)) return yield* Queue.offer(slots, Effect.succeed(prepared.left))
          const call = prepared.right
          const trace = traceOf(call)
          if (cancelled) return yield* Queue.offer(slots, interrupted(env, call, trace))
          const exclusive = isExclusive(mode, call.claims, call.traits.concurrencySafe)
          const node: Node = { index, done: yield* Deferred.make<void>(), exclusive }
          const waits = graph.add(node, mode === "batched" ? [] : call.claims)
          const fiber = yield* FiberSet.run(
            fibers,
            Effect.forEach(waits, (other) => Deferred.await(other.done), { discard: true }).pipe(
              Effect.zipRight(permits.withPermits(exclusive ? cap : 1)(run(env, call, trace))),
              Effect.tap((outcome) => (options.cancelSiblingsWhen?.(outcome) === true ? cancelOthers : Effect.void)),
              Effect.ensuring(Deferred.succeed(node.done, undefined))
            )
          )
          // An interrupted call (cancelled run) is reported from its trace: started or never ran.
          yield* Queue.offer(
            slots,
            Effect.flatMap(Fiber.await(fiber), (exit) => (Exit.isSuccess(exit) ? Effect.succeed(exit.value) : interrupted(env, call, trace)))
          )
        })

      const input = Symbol.iterator in toolUses
        ? Stream.fromIterable(toolUses as Iterable<ToolUseBlock>)
        : (toolUses as Stream.Stream<ToolUseBlock, E>)
      const intake = input.pipe(
        Stream.zipWithIndex,
        Stream.runForEach(([toolUse, index]) => schedule(toolUse, index)),
        Effect.exit,
        Effect.tap(() => Queue.offer(slots, undefined))
      )

      // Delivers outcomes in model order, each as soon as it and all before it exist.
      const deliver = (inputEnd: Effect.Effect<Exit.Exit<void, E>>) =>
        Effect.gen(function*() {
          const outcomes: Array<Outcome> = []
          for (let slot = yield* Queue.take(slots); slot !== undefined; slot = yield* Queue.take(slots)) {
            const outcome = yield* slot
            outcomes.push(outcome)
            yield* Queue.offer(ordered, Exit.succeed(outcome))
          }
          const end = yield* inputEnd
          yield* Queue.offer(ordered, Exit.isSuccess(end) ? Exit.fail(Option.none()) : Exit.failCause(end.cause.pipe(Cause.map(Option.some))))
          yield* Queue.offer(events, Exit.fail(Option.none()))
          yield* Deferred.done(all, Exit.as(end, outcomes))
        })

      const intakeFiber = yield* Effect.forkScoped(intake)
      yield* Effect.forkScoped(deliver(Fiber.join(intakeFiber)))

      return {
        outcomes: Stream.fromQueue(ordered).pipe(Stream.flattenExitOption),
        events: Stream.fromQueue(events).pipe(Stream.flattenExitOption),
        cancel: cancelOthers,
        await: Deferred.await(all)
      } satisfies RunHandle<E>
    })

  const execute = <E>(toolUses: Iterable<ToolUseBlock> | Stream.Stream<ToolUseBlock, E>, options?: RunOptions) =>
    Effect.scoped(Effect.flatMap(start(toolUses, options), (handle) => handle.await))

  // One call needs no scheduler: straight through the pipeline, with no event consumer.
  const executeOne = (toolUse: ToolUseBlock, options: RunOptions = {}): Effect.Effect<Outcome> =>
    Effect.flatMap(RuntimeConfig, (settings) =>
      Effect.clockWith((clock) => {
        const env: PipelineEnv = {
          registry,
          policy,
          approver,
          hooks,
          store,
          settings,
          clock,
          emit: () => Effect.void,
          withApprovalLock: approvalLock.withPermits(1),
          cancelRun: Effect.void
        }
        return Effect.flatMap(prepare(env, toolUse, clock.unsafeCurrentTimeMillis(), timeoutOf(options, toolUse)), (prepared) =>
          Either.isLeft(prepared) ? Effect.succeed(prepared.left) : run(env, prepared.right))
      }))

  return { start, execute, executeOne }
})
