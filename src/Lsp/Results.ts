/**
 * Language-server answers as compact text for a model: locations as `path:line:column` (paths relative to the
 * working directory, positions 1-based), a short excerpt of the line, at most {@link limits} entries and a count of
 * the rest. Locations the caller may not show (outside the workspace, in files Read rules deny) are left out and
 * counted, so the model learns that something was withheld but not what.
 *
 * @since 0.3.0
 */
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import type {
  CallHierarchyIncomingCall,
  CallHierarchyItem,
  CallHierarchyOutgoingCall,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  MarkedString,
  MarkupContent,
  Range,
  SymbolInformation,
  WorkspaceSymbol
} from "vscode-languageserver-protocol"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The bounds of a result.
 *
 * @since 0.3.0
 * @category constants
 */
export const limits = {
  /** Entries listed; the rest are counted. */
  maxEntries: 100,
  /** Characters of a hover text. */
  maxHoverChars: 4_000,
  /** Characters of a line excerpt. */
  maxExcerptChars: 160,
  /** Files larger than this get no excerpt. */
  maxExcerptFileBytes: 2 * 1024 * 1024
} as const

/**
 * What a result may show: whether a file may be shown, and how its path is written.
 *
 * @since 0.3.0
 * @category models
 */
export interface Visibility {
  readonly visible: (absolutePath: string) => boolean
  readonly display: (absolutePath: string) => string
}

/**
 * A formatted result: the text for the model, and counts for a person.
 *
 * @since 0.3.0
 * @category models
 */
export interface Formatted {
  readonly text: string
  /** Entries found (visible ones). */
  readonly count: number
  /** Entries left out because the caller may not show them. */
  readonly hidden: number
}

/** One place in a file, 0-based as the protocol has it. */
interface Place {
  readonly path: string
  readonly line: number
  readonly character: number
}

// ---------------------------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------------------------

const symbolKinds = [
  "",
  "File",
  "Module",
  "Namespace",
  "Package",
  "Class",
  "Method",
  "Property",
  "Field",
  "Constructor",
  "Enum",
  "Interface",
  "Function",
  "Variable",
  "Constant",
  "String",
  "Number",
  "Boolean",
  "Array",
  "Object",
  "Key",
  "Null",
  "EnumMember",
  "Struct",
  "Event",
  "Operator",
  "TypeParameter"
]

/**
 * The name of a symbol kind (`5` is `Class`).
 *
 * @since 0.3.0
 * @category formatting
 */
export const kindName = (kind: number): string => symbolKinds[kind] ?? "Symbol"

const pathOf = (uri: string): string | undefined => {
  try {
    return uri.startsWith("file:") ? fileURLToPath(uri) : undefined
  } catch {
    return undefined
  }
}

/** Reads lines of files for excerpts, once per file per result. */
const excerpts = () => {
  const files = new Map<string, ReadonlyArray<string> | undefined>()
  return (place: Place): string => {
    if (!files.has(place.path)) {
      let lines: ReadonlyArray<string> | undefined
      try {
        if (fs.statSync(place.path).size <= limits.maxExcerptFileBytes) {
          lines = fs.readFileSync(place.path, "utf8").split(/\r?\n/)
        }
      } catch {
        lines = undefined
      }
      files.set(place.path, lines)
    }
    const line = files.get(place.path)?.[place.line]?.trim()
    if (line === undefined || line === "") return ""
    return `: ${line.length > limits.maxExcerptChars ? `${line.slice(0, limits.maxExcerptChars)}…` : line}`
  }
}

const position = (place: Place) => `${place.line + 1}:${place.character + 1}`

const comparePlaces = (a: Place, b: Place) =>
  a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line || a.character - b.character

const placeOf = (uri: string, range: Range): Place | undefined => {
  const path = pathOf(uri)
  return path === undefined ? undefined : { path, line: range.start.line, character: range.start.character }
}

/** Splits places into the visible ones (sorted, deduplicated) and a count of the others. */
const partition = (places: ReadonlyArray<Place | undefined>, visibility: Visibility) => {
  const shown: Array<Place> = []
  const seen = new Set<string>()
  let hidden = 0
  for (const place of places) {
    if (place === undefined || !visibility.visible(place.path)) {
      hidden++
      continue
    }
    const key = `${place.path}:${place.line}:${place.character}`
    if (seen.has(key)) continue
    seen.add(key)
    shown.push(place)
  }
  return { shown: shown.sort(comparePlaces), hidden }
}

const hiddenNote = (hidden: number): string =>
  hidden === 0
    ? ""
    : `\n(${hidden} more in files outside the workspace or that you may not read: not shown)`

const bounded = (lines: ReadonlyArray<string>): string =>
  lines.length <= limits.maxEntries
    ? lines.join("\n")
    : `${lines.slice(0, limits.maxEntries).join("\n")}\n  ... and ${lines.length - limits.maxEntries} more`

const plural = (n: number, word: string, words = `${word}s`) => `${n} ${n === 1 ? word : words}`

// ---------------------------------------------------------------------------------------------------------------
// formatting
// ---------------------------------------------------------------------------------------------------------------

/**
 * Definitions or implementations (`Location`, `Location[]` or `LocationLink[]`).
 *
 * @since 0.3.0
 * @category formatting
 */
export const locations = (
  answer: Location | ReadonlyArray<Location | LocationLink> | null | undefined,
  what: { readonly one: string; readonly many: string; readonly at: string },
  visibility: Visibility
): Formatted => {
  const list = answer === null || answer === undefined ? [] : Array.isArray(answer) ? answer : [answer as Location]
  const places = list.map((entry: Location | LocationLink) =>
    "targetUri" in entry
      ? placeOf(entry.targetUri, entry.targetSelectionRange)
      : placeOf(entry.uri, entry.range)
  )
  const { hidden, shown } = partition(places, visibility)
  if (shown.length === 0) {
    return { text: `No ${what.one} found for the symbol at ${what.at}.${hiddenNote(hidden)}`, count: 0, hidden }
  }
  const excerpt = excerpts()
  const lines = shown.map((place) => `  ${visibility.display(place.path)}:${position(place)}${excerpt(place)}`)
  const head = shown.length === 1
    ? `The ${what.one} of the symbol at ${what.at}:`
    : `Found ${shown.length} ${what.many}:`
  return { text: `${head}\n${bounded(lines)}${hiddenNote(hidden)}`, count: shown.length, hidden }
}

/**
 * References, grouped by file.
 *
 * @since 0.3.0
 * @category formatting
 */
export const references = (
  answer: ReadonlyArray<Location> | null | undefined,
  at: string,
  visibility: Visibility
): Formatted => {
  const { hidden, shown } = partition((answer ?? []).map((entry) => placeOf(entry.uri, entry.range)), visibility)
  if (shown.length === 0) {
    return { text: `No references found for the symbol at ${at}.${hiddenNote(hidden)}`, count: 0, hidden }
  }
  const excerpt = excerpts()
  const files = new Set(shown.map((place) => place.path)).size
  const lines = shown.map((place) => `  ${visibility.display(place.path)}:${position(place)}${excerpt(place)}`)
  return {
    text: `Found ${plural(shown.length, "reference")} in ${plural(files, "file")}:\n${bounded(lines)}${
      hiddenNote(hidden)
    }`,
    count: shown.length,
    hidden
  }
}

const markup = (contents: MarkupContent | MarkedString | ReadonlyArray<MarkedString>): string => {
  if (Array.isArray(contents)) return contents.map((part) => markup(part)).join("\n\n")
  if (typeof contents === "string") return contents
  const value = (contents as MarkupContent | { language: string; value: string }).value
  return "language" in contents ? `\`\`\`${contents.language}\n${value}\n\`\`\`` : value
}

/**
 * Hover text (markdown as the server wrote it), bounded.
 *
 * @since 0.3.0
 * @category formatting
 */
export const hover = (answer: Hover | null | undefined, at: string): Formatted => {
  const text = answer === null || answer === undefined ? "" : markup(answer.contents).trim()
  if (text === "") return { text: `No hover information for the symbol at ${at}.`, count: 0, hidden: 0 }
  const cut = text.length > limits.maxHoverChars ? `${text.slice(0, limits.maxHoverChars)}\n(cut)` : text
  return { text: `Hover at ${at}:\n${cut}`, count: 1, hidden: 0 }
}

/**
 * The symbols of one document: nested ones indented under their parent.
 *
 * @since 0.3.0
 * @category formatting
 */
export const documentSymbols = (
  answer: ReadonlyArray<DocumentSymbol | SymbolInformation> | null | undefined,
  file: string
): Formatted => {
  const lines: Array<string> = []
  const walk = (symbol: DocumentSymbol | SymbolInformation, depth: number) => {
    const start = "selectionRange" in symbol ? symbol.selectionRange.start : symbol.location.range.start
    const detail = "detail" in symbol && symbol.detail !== undefined && symbol.detail !== "" ? ` ${symbol.detail}` : ""
    lines.push(
      `${"  ".repeat(depth + 1)}${symbol.name} (${kindName(symbol.kind)})${detail} ${start.line + 1}:${
        start.character + 1
      }`
    )
    if ("children" in symbol) { for (const child of symbol.children ?? []) walk(child, depth + 1) }
  }
  for (const symbol of answer ?? []) walk(symbol, 0)
  if (lines.length === 0) return { text: `No symbols found in ${file}.`, count: 0, hidden: 0 }
  return { text: `${plural(lines.length, "symbol")} in ${file}:\n${bounded(lines)}`, count: lines.length, hidden: 0 }
}

/**
 * Symbols of the workspace matching a query.
 *
 * @since 0.3.0
 * @category formatting
 */
export const workspaceSymbols = (
  answer: ReadonlyArray<SymbolInformation | WorkspaceSymbol> | null | undefined,
  query: string,
  visibility: Visibility
): Formatted => {
  let hidden = 0
  const entries: Array<{ place: Place; line: string }> = []
  for (const symbol of answer ?? []) {
    const place = "range" in symbol.location
      ? placeOf(symbol.location.uri, symbol.location.range)
      : (() => {
        const path = pathOf(symbol.location.uri)
        return path === undefined ? undefined : { path, line: 0, character: 0 }
      })()
    if (place === undefined || !visibility.visible(place.path)) {
      hidden++
      continue
    }
    const container = symbol.containerName === undefined || symbol.containerName === ""
      ? ""
      : ` in ${symbol.containerName}`
    entries.push({
      place,
      line: `  ${symbol.name} (${kindName(symbol.kind)})${container} ${visibility.display(place.path)}:${
        position(place)
      }`
    })
  }
  entries.sort((a, b) => comparePlaces(a.place, b.place))
  if (entries.length === 0) {
    return { text: `No symbols found matching "${query}".${hiddenNote(hidden)}`, count: 0, hidden }
  }
  return {
    text: `Found ${plural(entries.length, "symbol")} matching "${query}":\n${bounded(entries.map((e) => e.line))}${
      hiddenNote(hidden)
    }`,
    count: entries.length,
    hidden
  }
}

const itemLine = (item: CallHierarchyItem, visibility: Visibility): string | undefined => {
  const place = placeOf(item.uri, item.selectionRange)
  if (place === undefined || !visibility.visible(place.path)) return undefined
  return `${item.name} (${kindName(item.kind)}) ${visibility.display(place.path)}:${position(place)}`
}

/**
 * The call-hierarchy items at a position.
 *
 * @since 0.3.0
 * @category formatting
 */
export const callHierarchyItems = (
  items: ReadonlyArray<CallHierarchyItem> | null | undefined,
  at: string,
  visibility: Visibility
): Formatted => {
  const lines = (items ?? []).map((item) => itemLine(item, visibility))
  const shown = lines.filter((line): line is string => line !== undefined).map((line) => `  ${line}`)
  const hidden = lines.length - shown.length
  if (shown.length === 0) {
    return { text: `No call hierarchy item at ${at}.${hiddenNote(hidden)}`, count: 0, hidden }
  }
  return {
    text: `Call hierarchy item${shown.length === 1 ? "" : "s"} at ${at}:\n${bounded(shown)}${hiddenNote(hidden)}`,
    count: shown.length,
    hidden
  }
}

/**
 * Callers (incoming) or callees (outgoing) of an item, each with where the calls are.
 *
 * @since 0.3.0
 * @category formatting
 */
export const calls = (
  direction: "incoming" | "outgoing",
  item: CallHierarchyItem,
  answer: ReadonlyArray<CallHierarchyIncomingCall | CallHierarchyOutgoingCall> | null | undefined,
  visibility: Visibility
): Formatted => {
  let hidden = 0
  const entries: Array<{ place: Place; line: string }> = []
  for (const call of answer ?? []) {
    const other = "from" in call ? call.from : call.to
    const place = placeOf(other.uri, other.selectionRange)
    const line = itemLine(other, visibility)
    if (place === undefined || line === undefined) {
      hidden++
      continue
    }
    // Incoming: the ranges are in the caller; outgoing: in the item itself.
    const at = call.fromRanges.map((range) => `${range.start.line + 1}:${range.start.character + 1}`).join(", ")
    entries.push({ place, line: `  ${line} (${direction === "incoming" ? "calls at" : "called at"} ${at})` })
  }
  entries.sort((a, b) => comparePlaces(a.place, b.place))
  const name = `${item.name} (${kindName(item.kind)})`
  if (entries.length === 0) {
    return {
      text: `${direction === "incoming" ? `No callers of ${name} found` : `No calls from ${name} found`}.${
        hiddenNote(hidden)
      }`,
      count: 0,
      hidden
    }
  }
  const head = direction === "incoming"
    ? `Found ${plural(entries.length, "caller")} of ${name}:`
    : `Found ${plural(entries.length, "call")} from ${name}:`
  return { text: `${head}\n${bounded(entries.map((e) => e.line))}${hiddenNote(hidden)}`, count: entries.length, hidden }
}
