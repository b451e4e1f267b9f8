/**
 * Numbers as models send them: a model often writes a number parameter as a string (`"offset": "1"`). Claude Code
 * reads such a string as the number (its schemas preprocess numeric strings), so a call that works there works here:
 * before decoding, every string that is a plain decimal literal (`1`, `-2`, `0.5`; not `1e3`, `0x10`, ` 1` or ``)
 * at a place where the tool's input schema takes a number, and no string, becomes that number.
 *
 * The places come from the input schema itself, once per schema: its AST for built-in and Effect-defined tools, and
 * the JSON Schema an MCP server sent (the `jsonSchema` annotation of the declaration that checks it). Nothing else
 * changes: a place that also takes a string keeps the string, and what still does not decode fails as before.
 *
 * @internal
 */
import * as Option from "effect/Option"
import * as SchemaAST from "effect/SchemaAST"

/** Where an input takes numbers: this value, its properties, the items of an array. */
interface Places {
  readonly number: boolean
  readonly properties: ReadonlyMap<string, Places> | undefined
  readonly items: Places | undefined
}

const none: Places = { number: false, properties: undefined, items: undefined }
const numberPlace: Places = { number: true, properties: undefined, items: undefined }

const isEmpty = (places: Places): boolean =>
  !places.number && places.properties === undefined && places.items === undefined

/** Places of several alternatives (a union, anyOf): a number only where no alternative takes a string. */
const merge = (alternatives: ReadonlyArray<Places>, takesString: boolean): Places => {
  const properties = new Map<string, Array<Places>>()
  const items: Array<Places> = []
  let number = false
  for (const places of alternatives) {
    number ||= places.number
    for (const [key, child] of places.properties ?? []) {
      const list = properties.get(key) ?? []
      list.push(child)
      properties.set(key, list)
    }
    if (places.items !== undefined) items.push(places.items)
  }
  const merged = new Map<string, Places>()
  for (const [key, list] of properties) {
    const child = merge(list, false)
    if (!isEmpty(child)) merged.set(key, child)
  }
  const result: Places = {
    number: number && !takesString,
    properties: merged.size === 0 ? undefined : merged,
    items: items.length === 0 ? undefined : merge(items, false)
  }
  return isEmpty(result) ? none : result
}

/** Whether a value of this AST may be a string (then a numeric string is left alone). */
const takesString = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
    case "UnknownKeyword":
    case "AnyKeyword":
      return true
    case "Literal":
      return typeof ast.literal === "string"
    case "Enums":
      return ast.enums.some(([, value]) => typeof value === "string")
    case "Union":
      return ast.types.some(takesString)
    case "Refinement":
    case "Transformation":
      return takesString(ast.from)
    default:
      return false
  }
}

/** Places of an Effect Schema AST, on its encoded side (what the model sent). */
const fromAst = (ast: SchemaAST.AST): Places => {
  switch (ast._tag) {
    case "NumberKeyword":
      return numberPlace
    case "Refinement":
    case "Transformation":
      return fromAst(ast.from)
    case "Union":
      return merge(ast.types.map(fromAst), ast.types.some(takesString))
    case "TypeLiteral": {
      const properties = new Map<string, Places>()
      for (const signature of ast.propertySignatures) {
        if (typeof signature.name !== "string") continue
        const child = fromAst(signature.type)
        if (!isEmpty(child) && !takesString(signature.type)) properties.set(signature.name, child)
      }
      return properties.size === 0 ? none : { number: false, properties, items: undefined }
    }
    case "TupleType": {
      const rest = ast.rest[0]
      if (ast.elements.length > 0 || rest === undefined) return none
      const items = fromAst(rest.type)
      return isEmpty(items) ? none : { number: false, properties: undefined, items }
    }
    case "Declaration":
      return Option.match(SchemaAST.getJSONSchemaAnnotation(ast), { onNone: () => none, onSome: fromJsonSchema })
    default:
      // Suspend (recursive schemas) and everything else: no numbers read from strings.
      return none
  }
}

type Json = Readonly<Record<string, unknown>>
const isObject = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

/** Places of a JSON Schema (an MCP server's), read as far as `type`, `properties`, `items`, `anyOf`/`oneOf`. */
const fromJsonSchema = (schema: unknown, depth = 0): Places => {
  if (!isObject(schema) || depth > 32) return none
  const types = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? [] : [schema.type]
  const own: Places = {
    number: (types.includes("number") || types.includes("integer")) && !types.includes("string"),
    properties: undefined,
    items: undefined
  }
  const properties = new Map<string, Places>()
  if (isObject(schema.properties)) {
    for (const [key, child] of Object.entries(schema.properties)) {
      const places = fromJsonSchema(child, depth + 1)
      if (!isEmpty(places)) properties.set(key, places)
    }
  }
  const items = fromJsonSchema(schema.items, depth + 1)
  const shaped: Places = {
    ...own,
    properties: properties.size === 0 ? undefined : properties,
    items: isEmpty(items) ? undefined : items
  }
  const alternatives = [
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : [])
  ]
  if (alternatives.length === 0) return shaped
  const stringy = alternatives.some((a) =>
    isObject(a) && (a.type === "string" || (Array.isArray(a.type) && a.type.includes("string")))
  )
  const branches = alternatives.map((a) => fromJsonSchema(a, depth + 1))
  return merge([shaped, ...branches], stringy || types.includes("string"))
}

/** A decimal literal, as a model writes a number in quotes. */
const numeric = /^-?\d+(?:\.\d+)?$/

const convert = (places: Places, value: unknown): unknown => {
  if (typeof value === "string") {
    if (!places.number || !numeric.test(value)) return value
    const n = Number(value)
    return Number.isFinite(n) ? n : value
  }
  if (Array.isArray(value)) {
    const items = places.items
    if (items === undefined) return value
    let changed: Array<unknown> | undefined
    value.forEach((item, i) => {
      const next = convert(items, item)
      if (next !== item) (changed ??= [...value])[i] = next
    })
    return changed ?? value
  }
  if (isObject(value) && places.properties !== undefined) {
    let changed: Record<string, unknown> | undefined
    for (const [key, child] of places.properties) {
      if (!Object.hasOwn(value, key)) continue
      const item = value[key]
      const next = convert(child, item)
      if (next !== item) (changed ??= { ...value })[key] = next
    }
    return changed ?? value
  }
  return value
}

const placesBySchema = new WeakMap<SchemaAST.AST, Places>()

/**
 * The raw input with its numeric strings read as numbers where the schema takes numbers; the same value (same
 * reference) when there is nothing to read.
 */
export const numericStringsAsNumbers = (ast: SchemaAST.AST, raw: unknown): unknown => {
  let places = placesBySchema.get(ast)
  if (places === undefined) {
    places = fromAst(ast)
    placesBySchema.set(ast, places)
  }
  return isEmpty(places) ? raw : convert(places, raw)
}
