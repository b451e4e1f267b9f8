/**
 * Turns a Schema ParseIssue tree into one {@link InputIssue} per problem, each naming the parameter path, in words a
 * model can act on without seeing the schema.
 */
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as SchemaAST from "effect/SchemaAST"
import type { InputIssue } from "../Errors.js"

/** The JSON type of a value, as a model would name it. */
export const jsonTypeOf = (u: unknown): string => {
  if (u === null) return "null"
  if (Array.isArray(u)) return "array"
  return typeof u === "object" ? "object" : typeof u
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((acc, key) => {
    if (typeof key === "number") return `${acc}[${key}]`
    const name = String(key)
    return acc === "" ? name : `${acc}.${name}`
  }, "")

/** A short type name for what an AST node expects, in JSON words. */
export const describeExpected = (ast: SchemaAST.AST): string => {
  const identifier = SchemaAST.getJSONIdentifier(ast).pipe(Option.orElse(() => SchemaAST.getIdentifierAnnotation(ast)))
  switch (ast._tag) {
    case "StringKeyword":
    case "TemplateLiteral":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "BigIntKeyword":
      return "integer"
    case "TypeLiteral":
      return Option.getOrElse(identifier, () => "object")
    case "TupleType":
      return "array"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Enums":
      return ast.enums.map(([, value]) => JSON.stringify(value)).join(" | ")
    case "UndefinedKeyword":
    case "VoidKeyword":
      return "undefined"
    case "Union": {
      const members = [...new Set(ast.types.map(describeExpected))]
      return members.join(" | ")
    }
    case "Refinement":
      return describeExpected(ast.from)
    case "Transformation":
      return describeExpected(ast.from)
    case "Suspend":
      return Option.getOrElse(identifier, () => "value")
    case "Declaration":
      return Option.getOrElse(identifier, () => "value")
    default:
      return Option.getOrElse(identifier, () => String(ast))
  }
}

const isLiteralChoice = (ast: SchemaAST.AST): boolean =>
  ast._tag === "Literal" || ast._tag === "Enums" || (ast._tag === "Union" && ast.types.every(isLiteralChoice))

/** A value of the right JSON type but not one of the allowed literals is named by value, not by type. */
const mismatch = (ast: SchemaAST.AST, actual: unknown, path: string): InputIssue => {
  const expected = describeExpected(ast)
  if (
    isLiteralChoice(ast) && (typeof actual === "string" || typeof actual === "number" || typeof actual === "boolean")
  ) {
    return { _tag: "Invalid", path, message: `expected one of ${expected}, got ${JSON.stringify(actual)}` }
  }
  return { _tag: "WrongType", path, expected, provided: jsonTypeOf(actual) }
}

const refinementMessage = (issue: ParseResult.ParseIssue): string => {
  const [first] = ParseResult.ArrayFormatter.formatIssueSync(issue)
  return first?.message ?? "failed a check"
}

const collect = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>, out: Array<InputIssue>): void => {
  switch (issue._tag) {
    case "Pointer":
      return collect(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path])], out)
    case "Missing":
      out.push({ _tag: "Missing", path: formatPath(path) })
      return
    case "Unexpected":
      out.push({ _tag: "Unexpected", path: formatPath(path) })
      return
    case "Type":
      out.push(
        issue.message !== undefined && issue.ast._tag !== "TypeLiteral"
          ? { _tag: "Invalid", path: formatPath(path), message: issue.message }
          : mismatch(issue.ast, issue.actual, formatPath(path))
      )
      return
    case "Forbidden":
      out.push({ _tag: "Invalid", path: formatPath(path), message: issue.message ?? "is not allowed here" })
      return
    case "Refinement":
      // A failure of the refined type itself is a type error; a failed predicate carries the refinement's message.
      if (issue.kind === "From") return collect(issue.issue, path, out)
      out.push({ _tag: "Invalid", path: formatPath(path), message: refinementMessage(issue) })
      return
    case "Transformation":
      if (issue.kind === "Encoded") return collect(issue.issue, path, out)
      out.push({ _tag: "Invalid", path: formatPath(path), message: refinementMessage(issue) })
      return
    case "Composite": {
      // A union that no member accepted: one line naming the accepted types, not one per member.
      const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
      if (issue.ast._tag === "Union") {
        // An optional parameter is a union with undefined: a value that was given answers to the other member.
        const given = issues.filter((child) => !(child._tag === "Type" && child.ast._tag === "UndefinedKeyword"))
        if (given.length === 1) return collect(given[0]!, path, out)
        out.push(mismatch(issue.ast, issue.actual, formatPath(path)))
        return
      }
      for (const child of issues) collect(child, path, out)
      return
    }
  }
}

/** One InputIssue per problem in a decode failure of a tool's input. */
export const inputIssues = (input: unknown, issue: ParseResult.ParseIssue): ReadonlyArray<InputIssue> => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return [{ _tag: "NotAnObject", provided: jsonTypeOf(input) }]
  }
  const out: Array<InputIssue> = []
  collect(issue, [], out)
  return out.length > 0 ? out : [{ _tag: "Invalid", path: "", message: refinementMessage(issue) }]
}
