/**
 * Tool definitions for the model, from the tools' Effect Schemas: one canonical JSON Schema per tool, rewritten per
 * provider.
 *
 * ```ts
 * const tools = Definitions.forProvider("anthropic", registry.tools.map((tool) => tool.definition))
 * // -> [{ name, description, input_schema }, ...] for the Messages API's `tools`
 * ```
 *
 * - **Anthropic Messages**: `{name, description, input_schema, defer_loading?, strict?, input_examples?,
 *   cache_control?}`; the schema is JSON Schema 2020-12 as it is.
 * - **OpenAI Chat Completions** `{type: "function", function: {name, description, parameters, strict?}}` and
 *   **Responses** `{type: "function", name, description, parameters, strict}`. The strict variant (Responses'
 *   default) follows OpenAI's rules: every property required, an optional one as a union with null,
 *   `additionalProperties: false` on every object, unsupported keywords removed. A schema strict mode cannot express
 *   (a record, a tuple, an intersection, a value of any type) is sent with `strict: false`. A strict model sends
 *   `null` for an optional parameter it leaves out: {@link restoreOmitted} turns those back into absent ones.
 * - **Gemini** function declarations: `parameters` in Gemini's OpenAPI subset (no `$ref`/`$defs`: inlined, no
 *   `additionalProperties`, `nullable` instead of null unions, string enums only).
 *
 * Never a `$schema`. A constraint a provider cannot take (say `minLength` in OpenAI's strict mode) is dropped from
 * that definition but still enforced by the decoder: a value breaking it gets a model-readable InvalidInput.
 * {@link explain} lists what each shape dropped.
 *
 * An input schema with a `jsonSchema` annotation (an MCP tool's `inputSchema`, say) is taken from it and goes
 * through the same rewrites.
 *
 * **Token estimate.** {@link estimateTokens} is the length of the JSON text divided by 4, rounded up: no tokenizer
 * ships with the library (Anthropic publishes none for current models). Measured against OpenAI's o200k tokenizer
 * (gpt-tokenizer, `bench/toolsearch.ts`), it runs high on tool definitions: +7% for the built-in tools, +20% for
 * the recorded MCP servers' schema-heavy definitions, +10% for the synthetic catalogue (totals; single definitions
 * range from -3% to +37%). Erring high makes `auto` defer a little early rather than late.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Either from "effect/Either"
import type { Definition } from "../Tool/Tool.js"
import { fromSchema } from "./internal/jsonSchema.js"
import type { JsonSchema } from "./internal/jsonSchema.js"
import * as Providers from "./internal/jsonSchemaProviders.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A JSON Schema node, as JSON.
 *
 * @since 0.2.0
 * @category models
 */
export type { JsonSchema, JsonValue } from "./internal/jsonSchema.js"

/**
 * The shapes definitions come in.
 *
 * @since 0.2.0
 * @category models
 */
export type Provider = "anthropic" | "openai-chat" | "openai-responses" | "gemini"

/**
 * Every {@link Provider}, in a fixed order.
 *
 * @since 0.2.0
 * @category models
 */
export const providers: ReadonlyArray<Provider> = ["anthropic", "openai-chat", "openai-responses", "gemini"]

/**
 * A tool in the Anthropic Messages API's `tools`.
 *
 * @since 0.2.0
 * @category models
 */
export interface AnthropicTool {
  readonly name: string
  readonly description: string
  readonly input_schema: JsonSchema
  readonly defer_loading?: boolean
  readonly strict?: boolean
  readonly input_examples?: ReadonlyArray<Readonly<Record<string, unknown>>>
  readonly cache_control?: { readonly type: "ephemeral"; readonly ttl?: "5m" | "1h" }
}

/**
 * A tool in OpenAI Chat Completions' `tools`.
 *
 * @since 0.2.0
 * @category models
 */
export interface OpenAiChatTool {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description: string
    readonly parameters: JsonSchema
    readonly strict?: boolean
  }
}

/**
 * A tool in the OpenAI Responses API's `tools`.
 *
 * @since 0.2.0
 * @category models
 */
export interface OpenAiResponsesTool {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly strict: boolean
}

/**
 * A Gemini function declaration (in `tools: [{functionDeclarations: [...]}]`). A tool without parameters has no
 * `parameters`.
 *
 * @since 0.2.0
 * @category models
 */
export interface GeminiFunctionDeclaration {
  readonly name: string
  readonly description: string
  readonly parameters?: JsonSchema
}

/**
 * Options for Anthropic definitions.
 *
 * @since 0.2.0
 * @category models
 */
export interface AnthropicOptions {
  /** Sent as `defer_loading: true`: the API keeps the definition out of context until a tool_reference names it. */
  readonly deferLoading?: boolean | undefined
  readonly strict?: boolean | undefined
  readonly inputExamples?: ReadonlyArray<Readonly<Record<string, unknown>>> | undefined
  /** Not allowed together with `deferLoading` (the API refuses both): a deferred tool drops it. */
  readonly cacheControl?: { readonly type: "ephemeral"; readonly ttl?: "5m" | "1h" } | undefined
}

/**
 * Options for OpenAI definitions.
 *
 * @since 0.2.0
 * @category models
 */
export interface OpenAiOptions {
  /** Use the strict rewrite. Default: false for Chat Completions, true for Responses (the APIs' own defaults). */
  readonly strict?: boolean | undefined
}

/**
 * A definition could not be made: the input schema has no JSON form (a declaration without a `jsonSchema`
 * annotation), or a name breaks the providers' rule.
 *
 * @since 0.2.0
 * @category errors
 */
export class DefinitionError extends Data.TaggedError("DefinitionError")<{
  readonly tool: string
  readonly message: string
}> {}

// ---------------------------------------------------------------------------------------------------------------
// canonical schema
// ---------------------------------------------------------------------------------------------------------------

const canonicals = new WeakMap<object, JsonSchema>()

/**
 * The canonical JSON Schema of a tool's input (cached per schema). Throws {@link DefinitionError} when the schema
 * has no JSON form: that is a programming error in the tool, found the first time its definition is made.
 *
 * @since 0.2.0
 * @category schemas
 */
export const inputSchema = (definition: Definition.Any): JsonSchema => {
  const cached = canonicals.get(definition.input)
  if (cached !== undefined) return cached
  let schema: JsonSchema
  try {
    schema = fromSchema(definition.input)
  } catch (error) {
    throw new DefinitionError({
      tool: definition.name,
      message: `The input schema of ${definition.name} has no JSON Schema form: ${
        error instanceof Error ? error.message : String(error)
      }`
    })
  }
  canonicals.set(definition.input, schema)
  return schema
}

const strictRewrites = new WeakMap<object, Either.Either<Providers.StrictRewrite, string>>()

const strictOf = (definition: Definition.Any): Either.Either<Providers.StrictRewrite, string> => {
  const cached = strictRewrites.get(definition.input)
  if (cached !== undefined) return cached
  const rewrite = Providers.openAiStrict(inputSchema(definition))
  strictRewrites.set(definition.input, rewrite)
  return rewrite
}

// ---------------------------------------------------------------------------------------------------------------
// per provider
// ---------------------------------------------------------------------------------------------------------------

/**
 * The Anthropic Messages API definition of a tool.
 *
 * @since 0.2.0
 * @category definitions
 */
export const anthropic = (definition: Definition.Any, options: AnthropicOptions = {}): AnthropicTool => ({
  name: definition.name,
  description: definition.description,
  input_schema: Providers.plain(inputSchema(definition)).schema,
  ...(options.deferLoading === true ? { defer_loading: true } : {}),
  ...(options.strict === undefined ? {} : { strict: options.strict }),
  ...(options.inputExamples === undefined ? {} : { input_examples: options.inputExamples }),
  ...(options.cacheControl === undefined || options.deferLoading === true
    ? {}
    : { cache_control: options.cacheControl })
})

const openAiParameters = (
  definition: Definition.Any,
  strict: boolean
): { readonly parameters: JsonSchema; readonly strict: boolean } => {
  if (strict) {
    const rewrite = strictOf(definition)
    if (Either.isRight(rewrite)) return { parameters: rewrite.right.schema, strict: true }
  }
  return { parameters: Providers.plain(inputSchema(definition)).schema, strict: false }
}

/**
 * The OpenAI Chat Completions definition of a tool. With `strict: true`, the strict rewrite; `strict: false` is
 * sent when strict mode cannot express the schema ({@link explain} says why).
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAiChat = (definition: Definition.Any, options: OpenAiOptions = {}): OpenAiChatTool => {
  const { parameters, strict } = openAiParameters(definition, options.strict ?? false)
  return {
    type: "function",
    function: {
      name: definition.name,
      description: definition.description,
      parameters,
      ...(options.strict === undefined ? {} : { strict })
    }
  }
}

/**
 * The OpenAI Responses API definition of a tool: strict by default (as the API is), `strict: false` when strict
 * mode cannot express the schema.
 *
 * @since 0.2.0
 * @category definitions
 */
export const openAiResponses = (definition: Definition.Any, options: OpenAiOptions = {}): OpenAiResponsesTool => {
  const { parameters, strict } = openAiParameters(definition, options.strict ?? true)
  return { type: "function", name: definition.name, description: definition.description, parameters, strict }
}

/**
 * The Gemini function declaration of a tool.
 *
 * @since 0.2.0
 * @category definitions
 */
export const gemini = (definition: Definition.Any): GeminiFunctionDeclaration => {
  const { schema } = Providers.gemini(inputSchema(definition))
  const properties = schema["properties"]
  const empty = schema["anyOf"] === undefined &&
    (properties === undefined ||
      (typeof properties === "object" && properties !== null && Object.keys(properties).length === 0))
  return empty
    ? { name: definition.name, description: definition.description }
    : { name: definition.name, description: definition.description, parameters: schema }
}

/**
 * Options of {@link forProvider}.
 *
 * @since 0.2.0
 * @category models
 */
export interface ForProviderOptions {
  /** OpenAI's strict mode (default: the API's own default). */
  readonly strict?: boolean | undefined
  /** Names of tools to send with `defer_loading: true` (Anthropic only; other providers ignore it). */
  readonly deferLoading?: ReadonlySet<string> | undefined
}

/**
 * The `tools` value of a request in a provider's shape: an array of tool definitions; for Gemini, one tool
 * holding the function declarations (`[{functionDeclarations: [...]}]`).
 *
 * @since 0.2.0
 * @category definitions
 */
export const forProvider = (
  provider: Provider,
  definitions: ReadonlyArray<Definition.Any>,
  options: ForProviderOptions = {}
): ReadonlyArray<unknown> =>
  providerTools(provider, definitions.map((definition) => toolForProvider(provider, definition, options)))

/**
 * One tool as {@link forProvider} shows it: an element of its array (for Gemini, one of the function declarations).
 *
 * @since 0.3.0
 * @category definitions
 */
export const toolForProvider = (
  provider: Provider,
  definition: Definition.Any,
  options: ForProviderOptions = {}
): unknown => {
  const strict = options.strict === undefined ? {} : { strict: options.strict }
  switch (provider) {
    case "anthropic":
      return anthropic(definition, { deferLoading: options.deferLoading?.has(definition.name) === true })
    case "openai-chat":
      return openAiChat(definition, strict)
    case "openai-responses":
      return openAiResponses(definition, strict)
    case "gemini":
      return gemini(definition)
  }
}

/**
 * The `tools` value of a request from its tools as {@link toolForProvider} shows them.
 *
 * @since 0.3.0
 * @category definitions
 */
export const providerTools = (provider: Provider, tools: ReadonlyArray<unknown>): ReadonlyArray<unknown> =>
  provider !== "gemini" ? tools : tools.length === 0 ? [] : [{ functionDeclarations: tools }]

// ---------------------------------------------------------------------------------------------------------------
// inspection and input
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a shape left out of a tool's schema: the dropped keywords (each still enforced by the decoder) and, for
 * OpenAI's strict shape, why strict mode could not be used when it could not.
 *
 * @since 0.2.0
 * @category inspection
 */
export const explain = (
  definition: Definition.Any,
  shape: "anthropic" | "openai" | "openai-strict" | "gemini"
): { readonly dropped: ReadonlyArray<Providers.Dropped>; readonly notStrict?: string } => {
  switch (shape) {
    case "anthropic":
    case "openai":
      return { dropped: [] }
    case "openai-strict":
      return Either.match(strictOf(definition), {
        onLeft: (reason) => ({ dropped: [], notStrict: reason }),
        onRight: (rewrite) => ({ dropped: rewrite.dropped })
      })
    case "gemini":
      return { dropped: Providers.gemini(inputSchema(definition)).dropped }
  }
}

/**
 * Turns the `null`s a strict OpenAI model sends for optional parameters it left out back into absent parameters,
 * so the decoder applies its defaults; other inputs are returned as they are. Apply it to a tool_use's input when
 * the tool was sent strict.
 *
 * @since 0.2.0
 * @category input
 */
export const restoreOmitted = (definition: Definition.Any, input: unknown): unknown =>
  Either.match(strictOf(definition), {
    onLeft: () => input,
    onRight: (rewrite) => Providers.restoreOmitted(input, rewrite)
  })

/**
 * Estimated tokens of a value sent to a model: its JSON text's length divided by 4, rounded up. See the module
 * documentation for how far off it is.
 *
 * @since 0.2.0
 * @category budget
 */
export const estimateTokens = (value: unknown): number =>
  Math.ceil((typeof value === "string" ? value : JSON.stringify(value) ?? "").length / 4)

/**
 * The providers' tool-name rule: `^[a-zA-Z0-9_-]{1,64}$`.
 *
 * @since 0.2.0
 * @category validation
 */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/
