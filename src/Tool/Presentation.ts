/**
 * What a person sees of a tool call: a small vocabulary of UI blocks that a terminal, a web UI or a log can each
 * render its own way. Audit text is derived from the same blocks ({@link toText}), so the searchable transcript
 * never holds text the screen did not show.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"

/**
 * One piece of a call's presentation.
 *
 * @since 0.1.0
 * @category models
 */
export type UiBlock = Data.TaggedEnum<{
  /** A one-line summary, e.g. `Read(src/index.ts)`. */
  Title: { readonly text: string }
  /** Plain prose or output. */
  Text: { readonly text: string }
  /** Code or command output, shown verbatim. */
  Code: { readonly text: string; readonly language?: string | undefined }
  /** A unified diff of one file. */
  Diff: { readonly path: string; readonly patch: string }
  /** Labelled values, e.g. exit code and duration. */
  Fields: { readonly fields: ReadonlyArray<readonly [label: string, value: string]> }
  /** An image; only its description reaches the audit text. */
  Image: { readonly mediaType: string; readonly description: string }
  /** A status line: an error, a denial, an interruption. */
  Notice: { readonly level: "info" | "warning" | "error"; readonly text: string }
}>

/**
 * Constructors and matchers for {@link UiBlock}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const UiBlock = Data.taggedEnum<UiBlock>()

/** One block's plain text (made once: `$match` builds its matcher anew at each use). */
const blockText = UiBlock.$match({
  Title: ({ text }) => text,
  Text: ({ text }) => text,
  Code: ({ text }) => text,
  Diff: ({ patch, path }) => (patch.startsWith("--- ") ? patch : `--- ${path}\n${patch}`),
  Fields: ({ fields }) => fields.map(([label, value]) => `${label}: ${value}`).join("\n"),
  Image: ({ description, mediaType }) => `[image ${mediaType}: ${description}]`,
  Notice: ({ level, text }) => `${level === "info" ? "" : `${level}: `}${text}`
})

/**
 * Renders blocks as plain text: the audit text of a call.
 *
 * @since 0.1.0
 * @category utilities
 */
export const toText = (blocks: ReadonlyArray<UiBlock>): string => {
  let text = ""
  for (let i = 0; i < blocks.length; i++) text += i === 0 ? blockText(blocks[i]!) : `\n${blockText(blocks[i]!)}`
  return text
}
