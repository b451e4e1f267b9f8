/**
 * Testing kit: a scripted tool whose behaviour (duration, traits, claims, result) comes from its input, a log of
 * what ran when, fast-check arbitraries for whole turns, and a runtime layer wired for tests. With these, users
 * property-test the ordering of their own tools under the real scheduler.
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as FastCheck from "effect/FastCheck"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Approver } from "../Runtime/Approver.js"
import { PermissionPolicy } from "../Runtime/PermissionPolicy.js"
import { ResultStore } from "../Runtime/ResultStore.js"
import { ToolHooks } from "../Runtime/ToolHooks.js"
import { ToolRegistry } from "../Runtime/ToolRegistry.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
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
            const entry: Execution = { label: input.label, startedAt: now, endedAt: undefined, startSeq, endSeq: undefined, runningAtStart }
            const index = yield* Ref.modify(log, (all) => [all.length, [...all, entry]])
            const finish = Effect.gen(function*() {
              const endedAt = yield* Clock.currentTimeMillis
              const endSeq = yield* tick
              yield* Ref.update(running, (n) => n - 1)
              yield* Ref.update(log, (all) => all.map((e, i) => (i === index ? { ...e, endedAt, endSeq } : e)))
            })
            yield* Effect.addFinalizer(() => finish)
            yield* Effect.sleep(input.durationMs)
            if (input.result === "fail") return yield* new Tool.ToolError({ message: `${input.label} failed as scripted` })
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
  readonly minLength?: number
  readonly maxLength?: number
  /** Resources calls may claim. Default five files. */
  readonly resources?: ReadonlyArray<string>
  readonly maxDurationMs?: number
  /** Whether calls may fail or die. Default true. */
  readonly failures?: boolean
}

/**
 * One scripted call's input.
 *
 * @since 0.1.0
 * @category arbitraries
 */
export const arbitraryScriptedInput = (options: TurnOptions = {}): FastCheck.Arbitrary<Omit<ScriptedInput, "label">> => {
  const resources = options.resources ?? ["file:/w/a", "file:/w/b", "file:/w/c", "file:/w/d", "file:/w/d/e"]
  return FastCheck.record({
    durationMs: FastCheck.integer({ min: 0, max: options.maxDurationMs ?? 50 }),
    concurrencySafe: FastCheck.boolean(),
    readOnly: FastCheck.boolean(),
    claims: FastCheck.oneof(
      { weight: 8, arbitrary: FastCheck.uniqueArray(FastCheck.record({ resource: FastCheck.constantFrom(...resources), access: FastCheck.constantFrom("read" as const, "write" as const) }), { maxLength: 2, selector: (c) => c.resource }) },
      { weight: 1, arbitrary: FastCheck.constant([Tool.Claim.world]) }
    ),
    result: (options.failures ?? true)
      ? FastCheck.constantFrom("succeed" as const, "succeed" as const, "succeed" as const, "fail" as const, "die" as const)
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
  FastCheck.array(arbitraryScriptedInput(options), { minLength: options.minLength ?? 1, maxLength: options.maxLength ?? 12 }).map((inputs) =>
    inputs.map((input, i) => ({ type: "tool_use" as const, id: `t${i}`, name: "Scripted", input: { label: `t${i}`, ...input } }))
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
