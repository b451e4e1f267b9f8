/**
 * Standard input of `exec`: a JSON array of tool_use blocks, or an assistant message whose tool_use blocks are
 * taken (other blocks ignored). Anything unusable is a {@link UsageError} with a one-line reason, before anything runs.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AssistantMessage, ToolUseBlock } from "../Tool/Wire.js"

/** Input the CLI cannot use; the message is one line. */
export class UsageError extends Error {}

const ToolUses = Schema.Array(ToolUseBlock)

const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined ? "invalid" : `${issue.path.length === 0 ? "" : `at ${issue.path.map(String).join(".")}: `}${issue.message}`
}

const isToolUse = (block: unknown): boolean => typeof block === "object" && block !== null && (block as { type?: unknown }).type === "tool_use"

/** Decodes standard input; throws a UsageError. */
export const decodeStdin = (raw: string): ReadonlyArray<ToolUseBlock> => {
  if (raw.trim() === "") throw new UsageError("standard input is empty: expected a JSON array of tool_use blocks or an assistant message")
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (error) {
    throw new UsageError(`standard input is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  let blocks: unknown
  if (Array.isArray(json)) {
    blocks = json
  } else {
    const message = Schema.decodeUnknownEither(AssistantMessage)(json)
    if (message._tag === "Left") throw new UsageError(`standard input must be an array of tool_use blocks or an assistant message (${firstIssue(message.left)})`)
    blocks = message.right.content.filter(isToolUse)
  }
  const decoded = Schema.decodeUnknownEither(ToolUses, { onExcessProperty: "ignore" })(blocks)
  if (decoded._tag === "Left") throw new UsageError(`not a list of tool_use blocks: ${firstIssue(decoded.left)}`)
  const seen = new Set<string>()
  for (const block of decoded.right) {
    if (seen.has(block.id)) throw new UsageError(`duplicate tool_use id: ${block.id}`)
    seen.add(block.id)
  }
  return decoded.right
}
