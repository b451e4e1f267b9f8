/**
 * A {@link ModelBackend} over any @effect/ai `LanguageModel` (Anthropic, OpenAI, ... through their @effect/ai
 * providers): the loop's conversation becomes a `Prompt`, the request's tools a toolkit, and the provider's stream
 * parts become {@link ModelEvent}s.
 *
 * ```ts
 * // any Layer of @effect/ai's LanguageModel, e.g. @effect/ai-anthropic's AnthropicLanguageModel.layer({ model })
 * const backend = EffectAiModel.layer.pipe(Layer.provide(languageModel))
 * // with the request's max tokens handed to the provider
 * const configured = EffectAiModel.layerWith({
 *   configure: (request) => Stream.provideService(AnthropicLanguageModel.Config, { max_tokens: request.maxTokens })
 * })
 * ```
 *
 * @effect/ai never runs a tool here: the request goes out with `disableToolCallResolution: true` and the toolkit's
 * handler dies if it is ever called. The loop and the governed runtime answer every tool_use.
 *
 * What @effect/ai 0.37 forces, and how the backend copes:
 * - Its request carries only each tool's name, description and JSON Schema: no `defer_loading`, so deferred tools that
 *   were discovered go out in full like the others (the request's `tools` already holds them).
 * - A tool result is one value, not blocks (@effect/ai-anthropic JSON-stringifies it): a result's text blocks are
 *   joined, an image becomes an `[image]` placeholder, and `tool_reference` blocks (which it cannot send) become a
 *   `Loaded tools: A, B` line; the tools they name are in the request's `tools`, so the model can call them.
 * - It decodes every tool call against the toolkit before we see it, so each tool's parameters accept any object (the
 *   runtime's decoder answers a bad input with model-readable lines), and a call of a tool that is not in the
 *   request fails the stream (`ModelError` `Malformed`).
 * - It has no provider-neutral `max_tokens`: `request.maxTokens` reaches the provider only through
 *   {@link Options.configure} (e.g. `Stream.provideService(AnthropicLanguageModel.Config, { max_tokens })`).
 * - Tool calls the provider executes itself (`providerExecuted`) and reasoning parts are not events of the contract;
 *   they are dropped. A definition's `strict`, `input_examples` and `cache_control` cannot be expressed either.
 *
 * Providers stream a tool call as params (start, deltas, end) and then repeat it complete; the repeat is dropped. A
 * finish reason maps onto the Messages API's stop reasons (`tool-calls` -> `tool_use`, `stop` -> `end_turn`,
 * `length` -> `max_tokens`, `content-filter` -> `refusal`, `pause` -> `pause_turn`, anything else -> `end_turn`).
 *
 * @since 0.2.0
 */
import type * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { Message, ModelRequest, StopReason } from "../Agent/ModelBackend.js"
import { ModelBackend, ModelError, ModelEvent } from "../Agent/ModelBackend.js"
import type * as Definitions from "../Catalog/Definitions.js"
import type { AdaptedTool } from "./EffectAi.js"
import * as EffectAi from "./EffectAi.js"

// ---------------------------------------------------------------------------------------------------------------
// options
// ---------------------------------------------------------------------------------------------------------------

/**
 * How the backend calls the `LanguageModel`.
 *
 * @since 0.2.0
 * @category models
 */
export interface Options {
  /** @effect/ai's tool choice for every request (its default is `"auto"`). */
  readonly toolChoice?: LanguageModel.ToolChoice<string> | undefined
  /**
   * Wraps each request's @effect/ai stream, e.g. to hand the provider its config for this request:
   * `configure: (request) => Stream.provideService(AnthropicLanguageModel.Config, { max_tokens: request.maxTokens })`.
   */
  readonly configure?:
    | ((request: ModelRequest) => <A, E>(parts: Stream.Stream<A, E>) => Stream.Stream<A, E>)
    | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// the conversation as a Prompt
// ---------------------------------------------------------------------------------------------------------------

/**
 * The text @effect/ai carries for a tool_result's content (see `EffectAi.resultText`).
 *
 * @since 0.2.0
 * @category conversions
 */
export const resultText = EffectAi.resultText

/** Where a block goes in a Prompt: tool calls into an assistant message, results into a tool message. */
type Destination = "user" | "assistant" | "tool"

/**
 * The conversation as an @effect/ai `Prompt`: the system message first; then each message's blocks in order, a run
 * of text staying in its role's message, tool_use blocks as tool-call parts of an assistant message and tool_result
 * blocks as tool-result parts of a tool message (`is_error` -> a failure). A result's tool name is taken from the
 * tool_use it answers.
 *
 * @since 0.2.0
 * @category conversions
 */
export const toPrompt = (system: string | undefined, messages: ReadonlyArray<Message>): Prompt.Prompt => {
  const out: Array<Prompt.Message> = []
  if (system !== undefined && system.length > 0) out.push(Prompt.systemMessage({ content: system }))
  const names = new Map<string, string>()
  let destination: Destination | undefined
  let parts: Array<Prompt.TextPart | Prompt.ToolCallPart | Prompt.ToolResultPart> = []
  const flush = () => {
    if (destination === undefined || parts.length === 0) return
    if (destination === "user") out.push(Prompt.userMessage({ content: parts as Array<Prompt.TextPart> }))
    else if (destination === "assistant") out.push(Prompt.assistantMessage({ content: parts }))
    else out.push(Prompt.toolMessage({ content: parts as Array<Prompt.ToolResultPart> }))
    parts = []
  }
  const add = (to: Destination, part: Prompt.TextPart | Prompt.ToolCallPart | Prompt.ToolResultPart) => {
    if (to !== destination) flush()
    destination = to
    parts.push(part)
  }
  for (const message of messages) {
    // A new message starts a new Prompt message even when the role repeats.
    flush()
    destination = undefined
    const blocks = typeof message.content === "string"
      ? [{ type: "text" as const, text: message.content }]
      : message.content
    for (const block of blocks) {
      switch (block.type) {
        case "text":
          add(message.role, Prompt.textPart({ text: block.text }))
          break
        case "tool_use":
          names.set(block.id, block.name)
          add(
            "assistant",
            Prompt.toolCallPart({ id: block.id, name: block.name, params: block.input, providerExecuted: false })
          )
          break
        case "tool_result":
          add(
            "tool",
            Prompt.toolResultPart({
              id: block.tool_use_id,
              name: names.get(block.tool_use_id) ?? "unknown",
              isFailure: block.is_error === true,
              result: resultText(block.content),
              providerExecuted: false
            })
          )
          break
      }
    }
  }
  flush()
  return Prompt.fromMessages(out)
}

/**
 * A toolkit @effect/ai can decode the model's tool calls against, one tool per definition of the request. Its
 * handler dies: this backend always asks @effect/ai not to resolve tool calls.
 *
 * @since 0.2.0
 * @category conversions
 */
export const toToolkit = (
  tools: ReadonlyArray<Definitions.AnthropicTool>
): Toolkit.WithHandler<Record<string, AdaptedTool>> => ({
  tools: Object.fromEntries(tools.map((tool) => [tool.name, EffectAi.aiTool(tool)])),
  handle: (name) =>
    Effect.dieMessage(`EffectAiModel: @effect/ai tried to run ${String(name)} itself; the loop runs tools`)
})

// ---------------------------------------------------------------------------------------------------------------
// the reply as events
// ---------------------------------------------------------------------------------------------------------------

/**
 * The Messages API's stop reason for an @effect/ai finish reason.
 *
 * @since 0.2.0
 * @category conversions
 */
export const stopReason = (reason: Response.FinishReason): StopReason => {
  switch (reason) {
    case "tool-calls":
      return "tool_use"
    case "length":
      return "max_tokens"
    case "content-filter":
      return "refusal"
    case "pause":
      return "pause_turn"
    default:
      return "end_turn"
  }
}

/**
 * The {@link ModelError} for an @effect/ai error; its message is kept.
 *
 * @since 0.2.0
 * @category conversions
 */
export const modelError = (error: AiError.AiError): ModelError => {
  switch (error._tag) {
    case "HttpRequestError":
      return new ModelError({ reason: "Transport", message: error.message })
    case "HttpResponseError":
      // An answer that came back but could not be read is malformed; an error status is a status.
      return new ModelError({
        reason: error.reason === "StatusCode" ? "Status" : "Malformed",
        message: error.message,
        status: error.response.status
      })
    case "MalformedInput":
    case "MalformedOutput":
      return new ModelError({ reason: "Malformed", message: error.message })
    case "UnknownError":
      return new ModelError({ reason: "Api", message: error.message })
  }
}

const malformed = (message: string) => new ModelError({ reason: "Malformed", message })

const errorText = (error: unknown): string => {
  if (error instanceof Error) return error.message
  if (typeof error === "string") return error
  try {
    return JSON.stringify(error)
  } catch {
    return String(error)
  }
}

/**
 * Turns one reply's parts into events, in order. A tool call streamed as params (start, deltas, end) is passed on
 * as it streams and its final `tool-call` part is dropped; a tool call that arrives only complete becomes Start,
 * one Delta with its params as JSON, and End. The events end at the first `finish` part.
 */
const makeTranslator = () => {
  /** Tool calls whose params are streaming now. */
  const open = new Set<string>()
  /** Tool calls already passed on (their final tool-call part is a repeat). */
  const seen = new Set<string>()
  /** Streaming tool calls that have had some params. */
  const withParams = new Set<string>()
  /** Provider-executed tool calls: not ours to answer. */
  const skipped = new Set<string>()
  let stopped = false

  const next = (
    part: Response.StreamPart<Record<string, AdaptedTool>>
  ): Effect.Effect<ReadonlyArray<ModelEvent>, ModelError> => {
    switch (part.type) {
      case "text-delta":
        return Effect.succeed(part.delta.length === 0 ? [] : [ModelEvent.TextDelta({ text: part.delta })])
      case "tool-params-start": {
        if (part.providerExecuted) {
          skipped.add(part.id)
          return Effect.succeed([])
        }
        if (part.id.length === 0) return Effect.fail(malformed(`A tool call of ${part.name} has no id.`))
        if (seen.has(part.id)) return Effect.fail(malformed(`The tool call id ${part.id} is used twice.`))
        open.add(part.id)
        seen.add(part.id)
        return Effect.succeed([ModelEvent.ToolUseStart({ id: part.id, name: part.name })])
      }
      case "tool-params-delta":
        if (skipped.has(part.id)) return Effect.succeed([])
        if (!open.has(part.id)) {
          return Effect.fail(malformed(`Params arrived for the tool call ${part.id}, which has not started.`))
        }
        if (part.delta.length === 0) return Effect.succeed([])
        withParams.add(part.id)
        return Effect.succeed([ModelEvent.ToolUseDelta({ id: part.id, partialJson: part.delta })])
      case "tool-params-end": {
        if (skipped.has(part.id)) return Effect.succeed([])
        if (!open.delete(part.id)) return Effect.fail(malformed(`The tool call ${part.id} ended without starting.`))
        // A call without input streams no params (Anthropic sends none for `{}`); its JSON is still an object.
        const empty = withParams.delete(part.id) ? [] : [ModelEvent.ToolUseDelta({ id: part.id, partialJson: "{}" })]
        return Effect.succeed([...empty, ModelEvent.ToolUseEnd({ id: part.id })])
      }
      case "tool-call": {
        if (part.providerExecuted || skipped.has(part.id)) return Effect.succeed([])
        if (part.id.length === 0) return Effect.fail(malformed(`A tool call of ${part.name} has no id.`))
        if (seen.has(part.id)) {
          return open.has(part.id)
            ? Effect.fail(malformed(`The tool call ${part.id} arrived complete while its params were still streaming.`))
            : Effect.succeed([])
        }
        seen.add(part.id)
        return Effect.succeed([
          ModelEvent.ToolUseStart({ id: part.id, name: part.name }),
          ModelEvent.ToolUseDelta({ id: part.id, partialJson: JSON.stringify(part.params ?? {}) }),
          ModelEvent.ToolUseEnd({ id: part.id })
        ])
      }
      case "finish": {
        if (open.size > 0) {
          return Effect.fail(
            malformed(`The reply finished while the tool call ${[...open].join(", ")} was still streaming.`)
          )
        }
        stopped = true
        const { inputTokens, outputTokens } = part.usage
        const usage = inputTokens === undefined && outputTokens === undefined
          ? undefined
          : { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 }
        return Effect.succeed([ModelEvent.Stop({ reason: stopReason(part.reason), usage })])
      }
      case "error":
        return Effect.fail(new ModelError({ reason: "Api", message: errorText(part.error) }))
      default:
        return Effect.succeed([])
    }
  }

  const end = Effect.suspend(
    () => (stopped ? Effect.void : Effect.fail(malformed("The reply ended without a finish.")))
  )

  return { next, end }
}

// ---------------------------------------------------------------------------------------------------------------
// the backend
// ---------------------------------------------------------------------------------------------------------------

/**
 * The reply of a `LanguageModel` to one request, as {@link ModelEvent}s.
 *
 * @since 0.2.0
 * @category constructors
 */
export const stream = (
  model: LanguageModel.Service,
  request: ModelRequest,
  options: Options = {}
): Stream.Stream<ModelEvent, ModelError> =>
  Stream.suspend(() => {
    const translator = makeTranslator()
    const parts = model.streamText({
      prompt: toPrompt(request.system, request.messages),
      toolkit: toToolkit(request.tools),
      disableToolCallResolution: true,
      ...(options.toolChoice === undefined ? {} : { toolChoice: options.toolChoice })
    })
    const configured = options.configure === undefined ? parts : options.configure(request)(parts)
    return configured.pipe(
      Stream.mapError(modelError),
      Stream.mapEffect(translator.next),
      Stream.flattenIterables,
      Stream.takeUntil(ModelEvent.$is("Stop")),
      Stream.concat(Stream.execute(translator.end))
    )
  }).pipe(
    Stream.withSpan("EffectAiModel.stream", {
      attributes: { messages: request.messages.length, tools: request.tools.length, maxTokens: request.maxTokens }
    })
  )

/**
 * The backend's service over the `LanguageModel` in context.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<ModelBackend["Type"], never, LanguageModel.LanguageModel> =>
  Effect.map(
    LanguageModel.LanguageModel,
    (model) => ModelBackend.of({ stream: (request) => stream(model, request, options) })
  )

/**
 * A {@link ModelBackend} over the `LanguageModel` in context.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<ModelBackend, never, LanguageModel.LanguageModel> = Layer.effect(ModelBackend, make())

/**
 * {@link layer} with {@link Options} (tool choice, the provider's config per request).
 *
 * @since 0.2.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<ModelBackend, never, LanguageModel.LanguageModel> =>
  Layer.effect(ModelBackend, make(options))
