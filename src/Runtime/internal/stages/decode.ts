/**
 * Stage 1, **decode**: which tool the model named, and the input its schema accepts.
 *
 * Takes a tool_use block. Gives the registered tool ({@link lookup}: by name or alias; {@link availabilityOf}: asked
 * only of tools that define `isEnabled`) and the decoded input ({@link decodeInput}: every issue at once, excess
 * properties refused, numbers sent as strings read as numbers), or the error the model gets back: UnknownTool,
 * ToolDisabled, InvalidInput. Runs before scheduling, and again for an input a hook or a person rewrote.
 */
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import type { RegisteredTool } from "../../../Catalog/ToolRegistry.js"
import * as Errors from "../../../Tool/Errors.js"
import { inputIssues } from "../../../Tool/Errors.js"
import { alwaysEnabled } from "../../../Tool/Tool.js"
import type { Availability } from "../../../Tool/Tool.js"
import type { ToolUseBlock } from "../../../Tool/Wire.js"
import { numericStringsAsNumbers } from "../numericStrings.js"
import type { PipelineEnv } from "./env.js"

/** The tool a tool_use names, by name or alias. */
export const lookup = (env: PipelineEnv, toolUse: ToolUseBlock): Either.Either<RegisteredTool, Errors.UnknownTool> => {
  const tool = env.registry.lookup(toolUse.name)
  return Option.isSome(tool)
    ? Either.right(tool.value)
    : Either.left(new Errors.UnknownTool({ name: toolUse.name, suggestions: env.registry.suggest(toolUse.name) }))
}

/** Whether the tool is enabled. Most tools are always enabled: they skip the check (and its Effect) entirely. */
export const availabilityOf = (env: PipelineEnv, tool: RegisteredTool): Effect.Effect<Availability> =>
  tool.service.isEnabled === alwaysEnabled ? alwaysEnabled : env.availability(tool)

/** The error of a tool that is not enabled. */
export const disabled = (tool: RegisteredTool, reason: string): Errors.ToolDisabled =>
  new Errors.ToolDisabled({ tool: tool.definition.name, reason })

const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

type Decoder = (raw: unknown) => Either.Either<unknown, ParseResult.ParseIssue>

/** One decoder per input schema, built on first use: building it is a measurable share of a trivial call. */
const decoders = new WeakMap<object, Decoder>()

/**
 * The input the tool's schema accepts, or one line per issue naming the parameter path. A schema's own filter or
 * transform may throw: the caller makes that a defect.
 */
export const decodeInput = (tool: RegisteredTool, raw: unknown): Either.Either<unknown, Errors.InvalidInput> => {
  const schema = tool.definition.input as Schema.Schema<unknown, unknown>
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = ParseResult.decodeUnknownEither(schema, decodeOptions)
    decoders.set(schema, decode)
  }
  // Numbers as models send them ("offset": "1"), read as Claude Code reads them: see numericStrings.
  const input = numericStringsAsNumbers(schema.ast, raw)
  return Either.mapLeft(
    decode(input),
    (issue) => new Errors.InvalidInput({ tool: tool.definition.name, issues: inputIssues(input, issue) })
  )
}
