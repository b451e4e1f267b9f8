/**
 * Rendering a call while the model is still streaming its input (Claude Code renders `renderToolUseMessage` on the
 * partial input, so a person sees "Edit(src/a.ts)" before the diff has arrived).
 *
 * The runtime accepts the pieces of a streamed tool_use ({@link ToolUsePart}: Anthropic's `content_block_start`,
 * `input_json_delta` and `content_block_stop`, or any partial JSON) mixed with complete `ToolUseBlock`s. While a
 * block streams, its JSON so far is parsed with a maintained incremental parser (`partial-json`) and the tool's
 * `renderPartial` turns it into UI blocks, published as `Previewed` events. Nothing is decoded, checked or executed
 * until the block is complete: then its whole text is parsed as JSON and the call goes through the pipeline as any
 * other tool_use.
 *
 * ```ts
 * const handle = yield* ToolRuntime.start(Stream.make(
 *   ToolUsePart.Start({ id: "toolu_1", name: "Edit" }),
 *   ToolUsePart.Delta({ id: "toolu_1", partialJson: "{\"file_path\": \"src/a.ts\", \"old_" }),
 *   ToolUsePart.Delta({ id: "toolu_1", partialJson: "string\": \"a\", \"new_string\": \"b\"}" }),
 *   ToolUsePart.End({ id: "toolu_1" })
 * ))
 * ```
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { Allow, parse } from "partial-json"
import type { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { toText, UiBlock } from "../Tool/Presentation.js"
import type { ToolUseBlock } from "../Tool/Wire.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * One piece of a tool_use the model is still streaming.
 *
 * @since 0.2.0
 * @category models
 */
export type ToolUsePart = Data.TaggedEnum<{
  /** A tool_use block begins (Anthropic `content_block_start` with a `tool_use` block). */
  Start: { readonly id: string; readonly name: string }
  /** More of its input's JSON text (Anthropic `input_json_delta.partial_json`). */
  Delta: { readonly id: string; readonly partialJson: string }
  /** The block is complete (Anthropic `content_block_stop`): now it is decoded, checked and run. */
  End: { readonly id: string }
}>

/**
 * Constructors and matchers for {@link ToolUsePart}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const ToolUsePart = Data.taggedEnum<ToolUsePart>()

/**
 * Whether a value is a {@link ToolUsePart} (rather than a complete tool_use block).
 *
 * @since 0.2.0
 * @category guards
 */
export const isToolUsePart = (u: ToolUseBlock | ToolUsePart): u is ToolUsePart => "_tag" in u

// ---------------------------------------------------------------------------------------------------------------
// parsing
// ---------------------------------------------------------------------------------------------------------------

/**
 * The value of a JSON text that may stop anywhere: every complete part, and the strings, arrays and objects cut
 * short as far as they go. Never throws: `undefined` when nothing can be read yet (an empty text, a lone `-`) or
 * the text is not JSON at all.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parsePartial = (text: string): unknown => {
  if (text.trim() === "") return undefined
  try {
    return parse(text, Allow.ALL)
  } catch {
    return undefined
  }
}

/**
 * The input of a complete block: its whole text as JSON (`{}` when the tool has no parameters and the model sent
 * nothing). A text that is not JSON is kept as it is: decoding then tells the model what is wrong.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseComplete = (text: string): unknown => {
  if (text.trim() === "") return {}
  try {
    return JSON.parse(text) as unknown
  } catch {
    return text
  }
}

// ---------------------------------------------------------------------------------------------------------------
// previews
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a person sees of a streaming call: the tool's `renderPartial` of the input so far. Never throws: an unknown
 * tool, an input that is not an object yet or a renderer that throws show the name alone.
 *
 * @since 0.2.0
 * @category previews
 */
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

/**
 * One preview of a streaming call, for the runtime to publish.
 *
 * @since 0.2.0
 * @category models
 */
export interface Preview {
  readonly toolUseId: string
  readonly name: string
  readonly ui: ReadonlyArray<UiBlock>
  /** The input parsed so far. */
  readonly partialInput: unknown
}

interface Open {
  readonly name: string
  text: string
  shown: string | undefined
  /** How much of the text the last preview parsed. */
  parsed: number
}

/**
 * Whether a block's text has grown enough since its last preview to parse it again: by a quarter of what was
 * parsed (at least one character). The parser reads the whole text each time, so parsing on every delta would cost
 * the square of the input's length (a 200 kB Write in 2,000 deltas); growing geometrically keeps the total linear,
 * while a short input is still parsed on nearly every delta.
 *
 * @since 0.2.0
 * @category previews
 */
export const shouldReparse = (parsed: number, length: number): boolean => length - parsed >= Math.max(1, parsed / 4)

/**
 * Turns a stream of complete blocks and streamed parts into complete blocks, in the order they complete, calling
 * `onPreview` whenever a streaming block's preview changes (with no `onPreview`, nothing is parsed or rendered
 * before a block is complete). A block still open when the stream ends is completed
 * as it stands (the model was cut off: its input is then most likely invalid, and the model is told so).
 *
 * @since 0.2.0
 * @category previews
 */
export const assemble = <E>(
  registry: ToolRegistry["Type"],
  parts: Stream.Stream<ToolUseBlock | ToolUsePart, E>,
  onPreview: ((preview: Preview) => Effect.Effect<void>) | undefined
): Stream.Stream<ToolUseBlock, E> =>
  Stream.suspend(() => {
    const open = new Map<string, Open>()
    const complete = (id: string, block: Open): ToolUseBlock => ({
      type: "tool_use",
      id,
      name: block.name,
      input: parseComplete(block.text)
    })
    const step = (part: ToolUseBlock | ToolUsePart): Effect.Effect<ReadonlyArray<ToolUseBlock>> => {
      if (!isToolUsePart(part)) return Effect.succeed([part])
      switch (part._tag) {
        case "Start": {
          const block: Open = { name: part.name, text: "", shown: undefined, parsed: 0 }
          open.set(part.id, block)
          return Effect.as(show(part.id, block), [])
        }
        case "Delta": {
          const block = open.get(part.id)
          if (block === undefined) return Effect.succeed([])
          block.text += part.partialJson
          return shouldReparse(block.parsed, block.text.length)
            ? Effect.as(show(part.id, block), [])
            : Effect.succeed([])
        }
        case "End": {
          const block = open.get(part.id)
          if (block === undefined) return Effect.succeed([])
          open.delete(part.id)
          return Effect.succeed([complete(part.id, block)])
        }
      }
    }
    /** Publishes the preview when it differs from the last one shown. */
    const show = (id: string, block: Open): Effect.Effect<void> => {
      if (onPreview === undefined) return Effect.void
      block.parsed = block.text.length
      const partialInput = parsePartial(block.text)
      const ui = previewOf(registry, block.name, partialInput)
      const text = toText(ui)
      if (text === block.shown) return Effect.void
      block.shown = text
      return onPreview({ toolUseId: id, name: block.name, ui, partialInput })
    }
    const rest = Stream.suspend(() => {
      const left = [...open].map(([id, block]) => complete(id, block))
      open.clear()
      return Stream.fromIterable(left)
    })
    return Stream.concat(Stream.mapConcatEffect(parts, step), rest)
  })
