/**
 * Fits a model result into the context budget: results over the limit go whole to the ResultStore and the model
 * gets a preview plus the path; empty results say so explicitly.
 */
import * as Effect from "effect/Effect"
import type { ResultStore } from "../../Session/ResultStore.js"
import type { ToolResultContent } from "../../Tool/Wire.js"
import { contentText } from "../../Tool/Wire.js"

/** What the model gets in place of an empty result. */
export const NO_OUTPUT = "(no output)"

/** A size in human units, from a UTF-8 byte count. */
export const formatSize = (bytes: number): string =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 * 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** The first `max` characters of `text`, cut at the last line break when one falls in the second half. */
export const previewOf = (text: string, max: number): string => {
  if (text.length <= max) return text
  const cut = text.lastIndexOf("\n", max)
  return text.slice(0, cut >= max / 2 ? cut : max)
}

const replaceText = (content: ToolResultContent, text: string): ToolResultContent =>
  typeof content === "string" ? text : [{ type: "text", text }, ...content.filter((block) => block.type !== "text")]

const isEmpty = (content: ToolResultContent): boolean =>
  typeof content === "string"
    ? content.trim() === ""
    : content.every((block) => block.type === "text" && block.text.trim() === "")

/** The budgeted content and, when the full text was stored, its path. */
export interface Budgeted {
  readonly content: ToolResultContent
  readonly persistedPath: string | undefined
}

/**
 * Applies the limit. `limit` is the tool's maxResultChars capped by the runtime's (Infinity: no limit). The wrapped
 * text never exceeds the limit: the preview shrinks to make room for the header.
 */
export const applyBudget = (
  store: ResultStore["Type"],
  toolUseId: string,
  content: ToolResultContent,
  limit: number,
  previewChars: number
): Effect.Effect<Budgeted> => {
  if (isEmpty(content)) return Effect.succeed({ content: NO_OUTPUT, persistedPath: undefined })
  const text = contentText(content)
  if (text.length <= limit) return Effect.succeed({ content, persistedPath: undefined })
  const size = formatSize(Buffer.byteLength(text, "utf8"))
  const fit = (header: string, footer: string) => {
    const room = Math.max(0, Math.min(previewChars, limit - header.length - footer.length))
    return `${header}${previewOf(text, room)}${footer}`
  }
  return store.persist(toolUseId, text).pipe(
    Effect.map((path) => ({
      content: replaceText(
        content,
        fit(
          `<persisted-output>\nOutput too large (${size}). Full output saved to: ${path}\n\nPreview (the beginning):\n`,
          "\n...\n</persisted-output>"
        )
      ),
      persistedPath: path
    })),
    Effect.catchAll((error) =>
      Effect.succeed({
        content: replaceText(
          content,
          fit("", `\n...\n[Output truncated: ${size} in all; the full output could not be saved (${error.message}).]`)
        ),
        persistedPath: undefined
      })
    )
  )
}
