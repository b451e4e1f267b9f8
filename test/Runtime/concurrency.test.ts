/**
 * One meaning for concurrency: how `concurrencySafe`, `readOnly` and `claims` combine in both scheduling modes,
 * every combination pinned. (The rule, in Runtime/internal/scheduler.ts `isExclusive` and Tool.ts `Traits`:
 * conflict-aware mode schedules by claims — declared claims are authoritative, a tool without declared claims claims
 * nothing when concurrency-safe and the world otherwise; batched mode schedules by `concurrencySafe` alone; `readOnly`
 * is a permission input only.)
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import type { SchedulingMode } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import * as Tool from "../../src/Tool/Tool.js"

const Input = Schema.Struct({
  label: Schema.String,
  safe: Schema.Boolean,
  readOnly: Schema.Boolean,
  claims: Schema.Array(Schema.Struct({ resource: Schema.String, access: Schema.Literal("read", "write") }))
})
type Input = typeof Input.Type

/** Declares its claims. */
const Declaring = Tool.make("Declaring", {
  description: "test",
  input: Input,
  output: Schema.String,
  touchesEnvironment: false
})
/** Declares no claims: the defaults follow `concurrencySafe`. */
const Plain = Tool.make("Plain", {
  description: "test",
  input: Input,
  output: Schema.String,
  touchesEnvironment: false
})

const call = (log: Ref.Ref<ReadonlyArray<readonly [string, number]>>) => (input: Input) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    yield* Ref.update(log, (all) => [...all, [input.label, now] as const])
    yield* Effect.sleep(10)
    return input.label
  })

const runtime = (log: Ref.Ref<ReadonlyArray<readonly [string, number]>>) =>
  ToolRuntime.layer.pipe(
    Layer.provide(
      Layer.provide(
        ToolRegistry.layer([Declaring, Plain]),
        Layer.mergeAll(
          Declaring.implement({
            traits: (i) => ({ concurrencySafe: i.safe, readOnly: i.readOnly }),
            claims: (i) => i.claims,
            call: call(log)
          }),
          Plain.implement({ traits: (i) => ({ concurrencySafe: i.safe, readOnly: i.readOnly }), call: call(log) })
        )
      )
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
  )

type ClaimShape = "none declared" | "different files" | "same file" | "world"
const claimsFor = (shape: ClaimShape, which: "a" | "b") =>
  shape === "different files" ?
    [{ resource: `file:/w/${which}`, access: "write" as const }]
    : shape === "same file" ?
    [{ resource: "file:/w/same", access: "write" as const }]
    : shape === "world" ?
    [Tool.Claim.world]
    : []

/** Two calls of the same kind: do they run together? */
const runTogether = (mode: SchedulingMode, shape: ClaimShape, safe: boolean, readOnly: boolean) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<readonly [string, number]>>([])
    const name = shape === "none declared" ? "Plain" : "Declaring"
    const turn = (["a", "b"] as const).map((which) => ({
      type: "tool_use" as const,
      id: which,
      name,
      input: { label: which, safe, readOnly, claims: claimsFor(shape, which) }
    }))
    return yield* Effect.gen(function*() {
      const fiber = yield* Effect.fork(ToolRuntime.execute(turn, { mode }))
      yield* TestClock.adjust(30)
      yield* Fiber.join(fiber)
      const starts = Object.fromEntries(yield* Ref.get(log))
      return starts.a === starts.b
    }).pipe(Effect.provide(runtime(log)))
  })

/** The table: [mode, claims, concurrencySafe] -> run together? (readOnly never matters: checked both ways.) */
const table: ReadonlyArray<readonly [SchedulingMode, ClaimShape, boolean, boolean]> = [
  ["conflict-aware", "none declared", true, true],
  ["conflict-aware", "none declared", false, false],
  ["conflict-aware", "different files", true, true],
  ["conflict-aware", "different files", false, true],
  ["conflict-aware", "same file", true, false],
  ["conflict-aware", "same file", false, false],
  ["conflict-aware", "world", true, false],
  ["conflict-aware", "world", false, false],
  ["batched", "none declared", true, true],
  ["batched", "none declared", false, false],
  ["batched", "different files", true, true],
  ["batched", "different files", false, false],
  ["batched", "same file", true, true],
  ["batched", "same file", false, false],
  ["batched", "world", true, true],
  ["batched", "world", false, false]
]

describe("one meaning for concurrency", () => {
  for (const [mode, shape, safe, together] of table) {
    for (const readOnly of [false, true]) {
      it.effect(`${mode}, claims ${shape}, concurrencySafe ${safe}, readOnly ${readOnly}: ${together ? "run together" : "one after the other"}`, () =>
        Effect.map(runTogether(mode, shape, safe, readOnly), (actual) => expect(actual).toBe(together)))
    }
  }
})
