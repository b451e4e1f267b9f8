/**
 * Scheduler benchmarks.
 * (a) Per-call overhead of the scheduler: 10,000 trivial calls through `execute`, against the same calls through
 *     `executeOne` one by one (the pipeline alone). CPU time, median of several runs.
 * (b) Makespan of a mixed workload on the real clock: 200 calls, 70% reads and 30% writes over 20 files, 1-50 ms
 *     each, in both scheduling modes, against the lower bound max(critical path, total work / cap).
 * (c) The same makespan on the TestClock: the scheduling decisions alone, without timer overshoot or the load of a
 *     shared machine, so the figure is the same on every run (the real-clock one moves with the machine's load).
 */
import { Effect, Fiber, Layer, Schema, TestClock, TestContext } from "effect"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import { PermissionPolicy } from "../dist/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import type { SchedulingMode } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import * as Tool from "../dist/Tool/Tool.js"
import type { ToolUseBlock } from "../dist/Tool/Wire.js"
import { median, report } from "./stats.js"

const Work = Tool.make("Work", {
  description: "Sleeps, claiming one file for reading or writing.",
  input: Schema.Struct({ file: Schema.String, write: Schema.Boolean, ms: Schema.Number }),
  output: Schema.String,
  touchesEnvironment: false
})
const WorkLive = Work.implement({
  traits: ({ write }) => ({ readOnly: !write, concurrencySafe: !write }),
  claims: ({ file, write }) => [write ? Tool.Claim.write(`file:/w/${file}`) : Tool.Claim.read(`file:/w/${file}`)],
  call: ({ ms }) => (ms === 0 ? Effect.succeed("ok") : Effect.as(Effect.sleep(ms), "ok"))
})

const layer = ToolRuntime.layer.pipe(
  Layer.provide(Layer.provide(ToolRegistry.layer([Work]), WorkLive)),
  Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
)

/** A small deterministic generator, so every run measures the same workload. */
const lcg = (seed: number) => () => {
  seed = (seed * 1664525 + 1013904223) % 4294967296
  return seed / 4294967296
}

const workload = (n: number, seed: number): ReadonlyArray<ToolUseBlock> => {
  const random = lcg(seed)
  return Array.from({ length: n }, (_, i) => ({
    type: "tool_use" as const,
    id: `w${i}`,
    name: "Work",
    input: { file: `f${Math.floor(random() * 20)}`, write: random() < 0.3, ms: 1 + Math.floor(random() * 50) }
  }))
}

/** max(longest chain of conflicting calls, total work / cap): no schedule that keeps model order on conflicts does better. */
const lowerBound = (calls: ReadonlyArray<ToolUseBlock>, cap: number): number => {
  const finish: Array<number> = []
  const inputs = calls.map((c) => c.input as { file: string; write: boolean; ms: number })
  inputs.forEach((a, i) => {
    let start = 0
    for (let j = 0; j < i; j++) {
      const b = inputs[j]!
      if (a.file === b.file && (a.write || b.write)) start = Math.max(start, finish[j]!)
    }
    finish.push(start + a.ms)
  })
  const work = inputs.reduce((sum, input) => sum + input.ms, 0)
  return Math.max(Math.max(...finish), work / cap)
}

const cpuPerCall = (effect: Effect.Effect<unknown, never, ToolRuntime>, calls: number) =>
  Effect.gen(function*() {
    const start = process.cpuUsage()
    yield* effect
    const used = process.cpuUsage(start)
    return (used.user + used.system) / calls
  })

export const run = async (): Promise<void> => {
  await runVirtual()
  const trivial = Array.from(
    { length: 10_000 },
    (_, i) => ({
      type: "tool_use" as const,
      id: `t${i}`,
      name: "Work",
      input: { file: `f${i % 20}`, write: false, ms: 0 }
    })
  )
  const overhead = await Effect.runPromise(
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const batch = [] as Array<number>
      const single = [] as Array<number>
      for (let round = 0; round < 6; round++) {
        batch.push(yield* cpuPerCall(rt.execute(trivial), trivial.length))
        single.push(
          yield* cpuPerCall(Effect.forEach(trivial, (use) => rt.executeOne(use), { discard: true }), trivial.length)
        )
      }
      // The first round warms up.
      return { scheduled: median(batch.slice(1)), pipeline: median(single.slice(1)) }
    }).pipe(Effect.provide(layer))
  )
  report("scheduler: 10,000 trivial read calls in one turn (CPU time per call, median of 5 runs after warm-up)", [
    ["through execute (scheduler + pipeline)", `${overhead.scheduled.toFixed(2)} us`, ""],
    ["through executeOne (pipeline alone)", `${overhead.pipeline.toFixed(2)} us`, ""],
    ["scheduler overhead", `${(overhead.scheduled - overhead.pipeline).toFixed(2)} us`, "target <= 20 us"]
  ])

  // Cost per call as a turn grows, every call claiming a different file (the case that was quadratic).
  const growth: Array<readonly [string, string, string]> = []
  for (const n of [2_500, 10_000, 40_000]) {
    const distinct = Array.from(
      { length: n },
      (_, i) => ({
        type: "tool_use" as const,
        id: `t${i}`,
        name: "Work",
        input: { file: `dir${i % 50}/f${i}`, write: i % 3 === 0, ms: 0 }
      })
    )
    const perCall = await Effect.runPromise(
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const runs = [] as Array<number>
        for (let round = 0; round < 4; round++) runs.push(yield* cpuPerCall(rt.execute(distinct), n))
        return median(runs.slice(1))
      }).pipe(Effect.provide(layer))
    )
    growth.push([`${n.toLocaleString("en")} calls`, `${perCall.toFixed(1)} us/call`, "median of 3 after warm-up"])
  }
  report("scheduler: every call claims a different file (CPU time per call; flat = linear in the turn)", growth)

  const rows: Array<readonly [string, string, string]> = []
  for (const seed of [1, 2, 3]) {
    const calls = workload(200, seed)
    const makespans = await Effect.runPromise(
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const time = (mode: SchedulingMode) =>
          Effect.gen(function*() {
            const start = performance.now()
            yield* rt.execute(calls, { mode })
            return performance.now() - start
          })
        const unbounded = Effect.gen(function*() {
          const start = performance.now()
          yield* rt.execute(calls, { maxConcurrency: calls.length })
          return performance.now() - start
        })
        return {
          conflictAware: yield* time("conflict-aware"),
          batched: yield* time("batched"),
          unbounded: yield* unbounded
        }
      }).pipe(Effect.provide(layer))
    )
    const bound = lowerBound(calls, 10)
    const criticalPath = lowerBound(calls, Infinity)
    rows.push(
      [`seed ${seed}: critical path (no cap)`, `${criticalPath.toFixed(0)} ms`, ""],
      [
        `seed ${seed}: conflict-aware, no cap`,
        `${makespans.unbounded.toFixed(0)} ms`,
        `${((makespans.unbounded / criticalPath - 1) * 100).toFixed(1)}% over the critical path`
      ],
      [`seed ${seed}: lower bound (cap 10)`, `${bound.toFixed(0)} ms`, ""],
      [
        `seed ${seed}: conflict-aware`,
        `${makespans.conflictAware.toFixed(0)} ms`,
        `${((makespans.conflictAware / bound - 1) * 100).toFixed(1)}% over the bound (target <= 10%)`
      ],
      [
        `seed ${seed}: batched`,
        `${makespans.batched.toFixed(0)} ms`,
        `conflict-aware is ${(makespans.conflictAware / makespans.batched).toFixed(2)}x of batched (target <= 0.6x)`
      ]
    )
  }
  report(
    "scheduler: makespan of 200 calls (70% reads, 30% writes, 20 files, 1-50 ms, real clock; cap 10 unless said)",
    rows
  )
}

/** The makespan of `calls` on the TestClock: when the last call ended, every call received at 0. */
const virtualMakespan = (calls: ReadonlyArray<ToolUseBlock>, mode: SchedulingMode, cap: number) =>
  Effect.gen(function*() {
    const rt = yield* ToolRuntime
    const fiber = yield* Effect.fork(rt.execute(calls, { mode, maxConcurrency: cap }))
    const work = calls.reduce((sum, call) => sum + (call.input as { ms: number }).ms, 0)
    yield* TestClock.adjust(work + 1)
    const outcomes = yield* Fiber.join(fiber)
    return Math.max(...outcomes.map((outcome) => outcome.timings.endedAt))
  }).pipe(Effect.provide(layer), Effect.provide(TestContext.TestContext))

export const runVirtual = async (): Promise<void> => {
  const rows: Array<readonly [string, string, string]> = []
  for (const seed of [1, 2, 3]) {
    const calls = workload(200, seed)
    for (const cap of [10, 4]) {
      const bound = lowerBound(calls, cap)
      const makespan = await Effect.runPromise(virtualMakespan(calls, "conflict-aware", cap))
      rows.push([
        `seed ${seed}, cap ${cap}: conflict-aware / bound`,
        `${makespan.toFixed(0)} / ${bound.toFixed(0)} ms`,
        `${((makespan / bound - 1) * 100).toFixed(1)}% over the bound (target <= 10%)`
      ])
    }
  }
  report("scheduler: the same makespan on the TestClock (scheduling alone; identical on every run)", rows)
}
