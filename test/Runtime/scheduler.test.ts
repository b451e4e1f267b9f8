import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, FastCheck as fc, Fiber, Ref, Stream, TestClock } from "effect"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import type { Execution, ScriptedInput } from "../../src/testing/index.js"
import { arbitraryTurn, Scripted, scriptedLayer, testRuntime } from "../../src/testing/index.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"

// -- the reference model, in plain words (never the implementation's overlap logic) --------------------------------

type PlainClaim = { readonly resource: string; readonly access: "read" | "write" }

/** `a` is `b` itself, or lies inside it: `file:/w/a/x` is inside `file:/w/a` and inside `file:/w/`. */
const isInside = (a: string, b: string) => a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`)

/** Two calls conflict when either takes the whole world, or they touch one place (one inside the other) and one writes. */
const conflicts = (a: ReadonlyArray<PlainClaim>, b: ReadonlyArray<PlainClaim>) =>
  a.some((x) => x.resource === "*") || b.some((y) => y.resource === "*") ||
  a.some((x) =>
    b.some((y) =>
      (x.access === "write" || y.access === "write") &&
      (isInside(x.resource, y.resource) || isInside(y.resource, x.resource))
    )
  )

const inputOf = (use: ToolUseBlock) => use.input as ScriptedInput
const claimsOf = (use: ToolUseBlock) => inputOf(use).claims
const totalTime = (turn: ReadonlyArray<ToolUseBlock>) => turn.reduce((sum, use) => sum + inputOf(use).durationMs, 0) + 1

const withLog = <A, E>(f: (log: Ref.Ref<ReadonlyArray<Execution>>) => Effect.Effect<A, E, ToolRuntime>) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<Execution>>([])
    return yield* f(log).pipe(Effect.provide(testRuntime([Scripted], scriptedLayer(log))))
  })

/** Runs a turn to completion on the TestClock. */
const runTurn = (turn: ReadonlyArray<ToolUseBlock>, options: Parameters<ToolRuntime["Type"]["execute"]>[1]) =>
  withLog((log) =>
    Effect.gen(function*() {
      const rt = yield* ToolRuntime
      const fiber = yield* Effect.fork(rt.execute(turn, options))
      yield* TestClock.adjust(totalTime(turn))
      const outcomes = yield* Fiber.join(fiber)
      const executions = new Map((yield* Ref.get(log)).map((e) => [e.label, e]))
      return { outcomes, executions }
    })
  )

const overlap = (a: Execution, b: Execution) => a.startSeq < b.endSeq! && b.startSeq < a.endSeq!

/** Resources with real nesting, so hierarchical conflicts are common. */
const nested = { resources: ["file:/w", "file:/w/a", "file:/w/a/x", "file:/w/b", "file:/w/b/", "file:/v"] }

/** How often each property met the case it is about (checked after the property by the test that follows it). */
const reached = {
  hierarchical: 0,
  capReached: 0,
  batchedMix: 0,
  cancelMix: 0,
  runs: { hierarchical: 0, capReached: 0, batchedMix: 0, cancelMix: 0 }
}

describe("scheduler properties (TestClock)", () => {
  it.effect.prop(
    "conflict-aware: one Outcome per tool_use in model order; conflicting calls never overlap and start in model order; no needless waiting",
    [arbitraryTurn({ minLength: 7, maxLength: 14, ...nested })],
    ([turn]) =>
      Effect.gen(function*() {
        const { executions, outcomes } = yield* runTurn(turn, { maxConcurrency: 100 })
        expect(outcomes.map((o) => o.toolUseId)).toEqual(turn.map((u) => u.id))
        reached.runs.hierarchical++
        // The case: two calls that conflict only because one resource lies inside the other.
        if (
          turn.some((a, i) =>
            turn.slice(0, i).some((b) =>
              conflicts(claimsOf(a), claimsOf(b)) &&
              !claimsOf(a).some((x) =>
                x.resource === "*" || claimsOf(b).some((y) => y.resource === "*" || y.resource === x.resource)
              )
            )
          )
        ) reached.hierarchical++
        for (const [i, a] of turn.entries()) {
          const ea = executions.get(a.id)!
          expect(ea.endSeq).toBeDefined()
          let earliest = 0
          for (const b of turn.slice(0, i)) {
            const eb = executions.get(b.id)!
            if (conflicts(claimsOf(a), claimsOf(b))) {
              expect(overlap(ea, eb)).toBe(false)
              expect(eb.startSeq).toBeLessThan(ea.startSeq)
              earliest = Math.max(earliest, eb.endedAt!)
            }
          }
          // Started exactly when the last earlier conflicting call ended: never held back by a non-conflicting one.
          expect(ea.startedAt).toBe(earliest)
        }
      }),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  it("...and in at least 80% of its runs two calls conflicted only through nesting", () => {
    expect(reached.hierarchical / reached.runs.hierarchical).toBeGreaterThanOrEqual(0.8)
  })

  it.effect.prop(
    "never more than the cap running",
    [
      arbitraryTurn({ minLength: 10, maxLength: 16 }),
      fc.integer({ min: 1, max: 3 }),
      fc.constantFrom("conflict-aware" as const, "batched" as const)
    ],
    ([turn, cap, mode]) =>
      Effect.gen(function*() {
        const { executions, outcomes } = yield* runTurn(turn, { maxConcurrency: cap, mode })
        expect(outcomes).toHaveLength(turn.length)
        // The number running peaks at some start, so checking at every start checks at every moment.
        for (const e of executions.values()) expect(e.runningAtStart).toBeLessThanOrEqual(cap)
        reached.runs.capReached++
        if ([...executions.values()].some((e) => e.runningAtStart === cap)) reached.capReached++
      }),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  it("...and in at least 80% of its runs the cap was reached", () => {
    expect(reached.capReached / reached.runs.capReached).toBeGreaterThanOrEqual(0.8)
  })

  it.effect.prop(
    "batched: execution batches are exactly the consecutive concurrency-safe partition",
    [arbitraryTurn({ minLength: 10, maxLength: 14 })],
    ([turn]) =>
      Effect.gen(function*() {
        const { executions, outcomes } = yield* runTurn(turn, { maxConcurrency: 100, mode: "batched" })
        expect(outcomes.map((o) => o.toolUseId)).toEqual(turn.map((u) => u.id))
        reached.runs.batchedMix++
        // The case: a batch of two or more safe calls, and a call that must run alone.
        const safe = turn.map((use) => inputOf(use).concurrencySafe)
        if (safe.some((s, i) => s && safe[i + 1] === true) && safe.includes(false)) reached.batchedMix++
        const batchOf: Array<number> = []
        turn.forEach((use, i) => {
          const safe = inputOf(use).concurrencySafe
          const previousSafe = i > 0 && inputOf(turn[i - 1]!).concurrencySafe
          batchOf.push(i === 0 ? 0 : safe && previousSafe ? batchOf[i - 1]! : batchOf[i - 1]! + 1)
        })
        turn.forEach((a, i) =>
          turn.slice(i + 1).forEach((b, k) => {
            const j = i + 1 + k
            const ea = executions.get(a.id)!
            const eb = executions.get(b.id)!
            if (batchOf[i] === batchOf[j]) expect(eb.startedAt).toBe(ea.startedAt)
            else expect(ea.endSeq!).toBeLessThan(eb.startSeq)
          })
        )
      }),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  it("...and in at least 80% of its runs a batch of safe calls met a call that runs alone", () => {
    expect(reached.batchedMix / reached.runs.batchedMix).toBeGreaterThanOrEqual(0.8)
  })

  it.effect.prop(
    "cancelling at an arbitrary moment yields an Outcome for every tool_use and leaves nothing running",
    [
      arbitraryTurn({ minLength: 5, maxLength: 12 }),
      fc.integer({ min: 1, max: 40 }),
      fc.constantFrom("conflict-aware" as const, "batched" as const)
    ],
    ([turn, at, mode]) =>
      withLog((log) =>
        Effect.gen(function*() {
          const rt = yield* ToolRuntime
          const outcomes = yield* Effect.scoped(
            Effect.gen(function*() {
              const handle = yield* rt.start(turn, { mode, maxConcurrency: 3 })
              yield* TestClock.adjust(at)
              yield* handle.cancel
              const fiber = yield* Effect.fork(handle.await)
              yield* TestClock.adjust(totalTime(turn))
              return yield* Fiber.join(fiber)
            })
          )
          expect(outcomes.map((o) => o.toolUseId)).toEqual(turn.map((u) => u.id))
          const executions = new Map((yield* Ref.get(log)).map((e) => [e.label, e]))
          for (const e of executions.values()) expect(e.endSeq).toBeDefined()
          reached.runs.cancelMix++
          // The case: the cancel met a running call and a call that had not started.
          if (
            outcomes.some((o) => o.status === "interrupted" && executions.has(o.toolUseId)) &&
            outcomes.some((o) => !executions.has(o.toolUseId))
          ) reached.cancelMix++
          for (const outcome of outcomes) {
            const e = executions.get(outcome.toolUseId)
            if (e === undefined) {
              expect(outcome.status).toBe("interrupted")
              expect(outcome.result.content).toContain("never ran")
            } else if (outcome.status === "interrupted") {
              expect(e.endedAt).toBe(at)
              expect(outcome.result.content).toContain("interrupted by the user while running")
            } else {
              expect(e.endedAt).toBeLessThanOrEqual(at)
            }
          }
        })
      ),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  it("...and in at least 80% of its runs the cancel met both a running call and one that never started", () => {
    expect(reached.cancelMix / reached.runs.cancelMix).toBeGreaterThanOrEqual(0.8)
  })
})

describe("ToolRuntime", () => {
  const call = (id: string, input: Partial<ScriptedInput>): ToolUseBlock => ({
    type: "tool_use",
    id,
    name: "Scripted",
    input: { label: id, durationMs: 10, concurrencySafe: true, claims: [], ...input }
  })

  it.effect("a call starts while later tool_use blocks are still streaming in", () =>
    withLog((log) =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const gate = yield* Deferred.make<void>()
        const input = Stream.concat(
          Stream.make(call("a", { durationMs: 5 })),
          Stream.fromEffect(Effect.as(Deferred.await(gate), call("b", {})))
        )
        const handle = yield* rt.start(input)
        yield* TestClock.adjust(5)
        // `a` finished while `b` has not even arrived.
        expect((yield* Ref.get(log)).map((e) => [e.label, e.endedAt])).toEqual([["a", 5]])
        yield* Deferred.succeed(gate, undefined)
        const fiber = yield* Effect.fork(handle.await)
        yield* TestClock.adjust(10)
        const outcomes = yield* Fiber.join(fiber)
        expect(outcomes.map((o) => o.status)).toEqual(["success", "success"])
      }).pipe(Effect.scoped)
    ))

  it.effect("outcomes stream in model order while events arrive as they happen", () =>
    withLog(() =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const handle = yield* rt.start([call("slow", { durationMs: 30 }), call("fast", { durationMs: 1 })])
        const events = yield* Effect.fork(Stream.runCollect(handle.events))
        const outcomes = yield* Effect.fork(Stream.runCollect(handle.outcomes))
        yield* TestClock.adjust(30)
        const completed = Chunk.toReadonlyArray(yield* Fiber.join(events)).flatMap((
          e
        ) => (e._tag === "Completed" ? [e.outcome.toolUseId] : []))
        expect(completed).toEqual(["fast", "slow"])
        expect(Chunk.toReadonlyArray(yield* Fiber.join(outcomes)).map((o) => o.toolUseId)).toEqual(["slow", "fast"])
      }).pipe(Effect.scoped)
    ))

  it.effect("one failing call does not cancel its siblings by default; cancelSiblingsWhen opts in", () =>
    withLog(() =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const turn = [
          call("bad", { durationMs: 1, result: "fail" }),
          call("good", { durationMs: 20 }),
          call("later", { durationMs: 1, concurrencySafe: false, claims: [{ resource: "*", access: "write" }] })
        ]
        const run = (options: Parameters<typeof rt.execute>[1]) =>
          Effect.gen(function*() {
            const fiber = yield* Effect.fork(rt.execute(turn, options))
            yield* TestClock.adjust(100)
            return (yield* Fiber.join(fiber)).map((o) => o.status)
          })
        expect(yield* run({})).toEqual(["error", "success", "success"])
        expect(yield* run({ cancelSiblingsWhen: (o) => o.status === "error" })).toEqual([
          "error",
          "interrupted",
          "interrupted"
        ])
        // The run ends even when the outcome that cancels is the last one, or matches the outcomes cancelling makes.
        const fiber = yield* Effect.fork(
          rt.execute([call("only", { durationMs: 1, result: "fail" })], {
            cancelSiblingsWhen: (o) => o.status !== "success"
          })
        )
        yield* TestClock.adjust(5)
        expect((yield* Fiber.join(fiber)).map((o) => o.status)).toEqual(["error"])
      })
    ))

  it.effect("cancelling a run that mixes calls that never resolved (unknown tool, invalid input) with running ones", () =>
    withLog(() =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const handle = yield* rt.start([
          { type: "tool_use", id: "nope", name: "Nope", input: {} },
          call("a", { durationMs: 50 }),
          { type: "tool_use", id: "bad", name: "Scripted", input: { label: 1 } },
          call("b", { durationMs: 50, claims: [{ resource: "*", access: "write" }] })
        ])
        yield* TestClock.adjust(10)
        yield* handle.cancel
        const outcomes = yield* handle.await
        expect(outcomes.map((o) => [o.toolUseId, o.status])).toEqual([["nope", "error"], ["a", "interrupted"], [
          "bad",
          "error"
        ], ["b", "interrupted"]])
        expect(outcomes[1]!.result.content).toContain("while running")
        expect(outcomes[3]!.result.content).toContain("never ran")
      }).pipe(Effect.scoped)
    ))

  it.effect("a per-call timeout overrides the tool's default", () =>
    withLog(() =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const fiber = yield* Effect.fork(
          rt.execute([call("long", { durationMs: 1_000 }), call("short", { durationMs: 5 })], {
            timeoutFor: (use) => (use.id === "long" ? 100 : undefined)
          })
        )
        yield* TestClock.adjust(1_000)
        expect((yield* Fiber.join(fiber)).map((o) => o.status)).toEqual(["timed_out", "success"])
      })
    ))

  it.effect("interrupting the caller's fiber stops every call and runs their finalizers", () =>
    withLog((log) =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const fiber = yield* Effect.fork(
          rt.execute([
            call("a", { durationMs: 100 }),
            call("b", { durationMs: 100, claims: [{ resource: "x", access: "write" }] })
          ])
        )
        yield* TestClock.adjust(10)
        yield* Fiber.interrupt(fiber)
        const executions = yield* Ref.get(log)
        expect(executions.map((e) => [e.label, e.endedAt])).toEqual([["a", 10], ["b", 10]])
      })
    ))

  it.effect("duplicate resources in one layer of the turn: reads run together, a write waits for them", () =>
    withLog(() =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const handle = yield* rt.start([
          call("r1", { claims: [{ resource: "file:/w/a", access: "read" }] }),
          call("w", { concurrencySafe: false, claims: [{ resource: "file:/w", access: "write" }] }),
          call("r2", { claims: [{ resource: "file:/w/b", access: "read" }] }),
          call("other", { claims: [{ resource: "file:/v", access: "write" }] })
        ])
        const events = yield* Effect.fork(Stream.runCollect(handle.events))
        yield* TestClock.adjust(100)
        const started = Chunk.toReadonlyArray(yield* Fiber.join(events)).flatMap((
          e
        ) => (e._tag === "Started" ? [[e.toolUseId, e.at]] : []))
        expect(Object.fromEntries(started)).toEqual({ r1: 0, other: 0, w: 10, r2: 20 })
      }).pipe(Effect.scoped)
    ))
})
