/**
 * One line per call for spinners, status lines and verbose logs ("Edit src/a.ts", "Bash npm test"), and one line
 * for a group of similar calls ("Read ×3: a.ts, b.ts, c.ts"), from each tool's `activity` and `summary` stages.
 *
 * ```ts
 * const line = activityOf(registry, outcome)            // after a call
 * const group = summaryOf(registry, "Read", inputs)     // many calls of one tool
 * ```
 *
 * @since 0.2.0
 */
import * as Option from "effect/Option"
import type { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { Outcome } from "../Tool/Outcome.js"
import { mainArgument } from "../Tool/Tool.js"
import type { ToolUseBlock } from "../Tool/Wire.js"

/**
 * The activity line of a call: of an Outcome (its executed input, else the model's), or of a tool_use. A name the
 * registry does not know, an input the tool cannot read or a stage that throws give the name and its main
 * argument.
 *
 * @since 0.2.0
 * @category utilities
 */
export const activityOf = (registry: ToolRegistry["Type"], call: Outcome | ToolUseBlock): string => {
  const [name, input] = "toolUseId" in call
    ? [call.toolName ?? call.requestedName, call.executedInput ?? call.originalInput]
    : [call.name, call.input]
  const fallback = () => {
    const main = mainArgument(input)
    return main === undefined ? name : `${name} ${main}`
  }
  const tool = registry.lookup(name)
  if (Option.isNone(tool)) return fallback()
  try {
    return tool.value.service.plan(input).activity()
  } catch {
    return fallback()
  }
}

/**
 * The summary line of several calls of one tool, for grouped rendering.
 *
 * @since 0.2.0
 * @category utilities
 */
export const summaryOf = (registry: ToolRegistry["Type"], name: string, inputs: ReadonlyArray<unknown>): string => {
  const tool = registry.lookup(name)
  const fallback = `${name} ×${inputs.length}`
  if (Option.isNone(tool)) return fallback
  try {
    return tool.value.service.summary(inputs)
  } catch {
    return fallback
  }
}
