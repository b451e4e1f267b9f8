/**
 * From the Messages API's server-sent events to `ModelEvent`s: one event's data decoded (or a `ModelError` naming
 * what was wrong with it), and the reply's state machine that checks the events come in the order the API
 * promises and turns them into the loop's events.
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"
import type { StopReason } from "../ModelBackend.js"
import { ModelError, ModelEvent } from "../ModelBackend.js"
import type { StreamEvent } from "./messagesWire.js"
import * as Wire from "./messagesWire.js"

/** At most this much of a bad payload is quoted in an error message. */
const quoteLimit = 200

/** @internal */
export const quote = (text: string): string =>
  JSON.stringify(text.length > quoteLimit ? `${text.slice(0, quoteLimit)}...` : text)

/** @internal */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ")

const malformed = (message: string) => new ModelError({ reason: "Malformed", message })
const unknownBlock = (message: string) => new ModelError({ reason: "UnknownBlock", message })

const parseJson = Schema.decodeUnknownEither(Schema.parseJson())
const decodeStreamEvent = Schema.decodeUnknownEither(Wire.StreamEvent)

const typeOf = (value: unknown): string | undefined =>
  Predicate.hasProperty(value, "type") && typeof value.type === "string" ? value.type : undefined

const ignored: StreamEvent = { type: "ping" }

/**
 * One server-sent event's data as a wire event. Types this client does not know (events, content blocks, deltas)
 * are `UnknownBlock` (an unknown event type is read as a `ping` when `ignoreUnknownEvents`); anything else that does
 * not fit is `Malformed`, with the field and the problem named.
 *
 * @internal
 */
export const decodeEvent = (data: string, ignoreUnknownEvents = false): Either.Either<StreamEvent, ModelError> => {
  const json = parseJson(data)
  if (Either.isLeft(json)) return Either.left(malformed(`an event's data is not JSON: ${quote(data)}`))
  const value = json.right
  const fast = fastEvent(value)
  if (fast !== undefined) return Either.right(fast)
  const type = typeOf(value)
  if (type === undefined) return Either.left(malformed(`an event's data has no "type": ${quote(data)}`))
  if (!Wire.knownEventTypes.has(type)) {
    return ignoreUnknownEvents
      ? Either.right(ignored)
      : Either.left(unknownBlock(`unknown event type "${type}"`))
  }
  if (type === "content_block_start" && Predicate.hasProperty(value, "content_block")) {
    const blockType = typeOf(value.content_block)
    if (blockType !== undefined && !Wire.knownBlockTypes.has(blockType)) {
      return Either.left(unknownBlock(`unknown content block type "${blockType}"${indexOf(value)}`))
    }
  }
  if (type === "content_block_delta" && Predicate.hasProperty(value, "delta")) {
    const deltaType = typeOf(value.delta)
    if (deltaType !== undefined && !Wire.knownDeltaTypes.has(deltaType)) {
      return Either.left(unknownBlock(`unknown delta type "${deltaType}"${indexOf(value)}`))
    }
  }
  return Either.mapLeft(
    decodeStreamEvent(value),
    (error) => malformed(`a malformed ${type} event: ${describeParseError(error)}`)
  )
}

/**
 * The common cases, checked by hand: a text or input_json delta, the start of a text or tool_use block, the end of a
 * block, the message's delta (stop reason and usage), the end of the message or a ping, each when it fits its `Wire` Schema exactly (and as the Schema would decode it, extra
 * fields dropped); anything else (another event, a field of the wrong type) goes through the Schema, which names what
 * is wrong. Most of a reply's events are these.
 */
const fastEvent = (value: unknown): StreamEvent | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const event = value as { type?: unknown; index?: unknown; delta?: unknown; content_block?: unknown; usage?: unknown }
  switch (event.type) {
    case "content_block_delta": {
      const index = event.index
      if (!isIndex(index)) return undefined
      const delta = event.delta as { type?: unknown; text?: unknown; partial_json?: unknown } | null | undefined
      if (typeof delta !== "object" || delta === null) return undefined
      if (delta.type === "text_delta" && typeof delta.text === "string") {
        return { type: "content_block_delta", index, delta: { type: "text_delta", text: delta.text } }
      }
      if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
        return {
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: delta.partial_json }
        }
      }
      return undefined
    }
    case "content_block_start": {
      const index = event.index
      const block = event.content_block as
        | { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }
        | null
        | undefined
      if (!isIndex(index) || typeof block !== "object" || block === null) return undefined
      if (block.type === "text") {
        return typeof block.text === "string"
          ? { type: "content_block_start", index, content_block: { type: "text", text: block.text } }
          : undefined
      }
      const { id, name } = block
      if (block.type !== "tool_use" || typeof id !== "string" || id === "" || typeof name !== "string") return undefined
      return {
        type: "content_block_start",
        index,
        content_block: "input" in block
          ? { type: "tool_use", id, name, input: block.input }
          : { type: "tool_use", id, name }
      }
    }
    case "message_delta": {
      const delta = event.delta as { stop_reason?: unknown; stop_sequence?: unknown } | null | undefined
      const usage = event.usage as { output_tokens?: unknown; input_tokens?: unknown } | null | undefined
      if (typeof delta !== "object" || delta === null || typeof usage !== "object" || usage === null) return undefined
      const stopReason = delta.stop_reason
      const outputTokens = usage.output_tokens
      if ((stopReason !== null && !isStopReason(stopReason)) || typeof outputTokens !== "number") return undefined
      // An optional key is kept only when present, as the Schema decodes it.
      const sequence = "stop_sequence" in delta
        ? nullOr(delta.stop_sequence, "string") ? { stop_sequence: delta.stop_sequence } : undefined
        : {}
      const input = "input_tokens" in usage
        ? nullOr(usage.input_tokens, "number") ? { input_tokens: usage.input_tokens } : undefined
        : {}
      if (sequence === undefined || input === undefined) return undefined
      return {
        type: "message_delta",
        delta: { stop_reason: stopReason, ...sequence },
        usage: { output_tokens: outputTokens, ...input }
      }
    }
    case "content_block_stop":
      return isIndex(event.index) ? { type: "content_block_stop", index: event.index } : undefined
    case "message_stop":
      return { type: "message_stop" }
    case "ping":
      return ignored
    default:
      return undefined
  }
}

const stopReasons: ReadonlySet<unknown> = new Set(Wire.StopReason.literals)

/** What `Wire.StopReason` accepts. */
const isStopReason = (value: unknown): value is StopReason => stopReasons.has(value)

/** `Schema.NullOr` of a string or a number. */
function nullOr(value: unknown, type: "string"): value is string | null
function nullOr(value: unknown, type: "number"): value is number | null
function nullOr(value: unknown, type: "string" | "number"): boolean {
  return value === null || typeof value === type
}

/** What `Wire`'s `Index` accepts: a non-negative integer. */
const isIndex = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

const indexOf = (value: object): string =>
  Predicate.hasProperty(value, "index") && typeof value.index === "number" ? ` at index ${value.index}` : ""

// ---------------------------------------------------------------------------------------------------------------
// the reply's state machine
// ---------------------------------------------------------------------------------------------------------------

type Block =
  | { readonly kind: "text"; open: boolean }
  | { readonly kind: "tool_use"; readonly id: string; readonly startInput: unknown; open: boolean; sawInput: boolean }

/**
 * One streamed reply, event by event. `step` answers the loop's events for a wire event, or the `ModelError` that
 * ends the stream; `finish` says whether a stream that ended here ended too early.
 *
 * The API sends a tool_use's `input` as `{}` in `content_block_start` and the real input in `input_json_delta`
 * pieces. When no non-empty piece arrives (a tool without parameters), the start's input is sent as one piece
 * before `ToolUseEnd`, so the pieces always concatenate to the input's JSON.
 *
 * @internal
 */
export class Reply {
  private started = false
  private stopped = false
  private readonly blocks = new Map<number, Block>()
  private readonly ids = new Set<string>()
  private inputTokens: number | undefined
  private outputTokens: number | undefined
  private stopReason: StopReason | undefined

  step(event: StreamEvent): Either.Either<ReadonlyArray<ModelEvent>, ModelError> {
    if (event.type === "ping") return Either.right([])
    if (this.stopped) return Either.left(malformed(`a ${event.type} event after message_stop`))
    if (event.type === "error") {
      return Either.left(
        new ModelError({
          reason: "Api",
          message: `the Messages API sent an error event: ${event.error.type}: ${event.error.message}`
        })
      )
    }
    if (event.type === "message_start") {
      if (this.started) return Either.left(malformed("a second message_start in one reply"))
      this.started = true
      this.inputTokens = event.message.usage.input_tokens
      this.outputTokens = event.message.usage.output_tokens
      return Either.right([])
    }
    if (!this.started) return Either.left(malformed(`a ${event.type} event before message_start`))
    switch (event.type) {
      case "content_block_start": {
        if (this.blocks.has(event.index)) return Either.left(malformed(`content block ${event.index} started twice`))
        const block = event.content_block
        if (block.type === "text") {
          this.blocks.set(event.index, { kind: "text", open: true })
          return Either.right(block.text === "" ? [] : [ModelEvent.TextDelta({ text: block.text })])
        }
        if (this.ids.has(block.id)) return Either.left(malformed(`two tool_use blocks share the id "${block.id}"`))
        this.ids.add(block.id)
        this.blocks.set(event.index, {
          kind: "tool_use",
          id: block.id,
          startInput: block.input ?? {},
          open: true,
          sawInput: false
        })
        return Either.right([ModelEvent.ToolUseStart({ id: block.id, name: block.name })])
      }
      case "content_block_delta": {
        const block = this.openBlock(event.index, "content_block_delta")
        if (Either.isLeft(block)) return Either.left(block.left)
        const delta = event.delta
        if (block.right.kind === "text") {
          if (delta.type !== "text_delta") {
            return Either.left(malformed(`an ${delta.type} for the text block at index ${event.index}`))
          }
          return Either.right(delta.text === "" ? [] : [ModelEvent.TextDelta({ text: delta.text })])
        }
        if (delta.type !== "input_json_delta") {
          return Either.left(malformed(`a ${delta.type} for the tool_use block at index ${event.index}`))
        }
        if (delta.partial_json === "") return Either.right([])
        block.right.sawInput = true
        return Either.right([ModelEvent.ToolUseDelta({ id: block.right.id, partialJson: delta.partial_json })])
      }
      case "content_block_stop": {
        const block = this.openBlock(event.index, "content_block_stop")
        if (Either.isLeft(block)) return Either.left(block.left)
        block.right.open = false
        if (block.right.kind === "text") return Either.right([])
        const { id, sawInput, startInput } = block.right
        return Either.right([
          ...(sawInput ? [] : [ModelEvent.ToolUseDelta({ id, partialJson: JSON.stringify(startInput) })]),
          ModelEvent.ToolUseEnd({ id })
        ])
      }
      case "message_delta": {
        if (event.delta.stop_reason !== null) this.stopReason = event.delta.stop_reason
        this.outputTokens = event.usage.output_tokens
        if (typeof event.usage.input_tokens === "number") this.inputTokens = event.usage.input_tokens
        return Either.right([])
      }
      case "message_stop": {
        for (const [index, block] of this.blocks) {
          if (block.open) return Either.left(malformed(`message_stop while content block ${index} is still open`))
        }
        if (this.stopReason === undefined) {
          return Either.left(malformed("message_stop before a message_delta gave the stop_reason"))
        }
        this.stopped = true
        const usage = this.inputTokens === undefined || this.outputTokens === undefined
          ? undefined
          : { inputTokens: this.inputTokens, outputTokens: this.outputTokens }
        return Either.right([ModelEvent.Stop({ reason: this.stopReason, usage })])
      }
    }
  }

  /** The error for a stream that ends here, if it ended too early. */
  finish(): ModelError | undefined {
    if (this.stopped) return undefined
    return malformed(this.started ? "the stream ended before message_stop" : "the stream ended before message_start")
  }

  private openBlock(index: number, type: string): Either.Either<Block, ModelError> {
    const block = this.blocks.get(index)
    if (block === undefined) return Either.left(malformed(`a ${type} for content block ${index}, which never started`))
    if (!block.open) return Either.left(malformed(`a ${type} for content block ${index}, which had already stopped`))
    return Either.right(block)
  }
}
