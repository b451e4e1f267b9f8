/**
 * Permission rules in the syntax people already write for Claude Code: `Tool` or `Tool(content)`.
 *
 * - The content is everything between the first unescaped `(` and the last unescaped `)`, which ends the rule
 *   (Claude Code's reading), so unescaped parentheses inside are fine in any order (`Bash(echo $(date))`,
 *   `Bash(echo ")(" x)`). Inside the content, `\(` and `\)` are literal parentheses and `\\` is a literal
 *   backslash; any other backslash is kept as written (`Bash(grep a\|b)` has content `grep a\|b`).
 * - `Tool()` and `Tool(*)` mean the whole tool and parse to a rule without content.
 * - MCP targets: `mcp__server` (every tool of the server), `mcp__server__*` (the same) and
 *   `mcp__server__tool` (one tool).
 *
 * What a rule's content means (Bash command patterns, gitignore paths, `domain:` hosts) is decided by the
 * matchers next to this module (`PathPattern`, `Domain`), never here.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * A parsed permission rule. `content` is absent for a rule that targets the whole tool.
 *
 * @since 0.1.0
 * @category models
 */
export class PermissionRule extends Schema.Class<PermissionRule>("effect-tool-runtime/PermissionRule")({
  toolName: Schema.NonEmptyString,
  content: Schema.optional(Schema.String)
}) {}

/**
 * The behaviour a rule list grants: the three arrays of a settings file's `permissions` object.
 *
 * @since 0.1.0
 * @category models
 */
export const RuleBehavior = Schema.Literal("allow", "deny", "ask")

/**
 * @since 0.1.0
 * @category models
 */
export type RuleBehavior = typeof RuleBehavior.Type

/**
 * A rule string that could not be parsed, with the reason and the offending position (0-based, in the
 * trimmed text).
 *
 * @since 0.1.0
 * @category errors
 */
export class RuleParseError extends Schema.TaggedError<RuleParseError>("effect-tool-runtime/RuleParseError")(
  "RuleParseError",
  {
    rule: Schema.String,
    reason: Schema.String,
    position: Schema.optional(Schema.Number)
  }
) {
  override get message(): string {
    const at = this.position === undefined ? "" : ` (at character ${this.position + 1})`
    return `Invalid permission rule ${JSON.stringify(this.rule)}: ${this.reason}${at}`
  }
}

// -----------------------------------------------------------------------------
// constructors
// -----------------------------------------------------------------------------

/**
 * Builds a rule, normalising `""` and `"*"` content to "the whole tool".
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRule = (toolName: string, content?: string): PermissionRule =>
  new PermissionRule(
    content === undefined || content === "" || content === "*" ? { toolName } : { toolName, content }
  )

const isToolNameChar = (char: string): boolean => !/[\s()\\]/.test(char)

/** Whether the character at `index` is preceded by an odd number of backslashes. */
const isEscaped = (text: string, index: number): boolean => {
  let backslashes = 0
  for (let i = index - 1; i >= 0 && text[i] === "\\"; i--) backslashes++
  return backslashes % 2 === 1
}

const unescapeContent = (raw: string): string => {
  let content = ""
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!
    const next = raw[i + 1]
    if (char === "\\" && (next === "(" || next === ")" || next === "\\")) {
      content += next
      i++
    } else content += char
  }
  return content
}

/**
 * Parses `Tool` or `Tool(content)` the way Claude Code does: the content runs from the first unescaped `(` to the
 * last unescaped `)`, which must end the rule, so parentheses inside need no escaping even when they are not in
 * order (`Bash(echo ")(" x)`). Surrounding whitespace is ignored; the tool name may not contain whitespace,
 * parentheses or backslashes.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseRule = (text: string): Either.Either<PermissionRule, RuleParseError> => {
  const rule = text.trim()
  const fail = (reason: string, position?: number) =>
    Either.left(new RuleParseError(position === undefined ? { rule, reason } : { rule, reason, position }))

  let open = -1
  for (let i = 0; i < rule.length; i++) {
    if (rule[i] === "(" && !isEscaped(rule, i)) {
      open = i
      break
    }
  }
  const toolName = open === -1 ? rule : rule.slice(0, open)
  if (toolName === "") {
    return fail(open === -1 ? "the rule is empty" : "the tool name before \"(\" is empty", 0)
  }
  for (let i = 0; i < toolName.length; i++) {
    if (!isToolNameChar(toolName[i]!)) {
      const what = toolName[i] === ")"
        ? "unmatched \")\""
        : `unexpected ${JSON.stringify(toolName[i])} in the tool name`
      return fail(what, i)
    }
  }
  if (open === -1) return Either.right(makeRule(toolName))

  let close = -1
  for (let i = rule.length - 1; i > open; i--) {
    if (rule[i] === ")" && !isEscaped(rule, i)) {
      close = i
      break
    }
  }
  if (close === -1) return fail(`missing ")" to close the "(" opened here`, open)
  if (close !== rule.length - 1) {
    return fail(`unexpected text after the closing ")": ${JSON.stringify(rule.slice(close + 1))}`, close + 1)
  }
  return Either.right(makeRule(toolName, unescapeContent(rule.slice(open + 1, close))))
}

// -----------------------------------------------------------------------------
// printing
// -----------------------------------------------------------------------------

/**
 * Escapes content so that `parseRule` reads it back unchanged: every parenthesis is escaped, and a backslash
 * only where it would otherwise be read as an escape (before `(`, `)`, `\` or at the very end).
 *
 * @since 0.1.0
 * @category printing
 */
export const escapeRuleContent = (content: string): string => {
  let out = ""
  for (let i = 0; i < content.length; i++) {
    const char = content[i]!
    if (char === "(" || char === ")") out += `\\${char}`
    else if (char === "\\") {
      const next = content[i + 1]
      out += next === undefined || next === "(" || next === ")" || next === "\\" ? "\\\\" : "\\"
    } else out += char
  }
  return out
}

/**
 * Prints a rule in canonical form: `Tool` for the whole tool, else `Tool(escaped content)`.
 *
 * @since 0.1.0
 * @category printing
 */
export const printRule = (rule: { readonly toolName: string; readonly content?: string | undefined }): string =>
  rule.content === undefined || rule.content === "" || rule.content === "*"
    ? rule.toolName
    : `${rule.toolName}(${escapeRuleContent(rule.content)})`

/**
 * A rule string in settings files, decoded to a `PermissionRule` and encoded back in canonical form.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PermissionRuleFromString: Schema.Schema<PermissionRule, string> = Schema.transformOrFail(
  Schema.String,
  Schema.typeSchema(PermissionRule),
  {
    strict: true,
    decode: (text, _, ast) =>
      Either.mapLeft(parseRule(text), (error) => new ParseResult.Type(ast, text, error.message)),
    encode: (rule) => Either.right(printRule(rule))
  }
)

// -----------------------------------------------------------------------------
// targets
// -----------------------------------------------------------------------------

const MCP_PREFIX = "mcp__"

/**
 * Splits `mcp__server__tool` into its server and tool parts, the way Claude Code does: the server is the
 * segment after `mcp__`, the tool is everything after the next `__` (and may itself contain `__`).
 *
 * @since 0.1.0
 * @category targets
 */
export const parseMcpName = (
  name: string
): { readonly server: string; readonly tool: string | undefined } | undefined => {
  if (!name.startsWith(MCP_PREFIX)) return undefined
  const rest = name.slice(MCP_PREFIX.length)
  const separator = rest.indexOf("__")
  const server = separator === -1 ? rest : rest.slice(0, separator)
  if (server === "") return undefined
  const tool = separator === -1 ? undefined : rest.slice(separator + 2)
  return { server, tool: tool === "" ? undefined : tool }
}

const targetsName = (ruleToolName: string, toolName: string): boolean => {
  if (ruleToolName === toolName) return true
  const ruleMcp = parseMcpName(ruleToolName)
  if (ruleMcp === undefined || (ruleMcp.tool !== undefined && ruleMcp.tool !== "*")) return false
  const toolMcp = parseMcpName(toolName)
  return toolMcp !== undefined && toolMcp.server === ruleMcp.server
}

/**
 * Whether the rule's tool part names this tool: equal names, or an MCP server-wide rule (`mcp__srv`,
 * `mcp__srv__*`) and a tool of that server. Content is ignored: use this before matching content.
 *
 * @since 0.1.0
 * @category targets
 */
export const ruleTargetsTool: {
  (toolName: string): (rule: PermissionRule) => boolean
  (rule: PermissionRule, toolName: string): boolean
} = dual(2, (rule: PermissionRule, toolName: string): boolean => targetsName(rule.toolName, toolName))

/**
 * Whether the rule applies to every call of this tool on the name alone: it targets the tool and has no
 * content. A rule with content (`Bash(ls)`) never matches by name; its content is matched elsewhere.
 *
 * @since 0.1.0
 * @category targets
 */
export const ruleMatchesToolName: {
  (toolName: string): (rule: PermissionRule) => boolean
  (rule: PermissionRule, toolName: string): boolean
} = dual(
  2,
  (rule: PermissionRule, toolName: string): boolean =>
    rule.content === undefined && targetsName(rule.toolName, toolName)
)
