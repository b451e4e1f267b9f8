/**
 * The canonical JSON Schema of a tool's input: what `JSONSchema.make` emits, cleaned of what no provider wants.
 *
 * - no `$schema`, `$id`, `$comment`, and no `title` (Effect fills titles with filter names such as
 *   `greaterThanOrEqualTo(0)`: noise in the model's context);
 * - every `$ref` inlined, except references that recurse, which stay in `$defs` (a provider that cannot take
 *   `$defs` unrolls them in its own rewrite);
 * - `allOf` with one member, or with members that do not disagree, merged into its parent (Effect wraps every
 *   refinement of a named schema that way);
 * - where a merged member and its parent both have a description, the parent's (the author's) is kept over the
 *   member's (usually the one Effect generated for a filter, such as "a non-negative number").
 *
 * The result is JSON Schema 2020-12. The provider rewrites start from it.
 *
 * @internal
 */
import * as JSONSchema from "effect/JSONSchema"
import type * as Schema from "effect/Schema"

/** A JSON Schema node, loosely typed: the rewrites read and write keywords by name. */
export type JsonSchema = { [keyword: string]: JsonValue }

/** Any JSON value. */
export type JsonValue = null | boolean | number | string | ReadonlyArray<JsonValue> | {
  readonly [key: string]: JsonValue
}

/** Whether a JSON value is a (non-array) object. */
export const isObject = (value: unknown): value is JsonSchema =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const dropped: ReadonlySet<string> = new Set(["$schema", "$id", "$comment", "title"])

/** The schema of a `$ref` of this document, or undefined. */
const refName = (ref: JsonValue): string | undefined => {
  if (typeof ref !== "string") return undefined
  const match = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(ref)
  return match === null ? undefined : decodeURIComponent(match[1]!.replace(/~1/g, "/").replace(/~0/g, "~"))
}

/** Names of the definitions that reach themselves through references. */
const recursiveDefinitions = (defs: Readonly<Record<string, JsonValue>>): ReadonlySet<string> => {
  const edges = new Map<string, Set<string>>()
  const collect = (value: JsonValue, into: Set<string>): void => {
    if (Array.isArray(value)) {
      for (const item of value) collect(item, into)
    } else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        const name = key === "$ref" ? refName(child) : undefined
        if (name !== undefined) into.add(name)
        else collect(child, into)
      }
    }
  }
  for (const [name, def] of Object.entries(defs)) {
    const into = new Set<string>()
    collect(def, into)
    edges.set(name, into)
  }
  const recursive = new Set<string>()
  for (const start of edges.keys()) {
    const seen = new Set<string>()
    const stack = [...(edges.get(start) ?? [])]
    while (stack.length > 0) {
      const next = stack.pop()!
      if (next === start) {
        recursive.add(start)
        break
      }
      if (seen.has(next)) continue
      seen.add(next)
      stack.push(...(edges.get(next) ?? []))
    }
  }
  return recursive
}

/** Keywords whose values are schemas (one, a list, or a map of them). */
const schemaKeywords = {
  one: [
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems"
  ],
  list: ["anyOf", "oneOf", "allOf", "prefixItems"],
  map: ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]
} as const

const isOne = (key: string) => (schemaKeywords.one as ReadonlyArray<string>).includes(key)
const isList = (key: string) => (schemaKeywords.list as ReadonlyArray<string>).includes(key)
const isMap = (key: string) => (schemaKeywords.map as ReadonlyArray<string>).includes(key)

/**
 * Applies `f` to every subschema of `schema` (not to `schema` itself), rebuilding the parents. `f` gets the
 * subschema and its path of keywords.
 */
export const mapChildren = (
  schema: JsonSchema,
  f: (child: JsonSchema, path: ReadonlyArray<string>) => JsonValue,
  path: ReadonlyArray<string> = []
): JsonSchema => {
  const out: JsonSchema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (isOne(key) && isObject(value)) out[key] = f(value, [...path, key])
    else if (isList(key) && Array.isArray(value)) {
      out[key] = value.map((item, i) => (isObject(item) ? f(item, [...path, key, String(i)]) : item))
    } else if (isMap(key) && isObject(value)) {
      const map: JsonSchema = {}
      for (const [name, child] of Object.entries(value)) {
        map[name] = isObject(child)
          ? f(child, [...path, key, name])
          : child
      }
      out[key] = map
    } else out[key] = value
  }
  return out
}

/** Merges `allOf` members into their parent when no keyword disagrees. */
const mergeAllOf = (schema: JsonSchema): JsonSchema => {
  const members = schema["allOf"]
  if (!Array.isArray(members) || !members.every(isObject)) return schema
  const { allOf: _allOf, ...rest } = schema
  const merged: JsonSchema = { ...rest }
  const kept: Array<JsonSchema> = []
  for (const member of members as ReadonlyArray<JsonSchema>) {
    const conflict = Object.entries(member).some(([key, value]) =>
      key !== "description" && key in merged && JSON.stringify(merged[key]) !== JSON.stringify(value)
    )
    if (conflict) {
      kept.push(member)
      continue
    }
    for (const [key, value] of Object.entries(member)) {
      // The outer description is the author's; the member's is usually the filter's generated one.
      if (key === "description" && typeof merged["description"] === "string") continue
      merged[key] = value
    }
  }
  return kept.length === 0 ? merged : { ...merged, allOf: kept }
}

/**
 * The canonical schema of a JSON Schema document (from `JSONSchema.make`, or an MCP server's `inputSchema`).
 *
 * @internal
 */
export const normalize = (document: JsonSchema): JsonSchema => {
  const rawDefs = {
    ...(isObject(document["definitions"]) ? document["definitions"] : {}),
    ...(isObject(document["$defs"]) ? document["$defs"] : {})
  }
  const recursive = recursiveDefinitions(rawDefs)
  const keptDefs: JsonSchema = {}

  const visit = (node: JsonSchema): JsonSchema => {
    const name = refName(node["$ref"] ?? null)
    if (name !== undefined && name in rawDefs) {
      const { $ref: _ref, ...siblings } = node
      if (recursive.has(name)) {
        if (!(name in keptDefs)) {
          keptDefs[name] = {} // placeholder: breaks the cycle while the definition itself is visited
          keptDefs[name] = visit(rawDefs[name] as JsonSchema)
        }
        const ref: JsonSchema = { $ref: `#/$defs/${name}` }
        return Object.keys(siblings).length === 0 ? ref : visit({ ...siblings, allOf: [ref] })
      }
      const target = visit(rawDefs[name] as JsonSchema)
      return visit({ ...siblings, allOf: [target] })
    }
    let out: JsonSchema = {}
    for (const [key, value] of Object.entries(node)) {
      if (dropped.has(key) || key === "$defs" || key === "definitions") continue
      out[key] = value
    }
    out = mapChildren(out, (child) => visit(child))
    out = mergeAllOf(out)
    return out
  }

  const root = visit(document)
  return Object.keys(keptDefs).length === 0 ? root : { ...root, $defs: keptDefs }
}

/**
 * The canonical JSON Schema of an Effect Schema. Throws when the schema has no JSON form (a declaration without a
 * `jsonSchema` annotation); a schema carrying a `jsonSchema` annotation (an MCP tool's input) is taken from it.
 *
 * @internal
 */
export const fromSchema = (schema: Schema.Schema.Any): JsonSchema => {
  const document = JSONSchema.make(schema as Schema.Schema<unknown, unknown, never>, {
    target: "jsonSchema2020-12"
  }) as unknown as JsonSchema
  return normalize(document)
}
