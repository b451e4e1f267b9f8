/**
 * What the agent loop needs from a model: one streamed reply to one request. The loop owns the conversation (in the
 * Messages API's shape, because only it can carry a ToolSearch's `tool_reference` blocks); a backend turns a
 * {@link ModelRequest} into its provider's request and the provider's stream into {@link ModelEvent}s.
 *
 * Two backends ship: `AnthropicMessages` (the Messages API over @effect/platform's HttpClient) and `EffectAiModel`
 * (any @effect/ai `LanguageModel`). A test provides `ModelBackend` with a scripted stream.
 *
 * @since 0.2.0
 */
import type * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import type * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import type * as Definitions from "../Catalog/Definitions.js"
import { TextBlock, ToolResultBlock, ToolUseBlock } from "../Tool/Wire.js"

// ---------------------------------------------------------------------------------------------------------------
// the conversation
// ---------------------------------------------------------------------------------------------------------------

/**
 * A block of a message in the conversation: text, a tool_use (assistant) or a tool_result (user).
 *
 * @since 0.2.0
 * @category models
 */
export const ContentBlock = Schema.Union(TextBlock, ToolUseBlock, ToolResultBlock)

/**
 * @since 0.2.0
 * @category models
 */
export type ContentBlock = typeof ContentBlock.Type

/**
 * One message of the conversation, in the Messages API's shape.
 *
 * @since 0.2.0
 * @category models
 */
export const Message = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  content: Schema.Union(Schema.String, Schema.Array(ContentBlock))
})

/**
 * @since 0.2.0
 * @category models
 */
export type Message = typeof Message.Type

/**
 * One request to the model: the conversation so far and the tools the session shows (from `ToolCatalog.request`,
 * deferred tools that were discovered carry `defer_loading: true`).
 *
 * @since 0.2.0
 * @category models
 */
export interface ModelRequest {
  readonly system: string | undefined
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<Definitions.AnthropicTool>
  readonly maxTokens: number
}

/**
 * Why the model stopped (the Messages API's `stop_reason`; other backends map theirs onto it).
 *
 * @since 0.2.0
 * @category models
 */
export type StopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "pause_turn" | "refusal"

/**
 * One piece of the model's streamed reply. Text and tool_use blocks may interleave; a tool_use's input arrives as
 * JSON text in pieces (`ToolUseDelta`) and is complete at `ToolUseEnd`. The stream ends with one `Stop`.
 *
 * @since 0.2.0
 * @category models
 */
export type ModelEvent = Data.TaggedEnum<{
  /** More text of the reply. */
  TextDelta: { readonly text: string }
  /** A tool_use block begins. */
  ToolUseStart: { readonly id: string; readonly name: string }
  /** More of a tool_use's input, as JSON text. */
  ToolUseDelta: { readonly id: string; readonly partialJson: string }
  /** The tool_use's input is complete. */
  ToolUseEnd: { readonly id: string }
  /**
   * The API answered with back-pressure (429 rate limit, 529 overloaded) before the reply began: the request is sent
   * again after `delayMillis` (what the API's `retry-after` asked, else a backoff). `attempt` counts from 1 up to
   * `maxRetries`. Nothing of a reply has been sent before it.
   */
  Retrying: {
    readonly attempt: number
    readonly maxRetries: number
    readonly status: number
    readonly delayMillis: number
    readonly message: string
  }
  /** The reply is complete. */
  Stop: {
    readonly reason: StopReason
    readonly usage: { readonly inputTokens: number; readonly outputTokens: number } | undefined
  }
}>

/**
 * Constructors and matchers for {@link ModelEvent}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const ModelEvent = Data.taggedEnum<ModelEvent>()

// ---------------------------------------------------------------------------------------------------------------
// errors
// ---------------------------------------------------------------------------------------------------------------

/**
 * Why a model request failed:
 * - `Transport`: the request could not be sent or the connection broke;
 * - `Status`: the API answered with an error status (`status` is set; `message` is the API's own message);
 * - `Malformed`: the response is not what the API promises (not JSON, a missing field, a tool_use without an id,
 *   events out of order);
 * - `UnknownBlock`: a content block or event type this client does not know;
 * - `Api`: the stream carried an error event (e.g. `overloaded_error`).
 *
 * @since 0.2.0
 * @category errors
 */
export type ModelErrorReason = "Transport" | "Status" | "Malformed" | "UnknownBlock" | "Api"

/**
 * A model request that failed.
 *
 * @since 0.2.0
 * @category errors
 */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  reason: Schema.Literal("Transport", "Status", "Malformed", "UnknownBlock", "Api"),
  message: Schema.String,
  status: Schema.optional(Schema.Number)
}) {}

// ---------------------------------------------------------------------------------------------------------------
// the service
// ---------------------------------------------------------------------------------------------------------------

/**
 * A reply being read, in the shape of `Stream.toPull`: each run gives the events that arrived since the last one,
 * and fails with `Option.none()` at the end of the reply or `Option.some(error)` when it failed.
 *
 * @since 0.3.0
 * @category models
 */
export type ReplyPull = Effect.Effect<Chunk.Chunk<ModelEvent>, Option.Option<ModelError>>

/**
 * The model the loop talks to.
 *
 * @since 0.2.0
 * @category tags
 */
export class ModelBackend extends Context.Tag("effect-tool-runtime/ModelBackend")<
  ModelBackend,
  {
    /** The model's reply to one request, as it streams. Interrupting the stream aborts the request. */
    readonly stream: (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>
    /**
     * The same reply as a pull, for a consumer that reads it chunk by chunk (the agent loop), set by
     * `ModelBackend.fromPull` for a backend that can hand out its reply more cheaply than as a stream (`AnthropicMessages`
     * does: a stream pays an Effect per step of its channels). It is read only beside the `stream` that
     * `ModelBackend.fromPull` made for it (`ModelBackend.replyOf`): a wrapper that replaces `stream` (`{ ...backend, stream }`) is
     * read through its own stream, never bypassed.
     *
     * @since 0.3.0
     */
    readonly pull?: ((request: ModelRequest) => Effect.Effect<ReplyPull, never, Scope.Scope>) | undefined
  }
>() {
  /**
   * A backend whose reply is a pull (in the shape of `Stream.toPull`; closing its Scope aborts the request): its
   * `stream` is that pull as a stream (`Stream.fromPull`), and a consumer that reads chunks ({@link replyOf}, the
   * agent loop) reads the pull itself, in fewer steps.
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly fromPull = (pull: Pull): ModelBackend["Type"] => fromPull(pull)

  /**
   * The reply to a request as a pull: the backend's own pull when {@link fromPull} made it and its `stream` is still
   * the one made with it, otherwise `Stream.toPull` of its `stream` (so a wrapper of `stream` is always read).
   *
   * @since 0.3.0
   * @category utils
   */
  static readonly replyOf = (
    backend: ModelBackend["Type"],
    request: ModelRequest
  ): Effect.Effect<ReplyPull, never, Scope.Scope> => replyOf(backend, request)
}

// ---------------------------------------------------------------------------------------------------------------
// replies as pulls (ModelBackend.fromPull, ModelBackend.replyOf)
// ---------------------------------------------------------------------------------------------------------------

type Pull = (request: ModelRequest) => Effect.Effect<ReplyPull, never, Scope.Scope>
type StreamOf = (request: ModelRequest) => Stream.Stream<ModelEvent, ModelError>

/** Each stream {@link fromPull} made, with the pull it was made of. */
const pullOfStream = new WeakMap<StreamOf, Pull>()

const fromPull = (pull: Pull): ModelBackend["Type"] => {
  const stream: StreamOf = (request) => Stream.fromPull(pull(request))
  pullOfStream.set(stream, pull)
  return ModelBackend.of({ stream, pull })
}

const replyOf = (
  backend: ModelBackend["Type"],
  request: ModelRequest
): Effect.Effect<ReplyPull, never, Scope.Scope> =>
  backend.pull !== undefined && pullOfStream.get(backend.stream) === backend.pull
    ? backend.pull(request)
    : Stream.toPull(backend.stream(request))
