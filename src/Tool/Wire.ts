/**
 * The wire types a model speaks: `tool_use` blocks in, `tool_result` blocks out, in Anthropic's Messages API
 * shape. Everything that crosses the process boundary (the CLI, integrations) is decoded with these schemas.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------------------------
// content blocks
// ---------------------------------------------------------------------------------------------------------------

/**
 * A text content block.
 *
 * @since 0.1.0
 * @category models
 */
export const TextBlock = Schema.Struct({
  type: Schema.Literal("text"),
  text: Schema.String
})
/**
 * @since 0.1.0
 * @category models
 */
export type TextBlock = typeof TextBlock.Type

/**
 * A base64 image content block.
 *
 * @since 0.1.0
 * @category models
 */
export const ImageBlock = Schema.Struct({
  type: Schema.Literal("image"),
  source: Schema.Struct({
    type: Schema.Literal("base64"),
    media_type: Schema.Literal("image/png", "image/jpeg", "image/gif", "image/webp"),
    data: Schema.String
  })
})
/**
 * @since 0.1.0
 * @category models
 */
export type ImageBlock = typeof ImageBlock.Type

/**
 * A reference to a tool by name, in the result of a tool search: the API loads that tool's definition (which must
 * be in the request's `tools`, normally with `defer_loading: true`) where the reference appears.
 *
 * @since 0.2.0
 * @category models
 */
export const ToolReferenceBlock = Schema.Struct({
  type: Schema.Literal("tool_reference"),
  tool_name: Schema.String
})
/**
 * @since 0.2.0
 * @category models
 */
export type ToolReferenceBlock = typeof ToolReferenceBlock.Type

/**
 * What a tool_result may carry: a plain string, or a list of text, image and tool_reference blocks.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolResultContent = Schema.Union(
  Schema.String,
  Schema.Array(Schema.Union(TextBlock, ImageBlock, ToolReferenceBlock))
)
/**
 * @since 0.1.0
 * @category models
 */
export type ToolResultContent = typeof ToolResultContent.Type

// ---------------------------------------------------------------------------------------------------------------
// tool_use / tool_result
// ---------------------------------------------------------------------------------------------------------------

/**
 * A model's request to use a tool. `input` is whatever the model produced: it is decoded later, against the
 * tool's own schema, so that a malformed input becomes a tool_result the model can act on rather than a crash.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolUseBlock = Schema.Struct({
  type: Schema.Literal("tool_use"),
  id: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String,
  input: Schema.Unknown
})
/**
 * @since 0.1.0
 * @category models
 */
export type ToolUseBlock = typeof ToolUseBlock.Type

/**
 * The answer to one tool_use, sent back to the model in the next user message.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolResultBlock = Schema.Struct({
  type: Schema.Literal("tool_result"),
  tool_use_id: Schema.String,
  content: ToolResultContent,
  is_error: Schema.optional(Schema.Boolean)
})
/**
 * @since 0.1.0
 * @category models
 */
export type ToolResultBlock = typeof ToolResultBlock.Type

/**
 * An assistant message as the Messages API returns it; blocks other than tool_use are carried but ignored.
 *
 * @since 0.1.0
 * @category models
 */
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.Array(
    Schema.Union(ToolUseBlock, Schema.Struct({ type: Schema.String }, { key: Schema.String, value: Schema.Unknown }))
  )
})
/**
 * @since 0.1.0
 * @category models
 */
export type AssistantMessage = typeof AssistantMessage.Type

// ---------------------------------------------------------------------------------------------------------------
// utilities
// ---------------------------------------------------------------------------------------------------------------

/**
 * The text a tool_result content holds, images left out: what counts against the context budget.
 *
 * @since 0.1.0
 * @category utilities
 */
export const contentText = (content: ToolResultContent): string =>
  typeof content === "string"
    ? content
    : content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/**
 * Builds a tool_result block.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolResult = (toolUseId: string, content: ToolResultContent, isError: boolean): ToolResultBlock =>
  isError
    ? { type: "tool_result", tool_use_id: toolUseId, content, is_error: true }
    : { type: "tool_result", tool_use_id: toolUseId, content }
