/**
 * Which ready call gets a free permit: the one with the longest chain of calls still waiting behind it (ties: model
 * order), and a call that its predecessor's end made ready competes for that predecessor's permit.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Ref, TestClock } from "effect"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import type { Execution, ScriptedInput } from "../../src/testing/index.js"
import { Scripted, scriptedLayer, testRuntime } from "../../src/testing/index.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"

const call = (id: string, input: Partial<ScriptedInput>): ToolUseBlock => ({
  type: "tool_use",
  id,
  name: "Scripted",
  input: { label: id, durationMs: 5, concurrencySafe: true, claims: [], ...input }
})
const write = (resource: string) => ({ resource, access: "write" as const })
const read = (resource: string) => ({ resource, access: "read" as const })

describe("the permits go to the longest chain first", () => {
  it.effect("one permit: the head of a chain of three goes before a lone read that came first", () =>
    Effect.gen(function*() {
      const log = yield* Ref.make<ReadonlyArray<Execution>>([])
      const starts = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(ToolRuntime.execute(
          [
            call("x", { durationMs: 10, claims: [write("file:/z")] }),
            call("r", { claims: [read("file:/f1")] }),
            call("w", { claims: [write("file:/f2")] }),
            call("w2", { claims: [write("file:/f2")] }),
            call("w3", { claims: [write("file:/f2")] })
          ],
          { maxConcurrency: 1 }
        ))
        yield* TestClock.adjust(100)
        const outcomes = yield* Fiber.join(fiber)
        expect(outcomes.map((o) => [o.toolUseId, o.status])).toEqual(
          ["x", "r", "w", "w2", "w3"].map((id) => [id, "success"])
        )
        return Object.fromEntries((yield* Ref.get(log)).map((e) => [e.label, e.startedAt]))
      }).pipe(Effect.provide(testRuntime([Scripted], scriptedLayer(log))))
      // In model order (the worker pool): r at 10, w 15, w2 20, w3 25. By chain: w (3 behind it, itself included)
      // before r (1); w2, made ready by w's end, takes w's permit (2 before 1); r and w3 tie, r came first.
      expect(starts).toEqual({ x: 0, w: 10, w2: 15, r: 20, w3: 25 })
    }))

  it.effect("an exclusive call takes every permit: nothing runs beside it, and it waits for all before it", () =>
    Effect.gen(function*() {
      const log = yield* Ref.make<ReadonlyArray<Execution>>([])
      const executions = yield* Effect.gen(function*() {
        const fiber = yield* Effect.fork(ToolRuntime.execute(
          [
            call("a", { durationMs: 10, claims: [read("file:/a")] }),
            call("b", { durationMs: 20, claims: [read("file:/b")] }),
            call("all", { durationMs: 5, concurrencySafe: false, claims: [write("*")] }),
            call("c", { durationMs: 5, claims: [read("file:/c")] })
          ],
          { maxConcurrency: 3 }
        ))
        yield* TestClock.adjust(100)
        yield* Fiber.join(fiber)
        return Object.fromEntries((yield* Ref.get(log)).map((e) => [e.label, [e.startedAt, e.runningAtStart]]))
      }).pipe(Effect.provide(testRuntime([Scripted], scriptedLayer(log))))
      expect(executions).toEqual({ a: [0, 1], b: [0, 2], all: [20, 1], c: [25, 1] })
    }))
})
