/**
 * PDF text for Read, page by page, as Claude Code reads PDFs: `pages` ("3", "1-5", "10-20"; here also "1-3,7") picks
 * at most {@link maxPagesPerRead} pages; without it a PDF of up to {@link maxPagesWithoutRange} pages is read whole,
 * a longer one must be read in ranges. The text comes from Mozilla's pdf.js (`pdfjs-dist`, its legacy build, which
 * runs on Node 20), loaded only when a PDF is read; fonts are not loaded, nothing is evaluated, and the document is
 * destroyed when the read ends or is interrupted.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { createRequire } from "node:module"
import type * as Pdfjs from "pdfjs-dist/legacy/build/pdf.mjs"

/** Pages one Read may return (Claude Code: "Maximum 20 pages per request"). */
export const maxPagesPerRead = 20
/** Pages a PDF may have to be read without `pages` (Claude Code asks for ranges above 10). */
export const maxPagesWithoutRange = 10
/** Characters of text kept per page; the rest is cut with a note. */
export const maxPageChars = 10_000
/** Bytes of PDF read at most (the Messages API's own limit for a PDF). */
export const maxPdfBytes = 32 * 1024 * 1024

/** One page's text. */
export interface PdfPage {
  readonly page: number
  readonly text: string
  readonly cut: boolean
}

/** The text of the pages read, and how many the document has. */
export interface PdfText {
  readonly totalPages: number
  readonly pages: ReadonlyArray<PdfPage>
}

/**
 * The page numbers a `pages` value names, in order, each once; or why it names none. `total` is the document's page
 * count (a range past it is refused, naming the count).
 */
export const pagesOf = (spec: string, total: number): Either.Either<ReadonlyArray<number>, string> => {
  const parts = spec.split(",").map((part) => part.trim())
  const pages = new Set<number>()
  for (const part of parts) {
    const match = /^(\d+)(?:\s*-\s*(\d+))?$/.exec(part)
    if (match === null) {
      return Either.left(`pages ${JSON.stringify(spec)} is not a page range: write "3", "1-5" or "1-3,7".`)
    }
    const first = Number(match[1])
    const last = match[2] === undefined ? first : Number(match[2])
    if (first < 1 || last < first) {
      return Either.left(`pages ${JSON.stringify(spec)}: pages count from 1, and a range goes up ("2-4", not "4-2").`)
    }
    if (first > total) {
      return Either.left(`pages ${JSON.stringify(spec)}: the document has ${total} page${total === 1 ? "" : "s"}.`)
    }
    for (let page = first; page <= Math.min(last, total); page++) pages.add(page)
  }
  if (pages.size > maxPagesPerRead) {
    return Either.left(
      `pages ${
        JSON.stringify(spec)
      } names more than ${maxPagesPerRead} pages; read at most ${maxPagesPerRead} per call.`
    )
  }
  return Either.right([...pages].sort((a, b) => a - b))
}

/**
 * pdf.js, loaded on first use with `require` of its ES module (Node >= 20.19, which pdfjs-dist needs anyway) rather
 * than `import()`: the CLI runs as one script from V8's code cache, and Node 20 serves no `import()` from such a
 * script. `import.meta.url` is the bundle's own in the CLI, so the package is found from either place.
 */
const loadPdfjs = (): typeof Pdfjs => createRequire(import.meta.url)("pdfjs-dist/legacy/build/pdf.mjs")

const messageOf = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

interface TextItem {
  readonly str?: string
  readonly hasEOL?: boolean
}

/** A page's text items as lines: pdf.js marks the end of a line with `hasEOL`. */
const joinItems = (items: ReadonlyArray<TextItem>): string =>
  items.map((item) => (item.str ?? "") + (item.hasEOL === true ? "\n" : "")).join("").trim()

/**
 * The text of the pages `select` picks (given the page count), or a message saying why none can be read (not a PDF
 * pdf.js can open, encrypted, a range the document does not have).
 */
export const pdfText = (
  bytes: Uint8Array,
  select: (totalPages: number) => Either.Either<ReadonlyArray<number>, string>
): Effect.Effect<PdfText, string> =>
  Effect.gen(function*() {
    const pdfjs = yield* Effect.try({
      try: loadPdfjs,
      catch: (cause) => `the PDF reader (pdfjs-dist) could not be loaded: ${String(cause)}`
    })
    const document = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          pdfjs.getDocument({
            // pdf.js takes the buffer over (detaches it): give it a copy.
            data: new Uint8Array(bytes),
            isEvalSupported: false,
            disableFontFace: true,
            useSystemFonts: false,
            stopAtErrors: false,
            verbosity: 0
          }).promise,
        catch: (cause) => `it is not a PDF that can be read (${messageOf(cause)})`
      }),
      (document) => Effect.promise(() => document.destroy())
    )
    const selected = select(document.numPages)
    if (Either.isLeft(selected)) return yield* Effect.fail(selected.left)
    const pages: Array<PdfPage> = []
    for (const number of selected.right) {
      const text = yield* Effect.tryPromise({
        try: async () => {
          const page = await document.getPage(number)
          try {
            return joinItems((await page.getTextContent()).items as ReadonlyArray<TextItem>)
          } finally {
            page.cleanup()
          }
        },
        catch: (cause) => `page ${number} could not be read (${messageOf(cause)})`
      })
      const cut = text.length > maxPageChars
      pages.push({ page: number, text: cut ? text.slice(0, maxPageChars) : text, cut })
    }
    return { totalPages: document.numPages, pages }
  }).pipe(Effect.scoped)
