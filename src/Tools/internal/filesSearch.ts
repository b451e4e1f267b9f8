/**
 * Grep's search in JavaScript, through {@link FileAccess}: what runs when the file system is not the host's (the
 * memory layer, a user's own), where ripgrep cannot see the files. It answers in ripgrep's own records
 * (`internal/filesRipgrep`), with ripgrep's paths, so Grep puts the output together the same way on both paths.
 *
 * What it does as ripgrep does (Grep's flags): `.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude` in the
 * walk, ranked as rg ranks them; hidden files searched, `.git` left out, symlinks met in the walk not followed;
 * `--glob`s decide before ignore files (a whitelist glob overrides them, as rg's "always overrides any other ignore
 * logic"), anchored at the working directory; `--type` from rg's own table; a file given as the target is searched
 * whatever the rules say; a walked file with a NUL byte is binary and skipped, a binary target answers "binary file
 * matches"; lines over 500 bytes are cut with rg's note; `-i`, `-o`, context, multiline (`.` matches newlines, `^`/`$`
 * at line ends).
 *
 * The pattern is rg's (Rust's regex syntax), read as rg reads it (`internal/filesRegex`): a pattern that cannot be is
 * refused with a parse error, never searched another way.
 *
 * Where it differs: ignore files above the workspace root are not read; binary files are told by a NUL byte anywhere
 * (rg stops at one after printing the matches before it), and UTF-16 files are not transcoded.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import picomatch from "picomatch"
import type { FileAccess } from "../../Session/FileAccess.js"
import { isWithin } from "../../Session/Workspace.js"
import { ripgrepIgnoreFiles } from "./filesIgnore.js"
import { picomatchGlob } from "./filesPaths.js"
import { canMatchNewline, compilePattern } from "./filesRegex.js"
import type { RgRecord } from "./filesRipgrep.js"
import { walk } from "./filesWalk.js"
import type { WalkEntry } from "./filesWalk.js"
import { ripgrepTypes } from "./ripgrepTypes.js"

/** The part of Grep's input the search reads. */
export interface SearchInput {
  readonly pattern: string
  readonly mode: "content" | "files_with_matches" | "count"
  readonly glob?: string | undefined
  readonly type?: string | undefined
  readonly ignoreCase: boolean
  readonly onlyMatching: boolean
  readonly multiline: boolean
  readonly before: number
  readonly after: number
}

/** Where to search. */
export interface SearchTarget {
  /** The file or directory, symlinks resolved. */
  readonly real: string
  /** As ripgrep is given it (and prints it): relative to `cwd` when inside, else absolute. */
  readonly shown: string
  readonly isDirectory: boolean
  readonly cwd: string
  /** Ignore files apply from here down. */
  readonly top: string
}

/** What a search ended with: ripgrep's complaints, one a line (`rg: path: why`). */
export interface SearchEnd {
  readonly complaints: ReadonlyArray<string>
}

/** rg's `--max-columns` as Grep sets it. */
const maxColumns = 500
const omitted = " [... omitted end of long line]"
/** rg's note for a match cut short under -o (the other matches of its line are entries of their own). */
const moreMatches = " [... 0 more matches]"

/** rg's `--glob`s as an override: the last glob that matches decides; a whitelist leaves out files no glob names. */
const globOverride = (globs: ReadonlyArray<string>, cwd: string) => {
  const compiled = globs.map((glob) => {
    const negated = glob.startsWith("!")
    let body = negated ? glob.slice(1) : glob
    const directoryOnly = body.endsWith("/")
    if (directoryOnly) body = body.slice(0, -1)
    const anchored = body.includes("/")
    const matcher = picomatch(picomatchGlob(anchored ? body.replace(/^\//, "") : body), { dot: true })
    return { negated, directoryOnly, anchored, matcher }
  })
  const whitelists = compiled.filter((glob) => !glob.negated).length
  return (entry: WalkEntry): "skip" | "keep" | undefined => {
    const isDirectory = entry.type === "Directory"
    const anchoredPath = isWithin(cwd, entry.path) ? nodePath.relative(cwd, entry.path) : entry.path
    for (let i = compiled.length - 1; i >= 0; i--) {
      const glob = compiled[i]!
      if (glob.directoryOnly && !isDirectory) continue
      if (glob.matcher(glob.anchored ? anchoredPath : entry.name)) return glob.negated ? "skip" : "keep"
    }
    return !isDirectory && whitelists > 0 ? "skip" : undefined
  }
}

/**
 * The globs of one of rg's file types; `all` is every type's (rg's own name for "any file of a known type"). Only the
 * table's own names: `constructor` or `__proto__` is no type.
 */
const typeGlobsOf = (type: string): ReadonlyArray<string> | undefined =>
  type === "all"
    ? Object.values(ripgrepTypes).flat()
    : Object.hasOwn(ripgrepTypes, type)
    ? ripgrepTypes[type]
    : undefined

/** 1-based line numbers of the lines a match spans, as ranges. */
interface Span {
  readonly first: number
  readonly last: number
  /** The matched text (for -o). */
  readonly text: string
}

/** Where each line starts, for turning offsets into line numbers. */
const lineStarts = (text: string): Array<number> => {
  const starts = [0]
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1)
  return starts
}

/** The 1-based line holding `offset`. */
const lineAt = (starts: ReadonlyArray<number>, offset: number): number => {
  let low = 0
  let high = starts.length - 1
  while (low < high) {
    const mid = (low + high + 1) >> 1
    if (starts[mid]! <= offset) low = mid
    else high = mid - 1
  }
  return low + 1
}

/** The position after the character at `index`: past both halves of a surrogate pair (an emoji is one character). */
const nextIndex = (text: string, index: number): number => {
  const code = text.charCodeAt(index)
  return code >= 0xd800 && code <= 0xdbff && index + 1 < text.length ? index + 2 : index + 1
}

/** Whether `index` falls between the two halves of a surrogate pair: inside a character, where nothing matches. */
const insidePair = (text: string, index: number): boolean => {
  const before = text.charCodeAt(index - 1)
  const at = text.charCodeAt(index)
  return before >= 0xd800 && before <= 0xdbff && at >= 0xdc00 && at <= 0xdfff
}

/**
 * The matches of a global pattern in a text, as Rust's regex iterates them (and so rg): an empty match right where
 * the previous one ended is not a match, and none starts inside a character (V8 tries look-arounds between the halves
 * of a surrogate pair even under the `u` flag).
 */
function* matchesIn(text: string, regex: RegExp): Generator<RegExpExecArray> {
  regex.lastIndex = 0
  let lastEnd = -1
  for (let match = regex.exec(text); match !== null; match = regex.exec(text)) {
    const empty = match[0].length === 0
    if (empty) regex.lastIndex = nextIndex(text, match.index)
    if (insidePair(text, match.index) || (empty && match.index === lastEnd)) continue
    lastEnd = match.index + match[0].length
    yield match
  }
}

/** The matches of a file, as spans of lines. */
const spansOf = (text: string, lines: ReadonlyArray<string>, regex: RegExp, multiline: boolean): Array<Span> => {
  const spans: Array<Span> = []
  if (multiline) {
    const starts = lineStarts(text)
    for (const match of matchesIn(text, regex)) {
      const first = lineAt(starts, match.index)
      const end = match.index + match[0].length
      // A match ending with a newline ends on the line that newline closes.
      const last = end > match.index ? lineAt(starts, end - 1) : first
      if (first <= lines.length) spans.push({ first, last: Math.min(last, lines.length), text: match[0] })
    }
    return spans
  }
  lines.forEach((line, i) => {
    for (const match of matchesIn(line, regex)) spans.push({ first: i + 1, last: i + 1, text: match[0] })
  })
  return spans
}

const decoder = new TextDecoder()
// Made on the first long line: building a grapheme segmenter loads ICU's break rules, about 16 ms, which every start
// of the CLI paid at load (this module is loaded with the tools) though most runs never cut a line.
let graphemes: Intl.Segmenter | undefined

/**
 * A line (or with -o, a match) as rg prints it under `--max-columns 500 --max-columns-preview`: one over 500 bytes is
 * cut after its first 500 characters as a person sees them (grapheme clusters: `é` written as `e` and an accent is
 * one), never inside one, with rg's note.
 */
const capped = (line: string, onlyMatching = false): string => {
  if (line.length <= maxColumns / 4 || Buffer.byteLength(line) <= maxColumns) return line
  let end = 0
  let count = 0
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" })
  for (const { index, segment } of graphemes.segment(line)) {
    if (count === maxColumns) break
    end = index + segment.length
    count++
  }
  return `${line.slice(0, end)}${onlyMatching ? moreMatches : omitted}`
}

/** The records of one file's matches (none when it has none). */
const recordsOf = (
  input: SearchInput,
  shown: string,
  text: string,
  regex: RegExp
): Array<RgRecord> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  const spans = spansOf(text, lines, regex, input.multiline)
  if (spans.length === 0) return []
  if (input.mode === "files_with_matches") return [{ _tag: "Entry", path: shown, rest: "" }]
  // Matched lines, and the groups of them (a match spanning lines, or several on one line, is one group).
  const matched = new Set<number>()
  let groups = 0
  let groupEnd = 0
  for (const span of spans) {
    if (span.first > groupEnd) groups++
    groupEnd = Math.max(groupEnd, span.last)
    for (let line = span.first; line <= span.last; line++) matched.add(line)
  }
  if (input.mode === "count") {
    const counted = input.multiline && canMatchNewline(regex) ? spans.length : groups
    return [{ _tag: "Entry", path: shown, rest: String(counted) }]
  }
  const printed = new Set<number>()
  for (const line of matched) {
    for (let n = Math.max(1, line - input.before); n <= Math.min(lines.length, line + input.after); n++) printed.add(n)
  }
  const byLine = new Map<number, Array<Span>>()
  for (const span of spans) byLine.set(span.first, [...(byLine.get(span.first) ?? []), span])
  const records: Array<RgRecord> = []
  const withContext = input.before > 0 || input.after > 0
  let previous = 0
  for (const n of [...printed].sort((a, b) => a - b)) {
    if (withContext && previous > 0 && n > previous + 1) records.push({ _tag: "Separator" })
    previous = n
    const line = lines[n - 1]!
    if (!matched.has(n)) {
      records.push({ _tag: "Entry", path: shown, rest: `${n}-${capped(line)}` })
      continue
    }
    if (!input.onlyMatching) {
      records.push({ _tag: "Entry", path: shown, rest: `${n}:${capped(line)}` })
      continue
    }
    // An empty match is an entry of its own, as rg prints it (`n:`); a match of newlines alone prints nothing.
    for (const span of byLine.get(n) ?? []) {
      span.text.split("\n").forEach((part, i) => {
        if (part !== "" || span.text === "") {
          records.push({ _tag: "Entry", path: shown, rest: `${n + i}:${capped(part, true)}` })
        }
      })
    }
  }
  return records
}

/**
 * The order of a depth-first walk that takes each directory's entries by name, as rg's `--sort path` prints files:
 * path parts compared in turn, so "d/e.ts" (part "d") comes before "d.ts"; names by code point, the order of their
 * UTF-8 bytes, which rg compares.
 */
const depthFirst = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return byCodePoint(a[i]!, b[i]!)
  }
  return a.length - b.length
}

/**
 * Strings by code point. UTF-16 code units agree except where a surrogate (half of a code point above U+FFFF) meets a
 * unit from U+E000 to U+FFFF: the surrogate's code point is the greater one.
 */
const byCodePoint = (a: string, b: string): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    const xSurrogate = x >= 0xd800 && x <= 0xdfff
    const ySurrogate = y >= 0xd800 && y <= 0xdfff
    return xSurrogate === ySurrogate ? x - y : xSurrogate ? 1 : -1
  }
  return a.length - b.length
}

/**
 * Searches `target` for `input.pattern`, handing each record to `take` in order; `take` answers false when it has
 * enough (the search stops). Fails with a model-facing message for a bad pattern or an unknown type.
 */
export const search = (
  access: FileAccess["Type"],
  input: SearchInput,
  target: SearchTarget,
  take: (record: RgRecord) => boolean
): Effect.Effect<SearchEnd, string> =>
  Effect.gen(function*() {
    const regex = compilePattern(input.pattern, {
      ignoreCase: input.ignoreCase,
      multiline: input.multiline,
      global: true
    })
    if (typeof regex === "string") return yield* Effect.fail(regex)
    const typeGlobs = input.type === undefined ? undefined : typeGlobsOf(input.type)
    if (input.type !== undefined && typeGlobs === undefined) {
      return yield* Effect.fail(`unrecognized file type: ${input.type}`)
    }
    const typeMatches = typeGlobs === undefined ? undefined : picomatch([...typeGlobs], { dot: true })
    const globs = ["!.git", ...(input.glob?.split(/\s+/).filter((glob) => glob !== "") ?? [])]
    const complaints: Array<string> = []
    const files: Array<{ readonly path: string; readonly shown: string }> = []
    if (!target.isDirectory) {
      files.push({ path: target.real, shown: target.shown })
    } else {
      const override = globOverride(globs, target.cwd)
      const walked = yield* walk(access, {
        root: target.real,
        top: target.top,
        ignoreFiles: ripgrepIgnoreFiles,
        override: (entry) => {
          const verdict = override(entry)
          if (verdict !== undefined || entry.type === "Directory" || typeMatches === undefined) return verdict
          return typeMatches(entry.name) ? undefined : "skip"
        }
      }).pipe(Effect.mapError((error) => `rg: ${target.shown}: ${error.message}`))
      for (const error of walked.unreadable) complaints.push(`rg: ${error.path}: ${error.message}`)
      const prefix = target.shown === "." ? "./" : target.shown.endsWith("/") ? target.shown : `${target.shown}/`
      // The walk goes level by level; rg (`--sort path`) goes depth first, each directory's entries by name.
      const found = walked.entries.filter((entry) => entry.type === "File").map((entry) => ({
        entry,
        parts: entry.relative.split("/")
      }))
      for (const { entry } of found.sort((a, b) => depthFirst(a.parts, b.parts))) {
        files.push({ path: entry.path, shown: `${prefix}${entry.relative}` })
      }
    }
    // With context, rg separates the groups of different files too.
    const separatesFiles = input.mode === "content" && (input.before > 0 || input.after > 0)
    let printedBefore = false
    for (const file of files) {
      const read = yield* Effect.either(Effect.scoped(
        Effect.flatMap(access.openRead(file.path), (handle) => handle.read(0, handle.info.size))
      ))
      if (read._tag === "Left") {
        complaints.push(`rg: ${file.shown}: ${read.left.message}`)
        continue
      }
      const bytes = read.right
      const nul = bytes.indexOf(0)
      if (nul !== -1 && target.isDirectory) continue
      const records = recordsOf(input, file.shown, decoder.decode(bytes), regex)
      const binary = nul !== -1 && input.mode === "content" && records.length > 0
      const answered: ReadonlyArray<RgRecord> = binary
        ? [{
          _tag: "BinaryNotice",
          path: file.shown,
          text: `${file.shown}: binary file matches (found "\\0" byte around offset ${nul})`
        }]
        : records
      if (answered.length === 0) continue
      if (separatesFiles && printedBefore && !take({ _tag: "Separator" })) return { complaints }
      printedBefore = true
      for (const record of answered) if (!take(record)) return { complaints }
    }
    return { complaints }
  })
