/**
 * Flattens a Schema `ParseIssue` into one line per problem, each naming the field path the way a person
 * would write it in JSON (`permissions.allow[2]`) and saying what was expected and what was found.
 *
 * @internal
 */
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as AST from "effect/SchemaAST"

/** @internal */
export interface IssueLine {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** @internal */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => {
    if (typeof key === "number") return `${out}[${key}]`
    const name = String(key)
    if (IDENTIFIER.test(name)) return out === "" ? name : `${out}.${name}`
    return `${out}[${JSON.stringify(name)}]`
  }, "")

const kindOf = (value: unknown): string => {
  if (value === null) return "null"
  if (Array.isArray(value)) return "array"
  return typeof value
}

const describe = (ast: AST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "TypeLiteral":
      return "object"
    case "TupleType":
      return "array"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "UndefinedKeyword":
      return "undefined"
    case "Union":
      return ast.types.filter((member) => member._tag !== "UndefinedKeyword").map(describe).join(" | ")
    case "Refinement":
      return Option.getOrElse(AST.getDescriptionAnnotation(ast), () => describe(ast.from))
    case "Transformation":
      return describe(ast.to)
    default:
      return String(ast)
  }
}

// When the expected type is a set of values (or a constrained value), the found value says more than its kind.
const showsValue = (ast: AST.AST): boolean =>
  ast._tag === "Literal" || ast._tag === "Refinement" ||
  (ast._tag === "Union" && ast.types.every((member) => member._tag === "Literal" || member._tag === "UndefinedKeyword"))

const found = (ast: AST.AST, actual: unknown): string => {
  const kind = kindOf(actual)
  return showsValue(ast) && (kind === "string" || kind === "number" || kind === "boolean")
    ? JSON.stringify(actual)
    : kind
}

const mismatch = (ast: AST.AST, actual: unknown, path: ReadonlyArray<PropertyKey>): IssueLine => ({
  path,
  message: `expected ${describe(ast)}, got ${found(ast, actual)}`
})

const isLiteralSet = (ast: AST.AST): boolean =>
  ast._tag === "Literal" || (ast._tag === "Union" && ast.types.every((member) => member._tag === "Literal"))

/** A struct member of a union that failed on a literal field: the input is tagged as another member. */
const missesTag = (issue: ParseResult.ParseIssue): boolean => {
  if (issue._tag !== "Composite" || issue.ast._tag !== "TypeLiteral") return false
  const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
  return issues.some((sub) => sub._tag === "Pointer" && sub.issue._tag === "Type" && isLiteralSet(sub.issue.ast))
}

/** @internal */
export const issueLines = (issue: ParseResult.ParseIssue): ReadonlyArray<IssueLine> => {
  const go = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<IssueLine> => {
    switch (issue._tag) {
      case "Pointer":
        return go(issue.issue, [...path, ...(Array.isArray(issue.path) ? issue.path : [issue.path as PropertyKey])])
      case "Composite": {
        const issues = Array.isArray(issue.issues) ? issue.issues : [issue.issues as ParseResult.ParseIssue]
        // A union reports one issue per member; keep the members that got further than the type check.
        if (issue.ast._tag === "Union") {
          const deeper = issues.filter((sub) => sub._tag !== "Type")
          if (deeper.length === 0) return [mismatch(issue.ast, issue.actual, path)]
          // Members told apart by a literal field (`type: "command"`): report only those whose tag matched.
          const tagged = deeper.filter((sub) => !missesTag(sub))
          return (tagged.length > 0 ? tagged : deeper).flatMap((sub) => go(sub, path))
        }
        return issues.flatMap((sub) => go(sub, path))
      }
      case "Refinement":
        return issue.kind === "From" ? go(issue.issue, path) : [mismatch(issue.ast, issue.actual, path)]
      case "Transformation":
        return go(issue.issue, path)
      case "Missing":
        return [{ path, message: "is required but missing" }]
      case "Unexpected":
        return [{ path, message: "is not allowed here" }]
      case "Forbidden":
        return [{ path, message: issue.message ?? "is forbidden" }]
      case "Type":
        return [mismatch(issue.ast, issue.actual, path)]
    }
  }
  return go(issue, [])
}
