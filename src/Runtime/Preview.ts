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
import type * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { UiBlock } from "../Tool/Presentation.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import * as internal from "./internal/assembler.js"

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
export const isToolUsePart: (u: ToolUseBlock | ToolUsePart) => u is ToolUsePart = internal.isToolUsePart

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
export const parsePartial: (text: string) => unknown = internal.parsePartial

/**
 * The input of a complete block: its whole text as JSON (`{}` when the tool has no parameters and the model sent
 * nothing). A text that is not JSON is kept as it is: decoding then tells the model what is wrong.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseComplete: (text: string) => unknown = internal.parseComplete

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
export const previewOf: (
  registry: ToolRegistry["Type"],
  name: string,
  partial: unknown
) => ReadonlyArray<UiBlock> = internal.previewOf

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

/**
 * Whether a block's text has grown enough since its last preview to parse it again: by a quarter of what was
 * parsed (at least one character). The parser reads the whole text each time, so parsing on every delta would cost
 * the square of the input's length (a 200 kB Write in 2,000 deltas); growing geometrically keeps the total linear,
 * while a short input is still parsed on nearly every delta.
 *
 * @since 0.2.0
 * @category previews
 */
export const shouldReparse: (parsed: number, length: number) => boolean = internal.shouldReparse

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
    const assembler = new internal.Assembler(registry, onPreview)
    return Stream.concat(
      Stream.mapConcatEffect(parts, (part) => assembler.step(part)),
      Stream.suspend(() => Stream.fromIterable(assembler.rest()))
    )
  })
