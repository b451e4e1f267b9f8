/**
 * What WebFetch makes of a body: its kind (HTML, markdown, JSON, other text, or binary, which is refused), its
 * characters (the charset of the Content-Type, else a byte-order mark, else an HTML `<meta charset>`, else UTF-8),
 * and for HTML, markdown by turndown.
 *
 * HTML conversion is bounded before it starts: the input is capped (`maxHtmlChars`), and a page whose elements nest
 * deeper than {@link MAX_NESTING} (the HTML parser and turndown are both quadratic in nesting depth: 200,000
 * nested `<div>`s take minutes) is not parsed at all but shown as its text with the tags removed.
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import type TurndownService from "turndown"

// ---------------------------------------------------------------------------------------------------------------
// kinds
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a body is, for WebFetch.
 *
 * @since 0.2.0
 * @category models
 */
export type ContentKind = "html" | "markdown" | "json" | "text" | "binary"

/**
 * A parsed Content-Type header.
 *
 * @since 0.2.0
 * @category models
 */
export interface MediaType {
  /** Lower case, without parameters; empty when the header is missing. */
  readonly essence: string
  readonly charset: string | undefined
}

/**
 * Parses a Content-Type header value.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseMediaType = (header: string | undefined): MediaType => {
  if (header === undefined) return { essence: "", charset: undefined }
  const [essence = "", ...params] = header.split(";")
  let charset: string | undefined
  for (const param of params) {
    const [key, value] = param.split("=")
    if (key?.trim().toLowerCase() === "charset" && value !== undefined) {
      charset = value.trim().replace(/^"(.*)"$/, "$1").toLowerCase()
    }
  }
  return { essence: essence.trim().toLowerCase(), charset }
}

const textualApplication: ReadonlySet<string> = new Set([
  "application/javascript",
  "application/ecmascript",
  "application/x-javascript",
  "application/xml",
  "application/x-yaml",
  "application/yaml",
  "application/toml",
  "application/x-sh",
  "application/sql",
  "application/graphql",
  "application/x-www-form-urlencoded",
  "application/rss+xml",
  "application/atom+xml"
])

/**
 * The kind a declared media type names, or `undefined` when nothing is declared (the body is then sniffed).
 * Textual types are a positive list; every other type is binary.
 *
 * @since 0.2.0
 * @category kinds
 */
export const kindOfMediaType = (essence: string): ContentKind | undefined => {
  if (essence === "") return undefined
  if (essence === "text/html" || essence === "application/xhtml+xml") return "html"
  if (essence === "text/markdown" || essence === "text/x-markdown") return "markdown"
  if (essence === "application/json" || essence.endsWith("+json") || essence === "application/x-ndjson") return "json"
  if (essence.startsWith("text/") || essence.endsWith("+xml") || textualApplication.has(essence)) return "text"
  return "binary"
}

/**
 * The kind of an undeclared body, from its first bytes: a NUL byte (outside UTF-16) means binary, a leading
 * `<!doctype html` or `<html` means HTML, anything else is text.
 *
 * @since 0.2.0
 * @category kinds
 */
export const sniffKind = (bytes: Uint8Array): ContentKind => {
  const head = bytes.subarray(0, 1024)
  const utf16 = (head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)
  if (!utf16 && head.includes(0)) return "binary"
  const start = new TextDecoder().decode(head).trimStart().slice(0, 20).toLowerCase()
  return start.startsWith("<!doctype html") || start.startsWith("<html") ? "html" : "text"
}

// ---------------------------------------------------------------------------------------------------------------
// characters
// ---------------------------------------------------------------------------------------------------------------

const bomEncoding = (bytes: Uint8Array): string | undefined => {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8"
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le"
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be"
  return undefined
}

const metaCharset = (bytes: Uint8Array): string | undefined => {
  // Latin-1 keeps every byte one character, so the ASCII of the tag is found whatever the page's encoding.
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 1024))
  const match = /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.-]+)/i.exec(head)
  return match?.[1]?.toLowerCase()
}

/** What windows-1252 has at 0x80-0x9F (the WHATWG index); the rest of it is Latin-1. */
const windows1252High = [
  0x20ac,
  0x81,
  0x201a,
  0x192,
  0x201e,
  0x2026,
  0x2020,
  0x2021,
  0x2c6,
  0x2030,
  0x160,
  0x2039,
  0x152,
  0x8d,
  0x17d,
  0x8f,
  0x90,
  0x2018,
  0x2019,
  0x201c,
  0x201d,
  0x2022,
  0x2013,
  0x2014,
  0x2dc,
  0x2122,
  0x161,
  0x203a,
  0x153,
  0x9d,
  0x17e,
  0x178
]

/**
 * Node 20's TextDecoder decodes windows-1252 (and so `iso-8859-1` and `latin1`, which the Encoding Standard maps to
 * it) as Latin-1, turning 0x80-0x9F into C1 controls: `€`, curly quotes and dashes are lost. This puts them back.
 */
const fixWindows1252 = (text: string): string =>
  text.replace(/[\u0080-\u009f]/g, (c) => String.fromCharCode(windows1252High[c.charCodeAt(0) - 0x80]!))

/**
 * Decoded text and the encoding used.
 *
 * @since 0.2.0
 * @category models
 */
export interface Decoded {
  readonly text: string
  readonly encoding: string
  /** Set when the declared encoding is unknown and UTF-8 was used instead. */
  readonly note: string | undefined
}

/**
 * Decodes a body: a byte-order mark wins (as the Encoding Standard says), then the header's charset, then (for
 * HTML) a `<meta charset>` in the first 1024 bytes, then UTF-8. Unknown labels fall back to UTF-8 with a note.
 *
 * @since 0.2.0
 * @category characters
 */
export const decodeText = (bytes: Uint8Array, declared: string | undefined, kind: ContentKind): Decoded => {
  const label = bomEncoding(bytes) ?? declared ?? (kind === "html" ? metaCharset(bytes) : undefined) ?? "utf-8"
  try {
    const decoder = new TextDecoder(label)
    const text = decoder.decode(bytes)
    return {
      text: decoder.encoding === "windows-1252" ? fixWindows1252(text) : text,
      encoding: decoder.encoding,
      note: undefined
    }
  } catch {
    return {
      text: new TextDecoder().decode(bytes),
      encoding: "utf-8",
      note: `The page declares the unknown charset ${JSON.stringify(label)}; it was read as UTF-8.`
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// HTML
// ---------------------------------------------------------------------------------------------------------------

/**
 * The deepest element nesting WebFetch hands to the HTML parser.
 *
 * @since 0.2.0
 * @category limits
 */
export const MAX_NESTING = 512

/** Elements whose end tag is optional or that have none: they never make the estimate deeper. */
const flatElements: ReadonlySet<string> = new Set([
  "area",
  "base",
  "br",
  "col",
  "embed",
  "hr",
  "img",
  "input",
  "link",
  "meta",
  "source",
  "track",
  "wbr",
  "param",
  "p",
  "li",
  "dt",
  "dd",
  "tr",
  "td",
  "th",
  "option",
  "optgroup",
  "rb",
  "rt",
  "rp",
  "thead",
  "tbody",
  "tfoot",
  "colgroup",
  "caption",
  "html",
  "head",
  "body",
  "!doctype"
])

/**
 * An estimate of the deepest element nesting of an HTML text, from its tags alone (one linear scan): an opening tag
 * of an element that can contain others goes one deeper, a closing tag one up. It reads unclosed formatting
 * elements as nesting, as the parser does.
 *
 * @since 0.2.0
 * @category HTML
 */
export const nestingEstimate = (html: string): number => {
  // `[^<>]` keeps every attempt short: a `<` without its `>` is never scanned past the next `<`.
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^<>]*?(\/?)>/g
  const tags = withoutRawText(html)
  let depth = 0
  let deepest = 0
  for (let match = tag.exec(tags); match !== null; match = tag.exec(tags)) {
    const name = match[2]!.toLowerCase()
    if (flatElements.has(name) || match[3] === "/") continue
    if (match[1] === "/") depth = Math.max(0, depth - 1)
    else if (++depth > deepest) deepest = depth
  }
  return deepest
}

/** The one converter, made when the first page is converted. */
let converter: Promise<TurndownService> | undefined

/**
 * turndown, with domino (its HTML parser), loads with the first page to convert: a session that converts none (an
 * `exec` of one Read) does not pay for them.
 */
const loadConverter = Effect.promise(() =>
  converter ??= import("turndown").then(({ default: Turndown }) => {
    const turndown = new Turndown({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" })
    // Their text is not content, and would leak into the markdown.
    turndown.remove(["script", "style", "noscript", "iframe", "title", "template", "object", "embed"])
    return turndown
  })
)

const entities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

/** Removes the content of script-like elements in one pass (an unclosed one runs to the end, as in a browser). */
const withoutRawText = (html: string): string => {
  const lower = html.toLowerCase()
  const open = /<(script|style|noscript|template|title)\b/g
  let out = ""
  let from = 0
  for (let match = open.exec(lower); match !== null; match = open.exec(lower)) {
    out += html.slice(from, match.index)
    const close = lower.indexOf(`</${match[1]}`, open.lastIndex)
    if (close === -1) return out
    const end = lower.indexOf(">", close)
    from = end === -1 ? lower.length : end + 1
    open.lastIndex = from
  }
  return out + html.slice(from)
}

/**
 * The text of an HTML page with its tags removed: what WebFetch shows when the page cannot be converted safely.
 *
 * @since 0.2.0
 * @category HTML
 */
export const htmlText = (html: string): string =>
  withoutRawText(html)
    .replace(/<[^<>]*>/g, " ")
    .replace(/&(#x?[0-9a-fA-F]+|[a-zA-Z]+);/g, (whole: string, name: string) => {
      if (name.startsWith("#")) {
        const code = name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)
        return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
      }
      return entities[name.toLowerCase()] ?? whole
    })
    .replace(/[ \t\f\v\r]+/g, " ")
    .replace(/\s*\n\s*/g, "\n")
    .trim()

/**
 * HTML converted to markdown, with what happened on the way.
 *
 * @since 0.2.0
 * @category models
 */
export interface Converted {
  readonly markdown: string
  /** Notes for the model: the input was cut, or shown as text. */
  readonly notes: ReadonlyArray<string>
}

/**
 * Converts HTML to markdown with turndown, bounded: the input is cut at `maxHtmlChars` first, and a page nested
 * deeper than {@link MAX_NESTING}, or one turndown fails on, becomes its text without tags.
 *
 * @since 0.2.0
 * @category HTML
 */
export const htmlToMarkdown = (html: string, maxHtmlChars: number): Effect.Effect<Converted> =>
  Effect.suspend(() => {
    const notes: Array<string> = []
    let input = html
    if (input.length > maxHtmlChars) {
      input = input.slice(0, maxHtmlChars)
      notes.push(`The HTML was cut at ${maxHtmlChars} characters before conversion.`)
    }
    const depth = nestingEstimate(input)
    if (depth > MAX_NESTING) {
      notes.push(`The page nests elements about ${depth} deep (more than ${MAX_NESTING}); it is shown as plain text.`)
      return Effect.succeed({ markdown: htmlText(input), notes })
    }
    return Effect.map(loadConverter, (turndown) => {
      try {
        return { markdown: turndown.turndown(input), notes }
      } catch (error) {
        notes.push(
          `The page could not be converted to markdown (${
            error instanceof Error ? error.message : String(error)
          }); it is shown as plain text.`
        )
        return { markdown: htmlText(input), notes }
      }
    })
  })
