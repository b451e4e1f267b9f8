/**
 * What the CLI accepts as a turn: a JSON array of tool_use blocks, or an assistant message whose tool_use blocks
 * are taken (blocks of any other type ignored; a plain string content holds none). Anything unusable is a
 * {@link UsageError} with a one-line reason, before anything runs.
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { AssistantMessage, ToolUseBlock } from "../Tool/Wire.js"

/** Input or a command line the CLI cannot use; the message is one line. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string }> {}

const ToolUses = Schema.Array(ToolUseBlock)

const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined
    ? "invalid"
    : `${issue.path.length === 0 ? "" : `at ${issue.path.map(String).join(".")}: `}${issue.message}`
}

const isToolUse = (block: unknown): boolean =>
  typeof block === "object" && block !== null && (block as { type?: unknown }).type === "tool_use"

const isStringMessage = (json: unknown): boolean =>
  typeof json === "object" && json !== null && (json as { role?: unknown }).role === "assistant" &&
  typeof (json as { content?: unknown }).content === "string"

/** Decodes a turn from parsed JSON: `what` names it in errors ("standard input", "tool_uses"). */
export const decodeTurn = (
  json: unknown,
  what = "standard input"
): Either.Either<ReadonlyArray<ToolUseBlock>, UsageError> => {
  let blocks: unknown
  if (Array.isArray(json)) {
    blocks = json
  } else if (isStringMessage(json)) {
    blocks = []
  } else {
    const message = Schema.decodeUnknownEither(AssistantMessage)(json)
    if (message._tag === "Left") {
      return Either.left(
        new UsageError({
          message: `${what} must be an array of tool_use blocks or an assistant message (${firstIssue(message.left)})`
        })
      )
    }
    blocks = message.right.content.filter(isToolUse)
  }
  const decoded = Schema.decodeUnknownEither(ToolUses, { onExcessProperty: "ignore" })(blocks)
  if (decoded._tag === "Left") {
    return Either.left(new UsageError({ message: `not a list of tool_use blocks: ${firstIssue(decoded.left)}` }))
  }
  const seen = new Set<string>()
  for (const block of decoded.right) {
    if (seen.has(block.id)) return Either.left(new UsageError({ message: `duplicate tool_use id: ${block.id}` }))
    seen.add(block.id)
  }
  return Either.right(decoded.right)
}

/** Parses JSON text; a UsageError naming `what` when it is not JSON. */
export const parseJson = (raw: string, what: string): Either.Either<unknown, UsageError> => {
  try {
    return Either.right(JSON.parse(raw) as unknown)
  } catch (error) {
    return Either.left(
      new UsageError({ message: `${what} is not JSON: ${error instanceof Error ? error.message : String(error)}` })
    )
  }
}

/** Decodes the whole of `exec`'s standard input. */
export const decodeStdin = (raw: string): Either.Either<ReadonlyArray<ToolUseBlock>, UsageError> => {
  if (raw.trim() === "") {
    return Either.left(
      new UsageError({
        message: "standard input is empty: expected a JSON array of tool_use blocks or an assistant message"
      })
    )
  }
  return Either.flatMap(parseJson(raw, "standard input"), (json) => decodeTurn(json))
}
