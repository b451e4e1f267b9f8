/**
 * What a person is shown of a Write or Edit before approving it: the content of a new file, or the diff against the
 * file as it is now, bounded to a screenful (head and tail) with "N more lines" between (and "N more characters" for
 * one huge line), so the prompt shows what will change instead of just the path.
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

/**
 * At most {@link previewLines} lines (and {@link previewChars} characters) of a text: the first three quarters and
 * the last quarter, with "… N more lines …" between, so the end of a file or diff (where something could hide) is
 * always shown.
 */
export const boundPreview = (text: string, maxLines = previewLines, maxChars = previewChars): string => {
  const lines = text.split("\n")
  if (lines.at(-1) === "") lines.pop()
  const tailCount = Math.floor(maxLines / 4)
  const shown = lines.length <= maxLines
    ? lines
    : [
      ...lines.slice(0, maxLines - tailCount),
      `… ${lines.length - maxLines} more line${lines.length - maxLines === 1 ? "" : "s"} …`,
      ...lines.slice(lines.length - tailCount)
    ]
  const joined = shown.join("\n")
  if (joined.length <= maxChars) return joined
  const tailChars = Math.floor(maxChars / 4)
  return `${joined.slice(0, maxChars - tailChars)}\n… ${joined.length - maxChars} more characters …\n${
    joined.slice(joined.length - tailChars)
  }`
}

/**
 * A regular file's text when it is at most {@link previewFileBytes}, else undefined (missing, special, large,
 * unreadable).
 */
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
