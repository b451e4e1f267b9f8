/**
 * The per-provider rewrites of a canonical input schema (see `jsonSchema.ts`). Each keeps what its provider
 * accepts, rewrites what it can express another way, and records what it had to drop: the decoder still enforces
 * a dropped constraint, so a value breaking it gets a model-readable InvalidInput.
 *
 * @internal
 */
import * as Either from "effect/Either"
import { isObject, mapChildren } from "./jsonSchema.js"
import type { JsonSchema, JsonValue } from "./jsonSchema.js"

/** A keyword a rewrite left out, and where. */
export interface Dropped {
  /** JSON Pointer-like path of the schema node (`/properties/offset`). */
  readonly path: string
  readonly keyword: string
}

/** A rewritten schema and what it left out. */
export interface Rewrite {
  readonly schema: JsonSchema
  readonly dropped: ReadonlyArray<Dropped>
}

const pointer = (path: ReadonlyArray<string>): string => (path.length === 0 ? "" : `/${path.join("/")}`)

const acceptsNull = (schema: JsonSchema): boolean => {
  const type = schema["type"]
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true
  if (Array.isArray(schema["enum"]) && schema["enum"].includes(null)) return true
  if (schema["const"] === null) return true
  const anyOf = schema["anyOf"]
  return Array.isArray(anyOf) && anyOf.some((member) => isObject(member) && acceptsNull(member))
}

/** The input of every provider must be an object at its root. */
const objectRoot = (schema: JsonSchema): JsonSchema => {
  if (schema["type"] === "object") return schema
  if (Object.keys(schema).length === 0) return { type: "object" }
  // A union of objects (or anything without a type): an object with the union inside still validates the same.
  return { type: "object", ...schema }
}

// ---------------------------------------------------------------------------------------------------------------
// Anthropic and OpenAI (not strict): JSON Schema as it is
// ---------------------------------------------------------------------------------------------------------------

/**
 * Anthropic's `input_schema` and OpenAI's non-strict `parameters` take JSON Schema as it is: the canonical schema
 * with an object root.
 *
 * @internal
 */
export const plain = (canonical: JsonSchema): Rewrite => ({ schema: objectRoot(canonical), dropped: [] })

// ---------------------------------------------------------------------------------------------------------------
// OpenAI strict
// ---------------------------------------------------------------------------------------------------------------

/** Keywords OpenAI's strict mode supports (Structured Outputs, "Supported properties"). */
const strictKeywords: ReadonlySet<string> = new Set([
  "type",
  "description",
  "properties",
  "required",
  "additionalProperties",
  "items",
  "enum",
  "anyOf",
  "$ref",
  "$defs",
  "pattern",
  "format",
  "multipleOf",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minItems",
  "maxItems"
])

/** String formats strict mode supports. */
const strictFormats: ReadonlySet<string> = new Set([
  "date-time",
  "time",
  "date",
  "duration",
  "email",
  "hostname",
  "ipv4",
  "ipv6",
  "uuid"
])

/** Structures strict mode cannot express at all: the tool is then sent with `strict: false`. */
const strictUnsupported: ReadonlyArray<readonly [string, string]> = [
  ["allOf", "an intersection (allOf)"],
  ["not", "a negation (not)"],
  ["if", "a conditional (if/then/else)"],
  ["patternProperties", "pattern properties"],
  ["dependentSchemas", "dependent schemas"],
  ["dependentRequired", "dependent required properties"],
  ["prefixItems", "a tuple (prefixItems)"],
  ["propertyNames", "constrained property names"],
  ["unevaluatedProperties", "unevaluated properties"],
  ["contains", "a contains constraint"]
]

/** OpenAI's documented limits for a strict schema. */
export const strictLimits = { maxDepth: 10, maxProperties: 5000, maxEnumValues: 1000 } as const

/** A strict rewrite: the schema, what it dropped, and the optional properties it turned into required nullables. */
export interface StrictRewrite extends Rewrite {
  /** Paths of data (property names, `*` for array items) where the model sends `null` for "not given". */
  readonly nullable: ReadonlyArray<ReadonlyArray<string>>
  /**
   * For each object node of the rewritten schema, the properties that were optional (their `null` means "not
   * given"). Keyed by the node itself: two members of a union may give one name two meanings.
   */
  readonly omittable: WeakMap<JsonSchema, ReadonlySet<string>>
}

class NotStrict {
  constructor(readonly reason: string, readonly path: string) {}
}

const nullableOf = (schema: JsonSchema): JsonSchema => {
  if (acceptsNull(schema)) return schema
  const type = schema["type"]
  if (typeof type === "string") {
    const out: JsonSchema = { ...schema, type: [type, "null"] }
    if (Array.isArray(schema["enum"])) out["enum"] = [...schema["enum"], null]
    return out
  }
  if (Array.isArray(type)) return { ...schema, type: [...type, "null"] }
  if (Array.isArray(schema["anyOf"])) return { ...schema, anyOf: [...schema["anyOf"], { type: "null" }] }
  const { description, ...rest } = schema
  return description === undefined
    ? { anyOf: [rest, { type: "null" }] }
    : { description, anyOf: [rest, { type: "null" }] }
}

/**
 * OpenAI's strict rewrite: every property required (an optional one becomes a union with null, and the model's
 * `null` means "not given": see `restoreOmitted`), `additionalProperties: false` on every object, `oneOf` as
 * `anyOf`, `const` as a one-value `enum`, unsupported keywords dropped. Left: a structure strict mode cannot
 * express (a record, a tuple, an intersection, a value of any type, nesting past 10 levels), with the reason.
 *
 * @internal
 */
export const openAiStrict = (canonical: JsonSchema): Either.Either<StrictRewrite, string> => {
  const dropped: Array<Dropped> = []
  const nullable: Array<ReadonlyArray<string>> = []
  const omittable = new WeakMap<JsonSchema, ReadonlySet<string>>()
  /** `nullableOf`, keeping what is known of the object it wraps (its copies share its `properties`). */
  const nullableKeeping = (schema: JsonSchema): JsonSchema => {
    const out = nullableOf(schema)
    const names = omittable.get(schema)
    if (names === undefined || out === schema) return out
    for (const node of [out, ...(Array.isArray(out["anyOf"]) ? out["anyOf"] : [])]) {
      if (isObject(node) && node["properties"] === schema["properties"]) omittable.set(node, names)
    }
    return out
  }
  let properties = 0
  let enumValues = 0

  const rewrite = (
    node: JsonSchema,
    path: ReadonlyArray<string>,
    data: ReadonlyArray<string>,
    depth: number
  ): JsonSchema => {
    const at = pointer(path)
    if (depth > strictLimits.maxDepth) throw new NotStrict(`it nests deeper than ${strictLimits.maxDepth} levels`, at)
    for (const [keyword, what] of strictUnsupported) {
      if (keyword in node) throw new NotStrict(`strict mode cannot express ${what}`, at)
    }
    let source: JsonSchema = node
    if ("oneOf" in source) {
      const { oneOf, ...rest } = source
      source = {
        ...rest,
        anyOf: [
          ...((rest["anyOf"] as ReadonlyArray<JsonValue> | undefined) ?? []),
          ...(oneOf as ReadonlyArray<JsonValue>)
        ]
      }
    }
    if ("const" in source) {
      const { const: value, ...rest } = source
      source = { ...rest, enum: [value ?? null] }
    }
    if (!("type" in source) && !("anyOf" in source) && !("$ref" in source) && !("enum" in source)) {
      throw new NotStrict("strict mode cannot express a value of any type", at)
    }
    const out: JsonSchema = {}
    for (const [keyword, value] of Object.entries(source)) {
      if (!strictKeywords.has(keyword)) {
        dropped.push({ path: at, keyword })
        continue
      }
      if (keyword === "format" && !(typeof value === "string" && strictFormats.has(value))) {
        dropped.push({ path: at, keyword })
        continue
      }
      out[keyword] = value
    }
    if ("$ref" in out) {
      // Strict mode takes a bare reference; its siblings (a description) go.
      for (const keyword of Object.keys(out)) if (keyword !== "$ref") dropped.push({ path: at, keyword })
      return { $ref: out["$ref"]! }
    }
    if (Array.isArray(out["enum"])) {
      enumValues += out["enum"].length
      if (enumValues > strictLimits.maxEnumValues) {
        throw new NotStrict(`it has more than ${strictLimits.maxEnumValues} enum values`, at)
      }
    }
    const isObjectType = out["type"] === "object" || (Array.isArray(out["type"]) && out["type"].includes("object"))
    if (isObjectType || "properties" in out) {
      const extra = out["additionalProperties"]
      if (extra !== undefined && extra !== false) {
        throw new NotStrict("strict mode cannot express a free-form object (a record)", at)
      }
      const props = isObject(out["properties"]) ? out["properties"] : {}
      const required = new Set(Array.isArray(out["required"]) ? (out["required"] as ReadonlyArray<string>) : [])
      const rewritten: JsonSchema = {}
      const omitted = new Set<string>()
      for (const [name, child] of Object.entries(props)) {
        properties++
        if (properties > strictLimits.maxProperties) {
          throw new NotStrict(`it has more than ${strictLimits.maxProperties} properties`, at)
        }
        const childSchema = rewrite(child as JsonSchema, [...path, "properties", name], [...data, name], depth + 1)
        if (required.has(name) || acceptsNull(childSchema)) rewritten[name] = childSchema
        else {
          rewritten[name] = nullableKeeping(childSchema)
          nullable.push([...data, name])
          omitted.add(name)
        }
      }
      out["properties"] = rewritten
      omittable.set(out, omitted)
      out["required"] = Object.keys(rewritten)
      out["additionalProperties"] = false
      if (!("type" in out)) out["type"] = "object"
    }
    if (isObject(out["items"])) out["items"] = rewrite(out["items"], [...path, "items"], [...data, "*"], depth + 1)
    if (Array.isArray(out["anyOf"])) {
      out["anyOf"] = out["anyOf"].map((
        member,
        i
      ) => (isObject(member) ? rewrite(member, [...path, "anyOf", String(i)], data, depth + 1) : member))
    }
    if (isObject(out["$defs"])) {
      const defs: JsonSchema = {}
      for (const [name, def] of Object.entries(out["$defs"])) {
        defs[name] = rewrite(def as JsonSchema, [...path, "$defs", name], ["$defs", name], 1)
      }
      out["$defs"] = defs
    }
    return out
  }

  try {
    const root = objectRoot(canonical)
    if (Array.isArray(root["anyOf"]) && !isObject(root["properties"])) {
      throw new NotStrict("strict mode needs an object at the root, not a union", "")
    }
    return Either.right({ schema: rewrite(root, [], [], 1), dropped, nullable, omittable })
  } catch (error) {
    if (error instanceof NotStrict) {
      return Either.left(error.path === "" ? error.reason : `${error.reason} (at ${error.path})`)
    }
    throw error
  }
}

/**
 * Removes the `null`s a strict-mode model sends for optional properties it did not want to give, so the decoder sees
 * them as absent and applies its defaults. It walks the rewritten schema beside the value: at a union it follows the
 * members the value can belong to (an object's keys are among their properties, and its enum-valued properties such
 * as a `kind` agree), and it drops a `null` only where every such member says the property was optional. A required
 * nullable property keeps its `null`.
 *
 * @internal
 */
export const restoreOmitted = (input: unknown, rewrite: Pick<StrictRewrite, "schema" | "omittable">): unknown => {
  const defs = isObject(rewrite.schema["$defs"]) ? rewrite.schema["$defs"] : {}
  const resolve = (node: JsonSchema): JsonSchema => {
    const ref = node["$ref"]
    const target = typeof ref === "string" ? defs[ref.replace("#/$defs/", "")] : undefined
    return isObject(target) ? target : node
  }
  const membersOf = (node: JsonSchema): ReadonlyArray<JsonSchema> => {
    const at = resolve(node)
    return Array.isArray(at["anyOf"]) ? at["anyOf"].filter(isObject).flatMap(membersOf) : [at]
  }
  const fits = (value: unknown, member: JsonSchema): boolean => {
    if (Array.isArray(value)) return isObject(member["items"])
    if (!isObject(value)) return true
    const props = member["properties"]
    if (!isObject(props)) return false
    return Object.entries(value).every(([key, item]) => {
      const prop = props[key]
      if (!isObject(prop)) return false
      const values = resolve(prop)["enum"]
      return !Array.isArray(values) || values.some((allowed) => allowed === item)
    })
  }
  const strip = (value: unknown, node: JsonSchema): unknown => {
    const candidates = membersOf(node).filter((member) => fits(value, member))
    if (Array.isArray(value)) {
      const items = candidates.map((member) => member["items"]).filter(isObject)
      return items.length === 0
        ? value
        : value.map((item) => strip(item, items.length === 1 ? items[0]! : { anyOf: items }))
    }
    if (!isObject(value) || candidates.length === 0) return value
    const out: Record<string, JsonValue> = {}
    for (const [key, item] of Object.entries(value)) {
      if (item === null && candidates.every((member) => rewrite.omittable.get(member)?.has(key) === true)) continue
      const children = candidates.map((member) => (member["properties"] as JsonSchema)[key]).filter(isObject)
      out[key] = (children.length === 0
        ? item
        : strip(item, children.length === 1 ? children[0]! : { anyOf: children })) as JsonValue
    }
    return out
  }
  return strip(input, rewrite.schema)
}

// ---------------------------------------------------------------------------------------------------------------
// Gemini
// ---------------------------------------------------------------------------------------------------------------

/** Keywords of Gemini's `Schema` (an OpenAPI 3.0 subset). */
const geminiKeywords: ReadonlySet<string> = new Set([
  "type",
  "format",
  "description",
  "nullable",
  "enum",
  "items",
  "properties",
  "required",
  "minItems",
  "maxItems",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "minProperties",
  "maxProperties",
  "anyOf",
  "default",
  "example",
  "propertyOrdering"
])

const geminiFormats: Readonly<Record<string, ReadonlySet<string>>> = {
  string: new Set(["date-time", "enum"]),
  number: new Set(["float", "double"]),
  integer: new Set(["int32", "int64"])
}

/** How many times a recursive definition is unrolled before it is cut. */
export const geminiRecursionDepth = 3

/**
 * Gemini's `parameters`: no `$ref`/`$defs` (inlined; recursion unrolled {@link geminiRecursionDepth} times, then
 * cut), no `additionalProperties`, a type list or a union with null as `nullable: true`, `const` and `enum` as
 * string enums (other enums dropped), an integer `exclusiveMinimum`/`exclusiveMaximum` as `minimum`/`maximum`,
 * a tuple as an array of the union of its members, only the formats Gemini knows.
 *
 * @internal
 */
export const gemini = (canonical: JsonSchema): Rewrite => {
  const dropped: Array<Dropped> = []
  const defs = isObject(canonical["$defs"]) ? canonical["$defs"] : {}

  const rewrite = (
    node: JsonSchema,
    path: ReadonlyArray<string>,
    unrolled: ReadonlyMap<string, number>
  ): JsonSchema => {
    const at = pointer(path)
    let source: JsonSchema = node
    const ref = source["$ref"]
    if (typeof ref === "string") {
      const name = ref.replace(/^#\/\$defs\//, "")
      const times = unrolled.get(name) ?? 0
      const { $ref: _ref, ...siblings } = source
      if (times >= geminiRecursionDepth || !(name in defs)) {
        dropped.push({ path: at, keyword: "$ref" })
        return rewrite({ type: "object", ...siblings }, path, unrolled)
      }
      const next = new Map(unrolled)
      next.set(name, times + 1)
      return rewrite({ ...(defs[name] as JsonSchema), ...siblings }, path, next)
    }
    if (Array.isArray(source["allOf"])) {
      const { allOf, ...rest } = source
      // What the canonical schema could not merge: the first member's keywords where they do not clash.
      source = {
        ...(allOf as ReadonlyArray<JsonSchema>).reduce<JsonSchema>((acc, member) => ({ ...member, ...acc }), {}),
        ...rest
      }
      dropped.push({ path: at, keyword: "allOf" })
    }
    if ("oneOf" in source) {
      const { oneOf, ...rest } = source
      source = { ...rest, anyOf: oneOf! }
    }
    if ("const" in source) {
      const { const: value, ...rest } = source
      source = typeof value === "string" ? { ...rest, type: "string", enum: [value] } : rest
      if (typeof value !== "string") dropped.push({ path: at, keyword: "const" })
    }
    const out: JsonSchema = {}
    let nullable = false
    // Types: a list with null becomes nullable; several other types become a union.
    const type = source["type"]
    if (Array.isArray(type)) {
      const types = type.filter((t) => t !== "null")
      nullable = types.length < type.length
      if (types.length === 1) out["type"] = types[0]!
      else if (types.length > 1) out["anyOf"] = types.map((t) => ({ type: t }))
    } else if (type === "null") {
      nullable = true
    } else if (type !== undefined) out["type"] = type
    for (const [keyword, value] of Object.entries(source)) {
      if (keyword === "type") continue
      if (keyword === "anyOf" && Array.isArray(value)) {
        const members = value.filter((member) =>
          !(isObject(member) && member["type"] === "null" && Object.keys(member).length === 1)
        )
        if (members.length < value.length) nullable = true
        const rewritten = members.map((member, i) =>
          rewrite(member as JsonSchema, [...path, "anyOf", String(i)], unrolled)
        )
        if (rewritten.length === 1) Object.assign(out, { ...rewritten[0]!, ...out })
        else if (rewritten.length > 1) {
          out["anyOf"] = [...((out["anyOf"] as ReadonlyArray<JsonValue> | undefined) ?? []), ...rewritten]
        }
        continue
      }
      if (keyword === "properties" && isObject(value)) {
        const props: JsonSchema = {}
        for (const [name, child] of Object.entries(value)) {
          props[name] = rewrite(child as JsonSchema, [...path, "properties", name], unrolled)
        }
        out["properties"] = props
        continue
      }
      if (keyword === "items") {
        // `items: false` closes a tuple, which `prefixItems` below turns into `maxItems`.
        if (isObject(value)) out["items"] = rewrite(value, [...path, "items"], unrolled)
        else if (!Array.isArray(source["prefixItems"])) dropped.push({ path: at, keyword })
        continue
      }
      if (keyword === "prefixItems" && Array.isArray(value)) {
        const members = value.map((member, i) =>
          rewrite(member as JsonSchema, [...path, "prefixItems", String(i)], unrolled)
        )
        out["items"] = members.length === 1 ? members[0]! : { anyOf: members }
        out["minItems"] ??= members.length
        if (source["items"] === false) out["maxItems"] = members.length
        dropped.push({ path: at, keyword: "prefixItems" })
        continue
      }
      if (keyword === "enum" && Array.isArray(value)) {
        const values = value.filter((v) => v !== null)
        if (values.length < value.length) nullable = true
        if (values.every((v) => typeof v === "string")) {
          out["enum"] = values
          out["type"] ??= "string"
        } else dropped.push({ path: at, keyword })
        continue
      }
      if ((keyword === "exclusiveMinimum" || keyword === "exclusiveMaximum") && typeof value === "number") {
        const bound = keyword === "exclusiveMinimum" ? "minimum" : "maximum"
        if (source["type"] === "integer" && Number.isInteger(value)) {
          const converted = keyword === "exclusiveMinimum" ? value + 1 : value - 1
          const existing = out[bound]
          out[bound] = typeof existing === "number"
            ? (bound === "minimum" ? Math.max(existing, converted) : Math.min(existing, converted))
            : converted
        } else dropped.push({ path: at, keyword })
        continue
      }
      if (keyword === "format") {
        const allowed = typeof source["type"] === "string" ? geminiFormats[source["type"]] : undefined
        if (typeof value === "string" && allowed?.has(value) === true) out["format"] = value
        else dropped.push({ path: at, keyword })
        continue
      }
      if (keyword === "additionalProperties" && value === false) continue
      if (keyword === "$defs") continue
      if (!geminiKeywords.has(keyword)) {
        dropped.push({ path: at, keyword })
        continue
      }
      if (keyword === "minimum" || keyword === "maximum") {
        const existing = out[keyword]
        out[keyword] = typeof existing === "number" && typeof value === "number"
          ? (keyword === "minimum" ? Math.max(existing, value) : Math.min(existing, value))
          : value
        continue
      }
      out[keyword] = value
    }
    if (nullable) out["nullable"] = true
    return out
  }

  const root = rewrite(objectRoot(canonical), [], new Map())
  return { schema: root, dropped }
}

/** Every subschema of a schema, with its path, the schema itself first (for checks and tests). */
export const subschemas = (schema: JsonSchema): ReadonlyArray<readonly [string, JsonSchema]> => {
  const out: Array<readonly [string, JsonSchema]> = []
  const walk = (node: JsonSchema, path: ReadonlyArray<string>): void => {
    out.push([pointer(path), node])
    mapChildren(node, (child, childPath) => {
      walk(child, childPath)
      return child
    }, path)
  }
  walk(schema, [])
  return out
}
