/**
 * The providers' documented restrictions on tool definitions, written out plainly for the tests (never imported from
 * the implementation). Each check returns the list of violations; an empty list means the definition is valid.
 */

type Json = null | boolean | number | string | ReadonlyArray<Json> | { readonly [key: string]: Json }
type Node = { readonly [key: string]: Json }

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value)

const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** Every schema node with its path (through properties, items, anyOf, oneOf, allOf, prefixItems, $defs, ...). */
export const nodes = (schema: Node, path = ""): Array<[string, Node]> => {
  const out: Array<[string, Node]> = [[path, schema]]
  for (const [key, value] of Object.entries(schema)) {
    if (["properties", "$defs", "definitions", "patternProperties"].includes(key) && isNode(value)) {
      for (const [name, child] of Object.entries(value)) {
        if (isNode(child)) out.push(...nodes(child, `${path}/${key}/${name}`))
      }
    } else if (["anyOf", "oneOf", "allOf", "prefixItems"].includes(key) && Array.isArray(value)) {
      value.forEach((child, i) => {
        if (isNode(child)) out.push(...nodes(child, `${path}/${key}/${i}`))
      })
    } else if (["items", "additionalProperties", "not", "if", "then", "else"].includes(key) && isNode(value)) {
      out.push(...nodes(value, `${path}/${key}`))
    }
  }
  return out
}

const hasKeyDeep = (value: unknown, key: string): boolean =>
  Array.isArray(value)
    ? value.some((item) => hasKeyDeep(item, key))
    : isNode(value) && (key in value || Object.values(value).some((child) => hasKeyDeep(child, key)))

const refsResolve = (schema: Node): Array<string> => {
  const defs = isNode(schema["$defs"]) ? schema["$defs"] : {}
  return nodes(schema).flatMap(([path, node]) => {
    const ref = node["$ref"]
    if (ref === undefined) return []
    if (typeof ref !== "string" || !ref.startsWith("#/$defs/") || !(ref.slice(8) in defs)) {
      return [`${path}: $ref ${String(ref)} does not resolve`]
    }
    return []
  })
}

const common = (name: unknown, description: unknown, schema: unknown): Array<string> => {
  const problems: Array<string> = []
  if (typeof name !== "string" || !NAME.test(name)) problems.push(`name ${String(name)} breaks ^[a-zA-Z0-9_-]{1,64}$`)
  if (typeof description !== "string") problems.push("description is not a string")
  if (!isNode(schema)) return [...problems, "schema is not an object"]
  if (hasKeyDeep(schema, "$schema")) problems.push("$schema present")
  if (schema["type"] !== "object") problems.push("the root is not type: object")
  return problems
}

/** Anthropic Messages API `tools[]` entry. */
export const anthropicProblems = (tool: Node): Array<string> => {
  const allowed = ["name", "description", "input_schema", "defer_loading", "strict", "input_examples", "cache_control"]
  const problems = common(tool["name"], tool["description"], tool["input_schema"])
  for (const key of Object.keys(tool)) if (!allowed.includes(key)) problems.push(`unknown field ${key}`)
  if (tool["defer_loading"] !== undefined && tool["cache_control"] !== undefined) {
    problems.push("defer_loading together with cache_control")
  }
  if (isNode(tool["input_schema"])) problems.push(...refsResolve(tool["input_schema"]))
  return problems
}

/** OpenAI Chat Completions `tools[]` entry (strict or not). */
export const openAiChatProblems = (tool: Node): Array<string> => {
  if (tool["type"] !== "function" || !isNode(tool["function"])) return ["not {type: function, function: {...}}"]
  const fn = tool["function"]
  const problems = common(fn["name"], fn["description"], fn["parameters"])
  for (const key of Object.keys(tool)) if (!["type", "function"].includes(key)) problems.push(`unknown field ${key}`)
  for (const key of Object.keys(fn)) {
    if (!["name", "description", "parameters", "strict"].includes(key)) problems.push(`unknown field function.${key}`)
  }
  if (fn["strict"] === true && isNode(fn["parameters"])) problems.push(...strictProblems(fn["parameters"]))
  return problems
}

/** OpenAI Responses API `tools[]` entry. */
export const openAiResponsesProblems = (tool: Node): Array<string> => {
  if (tool["type"] !== "function") return ["type is not function"]
  const problems = common(tool["name"], tool["description"], tool["parameters"])
  for (const key of Object.keys(tool)) {
    if (!["type", "name", "description", "parameters", "strict"].includes(key)) problems.push(`unknown field ${key}`)
  }
  if (typeof tool["strict"] !== "boolean") problems.push("strict is not a boolean")
  if (tool["strict"] === true && isNode(tool["parameters"])) problems.push(...strictProblems(tool["parameters"]))
  return problems
}

/** OpenAI's strict-mode rules ("Supported schemas" of Structured Outputs). */
const STRICT_KEYWORDS = [
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
]
const STRICT_FORMATS = ["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"]

export const strictProblems = (schema: Node): Array<string> => {
  const problems: Array<string> = []
  if (schema["anyOf"] !== undefined) problems.push("the root is a union")
  let properties = 0
  let enums = 0
  for (const [path, node] of nodes(schema)) {
    for (const key of Object.keys(node)) {
      if (!STRICT_KEYWORDS.includes(key)) problems.push(`${path}: keyword ${key} not supported`)
    }
    if (typeof node["format"] === "string" && !STRICT_FORMATS.includes(node["format"])) {
      problems.push(`${path}: format ${node["format"]}`)
    }
    if (node["$ref"] !== undefined && Object.keys(node).length > 1) problems.push(`${path}: $ref with siblings`)
    const type = node["type"]
    const isObject = type === "object" || (Array.isArray(type) && type.includes("object"))
    if (isObject) {
      if (node["additionalProperties"] !== false) problems.push(`${path}: additionalProperties is not false`)
      const props = isNode(node["properties"]) ? Object.keys(node["properties"]) : []
      properties += props.length
      const required = Array.isArray(node["required"]) ? node["required"] : []
      if (props.length !== required.length || props.some((p) => !required.includes(p))) {
        problems.push(`${path}: not every property is required`)
      }
    }
    if (type === undefined && node["anyOf"] === undefined && node["$ref"] === undefined && node["enum"] === undefined) {
      problems.push(`${path}: no type`)
    }
    if (Array.isArray(node["enum"])) enums += node["enum"].length
    // Levels are the keywords a path steps through; the name after `properties` (which may be "items") is not one.
    const parts = path.split("/")
    const depth = parts.filter((part, i) =>
      (part === "properties" || part === "items" || part === "anyOf") && parts[i - 1] !== "properties"
    ).length
    if (depth > 10) {
      problems.push(`${path}: nested deeper than 10`)
    }
  }
  if (properties > 5000) problems.push("more than 5000 properties")
  if (enums > 1000) problems.push("more than 1000 enum values")
  problems.push(...refsResolve(schema))
  return problems
}

/** Gemini `functionDeclarations[]` entry: `parameters` in Gemini's OpenAPI 3.0 subset. */
const GEMINI_KEYWORDS = [
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
  "propertyOrdering",
  "title"
]
const GEMINI_TYPES = ["string", "number", "integer", "boolean", "array", "object"]
const GEMINI_FORMATS: Record<string, ReadonlyArray<string>> = {
  string: ["date-time", "enum"],
  number: ["float", "double"],
  integer: ["int32", "int64"]
}

export const geminiProblems = (declaration: Node): Array<string> => {
  const problems: Array<string> = []
  for (const key of Object.keys(declaration)) {
    if (!["name", "description", "parameters"].includes(key)) problems.push(`unknown field ${key}`)
  }
  if (typeof declaration["name"] !== "string" || !NAME.test(declaration["name"])) problems.push("bad name")
  if (typeof declaration["description"] !== "string") problems.push("description is not a string")
  const parameters = declaration["parameters"]
  if (parameters === undefined) return problems
  if (!isNode(parameters)) return [...problems, "parameters is not an object"]
  if (parameters["type"] !== "object") problems.push("the root is not type: object")
  for (const [path, node] of nodes(parameters)) {
    for (const key of Object.keys(node)) {
      if (!GEMINI_KEYWORDS.includes(key)) problems.push(`${path}: keyword ${key} not supported`)
    }
    const type = node["type"]
    if (type !== undefined && !(typeof type === "string" && GEMINI_TYPES.includes(type))) {
      problems.push(`${path}: type ${JSON.stringify(type)}`)
    }
    if (Array.isArray(node["enum"]) && !node["enum"].every((value) => typeof value === "string")) {
      problems.push(`${path}: non-string enum`)
    }
    if (node["enum"] !== undefined && type !== "string") problems.push(`${path}: enum without type string`)
    if (typeof node["format"] === "string" && !(GEMINI_FORMATS[String(type)] ?? []).includes(node["format"])) {
      problems.push(`${path}: format ${node["format"]}`)
    }
    if (node["required"] !== undefined) {
      const props = isNode(node["properties"]) ? Object.keys(node["properties"]) : []
      if (!Array.isArray(node["required"]) || node["required"].some((name) => !props.includes(String(name)))) {
        problems.push(`${path}: required names a missing property`)
      }
    }
  }
  return problems
}

/** The `tools` value of a Gemini request: one tool with at most 512 function declarations. */
export const geminiToolsProblems = (tools: ReadonlyArray<unknown>): Array<string> => {
  if (tools.length === 0) return []
  const [tool] = tools
  if (tools.length !== 1 || !isNode(tool) || !Array.isArray(tool["functionDeclarations"])) {
    return ["not [{functionDeclarations: [...]}]"]
  }
  const declarations = tool["functionDeclarations"] as ReadonlyArray<Node>
  const problems = declarations.length > 512 ? ["more than 512 function declarations"] : []
  return [...problems, ...declarations.flatMap((declaration) => geminiProblems(declaration))]
}
