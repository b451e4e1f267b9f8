/**
 * The protocol's default renderings: model text of an output or a failure, the main argument of an input, and the
 * activity, summary and partial-input lines built from it.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import { UiBlock } from "../Presentation.js"
import type { Binding, ServiceOptions, StageOptions, Stages } from "../Tool.js"
import type { ToolResultContent } from "../Wire.js"

/** @internal */
export const defaultToModel = (output: unknown): ToolResultContent => {
  if (typeof output === "string") return output
  if (output === undefined || output === null) return ""
  return JSON.stringify(output, null, 2) ?? String(output)
}

/** @internal */
export const defaultRenderFailure = (failure: unknown): string => {
  if (typeof failure === "string") return failure
  if (typeof failure === "object" && failure !== null && "message" in failure && typeof failure.message === "string") {
    return failure.message
  }
  return JSON.stringify(failure) ?? String(failure)
}

/** The input fields that usually say what a call is about, most telling first. */
const mainFields = ["file_path", "path", "notebook_path", "command", "url", "pattern", "query", "prompt"] as const

/**
 * The argument that says what a call is about (a path, a command, a URL), on one short line: one of the usual field
 * names, else the first string field. Works on partial inputs too. Undefined when there is none.
 *
 * @internal
 */
export const mainArgument = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return undefined
  const record = input as Record<string, unknown>
  let found: string | undefined = undefined
  for (const field of mainFields) {
    const value = record[field]
    if (typeof value === "string" && value.length > 0) {
      found = value
      break
    }
  }
  if (found === undefined) {
    for (const value of Object.values(record)) {
      if (typeof value === "string" && value.length > 0) {
        found = value
        break
      }
    }
  }
  if (found === undefined) return undefined
  const line = found.split("\n", 1)[0]!
  return line.length > 80 ? `${line.slice(0, 79)}…` : line
}

/** @internal */
export const defaultActivity = (name: string) => (input: unknown): string => {
  const main = mainArgument(input)
  return main === undefined ? name : `${name} ${main}`
}

/** @internal */
export const defaultSummary = (name: string) => (inputs: ReadonlyArray<unknown>): string => {
  if (inputs.length === 1) return defaultActivity(name)(inputs[0])
  const mains = inputs.flatMap((input) => mainArgument(input) ?? [])
  const shown = mains.slice(0, 3).join(", ")
  const more = mains.length > 3 ? `, +${mains.length - 3} more` : ""
  return `${name} ×${inputs.length}${shown === "" ? "" : `: ${shown}${more}`}`
}

/** @internal */
export const defaultRenderPartial = (name: string) => (partial: unknown): ReadonlyArray<UiBlock> => {
  const main = mainArgument(partial)
  return [UiBlock.Title({ text: main === undefined ? name : `${name}(${main})` })]
}

/** @internal */
export const resultBlocks = (content: ToolResultContent): ReadonlyArray<UiBlock> => [
  UiBlock.Text({
    text: typeof content === "string"
      ? content
      : content.map((b) => (b.type === "text" ? b.text : "[image]")).join("\n")
  })
]

/** An implementation with its forms merged, as {@link fillDefaults} reads it. */
export type AnyImplementation<Input, Output, Failure> =
  & ServiceOptions<Input, Output, Failure>
  & StageOptions<Input, Output, Failure>
  & Partial<Pick<Stages<Input, Output, Failure>, "call" | "checkPermissions">>
  & { readonly plan?: (input: Input) => Binding<Input, Output, Failure> }

/** @internal */
export const passthrough = Effect.succeed({ _tag: "Passthrough" } as const)

/** @internal */
export const noCall = (name: string) => (): never => {
  throw new TypeError(`Tool ${name} has neither a call nor a plan that binds one`)
}
