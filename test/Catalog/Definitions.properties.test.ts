/**
 * Property tests over generated Effect Schemas: every shape stays valid under its provider's restrictions, and the
 * JSON Schemas mean what the Effect Schema means (values the schema encodes validate, with ajv, against the emitted
 * schema; a strict model's nulls, restored, decode again).
 */
import { describe, expect, it } from "@effect/vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import { Arbitrary, FastCheck as fc, Schema } from "effect"
import * as Definitions from "../../src/Catalog/Definitions.js"
import * as Tool from "../../src/Tool/Tool.js"
import {
  anthropicProblems,
  geminiToolsProblems,
  openAiChatProblems,
  openAiResponsesProblems
} from "./Definitions/restrictions.js"

// ---------------------------------------------------------------------------------------------------------------
// a small language of schemas, and its Effect Schema
// ---------------------------------------------------------------------------------------------------------------

type Spec =
  | { readonly kind: "leaf"; readonly leaf: Leaf }
  | { readonly kind: "struct"; readonly fields: ReadonlyArray<Field>; readonly identified: boolean }
  | { readonly kind: "array"; readonly of: Spec }
  | { readonly kind: "nullOr"; readonly of: Spec }
  | { readonly kind: "union"; readonly a: ReadonlyArray<Field>; readonly b: ReadonlyArray<Field> }
  | { readonly kind: "record"; readonly of: Spec }
  | { readonly kind: "tuple"; readonly a: Spec; readonly b: Spec }
  | { readonly kind: "tree" }

type Leaf =
  | "string"
  | "finite"
  | "int"
  | "boolean"
  | "nonEmpty"
  | "minLength"
  | "pattern"
  | "between"
  | "positiveInt"
  | "stringLiterals"
  | "numberLiterals"
  | "date"

interface Field {
  readonly name: string
  readonly optional: "required" | "optional" | "default"
  readonly spec: Spec
}

const leaves: ReadonlyArray<Leaf> = [
  "string",
  "finite",
  "int",
  "boolean",
  "nonEmpty",
  "minLength",
  "pattern",
  "between",
  "positiveInt",
  "stringLiterals",
  "numberLiterals",
  "date"
]

const names = fc.constantFrom("a", "b", "file_path", "count", "mode", "x", "items", "meta")

const specArbitrary = fc.letrec<{ spec: Spec; fields: ReadonlyArray<Field> }>((tie) => ({
  spec: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 6, arbitrary: fc.constantFrom(...leaves).map((leaf): Spec => ({ kind: "leaf", leaf })) },
    {
      weight: 2,
      arbitrary: fc.record({ fields: tie("fields"), identified: fc.boolean() }).map((r): Spec => ({
        kind: "struct",
        ...r
      }))
    },
    { weight: 1, arbitrary: tie("spec").map((of): Spec => ({ kind: "array", of })) },
    { weight: 1, arbitrary: tie("spec").map((of): Spec => ({ kind: "nullOr", of })) },
    {
      weight: 1,
      arbitrary: fc.record({ a: tie("fields"), b: tie("fields") }).map((r): Spec => ({ kind: "union", ...r }))
    },
    { weight: 1, arbitrary: tie("spec").map((of): Spec => ({ kind: "record", of })) },
    { weight: 1, arbitrary: fc.record({ a: tie("spec"), b: tie("spec") }).map((r): Spec => ({ kind: "tuple", ...r })) },
    { weight: 1, arbitrary: fc.constant<Spec>({ kind: "tree" }) }
  ),
  fields: fc.uniqueArray(
    fc.record({
      name: names,
      optional: fc.constantFrom("required" as const, "optional" as const, "default" as const),
      spec: tie("spec")
    }),
    { minLength: 1, maxLength: 4, selector: (field) => field.name }
  )
}))

interface TreeNode {
  readonly label: string
  readonly children: ReadonlyArray<TreeNode>
}
const TreeNode: Schema.Schema<TreeNode> = Schema.Struct({
  label: Schema.String,
  children: Schema.Array(Schema.suspend(() => TreeNode)).pipe(Schema.maxItems(2))
}).annotations({ identifier: "TreeNode" })

type AnySchema = Schema.Schema<unknown, unknown>

const leafSchema = (leaf: Leaf): AnySchema => {
  switch (leaf) {
    case "string":
      return Schema.String as AnySchema
    case "finite":
      return Schema.Finite as unknown as AnySchema
    case "int":
      return Schema.Int as unknown as AnySchema
    case "boolean":
      return Schema.Boolean as AnySchema
    case "nonEmpty":
      return Schema.NonEmptyString as unknown as AnySchema
    case "minLength":
      return Schema.String.pipe(Schema.minLength(2)) as unknown as AnySchema
    case "pattern":
      return Schema.String.pipe(Schema.pattern(/^[a-z]+$/)) as unknown as AnySchema
    case "between":
      return Schema.Finite.pipe(Schema.between(-5, 5)) as unknown as AnySchema
    case "positiveInt":
      return Schema.Int.pipe(Schema.greaterThan(0)) as unknown as AnySchema
    case "stringLiterals":
      return Schema.Literal("on", "off") as unknown as AnySchema
    case "numberLiterals":
      return Schema.Literal(1, 2) as unknown as AnySchema
    case "date":
      return Schema.Date as unknown as AnySchema
  }
}

/** A default for an `optionalWith` field: any value the schema accepts, here taken from its arbitrary. */
const defaultOf = (schema: AnySchema): unknown => fc.sample(Arbitrary.make(schema), { numRuns: 1, seed: 1 })[0]

let identifiers = 0

const toSchema = (spec: Spec): AnySchema => {
  switch (spec.kind) {
    case "leaf":
      return leafSchema(spec.leaf)
    case "struct": {
      const struct = structOf(spec.fields)
      return spec.identified ? struct.annotations({ identifier: `Generated${identifiers++}` }) : struct
    }
    case "array":
      return Schema.Array(toSchema(spec.of)).pipe(Schema.maxItems(3)) as unknown as AnySchema
    case "nullOr":
      return Schema.NullOr(toSchema(spec.of)) as unknown as AnySchema
    case "union":
      return Schema.Union(
        structOf([{ name: "kind", optional: "required", spec: { kind: "leaf", leaf: "string" } }, ...spec.a], "a"),
        structOf([{ name: "kind", optional: "required", spec: { kind: "leaf", leaf: "string" } }, ...spec.b], "b")
      ) as unknown as AnySchema
    case "record":
      return Schema.Record({ key: Schema.String, value: toSchema(spec.of) }) as unknown as AnySchema
    case "tuple":
      return Schema.Tuple(toSchema(spec.a), toSchema(spec.b)) as unknown as AnySchema
    case "tree":
      return TreeNode as unknown as AnySchema
  }
}

const structOf = (fields: ReadonlyArray<Field>, tag?: string): AnySchema => {
  const shape: Record<string, Schema.Struct.Field> = {}
  for (const field of fields) {
    const schema = field.name === "kind" && tag !== undefined
      ? Schema.Literal(tag) as unknown as AnySchema
      : toSchema(field.spec)
    shape[field.name] = field.optional === "required" || field.name === "kind"
      ? schema
      : field.optional === "optional"
      ? Schema.optional(schema)
      : Schema.optionalWith(schema, { default: () => defaultOf(schema) })
  }
  return Schema.Struct(shape) as unknown as AnySchema
}

const toolArbitrary = fc.uniqueArray(
  fc.record({
    name: names,
    optional: fc.constantFrom("required" as const, "optional" as const, "default" as const),
    spec: specArbitrary.spec
  }),
  {
    minLength: 0,
    maxLength: 5,
    selector: (field) => field.name
  }
).map((fields) => {
  const input = structOf(fields)
  const tool = Tool.make("Generated", {
    description: "A generated tool.",
    input: input as Schema.Schema<unknown>,
    touchesEnvironment: false
  })
  return { tool: tool.definition, input, fields }
})

// ---------------------------------------------------------------------------------------------------------------
// properties
// ---------------------------------------------------------------------------------------------------------------

const ajv = new Ajv2020({ strict: false, allErrors: true })

/** A strict model must send every property: missing optional ones as null (the oracle, in the plainest words). */
const asStrictModelSends = (value: unknown, schema: Definitions.JsonSchema, defs: Definitions.JsonSchema): unknown => {
  const resolve = (node: Definitions.JsonSchema): Definitions.JsonSchema =>
    typeof node["$ref"] === "string"
      ? (defs[(node["$ref"] as string).replace("#/$defs/", "")] as Definitions.JsonSchema)
      : node
  const resolved = resolve(schema)
  // The members of a union (an optional value is one with null; a nullable union nests one anyOf in another),
  // references resolved.
  const membersOf = (node: Definitions.JsonSchema): ReadonlyArray<Definitions.JsonSchema> => {
    const at = resolve(node)
    return Array.isArray(at["anyOf"]) ? (at["anyOf"] as ReadonlyArray<Definitions.JsonSchema>).flatMap(membersOf) : [at]
  }
  const candidates = membersOf(resolved)
  if (Array.isArray(value)) {
    const items = candidates.find((candidate) => candidate["items"] !== undefined)?.["items"] as
      | Definitions.JsonSchema
      | undefined
    return items === undefined ? value : value.map((item) => asStrictModelSends(item, items, defs))
  }
  if (typeof value === "object" && value !== null) {
    // The union member whose properties the value's keys fit (the `kind` literal tells them apart).
    const member = candidates.find((candidate) => {
      const props = candidate["properties"] as Record<string, Definitions.JsonSchema> | undefined
      const kind = props?.["kind"]?.["enum"] as ReadonlyArray<unknown> | undefined
      return props !== undefined && Object.keys(value).every((key) => key in props) &&
        (kind === undefined || kind.includes((value as Record<string, unknown>)["kind"]))
    }) ?? resolved
    const props = (member["properties"] ?? {}) as Record<string, Definitions.JsonSchema>
    const out: Record<string, unknown> = {}
    for (const [key, child] of Object.entries(props)) {
      out[key] = key in value ? asStrictModelSends((value as Record<string, unknown>)[key], child, defs) : null
    }
    return out
  }
  return value
}

describe("definitions of generated schemas", () => {
  it.prop("every shape satisfies its provider's restrictions", [toolArbitrary], ([{ tool }]) => {
    expect(anthropicProblems(Definitions.anthropic(tool) as never)).toEqual([])
    expect(openAiChatProblems(Definitions.openAiChat(tool) as never)).toEqual([])
    expect(openAiChatProblems(Definitions.openAiChat(tool, { strict: true }) as never)).toEqual([])
    expect(openAiResponsesProblems(Definitions.openAiResponses(tool) as never)).toEqual([])
    expect(geminiToolsProblems(Definitions.forProvider("gemini", [tool]))).toEqual([])
  }, { fastCheck: { numRuns: 200 }, timeout: 120_000 })

  it.prop("values the Effect Schema encodes validate against the Anthropic/OpenAI schema", [
    toolArbitrary.chain((t) => fc.tuple(fc.constant(t), Arbitrary.make(t.input)))
  ], ([[{ input, tool }, value]]) => {
    const encoded = Schema.encodeSync(input)(value)
    const validate = ajv.compile(Definitions.anthropic(tool).input_schema)
    expect(validate(JSON.parse(JSON.stringify(encoded))), JSON.stringify(validate.errors)).toBe(true)
  }, { fastCheck: { numRuns: 200 }, timeout: 120_000 })

  it.prop("strict: what a strict model sends validates against the strict schema and, restored, decodes again", [
    toolArbitrary.chain((t) => fc.tuple(fc.constant(t), Arbitrary.make(t.input)))
  ], ([[{ input, tool }, value]]) => {
    const definition = Definitions.openAiResponses(tool)
    if (!definition.strict) return
    const encoded = JSON.parse(JSON.stringify(Schema.encodeSync(input)(value))) as unknown
    const sent = asStrictModelSends(
      encoded,
      definition.parameters,
      (definition.parameters["$defs"] ?? {}) as Definitions.JsonSchema
    )
    const validate = ajv.compile(definition.parameters)
    expect(validate(sent), JSON.stringify(validate.errors)).toBe(true)
    const restored = Definitions.restoreOmitted(tool, sent)
    expect(Schema.decodeUnknownEither(input)(restored)._tag).toBe("Right")
  }, { fastCheck: { numRuns: 200 }, timeout: 120_000 })

  it("the generators reach the interesting cases: strict refusals, $defs kept, dropped keywords, nullables", () => {
    const samples = fc.sample(toolArbitrary, { numRuns: 400, seed: 42 })
    const strictRefused = samples.filter(({ tool }) => !Definitions.openAiResponses(tool).strict).length
    const withDefs =
      samples.filter(({ tool }) => Definitions.anthropic(tool).input_schema["$defs"] !== undefined).length
    const geminiDropped = samples.filter(({ tool }) => Definitions.explain(tool, "gemini").dropped.length > 0).length
    const strictDropped =
      samples.filter(({ tool }) => Definitions.explain(tool, "openai-strict").dropped.length > 0).length
    const nullables =
      samples.filter(({ tool }) => JSON.stringify(Definitions.openAiResponses(tool).parameters).includes("\"null\""))
        .length
    expect(strictRefused).toBeGreaterThan(20)
    expect(samples.length - strictRefused).toBeGreaterThan(50)
    expect(withDefs).toBeGreaterThan(10)
    expect(geminiDropped).toBeGreaterThan(20)
    expect(strictDropped).toBeGreaterThan(20)
    expect(nullables).toBeGreaterThan(20)
  })
})
