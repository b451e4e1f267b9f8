/**
 * `arbitraryTurnOf` reaches conflicts: resource-naming fields come from small shared pools, so a good share of
 * generated turns holds two calls that touch one resource with at least one write. The conflict oracle is written
 * here, in plain words, from each tool's documented behaviour; nothing of the scheduler's claims is used.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck, Schema } from "effect"
import { Tool } from "effect-tool-runtime"
import { arbitraryTurnOf } from "effect-tool-runtime/testing"
import { builtinTools, Edit, Read, Write } from "effect-tool-runtime/tools"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"

type Access = { readonly resource: string; readonly write: boolean } | "everything" | "nothing"

/** What a built-in call touches: files by path (a missing path is the working directory), Bash by its command. */
const builtinAccess = (use: ToolUseBlock): Access => {
  const input = use.input as Record<string, unknown>
  const at = (field: string) => typeof input[field] === "string" ? input[field] : "."
  switch (use.name) {
    case "Read":
      return { resource: at("file_path"), write: false }
    case "Write":
    case "Edit":
      return { resource: at("file_path"), write: true }
    case "NotebookEdit":
      return { resource: at("notebook_path"), write: true }
    case "Glob":
    case "Grep":
      return { resource: at("path"), write: false }
    case "Bash":
      // Reading commands read what they name; anything else may touch anything.
      if (input.command === "ls") return { resource: ".", write: false }
      if (input.command === "cat a.txt") return { resource: "a.txt", write: false }
      return "everything"
    default:
      return "nothing" // WebFetch and ToolSearch touch no file
  }
}

const inside = (a: string, b: string) => b === "." || a === b || a.startsWith(`${b}/`)

const conflict = (a: Access, b: Access): boolean =>
  a === "nothing" || b === "nothing"
    ? false
    : a === "everything" || b === "everything"
    ? true
    : (a.write || b.write) && (inside(a.resource, b.resource) || inside(b.resource, a.resource))

/** The share of turns with at least one conflicting pair, over a fixed sample. */
const conflictShare = (
  turns: FastCheck.Arbitrary<ReadonlyArray<ToolUseBlock>>,
  access: (use: ToolUseBlock) => Access
): number => {
  const sample = FastCheck.sample(turns, { numRuns: 300, seed: 24 })
  const withConflict = sample.filter((turn) =>
    turn.some((a, i) => turn.slice(i + 1).some((b) => conflict(access(a), access(b))))
  )
  return withConflict.length / sample.length
}

// A user's own tools whose resource is a free string: a key-value store.
const Get = Tool.make("Get", {
  description: "Reads a key.",
  input: Schema.Struct({ key: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const Put = Tool.make("Put", {
  description: "Writes a key.",
  input: Schema.Struct({ key: Schema.String, value: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const storeAccess = (use: ToolUseBlock): Access => ({
  resource: `key:${(use.input as { key: string }).key}`,
  write: use.name === "Put"
})

const noPools = { file_path: [], path: [], notebook_path: [], command: [], url: [] }

describe("arbitraryTurnOf reaches conflicting pairs", () => {
  it("on the built-in tools, in at least 30% of turns", () => {
    expect(conflictShare(arbitraryTurnOf(builtinTools), builtinAccess)).toBeGreaterThanOrEqual(0.3)
  })

  it("on the file tools alone: pooled paths conflict in at least 30% of turns, free strings rarely", () => {
    const tools = [Read, Write, Edit]
    expect(conflictShare(arbitraryTurnOf(tools), builtinAccess)).toBeGreaterThanOrEqual(0.3)
    expect(conflictShare(arbitraryTurnOf(tools, { resources: noPools }), builtinAccess)).toBeLessThan(0.15)
  })

  it("on a user's own tools, with their resource field named in `resources`", () => {
    const tools = [Get, Put]
    expect(conflictShare(arbitraryTurnOf(tools, { resources: { key: ["a", "b", "c"] } }), storeAccess))
      .toBeGreaterThanOrEqual(0.3)
    expect(conflictShare(arbitraryTurnOf(tools), storeAccess)).toBeLessThan(0.15)
  })

  it("a pooled value the field's Schema refuses is not used: the input still decodes", () => {
    const Absolute = Tool.make("Absolute", {
      description: "Takes an absolute path.",
      input: Schema.Struct({ file_path: Schema.String.pipe(Schema.startsWith("/")) }),
      output: Schema.String,
      touchesEnvironment: false
    })
    const decode = Schema.decodeUnknownSync(Absolute.definition.input)
    for (const turn of FastCheck.sample(arbitraryTurnOf([Absolute]), { numRuns: 50, seed: 1 })) {
      for (const use of turn) expect(decode(use.input).file_path.startsWith("/")).toBe(true)
    }
  })
})
