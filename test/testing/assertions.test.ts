/**
 * The kit's assertions fail when they should: a kit whose checks cannot fail would let users' ordering bugs through.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { Recording } from "effect-tool-runtime/testing"
import { finishedInModelOrder, neverOverlapped, runTurn } from "effect-tool-runtime/testing"
import type { Outcome } from "../../src/Tool/Outcome.js"
import { NotesLive, ReadNote, WriteNote } from "./notes.js"

const recording = (toolUseId: string, access: "read" | "write", startSeq: number, endSeq: number): Recording => ({
  toolUseId,
  toolName: "WriteNote",
  input: {},
  claims: [{ resource: "note:todo", access }],
  startedAt: startSeq,
  endedAt: endSeq,
  startSeq,
  endSeq,
  runningAtStart: 1
})

describe("testing kit: assertions", () => {
  it("neverOverlapped throws for two overlapping writes of one note, and not for reads or for writes one after the other", () => {
    expect(() => neverOverlapped([recording("a", "write", 0, 3), recording("b", "write", 1, 4)])).toThrow(
      "a (WriteNote) and b (WriteNote) conflict"
    )
    expect(() => neverOverlapped([recording("a", "read", 0, 3), recording("b", "read", 1, 4)])).not.toThrow()
    expect(() => neverOverlapped([recording("a", "write", 0, 1), recording("b", "write", 2, 3)])).not.toThrow()
  })

  it("finishedInModelOrder throws for outcomes out of order, and for a conflicting later call that started first", () => {
    const turn = [{ type: "tool_use" as const, id: "a", name: "WriteNote", input: {} }, {
      type: "tool_use" as const,
      id: "b",
      name: "WriteNote",
      input: {}
    }]
    const outcome = (toolUseId: string) => ({ toolUseId }) as Outcome
    expect(() => finishedInModelOrder([outcome("b"), outcome("a")], turn)).toThrow("[b, a]")
    expect(() =>
      finishedInModelOrder([outcome("a"), outcome("b")], turn, [
        recording("b", "write", 0, 1),
        recording("a", "write", 2, 3)
      ])
    ).toThrow("a comes first in the turn but b")
    expect(() =>
      finishedInModelOrder([outcome("a"), outcome("b")], turn, [
        recording("a", "write", 0, 1),
        recording("b", "write", 2, 3)
      ])
    ).not.toThrow()
  })

  it.effect("recorded tools log each execution with its input, claims and times on the TestClock", () =>
    Effect.gen(function*() {
      const { outcomes, recordings } = yield* runTurn(
        [
          { type: "tool_use", id: "w", name: "WriteNote", input: { name: "todo", text: "milk" } },
          { type: "tool_use", id: "r", name: "ReadNote", input: { name: "todo" } }
        ],
        { tools: [ReadNote, WriteNote], layer: Layer.fresh(NotesLive) }
      )
      expect(outcomes.map((o) => o.result.content)).toEqual(["saved", "milk"])
      expect(recordings.map((r) => [r.toolUseId, r.input, r.claims, r.startedAt, r.endedAt])).toEqual([
        ["w", { name: "todo", text: "milk" }, [{ resource: "note:todo", access: "write" }], 0, 10],
        ["r", { name: "todo" }, [{ resource: "note:todo", access: "read" }], 10, 15]
      ])
    }))
})
