/**
 * Inputs as models send them, measured beside Claude Code 2.1.332: each test names what Claude Code does and what
 * this runtime does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Schema } from "effect"
import * as path from "node:path"
import { inputSchema } from "../../src/Mcp/internal/inputSchema.js"
import { numericStringsAsNumbers } from "../../src/Runtime/internal/numericStrings.js"
import { testRuntime } from "../../src/testing/index.js"
import * as Tool from "../../src/Tool/Tool.js"
import { executeOne, runtimeLayer, tempDir, text, use, writeTree } from "../Tools/Files/helpers.js"

describe("numbers given as strings", () => {
  const dir = tempDir("cc-inputs-")
  writeTree(dir, { "many.txt": Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") })
  const layer = runtimeLayer(dir)

  it.effect("Claude Code accepts \"offset\": \"1\" for Read; so do we (read as the number)", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(
        use("Read", { file_path: path.join(dir, "many.txt"), offset: "3", limit: "2" })
      )
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toContain("     3\tline 3\n     4\tline 4")
      // What the model sent is kept as it sent it.
      expect(outcome.originalInput).toMatchObject({ offset: "3", limit: "2" })
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code rejects a string that is not a number; so do we, naming the parameter", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "many.txt"), offset: "three" }))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("The parameter `offset` type is expected as `number` but provided as `string`")
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code accepts \"-A\": \"2\" for Grep; so do we", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(
        use("Grep", { pattern: "line 5$", path: dir, output_mode: "content", "-A": "1" })
      )
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toContain("line 6")
    }).pipe(Effect.provide(layer)))

  const Echo = Tool.make("Echo", {
    description: "Echoes.",
    input: Schema.Struct({
      n: Schema.optional(Schema.Number),
      either: Schema.optional(Schema.Union(Schema.Number, Schema.String)),
      list: Schema.optional(Schema.Array(Schema.Int)),
      nested: Schema.optional(Schema.Struct({ depth: Schema.Number })),
      label: Schema.optional(Schema.String)
    }),
    output: Schema.Unknown,
    touchesEnvironment: false
  })
  const echo = testRuntime([Echo], Echo.implement({ call: (input) => Effect.succeed(input) }))

  it.effect("a user's own tool gets the same reading: numbers, arrays of numbers, nested numbers", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(
        use("Echo", { n: "-2.5", either: "7", list: ["1", 2], nested: { depth: "4" }, label: "5" })
      )
      expect(outcome.status).toBe("success")
      expect(JSON.parse(text(outcome))).toEqual({
        n: -2.5,
        either: "7",
        list: [1, 2],
        nested: { depth: 4 },
        label: "5"
      })
    }).pipe(Effect.provide(echo)))

  it.effect("strings that only look like numbers stay strings and fail as before", () =>
    Effect.gen(function*() {
      for (const odd of ["", " 1", "1e3", "0x10", "1.", ".5", "+1", "Infinity", "NaN", "1_000"]) {
        const outcome = yield* executeOne(use("Echo", { n: odd }))
        expect(outcome.status, JSON.stringify(odd)).toBe("error")
        expect(text(outcome)).toContain("The parameter `n` type is expected as `number` but provided as `string`")
      }
    }).pipe(Effect.provide(echo)))

  it("an MCP tool's JSON Schema is read the same way (number and integer, nested, anyOf with string excluded)", () => {
    const { schema } = inputSchema({
      type: "object",
      properties: {
        count: { type: "integer" },
        ratio: { type: "number" },
        name: { type: "string" },
        either: { anyOf: [{ type: "number" }, { type: "string" }] },
        opts: { type: "object", properties: { depth: { type: ["number", "null"] } } },
        ids: { type: "array", items: { type: "integer" } }
      }
    })
    const raw = { count: "3", ratio: "0.25", name: "9", either: "1", opts: { depth: "2" }, ids: ["1", "2"] }
    expect(numericStringsAsNumbers(schema.ast, raw)).toEqual({
      count: 3,
      ratio: 0.25,
      name: "9",
      either: "1",
      opts: { depth: 2 },
      ids: [1, 2]
    })
    expect(Schema.decodeUnknownSync(schema)(numericStringsAsNumbers(schema.ast, raw))).toBeDefined()
  })

  const mcpInput = inputSchema({
    type: "object",
    properties: { count: { type: "integer", minimum: 1 }, name: { type: "string" } },
    required: ["count"],
    additionalProperties: false
  })
  const McpLike = Tool.make("mcp__srv__count", {
    description: "An MCP server's tool, its input checked against the server's JSON Schema.",
    input: mcpInput.schema,
    output: Schema.Unknown,
    touchesEnvironment: false
  })
  const mcpRuntime = testRuntime([McpLike], McpLike.implement({ call: (input) => Effect.succeed(input) }))

  it.effect("an MCP tool's numbers too: \"count\": \"3\" reaches the server as 3, a string parameter stays a string", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("mcp__srv__count", { count: "3", name: "7" }))
      expect(outcome.status).toBe("success")
      expect(JSON.parse(text(outcome))).toEqual({ count: 3, name: "7" })
      const refused = yield* executeOne(use("mcp__srv__count", { count: "three" }))
      expect(refused.status).toBe("error")
      expect(text(refused)).toContain("`count`")
    }).pipe(Effect.provide(mcpRuntime)))

  it.prop(
    "a decimal literal string at a number place reads as Number(s); anything else is left as it is",
    [fc.oneof(
      fc.integer().map(String),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
      fc.string(),
      fc.constantFrom("1e3", "-0", "00", "-", "1.5.5", "१२")
    )],
    ([s]) => {
      const ast = Schema.Struct({ n: Schema.Number }).ast
      const out = numericStringsAsNumbers(ast, { n: s }) as { n: unknown }
      // Oracle: optional minus, digits, optionally a dot and more digits: nothing else.
      const isDecimal = /^-?[0-9]+(\.[0-9]+)?$/.test(s)
      expect(out.n).toEqual(isDecimal ? Number(s) : s)
    }
  )

  it("an input with nothing to read is returned as it is (same value)", () => {
    const ast = Schema.Struct({ n: Schema.Number }).ast
    const raw = { n: 1 }
    expect(numericStringsAsNumbers(ast, raw)).toBe(raw)
    expect(numericStringsAsNumbers(Schema.Struct({ s: Schema.String }).ast, { s: "1" })).toEqual({ s: "1" })
  })
})
