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
 * | content            | `path NUL line(:or-)text LF`; `NUL -- LF` between groups; rg's notes about binary files,  |
 * |                    | `path: binary file matches (...) LF` and `path: WARNING: stopped searching binary file    |
 * |                    | after match (...) LF`, which have no NUL                                                   |
 *
 * A note has no NUL, and a path may hold a newline, so a note is told apart by its whole line: a line that is not a
 * record and is not one of these notes would be read as the start of the next record's path (Grep then checks each
 * part of such a path after a newline against the deny rules too).
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
  /** rg's note about a binary file (a match in one given as the target; a search stopped at its NUL byte after a
   * match); `text` is the whole line. */
  | { readonly _tag: "BinaryNotice"; readonly path: string; readonly text: string }

/**
 * rg's `--context-separator`: a NUL (rg expands the escape) and `--`. No path is empty, so no record starts with NUL.
 *
 * @internal
 */
export const contextSeparatorArg = "\\x00--"

const separator: RgRecord = { _tag: "Separator" }

/**
 * The end of rg's notes about binary files, after the path (rg's `write_binary_message`; the byte is printed escaped,
 * `"\\0"`).
 */
const BINARY_NOTE =
  /: (binary file matches|WARNING: stopped searching binary file after match) \(found "[^"\n]{1,12}" byte around offset \d+\)$/

/**
 * Whose notes can come where: rg prints "binary file matches" only for the file it was given (`target`, as rg prints
 * it), and "stopped searching" only right after the matches of the file it stopped in. Without it, any path is taken.
 */
export interface NoteSources {
  readonly target: string
}

/**
 * The note about a binary file that starts at `at`, if one does: the first line before `nul` (or the end of the
 * buffer) that reads as one, about a file it can be about (`sources`; `last` is the path of the record before). A file
 * whose name holds such a line and a newline is not taken for a note: its record goes on to its NUL.
 */
const binaryNote = (
  buffer: string,
  at: number,
  nul: number,
  sources: NoteSources | undefined,
  last: string | undefined
): { readonly line: string; readonly path: string } | undefined => {
  const limit = nul === -1 ? buffer.length : nul
  for (let end = buffer.indexOf("\n", at); end !== -1 && end < limit; end = buffer.indexOf("\n", end + 1)) {
    const line = buffer.slice(at, end)
    const note = BINARY_NOTE.exec(line)
    if (note === null) continue
    const path = line.slice(0, note.index)
    const expected = sources === undefined ? path : note[1] === "binary file matches" ? sources.target : last
    if (path === expected) return { line, path }
  }
  return undefined
}

/**
 * A streaming reader: give it rg's stdout chunk by chunk, it answers the records completed so far. An incomplete
 * record at the end (rg killed mid-line) is never answered.
 *
 * @internal
 */
export const recordReader = (
  mode: "content" | "files_with_matches" | "count",
  sources?: NoteSources
): (chunk: string) => Array<RgRecord> => {
  let buffer = ""
  let last: string | undefined
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
        // Only before the record's NUL: a note has none.
        const note = binaryNote(buffer, at, nul, sources, last)
        if (note !== undefined) {
          records.push({ _tag: "BinaryNotice", path: note.path, text: note.line })
          at += note.line.length + 1
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
      last = buffer.slice(at, nul)
      records.push({ _tag: "Entry", path: last, rest: buffer.slice(nul + 1, end) })
      at = end + 1
    }
    buffer = buffer.slice(at)
    return records
  }
}

/**
 * rg's standard error as its complaints: each starts with `rg: ` at the start of a line and runs to the next one, so
 * a complaint about a path that holds a newline stays whole.
 *
 * @internal
 */
export const complaintsOf = (stderr: string): ReadonlyArray<string> => {
  const text = stderr.trim()
  return text === "" ? [] : text.split(/\n(?=rg: )/)
}

/**
 * Every path a complaint (`rg: <path>: <why>`) could be about: the path may itself hold `: ` or a newline, so each
 * stretch from after `rg: ` or a newline to a `: `, a newline or the end. A complaint is shown only if every one is
 * allowed; one that names no path at all (a multi-line error) names none of them either.
 *
 * @internal
 */
export const complaintPaths = (complaint: string): ReadonlyArray<string> => {
  if (!complaint.startsWith("rg: ")) return [complaint]
  const starts = [4]
  const ends: Array<number> = [complaint.length]
  for (let i = 4; i < complaint.length; i++) {
    if (complaint[i] === "\n") {
      starts.push(i + 1)
      ends.push(i)
    } else if (complaint[i] === ":" && complaint[i + 1] === " ") ends.push(i)
  }
  const paths: Array<string> = []
  for (const start of starts) for (const end of ends) if (end > start) paths.push(complaint.slice(start, end))
  return paths
}
