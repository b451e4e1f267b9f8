/**
 * Testing kit: a scripted tool whose behaviour (duration, traits, claims, result) comes from its input, a log of
 * what ran when, fast-check arbitraries for whole turns, and a runtime layer wired for tests. With these, users
 * property-test the ordering of their own tools under the real scheduler.
 *
 * @since 0.1.0
 */
import * as Arbitrary from "effect/Arbitrary"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FastCheck from "effect/FastCheck"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as TestClock from "effect/TestClock"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { ToolHooks } from "../Hooks/ToolHooks.js"
import { Approver } from "../Permission/Approver.js"
import { PermissionPolicy } from "../Permission/PermissionPolicy.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { FileAccess } from "../Session/FileAccess.js"
import { ResultStore } from "../Session/ResultStore.js"
import type { Outcome } from "../Tool/Outcome.js"
import * as Tool from "../Tool/Tool.js"
import type { ToolUseBlock } from "../Tool/Wire.js"

// ---------------------------------------------------------------------------------------------------------------
// the scripted tool
// ---------------------------------------------------------------------------------------------------------------

/**
 * The input of {@link Scripted}: how the call behaves.
 *
 * @since 0.1.0
 * @category models
 */
export const ScriptedInput = Schema.Struct({
  label: Schema.String,
  durationMs: Schema.Number,
  concurrencySafe: Schema.Boolean,
  readOnly: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  claims: Schema.Array(Schema.Struct({ resource: Schema.String, access: Schema.Literal("read", "write") })),
  result: Schema.optionalWith(Schema.Literal("succeed", "fail", "die"), { default: () => "succeed" as const })
})
/**
 * @since 0.1.0
 * @category models
 */
export type ScriptedInput = typeof ScriptedInput.Type

/**
 * A tool that sleeps `durationMs` on the Clock (so TestClock drives it), then succeeds, fails or dies as told.
 *
 * @since 0.1.0
 * @category tools
 */
export const Scripted = Tool.make("Scripted", {
  description: "A test tool whose duration, traits, claims and result are given by its input.",
  input: ScriptedInput,
  output: Schema.String,
  touchesEnvironment: false
})

/**
 * One call of {@link Scripted} as it ran: when it started and ended on the Clock, and how many calls were running
 * when it started (itself included).
 *
 * @since 0.1.0
 * @category models
 */
export interface Execution {
  readonly label: string
  readonly startedAt: number
  readonly endedAt: number | undefined
  /** Position of the start among all starts and ends (a logical clock: ties in time are still ordered). */
  readonly startSeq: number
  readonly endSeq: number | undefined
  readonly runningAtStart: number
}

/**
 * The scripted tool, recording every execution into `log`.
 *
 * @since 0.1.0
 * @category layers
 */
export const scriptedLayer = (log: Ref.Ref<ReadonlyArray<Execution>>): Layer.Layer<Tool.Identifier<"Scripted">> =>
  Scripted.implementEffect(
    Effect.gen(function*() {
      const running = yield* Ref.make(0)
      const seq = yield* Ref.make(0)
      const tick = Ref.getAndUpdate(seq, (n) => n + 1)
      return {
        traits: (input) => ({ concurrencySafe: input.concurrencySafe, readOnly: input.readOnly }),
        claims: (input) => input.claims,
        call: (input) =>
          Effect.gen(function*() {
            const now = yield* Clock.currentTimeMillis
            const startSeq = yield* tick
            const runningAtStart = yield* Ref.updateAndGet(running, (n) => n + 1)
            const entry: Execution = {
              label: input.label,
              startedAt: now,
              endedAt: undefined,
              startSeq,
              endSeq: undefined,
              runningAtStart
            }
            const index = yield* Ref.modify(log, (all) => [all.length, [...all, entry]])
            const finish = Effect.gen(function*() {
              const endedAt = yield* Clock.currentTimeMillis
              const endSeq = yield* tick
              yield* Ref.update(running, (n) => n - 1)
              yield* Ref.update(log, (all) => all.map((e, i) => (i === index ? { ...e, endedAt, endSeq } : e)))
            })
            yield* Effect.addFinalizer(() => finish)
            yield* Effect.sleep(input.durationMs)
            if (input.result === "fail") {
              return yield* new Tool.ToolError({ message: `${input.label} failed as scripted` })
            }
            if (input.result === "die") return yield* Effect.die(new Error(`${input.label} died as scripted`))
            return `${input.label} done`
          })
      }
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// arbitraries
// ---------------------------------------------------------------------------------------------------------------

/**
 * Options of {@link arbitraryTurn}.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnOptions {
  readonly minLength?: number | undefined
  readonly maxLength?: number | undefined
  /** Resources calls may claim. Default five files. */
  readonly resources?: ReadonlyArray<string> | undefined
  readonly maxDurationMs?: number | undefined
  /** Whether calls may fail or die. Default true. */
  readonly failures?: boolean | undefined
}

/**
 * One scripted call's input.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const arbitraryScriptedInput = (
  options: TurnOptions = {}
): FastCheck.Arbitrary<Omit<ScriptedInput, "label">> => {
  const resources = options.resources ?? ["file:/w/a", "file:/w/b", "file:/w/c", "file:/w/d", "file:/w/d/e"]
  return FastCheck.record({
    durationMs: FastCheck.integer({ min: 0, max: options.maxDurationMs ?? 50 }),
    concurrencySafe: FastCheck.boolean(),
    readOnly: FastCheck.boolean(),
    claims: FastCheck.oneof(
      {
        weight: 8,
        arbitrary: FastCheck.uniqueArray(
          FastCheck.record({
            resource: FastCheck.constantFrom(...resources),
            access: FastCheck.constantFrom("read" as const, "write" as const)
          }),
          { maxLength: 2, selector: (c) => c.resource }
        )
      },
      { weight: 1, arbitrary: FastCheck.constant([Tool.Claim.world]) }
    ),
    result: (options.failures ?? true)
      ? FastCheck.constantFrom(
        "succeed" as const,
        "succeed" as const,
        "succeed" as const,
        "fail" as const,
        "die" as const
      )
      : FastCheck.constant("succeed" as const)
  })
}

/**
 * A turn of scripted tool_use blocks with unique ids `t0`, `t1`, ... and labels equal to their ids.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const arbitraryTurn = (options: TurnOptions = {}): FastCheck.Arbitrary<ReadonlyArray<ToolUseBlock>> =>
  FastCheck.array(arbitraryScriptedInput(options), {
    minLength: options.minLength ?? 1,
    maxLength: options.maxLength ?? 12
  }).map((inputs) =>
    inputs.map((input, i) => ({
      type: "tool_use" as const,
      id: `t${i}`,
      name: "Scripted",
      input: { label: `t${i}`, ...input }
    }))
  )

// ---------------------------------------------------------------------------------------------------------------
// runtime for tests
// ---------------------------------------------------------------------------------------------------------------

/**
 * A ToolRuntime over the given tools, with no hooks, the tool-only policy, an in-memory result store and the given
 * approver (default: allow all).
 *
 * @since 0.1.0
 * @category layers
 */
export const testRuntime = <const Tools extends ReadonlyArray<Tool.Any>, E, R>(
  tools: Tools,
  toolLayers: Layer.Layer<Tool.IdentifierOf<Tools[number]>, E, R>,
  approver: Layer.Layer<Approver> = Approver.allowAll
): Layer.Layer<ToolRuntime, E, R> =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer(tools), toolLayers)),
    Layer.provide([PermissionPolicy.toolOnly, approver, ToolHooks.none, ResultStore.layerMemory()])
  )

// ---------------------------------------------------------------------------------------------------------------
// recording any tool
// ---------------------------------------------------------------------------------------------------------------

/**
 * One call of any recorded tool as it ran: its input and claims, when it started and ended on the Clock (so
 * `TestClock` drives it), a logical clock that orders ties, and how many recorded calls were running when it started
 * (itself included).
 *
 * @since 0.2.0
 * @category models
 */
export interface Recording {
  readonly toolUseId: string
  readonly toolName: string
  readonly input: unknown
  readonly claims: ReadonlyArray<Tool.Claim>
  readonly startedAt: number
  readonly endedAt: number | undefined
  readonly startSeq: number
  readonly endSeq: number | undefined
  readonly runningAtStart: number
}

/**
 * Where {@link recorded} tools write their {@link Recording}s.
 *
 * @since 0.2.0
 * @category tags
 */
export class Recorder extends Context.Tag("effect-tool-runtime/testing/Recorder")<
  Recorder,
  {
    /** Wraps one call's action: recorded from its start to its end (the end is recorded when its scope closes). */
    readonly record: <A, E>(
      call: {
        readonly toolUseId: string
        readonly toolName: string
        readonly input: unknown
        readonly claims: ReadonlyArray<Tool.Claim>
      },
      action: Effect.Effect<A, E, Scope.Scope>
    ) => Effect.Effect<A, E, Scope.Scope>
    /** Every recording so far, in the order the calls started. */
    readonly recordings: Effect.Effect<ReadonlyArray<Recording>>
  }
>() {
  /**
   * A fresh recorder.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer: Layer.Layer<Recorder> = Layer.effect(
    Recorder,
    Effect.gen(function*() {
      const log = yield* Ref.make<ReadonlyArray<Recording>>([])
      let seq = 0
      let running = 0
      return {
        recordings: Ref.get(log),
        record: (call, action) =>
          Effect.gen(function*() {
            const startedAt = yield* Clock.currentTimeMillis
            running++
            const entry: Recording = {
              ...call,
              startedAt,
              endedAt: undefined,
              startSeq: seq++,
              endSeq: undefined,
              runningAtStart: running
            }
            const index = yield* Ref.modify(log, (all) => [all.length, [...all, entry]])
            yield* Effect.addFinalizer(() =>
              Effect.flatMap(Clock.currentTimeMillis, (endedAt) => {
                running--
                const endSeq = seq++
                return Ref.update(log, (all) => all.map((e, i) => (i === index ? { ...e, endedAt, endSeq } : e)))
              })
            )
            return yield* action
          })
      }
    })
  )
}

/**
 * Your tools' layer, with every call of the given tools recorded into the {@link Recorder}: the tools behave exactly
 * as before (their plan, stages and call are theirs), and each execution is logged with its input and claims.
 *
 * @since 0.2.0
 * @category layers
 */
export const recorded = <const Tools extends ReadonlyArray<Tool.Any>, E, R>(
  tools: Tools,
  layer: Layer.Layer<Tool.IdentifierOf<Tools[number]>, E, R>
): Layer.Layer<Tool.IdentifierOf<Tools[number]>, E, R | Recorder> =>
  Layer.effectContext(
    Effect.gen(function*() {
      const recorder = yield* Recorder
      const context = yield* Effect.context<Tool.IdentifierOf<Tools[number]>>()
      let wrapped = context as Context.Context<unknown>
      for (const tool of tools) {
        const tag = tool as unknown as Context.Tag<unknown, Tool.AnyService>
        const service = Context.get(wrapped, tag)
        const toolName = tool.definition.name
        const plan = (input: unknown) => {
          const invocation = service.plan(input)
          return {
            ...invocation,
            call: (callContext: Tool.CallContext) =>
              recorder.record(
                { toolUseId: callContext.toolUseId, toolName, input, claims: invocation.claims },
                invocation.call(callContext)
              )
          }
        }
        wrapped = Context.add(wrapped, tag, { ...service, plan })
      }
      return wrapped as Context.Context<Tool.IdentifierOf<Tools[number]>>
    })
  ).pipe(Layer.provide(layer))

// ---------------------------------------------------------------------------------------------------------------
// turns of your own tools
// ---------------------------------------------------------------------------------------------------------------

/**
 * The default pools of resource names {@link arbitraryTurnOf} draws from, by input field: a few relative paths (one
 * a directory holding another), a few shell commands (read-only and not), two URLs. Small on purpose: two calls of a
 * turn then name the same resource often enough for conflicts to happen.
 *
 * @since 0.3.0
 * @category arbitraries
 */
export const defaultResourcePools: Readonly<Record<string, ReadonlyArray<string>>> = (() => {
  const paths = ["a.txt", "b.txt", "src", "src/c.ts"]
  return {
    file_path: paths,
    path: paths,
    notebook_path: ["a.ipynb", "b.ipynb"],
    command: ["ls", "cat a.txt", "echo x > a.txt", "rm b.txt"],
    url: ["https://example.com/a", "https://example.com/b"]
  }
})()

/**
 * Options of {@link arbitraryTurnOf}.
 *
 * @since 0.3.0
 * @category arbitraries
 */
export interface TurnOfOptions {
  /** Fewest calls in a turn. Default 1. */
  readonly minLength?: number | undefined
  /** Most calls in a turn. Default 10. */
  readonly maxLength?: number | undefined
  /**
   * Pools of resource names by input field, merged over {@link defaultResourcePools} (a field mapped to `[]` is
   * generated freely again). A string field of a tool's input whose name is here takes one of the pool's values, so
   * calls of different tools name the same resources; a value the field's Schema refuses is not used.
   */
  readonly resources?: Readonly<Record<string, ReadonlyArray<string>>> | undefined
}

/**
 * Turns of tool_use blocks for your tools, inputs generated from each tool's input Schema (\`Arbitrary.make\`, then
 * encoded as the model would send them), ids \`t0\`, \`t1\`, ... Resource-naming fields (paths, commands, URLs, and
 * the fields you name in \`resources\`) are drawn from small shared pools, so a good share of turns holds calls that
 * conflict: free strings would almost never name the same file twice, and an ordering property would pass while
 * testing nothing.
 *
 * @since 0.2.0
 * @category arbitraries
 */
export const arbitraryTurnOf = (
  tools: ReadonlyArray<Tool.Any>,
  options: TurnOfOptions = {}
): FastCheck.Arbitrary<ReadonlyArray<ToolUseBlock>> => {
  const pools = Object.entries({ ...defaultResourcePools, ...options.resources }).filter(([, pool]) => pool.length > 0)
  const calls = tools.map((tool) => {
    const schema = tool.definition.input as Schema.Schema<unknown, unknown>
    const encode = Schema.encodeEither(schema)
    return Arbitrary.make(schema).chain((input) => {
      const fields = typeof input === "object" && input !== null
        ? pools.filter(([field]) => typeof (input as Record<string, unknown>)[field] === "string")
        : []
      const picks = Object.fromEntries(fields.map(([field, pool]) => [field, FastCheck.constantFrom(...pool)]))
      return FastCheck.record(picks).map((over) => {
        // A pooled value the Schema refuses (a pattern, a brand, an absolute path) leaves the generated input as is.
        // An input the Schema cannot encode back (a generated value of a lenient decode) is dropped.
        const pooled = encode({ ...(input as object), ...over })
        const encoded = Either.isRight(pooled) ? pooled : encode(input)
        return Either.isRight(encoded) ? { name: tool.definition.name, input: encoded.right } : undefined
      })
    }).filter((use) => use !== undefined)
  })
  return FastCheck.array(FastCheck.oneof(...calls), {
    minLength: options.minLength ?? 1,
    maxLength: options.maxLength ?? 10
  }).map((uses) => uses.map((use, i) => ({ type: "tool_use" as const, id: `t${i}`, name: use.name, input: use.input })))
}

/**
 * Runs one turn of your tools on the TestClock: a runtime over `tools` (their calls recorded; the tool-only policy,
 * no hooks, an in-memory result store, the given approver, default allow-all), the clock moved forward by `horizon`
 * (default one hour; every sleep due within it wakes in order, including sleeps that start meanwhile) until every call
 * has its Outcome. Dies if the turn has not finished after 100 horizons. Use it inside `it.effect` (which provides
 * the TestClock).
 *
 * @since 0.2.0
 * @category runners
 */
export const runTurn = <const Tools extends ReadonlyArray<Tool.Any>, E, R>(
  turn: ReadonlyArray<ToolUseBlock>,
  options: {
    readonly tools: Tools
    readonly layer: Layer.Layer<Tool.IdentifierOf<Tools[number]>, E, R>
    readonly approver?: Layer.Layer<Approver> | undefined
    readonly run?: Parameters<ToolRuntime["Type"]["execute"]>[1] | undefined
    readonly horizon?: Duration.DurationInput | undefined
  }
): Effect.Effect<{ readonly outcomes: ReadonlyArray<Outcome>; readonly recordings: ReadonlyArray<Recording> }, E, R> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(ToolRuntime.execute(turn, options.run))
    // One big step rather than one per wake-up: each TestClock step waits for every fiber to settle, which costs
    // milliseconds, and the clock wakes sleepers in order within a step anyway.
    for (let step = 0; step < 100 && Option.isNone(yield* Fiber.poll(fiber)); step++) {
      yield* TestClock.adjust(options.horizon ?? Duration.hours(1))
    }
    if (Option.isNone(yield* Fiber.poll(fiber))) {
      return yield* Effect.dieMessage("runTurn: the turn did not finish within 100 horizons of the TestClock")
    }
    const outcomes = yield* Fiber.join(fiber)
    const recorder = yield* Recorder
    return { outcomes, recordings: yield* recorder.recordings }
  }).pipe(
    Effect.provide(
      testRuntime(options.tools, recorded(options.tools, options.layer), options.approver).pipe(
        Layer.provideMerge(Recorder.layer)
      )
    )
  )

// ---------------------------------------------------------------------------------------------------------------
// assertions
// ---------------------------------------------------------------------------------------------------------------

/** `a` lies inside `b`, or is `b`. */
const isInside = (a: string, b: string): boolean => a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`)

/**
 * Whether two recorded calls conflict: either claims the world, or they touch one resource (one inside the other) and
 * at least one of them writes.
 *
 * @since 0.2.0
 * @category assertions
 */
export const recordingsConflict = (a: Recording, b: Recording): boolean =>
  a.claims.some((x) => x.resource === "*") || b.claims.some((y) => y.resource === "*") ||
  a.claims.some((x) =>
    b.claims.some((y) =>
      (x.access === "write" || y.access === "write") &&
      (isInside(x.resource, y.resource) || isInside(y.resource, x.resource))
    )
  )

/**
 * Throws, naming both calls, unless no two conflicting executions overlapped (by the logical clock, so calls that
 * end and start at the same instant are ordered).
 *
 * @since 0.2.0
 * @category assertions
 */
export const neverOverlapped = (recordings: ReadonlyArray<Recording>): void => {
  for (const a of recordings) {
    for (const b of recordings) {
      if (a.startSeq >= b.startSeq || !recordingsConflict(a, b)) continue
      if (a.endSeq === undefined || a.endSeq > b.startSeq) {
        throw new Error(
          `${a.toolUseId} (${a.toolName}) and ${b.toolUseId} (${b.toolName}) conflict but ran at the same time`
        )
      }
    }
  }
}

/**
 * Throws unless there is exactly one Outcome per tool_use, in model order, and every conflicting pair of calls started
 * in model order.
 *
 * @since 0.2.0
 * @category assertions
 */
export const finishedInModelOrder = (
  outcomes: ReadonlyArray<Outcome>,
  turn: ReadonlyArray<ToolUseBlock>,
  recordings: ReadonlyArray<Recording> = []
): void => {
  const got = outcomes.map((outcome) => outcome.toolUseId).join(", ")
  const want = turn.map((use) => use.id).join(", ")
  if (got !== want) throw new Error(`outcomes came back as [${got}], the model's order is [${want}]`)
  const position = new Map(turn.map((use, i) => [use.id, i]))
  for (const a of recordings) {
    for (const b of recordings) {
      if (
        a.startSeq < b.startSeq && recordingsConflict(a, b) && position.get(a.toolUseId)! > position.get(b.toolUseId)!
      ) {
        throw new Error(
          `${b.toolUseId} comes first in the turn but ${a.toolUseId}, which conflicts with it, started first`
        )
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// a scripted model
// ---------------------------------------------------------------------------------------------------------------

/**
 * A scripted model server that speaks the Anthropic Messages API on 127.0.0.1 (see the module for the script, the
 * request checks and the faults).
 *
 * @since 0.2.0
 */
export * as MessagesServer from "./MessagesServer.js"

/**
 * A file system in memory for the file tools (see `FileAccess.layerMemory`): provide it, with
 * `Workspace.layerFileAccess`, and Read, Write, Edit, Glob and Grep never touch the disk (Grep searches in JavaScript
 * there, not with ripgrep).
 *
 * @since 0.3.0
 * @category layers
 */
export const fileAccessMemory = FileAccess.layerMemory

/**
 * @since 0.3.0
 * @category models
 */
export type { MemoryTree } from "../Session/FileAccess.js"
