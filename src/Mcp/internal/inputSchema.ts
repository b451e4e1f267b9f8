/**
 * An MCP tool's input, checked against the server's JSON Schema with ajv, as an Effect Schema: the pipeline decodes
 * it like any tool's input, and ajv's errors become the same ParseIssues a built-in tool's schema produces, so the
 * model reads the same lines (`The required parameter \`p\` is missing`, ...). The server's JSON Schema travels as
 * the schema's `jsonSchema` annotation, so provider definitions show the server's own schema.
 *
 * ajv is loaded at the first validation, not with this module: a run that uses no MCP tool (and the CLI's `exec`
 * of a built-in tool) never evaluates it. Validation is synchronous (the pipeline's decode needs no fiber), so the
 * load is a `require`.
 */
import type * as AjvModule from "ajv"
import type { Ajv, ErrorObject, ValidateFunction } from "ajv"
import type * as Ajv2020Module from "ajv/dist/2020.js"
import type { Ajv2020 } from "ajv/dist/2020.js"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as SchemaAST from "effect/SchemaAST"
import { createRequire } from "node:module"

/** The JSON Schema of a tool's input, as the server sent it. */
export type JsonSchema = Readonly<Record<string, unknown>>

const options = { allErrors: true, strict: false, validateFormats: false, logger: false } as const
const requireHere = createRequire(import.meta.url)
// Compiled validators are cached by ajv itself (by schema); one instance per draft.
let draft07: Ajv | undefined
let draft2020: Ajv2020 | undefined
const validatorFor = (schema: JsonSchema): ValidateFunction | undefined => {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : ""
  try {
    if (dialect.includes("2020-12") || dialect.includes("2019-09")) {
      draft2020 ??= new (requireHere("ajv/dist/2020.js") as typeof Ajv2020Module).Ajv2020(options)
      return draft2020.compile(schema)
    }
    // Draft-07 (and earlier, and unmarked): ajv's default; an unknown `$schema` URI must not stop compilation.
    const { $schema: _, ...rest } = schema
    draft07 ??= new (requireHere("ajv") as typeof AjvModule).Ajv(options)
    return draft07.compile(rest)
  } catch {
    return undefined
  }
}

/** An AST that inputIssues names as `expected` (Declarations are named by their identifier). */
const expectedAsts = new Map<string, SchemaAST.AST>()
const expectedAst = (expected: string): SchemaAST.AST => {
  let ast = expectedAsts.get(expected)
  if (ast === undefined) {
    ast = Schema.declare((_: unknown): _ is unknown => false, { identifier: expected }).ast
    expectedAsts.set(expected, ast)
  }
  return ast
}

/** The instance path of an ajv error as keys (array indices as numbers), and the value found there. */
const locate = (root: unknown, pointer: string): { readonly path: Array<PropertyKey>; readonly value: unknown } => {
  const path: Array<PropertyKey> = []
  let value = root
  if (pointer === "") return { path, value }
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    if (Array.isArray(value)) {
      const index = Number(key)
      path.push(index)
      value = value[index]
    } else {
      path.push(key)
      value = typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined
    }
  }
  return { path, value }
}

const at = (path: ReadonlyArray<PropertyKey>, actual: unknown, issue: ParseResult.ParseIssue): ParseResult.ParseIssue =>
  path.length === 0
    ? issue
    : new ParseResult.Pointer(path as unknown as readonly [PropertyKey, ...Array<PropertyKey>], actual, issue)

const literalList = (values: ReadonlyArray<unknown>) => values.map((v) => JSON.stringify(v)).join(" | ")

/** One ParseIssue per ajv error, worded as the built-in tools' issues are. */
const toIssue = (ast: SchemaAST.AST, root: unknown, error: ErrorObject): ParseResult.ParseIssue => {
  const { path, value } = locate(root, error.instancePath)
  const params = error.params as Record<string, unknown>
  switch (error.keyword) {
    case "required":
      return at([...path, String(params.missingProperty)], root, new ParseResult.Missing(new SchemaAST.Type(ast)))
    case "additionalProperties": {
      const key = String(params.additionalProperty)
      const unexpected = typeof value === "object" && value !== null
        ? (value as Record<string, unknown>)[key]
        : undefined
      return at([...path, key], root, new ParseResult.Unexpected(unexpected))
    }
    case "type": {
      const types = Array.isArray(params.type) ? params.type.map(String) : String(params.type).split(",")
      return at(path, root, new ParseResult.Type(expectedAst(types.join(" | ")), value))
    }
    case "enum":
      return at(
        path,
        root,
        new ParseResult.Type(
          ast,
          value,
          `expected one of ${literalList(params.allowedValues as ReadonlyArray<unknown>)}, got ${JSON.stringify(value)}`
        )
      )
    case "const":
      return at(
        path,
        root,
        new ParseResult.Type(
          ast,
          value,
          `expected one of ${literalList([params.allowedValue])}, got ${JSON.stringify(value)}`
        )
      )
    default:
      return at(path, root, new ParseResult.Type(ast, value, error.message ?? `failed the ${error.keyword} check`))
  }
}

/** A failing anyOf/oneOf reports every branch's errors too; one line for the alternatives reads better. */
const withoutBranchErrors = (errors: ReadonlyArray<ErrorObject>): ReadonlyArray<ErrorObject> => {
  const alternatives = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").map((e) =>
    `${e.schemaPath}/`
  )
  return errors.filter((e) => !alternatives.some((prefix) => e.schemaPath.startsWith(prefix)))
}

/**
 * The Effect Schema of an MCP tool's input. A schema ajv cannot compile accepts any object (the server still
 * validates): `compiled` says which it is.
 */
export const inputSchema = (jsonSchema: JsonSchema, description?: string): {
  readonly schema: Schema.Schema<Readonly<Record<string, unknown>>>
  readonly compiled: boolean
} => {
  let validate: ValidateFunction | undefined | null = null
  const schema = Schema.declare<Readonly<Record<string, unknown>>, Readonly<Record<string, unknown>>, readonly []>(
    [],
    {
      decode: () => (input, _, ast) => {
        if (typeof input !== "object" || input === null || Array.isArray(input)) {
          return ParseResult.fail(new ParseResult.Type(expectedAst("object"), input))
        }
        if (validate === null) validate = validatorFor(jsonSchema)
        // ParseResult's own succeed/fail (Eithers): the pipeline's synchronous decode then needs no fiber.
        if (validate === undefined || validate(input)) {
          return ParseResult.succeed(input as Readonly<Record<string, unknown>>)
        }
        const issues = withoutBranchErrors(validate.errors ?? []).map((error) => toIssue(ast, input, error))
        return ParseResult.fail(
          issues.length === 1
            ? issues[0]!
            : new ParseResult.Composite(
              ast,
              input,
              issues as [ParseResult.ParseIssue, ...Array<ParseResult.ParseIssue>]
            )
        )
      },
      encode: () => (input) => ParseResult.succeed(input as Readonly<Record<string, unknown>>)
    },
    { jsonSchema: jsonSchema as object, ...(description === undefined ? {} : { description }) }
  )
  return {
    schema,
    get compiled() {
      if (validate === null) validate = validatorFor(jsonSchema)
      return validate !== undefined
    }
  }
}
