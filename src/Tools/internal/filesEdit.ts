/**
 * The pure part of Edit: counting and replacing exact occurrences, finding the closest near-match when
 * `old_string` is not found (so the model can correct itself), and the unified diff the user sees.
 *
 * @since 0.1.0
 * @internal
 */
import { createTwoFilesPatch } from "diff"

/** Non-overlapping occurrences of `needle` (non-empty), left to right. */
export const occurrences = (haystack: string, needle: string): ReadonlyArray<number> => {
  const found: Array<number> = []
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at)
  return found
}

/** 1-based line number of a character offset. */
export const lineAt = (text: string, offset: number): number => {
  let line = 1
  for (let at = text.indexOf("\n"); at !== -1 && at < offset; at = text.indexOf("\n", at + 1)) line++
  return line
}

/** The result of applying an edit. */
export interface Applied {
  readonly content: string
  readonly replacements: number
  /** Lines of the new content that hold the replacement text (first occurrence to last). */
  readonly firstLine: number
  readonly lastLine: number
}

/**
 * Replaces the occurrences found at `positions` (as {@link occurrences} gives them) by `replacement`, literally
 * (no `$&` patterns), and says which lines of the result changed.
 */
export const applyAt = (
  content: string,
  needle: string,
  replacement: string,
  positions: ReadonlyArray<number>
): Applied => {
  let result = ""
  let previous = 0
  let firstStart = 0
  let lastEnd = 0
  positions.forEach((at, i) => {
    result += content.slice(previous, at)
    if (i === 0) firstStart = result.length
    result += replacement
    lastEnd = result.length
    previous = at + needle.length
  })
  result += content.slice(previous)
  const firstLine = lineAt(result, firstStart)
  // An empty replacement changes the line it was on; otherwise the last line holding replacement text.
  const lastLine = Math.max(firstLine, lineAt(result, Math.max(firstStart, lastEnd - 1)))
  return { content: result, replacements: positions.length, firstLine, lastLine }
}

// ---------------------------------------------------------------------------------------------------------------
// near matches
// ---------------------------------------------------------------------------------------------------------------

/** A passage of the file close to what the model asked for. */
export interface NearMatch {
  /** 1-based first line of the passage. */
  readonly line: number
  readonly text: string
  /** Whether the passage differs from `old_string` only in whitespace (indentation, trailing spaces, line endings). */
  readonly whitespaceOnly: boolean
  /** 0..1, similarity of the passage to `old_string`. */
  readonly similarity: number
}

const collapse = (text: string): string => text.replace(/\s+/g, " ").trim()

const bigrams = (text: string): Map<string, number> => {
  const counts = new Map<string, number>()
  for (let i = 0; i < text.length - 1; i++) {
    const gram = text.slice(i, i + 2)
    counts.set(gram, (counts.get(gram) ?? 0) + 1)
  }
  return counts
}

/** Sørensen–Dice similarity of two strings' character bigrams. */
const dice = (a: Map<string, number>, aSize: number, b: string): number => {
  if (aSize === 0 || b.length < 2) return 0
  let shared = 0
  const seen = new Map<string, number>()
  for (let i = 0; i < b.length - 1; i++) {
    const gram = b.slice(i, i + 2)
    const used = seen.get(gram) ?? 0
    if (used < (a.get(gram) ?? 0)) shared++
    seen.set(gram, used + 1)
  }
  return (2 * shared) / (aSize + b.length - 1)
}

/** Files longer than this are not searched for near-matches (the search is quadratic-ish). */
const maxNearMatchLines = 20_000

/**
 * The passage of `content` (same number of lines as `needle`) most like `needle`: first one that differs only in
 * whitespace, else the most similar by character bigrams when similar enough (>= 0.5). Undefined when nothing is close.
 */
export const nearMatch = (content: string, needle: string): NearMatch | undefined => {
  const lines = content.split("\n")
  if (lines.length > maxNearMatchLines || needle.trim() === "") return undefined
  const span = Math.max(1, needle.replace(/\n+$/, "").split("\n").length)
  const target = collapse(needle)
  const grams = bigrams(target)
  const gramCount = Math.max(0, target.length - 1)
  let best: NearMatch | undefined
  const windows = Math.max(1, lines.length - span + 1)
  for (let i = 0; i < windows; i++) {
    const window = lines.slice(i, i + span).join("\n")
    const collapsed = collapse(window)
    // Equal once whitespace is collapsed: the model got indentation, spacing or line endings wrong.
    if (target.length > 0 && collapsed.includes(target)) {
      return { line: i + 1, text: window, whitespaceOnly: true, similarity: 1 }
    }
    const similarity = dice(grams, gramCount, collapsed)
    if (similarity >= 0.5 && (best === undefined || similarity > best.similarity)) {
      best = { line: i + 1, text: window, whitespaceOnly: false, similarity }
    }
  }
  return best
}

/** The model-facing hint for a near-match: where, how close, and the passage with line numbers. */
export const describeNearMatch = (match: NearMatch): string => {
  const numbered = match.text
    .split("\n")
    .slice(0, 12)
    .map((line, i) => `${String(match.line + i).padStart(6)}\t${line}`)
    .join("\n")
  const how = match.whitespaceOnly
    ? "differs from old_string only in whitespace (indentation, spacing or line endings)"
    : `is the closest match (${Math.round(match.similarity * 100)}% similar)`
  return `The passage at line ${match.line} ${how}:\n${numbered}`
}

// ---------------------------------------------------------------------------------------------------------------
// diffs
// ---------------------------------------------------------------------------------------------------------------

/** A unified diff of one file, without the `Index:`/`===` preamble. */
export const unifiedDiff = (path: string, before: string, after: string): string => {
  const patch = createTwoFilesPatch(path, path, before, after, undefined, undefined, { context: 3 })
  return patch.split("\n").filter((line) => !line.startsWith("=====") && !line.startsWith("Index:")).join("\n")
    .trimEnd()
}
