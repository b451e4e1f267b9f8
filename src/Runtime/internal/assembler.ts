/**
 * The machinery of `Preview`: parsing a JSON text that may stop anywhere, a tool's preview of it, and the assembler
 * that turns streamed parts into complete tool_use blocks, previewing them as they grow. One assembler per run, fed
 * part by part: by `Preview.assemble` (a stream) and by the runtime's intake from a Mailbox (no stream machinery).
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Allow, parse } from "partial-json"
import type { ToolRegistry } from "../../Catalog/ToolRegistry.js"
import { toText, UiBlock } from "../../Tool/Presentation.js"
import type { ToolUseBlock } from "../../Tool/Wire.js"
import type { Preview, ToolUsePart } from "../Preview.js"

/** @internal */
export const isToolUsePart = (u: ToolUseBlock | ToolUsePart): u is ToolUsePart => "_tag" in u

/** @internal */
export const parsePartial = (text: string): unknown => {
  if (text.trim() === "") return undefined
  try {
    return parse(text, Allow.ALL)
  } catch {
    return undefined
  }
}

/** @internal */
export const parseComplete = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

/** @internal */
export const previewOf = (registry: ToolRegistry["Type"], name: string, partial: unknown): ReadonlyArray<UiBlock> => {
  const fallback = [UiBlock.Title({ text: name })]
  const tool = registry.lookup(name)
  if (Option.isNone(tool)) return fallback
  const value = typeof partial === "object" && partial !== null && !Array.isArray(partial) ? partial : {}
  try {
    return tool.value.service.renderPartial(value)
  } catch {
    return fallback
  }
}

/** @internal */
export const shouldReparse = (parsed: number, length: number): boolean => length - parsed >= Math.max(1, parsed / 4)

interface Open {
  readonly name: string
  text: string
  shown: string | undefined
  /** How much of the text the last preview parsed. */
  parsed: number
}

/**
 * The blocks being streamed, part by part: `step` answers the blocks a part completes (a complete block at once),
 * calling `onPreview` when a streaming block's preview changes; `rest` completes the blocks still open at the end.
 *
 * @internal
 */
export class Assembler {
  private readonly open = new Map<string, Open>()

  constructor(
    private readonly registry: ToolRegistry["Type"],
    private readonly onPreview: ((preview: Preview) => Effect.Effect<void>) | undefined
  ) {}

  step(part: ToolUseBlock | ToolUsePart): Effect.Effect<ReadonlyArray<ToolUseBlock>> {
    if (!isToolUsePart(part)) return Effect.succeed([part])
    switch (part._tag) {
      case "Start": {
        const block: Open = { name: part.name, text: "", shown: undefined, parsed: 0 }
        this.open.set(part.id, block)
        return Effect.as(this.show(part.id, block), [])
      }
      case "Delta": {
        const block = this.open.get(part.id)
        if (block === undefined) return Effect.succeed([])
        block.text += part.partialJson
        return shouldReparse(block.parsed, block.text.length)
          ? Effect.as(this.show(part.id, block), [])
          : Effect.succeed([])
      }
      case "End": {
        const block = this.open.get(part.id)
        if (block === undefined) return Effect.succeed([])
        this.open.delete(part.id)
        return Effect.succeed([complete(part.id, block)])
      }
    }
  }

  /** The blocks still open, completed as they stand (the model was cut off). */
  rest(): ReadonlyArray<ToolUseBlock> {
    const left = [...this.open].map(([id, block]) => complete(id, block))
    this.open.clear()
    return left
  }

  /** Publishes the preview when it differs from the last one shown. */
  private show(id: string, block: Open): Effect.Effect<void> {
    if (this.onPreview === undefined) return Effect.void
    block.parsed = block.text.length
    const partialInput = parsePartial(block.text)
    const ui = previewOf(this.registry, block.name, partialInput)
    const text = toText(ui)
    if (text === block.shown) return Effect.void
    block.shown = text
    return this.onPreview({ toolUseId: id, name: block.name, ui, partialInput })
  }
}

const complete = (id: string, block: Open): ToolUseBlock => ({
  type: "tool_use",
  id,
  name: block.name,
  input: parseComplete(block.text)
})
