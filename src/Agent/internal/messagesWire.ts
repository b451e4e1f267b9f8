/**
 * The Messages API's wire shapes, as Schemas: the request, the streamed events, a whole Message and an error body.
 * Documented and exported by `AnthropicMessages`; they live here so the client machinery can use them without an
 * import cycle.
 *
 * @internal
 */
import * as Schema from "effect/Schema"
import { TextBlock, ToolUseBlock } from "../../Tool/Wire.js"
import { Message } from "../ModelBackend.js"

/** An optional key whose value, when present, is never `undefined` (JSON has none): one issue per bad field. */
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })

// ---------------------------------------------------------------------------------------------------------------
// the request
// ---------------------------------------------------------------------------------------------------------------

/** @internal */
export const CacheControl = Schema.Struct({
  type: Schema.Literal("ephemeral"),
  ttl: optional(Schema.Literal("5m", "1h"))
})

/** @internal */
export const InputSchema = Schema.Record({ key: Schema.String, value: Schema.Unknown }).pipe(
  Schema.filter((schema) => schema["type"] === "object" || "input_schema.type must be \"object\"")
)

/** @internal */
export const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: optional(Schema.String),
  input_schema: InputSchema,
  defer_loading: optional(Schema.Boolean),
  strict: optional(Schema.Boolean),
  input_examples: optional(Schema.Array(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  cache_control: optional(CacheControl)
})

/** @internal */
export const ToolChoice = Schema.Union(
  Schema.Struct({ type: Schema.Literal("auto", "any", "none"), disable_parallel_tool_use: optional(Schema.Boolean) }),
  Schema.Struct({
    type: Schema.Literal("tool"),
    name: Schema.String,
    disable_parallel_tool_use: optional(Schema.Boolean)
  })
)

/** @internal */
export const MessagesRequest = Schema.Struct({
  model: Schema.String,
  max_tokens: Schema.Int.pipe(Schema.positive()),
  system: optional(Schema.Union(Schema.String, Schema.Array(TextBlock))),
  messages: Schema.Array(Message),
  tools: optional(Schema.Array(ToolDefinition)),
  tool_choice: optional(ToolChoice),
  stream: optional(Schema.Boolean)
})

// ---------------------------------------------------------------------------------------------------------------
// what comes back
// ---------------------------------------------------------------------------------------------------------------

/** @internal */
export const StopReason = Schema.Literal("end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal")

/** @internal */
export const Usage = Schema.Struct({
  input_tokens: Schema.Number,
  output_tokens: Schema.Number,
  cache_creation_input_tokens: optional(Schema.NullOr(Schema.Number)),
  cache_read_input_tokens: optional(Schema.NullOr(Schema.Number))
})

/** @internal */
export const ErrorDetail = Schema.Struct({ type: Schema.String, message: Schema.String })

/** @internal */
export const ErrorResponse = Schema.Struct({
  type: Schema.Literal("error"),
  error: ErrorDetail,
  request_id: optional(Schema.String)
})

/** @internal */
export const MessageResponse = Schema.Struct({
  id: Schema.String,
  type: Schema.Literal("message"),
  role: Schema.Literal("assistant"),
  model: Schema.String,
  content: Schema.Array(Schema.Union(TextBlock, ToolUseBlock)),
  stop_reason: Schema.NullOr(StopReason),
  stop_sequence: optional(Schema.NullOr(Schema.String)),
  usage: Usage
})

// ---------------------------------------------------------------------------------------------------------------
// streamed events
// ---------------------------------------------------------------------------------------------------------------

const Index = Schema.Int.pipe(Schema.nonNegative())

const toolUseId = Schema.propertySignature(
  Schema.String.pipe(Schema.minLength(1, { message: () => "a tool_use block needs a non-empty id" }))
).annotations({ missingMessage: () => "a tool_use block needs an id" })

/** @internal */
export const MessageStart = Schema.Struct({
  type: Schema.Literal("message_start"),
  message: Schema.Struct({
    id: Schema.String,
    type: Schema.Literal("message"),
    role: Schema.Literal("assistant"),
    model: Schema.String,
    content: Schema.Array(Schema.Unknown),
    stop_reason: Schema.NullOr(StopReason),
    usage: Usage
  })
})

/** @internal */
export const TextBlockStart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/** @internal */
export const ToolUseBlockStart = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: toolUseId,
  name: Schema.String,
  input: optional(Schema.Unknown)
})

/** @internal */
export const ContentBlockStart = Schema.Struct({
  type: Schema.Literal("content_block_start"),
  index: Index,
  content_block: Schema.Union(TextBlockStart, ToolUseBlockStart)
})

/** @internal */
export const TextDelta = Schema.Struct({ type: Schema.Literal("text_delta"), text: Schema.String })

/** @internal */
export const InputJsonDelta = Schema.Struct({ type: Schema.Literal("input_json_delta"), partial_json: Schema.String })

/** @internal */
export const ContentBlockDelta = Schema.Struct({
  type: Schema.Literal("content_block_delta"),
  index: Index,
  delta: Schema.Union(TextDelta, InputJsonDelta)
})

/** @internal */
export const ContentBlockStop = Schema.Struct({ type: Schema.Literal("content_block_stop"), index: Index })

/** @internal */
export const MessageDelta = Schema.Struct({
  type: Schema.Literal("message_delta"),
  delta: Schema.Struct({
    stop_reason: Schema.NullOr(StopReason),
    stop_sequence: optional(Schema.NullOr(Schema.String))
  }),
  usage: Schema.Struct({
    output_tokens: Schema.Number,
    input_tokens: optional(Schema.NullOr(Schema.Number))
  })
})

/** @internal */
export const MessageStop = Schema.Struct({ type: Schema.Literal("message_stop") })

/** @internal */
export const Ping = Schema.Struct({ type: Schema.Literal("ping") })

/** @internal */
export const ErrorEvent = Schema.Struct({ type: Schema.Literal("error"), error: ErrorDetail })

/** @internal */
export const StreamEvent = Schema.Union(
  MessageStart,
  ContentBlockStart,
  ContentBlockDelta,
  ContentBlockStop,
  MessageDelta,
  MessageStop,
  Ping,
  ErrorEvent
)

/** @internal */
export type StreamEvent = typeof StreamEvent.Type

/** Event types this client knows; anything else is an `UnknownBlock` error. */
export const knownEventTypes: ReadonlySet<string> = new Set([
  "message_start",
  "content_block_start",
  "content_block_delta",
  "content_block_stop",
  "message_delta",
  "message_stop",
  "ping",
  "error"
])

/** Content block types this client knows. */
export const knownBlockTypes: ReadonlySet<string> = new Set(["text", "tool_use"])

/** Delta types this client knows. */
export const knownDeltaTypes: ReadonlySet<string> = new Set(["text_delta", "input_json_delta"])
