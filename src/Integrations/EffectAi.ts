/**
 * The @effect/ai adapter: a `Toolkit.WithHandler` built from the registry whose `handle` runs every call through the
 * governed runtime (decode, validate, hooks, permissions, scheduling, budget), so `LanguageModel.generateText({
 * toolkit })` gets governed tool calls.
 *
 * ```ts
 * const toolkit = yield* EffectAi.toolkit()                  // needs ToolRuntime, ToolRegistry, Scope
 * const response = yield* LanguageModel.generateText({ prompt, toolkit, concurrency: "unbounded" })
 * ```
 *
 * What @effect/ai 0.37 forces, and how the adapter copes:
 * - It decodes a response's tool calls against `toolkit.tools` before anything runs, so every registered tool is in
 *   `tools` (deferred ones too). Each tool's parameters Schema accepts any object and carries the tool's JSON Schema as
 *   an annotation: the model sees the real schema, and a bad input reaches our decoder, which answers with the
 *   model-readable InvalidInput lines instead of an AiError.
 * - `handle(name, params)` gets no tool call id and one call at a time: the adapter feeds every call into one
 *   long-lived run (the toolkit's Scope), so the scheduler still orders conflicting calls and lets reads run together.
 *   Calls run in parallel only when `generateText` is given `concurrency` (its default resolves them one by one).
 * - Results go back as text (`encodedResult` is the tool_result text; @effect/ai-anthropic JSON-stringifies it), so
 *   image blocks become a `[image]` placeholder and a ToolSearch's `tool_reference` blocks, which cannot be sent
 *   through it, a `Loaded tools: A, B` line ({@link resultText}); use the Messages API loop for real references.
 *
 * @since 0.2.0
 */
import * as AiTool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Definitions from "../Catalog/Definitions.js"
import type { RegisteredTool } from "../Catalog/ToolRegistry.js"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { RunOptions } from "../Runtime/ToolRuntime.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { ToolResultBlock, ToolUseBlock } from "../Tool/Wire.js"

/** Accepts any object: our decoder is the authority (and writes the model-readable errors). */
const anyObject = Schema.Struct({}, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

/**
 * The JSON Schema a model is shown for a tool's input: the catalogue's canonical one (`Definitions`), as the
 * Anthropic shape carries it.
 *
 * @since 0.2.0
 * @category definitions
 */
export const inputJsonSchema = (tool: RegisteredTool): object => Definitions.anthropic(tool.definition).input_schema

/**
 * An @effect/ai tool for a tool definition in the Anthropic shape: its parameters Schema accepts any object (our
 * decoder is the authority) and carries `input_schema` as its JSON Schema, so a provider shows the model the real
 * schema. Results are text (`success` and `failure` are strings, failures are returned, not raised).
 *
 * @since 0.2.0
 * @category constructors
 */
export const aiTool = (definition: Pick<Definitions.AnthropicTool, "name" | "description" | "input_schema">) =>
  AiTool.make(definition.name, {
    description: definition.description,
    success: Schema.String,
    failure: Schema.String,
    failureMode: "return"
  }).setParameters(anyObject.annotations({ jsonSchema: definition.input_schema }))

const aiToolOf = (tool: RegisteredTool) => aiTool(Definitions.anthropic(tool.definition))

/**
 * The tools of the @effect/ai toolkit this adapter builds.
 *
 * @since 0.2.0
 * @category models
 */
export type AdaptedTool = ReturnType<typeof aiToolOf>

/**
 * The text @effect/ai carries for a tool_result's content: text as it is, an image as `[image]`, and each run of
 * `tool_reference` blocks as one `Loaded tools: A, B` line.
 *
 * @since 0.2.0
 * @category conversions
 */
export const resultText = (content: ToolResultBlock["content"]): string => {
  if (typeof content === "string") return content
  const lines: Array<string> = []
  let references: Array<string> = []
  const flush = () => {
    if (references.length > 0) lines.push(`Loaded tools: ${references.join(", ")}`)
    references = []
  }
  for (const block of content) {
    if (block.type === "tool_reference") {
      references.push(block.tool_name)
      continue
    }
    flush()
    lines.push(block.type === "text" ? block.text : "[image]")
  }
  flush()
  return lines.join("\n")
}

/**
 * A toolkit over every registered tool, each call governed by the runtime. The calls of all requests go into one
 * run that lasts as long as the Scope; closing it interrupts whatever still runs (each call still gets its Outcome).
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolkit = (
  options: { readonly run?: RunOptions | undefined; readonly idPrefix?: string | undefined } = {}
): Effect.Effect<Toolkit.WithHandler<Record<string, AdaptedTool>>, never, ToolRuntime | ToolRegistry | Scope.Scope> =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const runtime = yield* ToolRuntime
    const intake = yield* Queue.unbounded<ToolUseBlock>()
    const waiting = new Map<string, Deferred.Deferred<Outcome>>()
    const run = yield* runtime.start(Stream.fromQueue(intake), options.run)
    yield* Effect.forkScoped(
      Stream.runForEach(run.outcomes, (outcome) => {
        const deferred = waiting.get(outcome.toolUseId)
        waiting.delete(outcome.toolUseId)
        return deferred === undefined ? Effect.void : Deferred.succeed(deferred, outcome)
      })
    )
    const tools: Record<string, AdaptedTool> = Object.fromEntries(
      registry.tools.map((tool) => [tool.definition.name, aiToolOf(tool)])
    )
    let next = 0
    const handle = (name: string, params: unknown) =>
      Effect.gen(function*() {
        const id = `${options.idPrefix ?? "effect_ai_"}${next++}`
        const deferred = yield* Deferred.make<Outcome>()
        waiting.set(id, deferred)
        yield* Queue.offer(intake, { type: "tool_use", id, name, input: params })
        const outcome = yield* Deferred.await(deferred)
        const text = resultText(outcome.result.content)
        return { isFailure: outcome.status !== "success", result: text, encodedResult: text }
      })
    return { tools, handle } as unknown as Toolkit.WithHandler<Record<string, AdaptedTool>>
  })
