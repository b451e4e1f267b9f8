/**
 * An MCP tool's input is checked by ajv against the server's JSON Schema, and the model reads the same lines a
 * built-in tool's Effect Schema produces.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck, JSONSchema, ParseResult, Schema } from "effect"
import { inputSchema } from "../../src/Mcp/internal/inputSchema.js"
import { describeInputIssue } from "../../src/Tool/Errors.js"
import { inputIssues } from "../../src/Tool/internal/inputIssues.js"

const options = { errors: "all", onExcessProperty: "error" } as const

/** The model-facing lines for an input, as the pipeline builds them from a schema's decode failure. */
const lines = (schema: Schema.Schema<unknown, unknown>, input: unknown): ReadonlyArray<string> =>
  Either.match(ParseResult.decodeUnknownEither(schema, options)(input), {
    onLeft: (issue) => inputIssues(input, issue).map(describeInputIssue).sort(),
    onRight: () => []
  })

const mcpLines = (jsonSchema: object, input: unknown) =>
  lines(inputSchema(jsonSchema as Record<string, unknown>).schema as Schema.Schema<unknown, unknown>, input)

type FieldType = "string" | "number" | "boolean"
const schemaOf = { string: Schema.String, number: Schema.Number, boolean: Schema.Boolean } as const
const fieldNames = ["path", "count", "flag", "query"] as const

const fields = FastCheck.uniqueArray(
  FastCheck.record({
    name: FastCheck.constantFrom(...fieldNames),
    type: FastCheck.constantFrom<FieldType>("string", "number", "boolean"),
    required: FastCheck.boolean()
  }),
  { selector: (f) => f.name, minLength: 1, maxLength: 4 }
)
const jsonValue = FastCheck.oneof(
  FastCheck.string({ maxLength: 3 }),
  FastCheck.integer(),
  FastCheck.boolean(),
  FastCheck.constant(null),
  FastCheck.constant([1]),
  FastCheck.constant({ a: 1 })
)
const input = FastCheck.dictionary(FastCheck.constantFrom(...fieldNames, "extra"), jsonValue, { maxKeys: 5 })

describe("ajv issues in the built-in wording", () => {
  it.prop("for any object schema of simple fields and any input, the MCP lines equal the built-in tool's lines", [
    fields,
    input
  ], ([spec, value]) => {
    const struct = Schema.Struct(
      Object.fromEntries(spec.map((f) => [f.name, f.required ? schemaOf[f.type] : Schema.optional(schemaOf[f.type])]))
    )
    const jsonSchema = JSONSchema.make(struct)
    expect(mcpLines(jsonSchema, value)).toEqual(lines(struct as unknown as Schema.Schema<unknown, unknown>, value))
  })

  const strict = {
    type: "object",
    properties: {
      mode: { enum: ["fast", "slow"] },
      count: { type: "integer", minimum: 1 },
      tags: { type: "array", items: { type: "string" } },
      nested: { type: "object", properties: { deep: { type: "boolean" } }, required: ["deep"] }
    },
    required: ["mode"],
    additionalProperties: false
  }

  it("enums, integers, array items and nested objects are named by their path", () => {
    expect(mcpLines(strict, { mode: "medium", count: 0, tags: ["a", 2], nested: {}, other: 1 })).toEqual([
      "An unexpected parameter `other` was provided",
      "The parameter `count` is invalid: must be >= 1",
      "The parameter `mode` is invalid: expected one of \"fast\" | \"slow\", got \"medium\"",
      "The parameter `tags[1]` type is expected as `string` but provided as `number`",
      "The required parameter `nested.deep` is missing"
    ])
    expect(mcpLines(strict, { mode: "fast", count: 1.5 })).toEqual([
      "The parameter `count` type is expected as `integer` but provided as `number`"
    ])
    expect(mcpLines(strict, "fast")).toEqual(["The input must be a JSON object, but was provided as `string`"])
    expect(mcpLines(strict, { mode: "fast", tags: [], nested: { deep: true } })).toEqual([])
  })

  it("draft 2020-12 schemas are checked too, and a schema ajv cannot compile accepts any object (the server still checks)", () => {
    const modern = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { q: { type: "string" } },
      required: ["q"]
    }
    expect(mcpLines(modern, {})).toEqual(["The required parameter `q` is missing"])
    const broken = { type: "object", properties: { q: { $ref: "#/$defs/missing" } } }
    expect(inputSchema(broken).compiled).toBe(false)
    expect(mcpLines(broken, { q: 1 })).toEqual([])
    expect(mcpLines(broken, [1])).toEqual(["The input must be a JSON object, but was provided as `array`"])
  })

  it("the server's JSON Schema is what provider definitions show", () => {
    expect(JSONSchema.make(inputSchema(strict).schema)).toEqual({
      $schema: "http://json-schema.org/draft-07/schema#",
      ...strict
    })
  })
})
