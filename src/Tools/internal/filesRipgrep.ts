/**
 * Reading ripgrep's output as records, so every entry is tied to the file it came from whatever that file is called
 * (`a:1:b.ts`, `x-2-y`, even a name with a newline). rg runs with `--null` (each printed path is followed by a NUL
 * byte) and with {@link contextSeparatorArg} (a context separator that starts with NUL, which no path can), so a
 * record's path is exactly what precedes its NUL:
 *
 * | output mode        | records                                                                            |
 * |--------------------|------------------------------------------------------------------------------------|
 * | files_with_matches | `path NUL`                                                                         |
 * | count              | `path NUL count LF`                                                                |
 * | content            | `path NUL line(:or-)text LF`; `NUL -- LF` between groups; for a binary file given as the
 * target, `path: binary file matches (...) LF` |
 *
 * @since 0.1.0
 * @internal
 */

/**
 * One record of rg's output.
 *
 * @internal
 */
export type RgRecord =
  /** A file (files_with_matches), a file's count (count), or one line of a file (content). */
  | { readonly _tag: "Entry"; readonly path: string; readonly rest: string }
  /** Between non-adjacent groups of lines (content mode with context). */
  | { readonly _tag: "Separator" }
  /** rg's note that a binary file given as the target matches; `text` is the whole line. */
  | { readonly _tag: "BinaryNotice"; readonly path: string; readonly text: string }

/**
 * rg's `--context-separator`: a NUL (rg expands the escape) and `--`. No path is empty, so no record starts with NUL.
 *
 * @internal
 */
export const contextSeparatorArg = "\\x00--"

const separator: RgRecord = { _tag: "Separator" }
const BINARY_NOTICE = ": binary file matches ("

/**
 * A streaming reader: give it rg's stdout chunk by chunk, it answers the records completed so far. An incomplete
 * record at the end (rg killed mid-line) is never answered.
 *
 * @internal
 */
export const recordReader = (mode: "content" | "files_with_matches" | "count"): (chunk: string) => Array<RgRecord> => {
  let buffer = ""
  const lineEnded = mode !== "files_with_matches"
  return (chunk) => {
    buffer += chunk
    const records: Array<RgRecord> = []
    let at = 0
    for (;;) {
      if (at < buffer.length && buffer.charCodeAt(at) === 0) {
        const end = buffer.indexOf("\n", at)
        if (end === -1) break
        records.push(separator)
        at = end + 1
        continue
      }
      const nul = buffer.indexOf("\0", at)
      if (mode === "content") {
        // Only before the record's NUL: a notice line has none.
        const head = buffer.slice(at, nul === -1 ? buffer.length : nul)
        const notice = head.indexOf(BINARY_NOTICE)
        const end = notice === -1 ? -1 : head.indexOf("\n", notice)
        if (end !== -1) {
          records.push({ _tag: "BinaryNotice", path: head.slice(0, notice), text: head.slice(0, end) })
          at += end + 1
          continue
        }
      }
      if (nul === -1) break
      if (!lineEnded) {
        records.push({ _tag: "Entry", path: buffer.slice(at, nul), rest: "" })
        at = nul + 1
        continue
      }
      const end = buffer.indexOf("\n", nul + 1)
      if (end === -1) break
      records.push({ _tag: "Entry", path: buffer.slice(at, nul), rest: buffer.slice(nul + 1, end) })
      at = end + 1
    }
    buffer = buffer.slice(at)
    return records
  }
}

/**
 * The path in one of rg's complaints (`rg: <path>: <why>`), as every place it could end: the path may itself
 * contain `: `.
 *
 * @internal
 */
export const complaintPaths = (line: string): ReadonlyArray<string> => {
  if (!line.startsWith("rg: ")) return []
  const paths: Array<string> = []
  for (let end = line.indexOf(": ", 4); end !== -1; end = line.indexOf(": ", end + 1)) paths.push(line.slice(4, end))
  return paths
}
