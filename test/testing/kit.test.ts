import { it } from "@effect/vitest"
import { Effect } from "effect"
import { arbitraryTurnOf, finishedInModelOrder, neverOverlapped, runTurn } from "effect-tool-runtime/testing"
import { NotesLive, ReadNote, WriteNote } from "./notes.js"

const tools = [ReadNote, WriteNote] as const

it.effect.prop(
  "my tools: conflicting calls never overlap, outcomes come back in model order",
  [arbitraryTurnOf(tools, { maxLength: 8 })],
  ([turn]) =>
    Effect.gen(function*() {
      const { outcomes, recordings } = yield* runTurn(turn, { tools, layer: NotesLive })
      neverOverlapped(recordings)
      finishedInModelOrder(outcomes, turn, recordings)
    }),
  { fastCheck: { numRuns: 10 } } // each run builds a runtime: 10 stay well within vitest's 5 s default timeout
)
