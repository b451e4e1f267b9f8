/**
 * What a person is shown of a Write or Edit before approving it: the content of a new file, or the diff against the
 * file as it is now, bounded to a screenful with "N more lines" (and "N more characters" for one huge line), so the
 * prompt shows what will change instead of just the path.
 *
 * @since 0.2.0
 * @internal
 */
import * as fs from "node:fs"

/** Lines of content or diff shown. */
export const previewLines = 40

/** Characters shown in all (a minified file is one line). */
export const previewChars = 8_000

/** Files up to this size are read to show a diff; larger ones show the new content. */
export const previewFileBytes = 1024 * 1024

/** The first {@link previewLines} lines (at most {@link previewChars} characters), saying how much was left out. */
export const boundPreview = (text: string, maxLines = previewLines, maxChars = previewChars): string => {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  let kept = lines.slice(0, maxLines).join("\n")
  const notes: Array<string> = []
  if (lines.length > maxLines) notes.push(`… ${lines.length - maxLines} more line${lines.length - maxLines === 1 ? "" : "s"}`)
  if (kept.length > maxChars) {
    notes.unshift(`… ${kept.length - maxChars} more characters`)
    kept = kept.slice(0, maxChars)
  }
  return notes.length === 0 ? kept : `${kept}\n${notes.join("\n")}`
}

/** A regular file's text when it is at most {@link previewFileBytes}, else undefined (missing, special, large, unreadable). */
export const readForPreview = (real: string): string | undefined => {
  if (/^\/(proc|dev|sys)(\/|$)/.test(real)) return undefined
  try {
    const stat = fs.statSync(real)
    if (!stat.isFile() || stat.size > previewFileBytes) return undefined
    return fs.readFileSync(real, "utf8")
  } catch {
    return undefined
  }
}
