/**
 * The `Read` tool (Claude Code's name and parameters: `file_path`, `offset`, `limit`): a text file with `cat -n`
 * line numbers, an image as an image block, anything else refused with what it is.
 *
 * - Bounded by itself (`maxResultChars: Infinity`): 2,000 lines by default, lines over 2,000 characters cut with a
 *   marker, a whole-file read of more than 256 KB refused with a message saying how to read a range.
 * - Ranges are streamed: reading 100 lines in the middle of a 50 MB file holds a 64 KB chunk and the 100 lines.
 * - Device and special files (`/dev/*`, FIFOs, sockets, `/proc/<pid>/fd/*`) are refused from a `stat`, before
 *   anything opens them; directories are refused with a pointer to Glob.
 * - Records what the model saw in {@link FileState} (partial when a range or a cut line hid part of the file).
 *
 * Rule matching (`Read(content)` rules): `validate` rewrites `file_path` to an absolute path, and `matchesRule`
 * resolves symlinks synchronously, matching the rule against both the absolute path and the real target, and a rule
 * that names one file against the file's identity (a hard link of `secret.env` is `secret.env`).
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileAccess from "../Session/FileAccess.js"
import { FileState, hashContent } from "../Session/FileState.js"
import { ResultStore } from "../Session/ResultStore.js"
import { Workspace } from "../Session/Workspace.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { PathString } from "./internal/argumentLimits.js"
import { numberLines, readLines, sniff } from "./internal/filesContent.js"
import { openDecided } from "./internal/filesGuard.js"
import {
  checkFilePath,
  displayPath,
  fileResource,
  plannedRealPath,
  ruleCovers,
  specialFileReason
} from "./internal/filesPaths.js"
import { cellName, cellOutputs, parseNotebook, sourceText } from "./internal/notebook.js"
import { WholeNumber } from "./internal/numbers.js"
import * as Pdf from "./internal/pdf.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// limits
// ---------------------------------------------------------------------------------------------------------------

/**
 * The bounds Read applies to itself.
 *
 * @since 0.1.0
 * @category constants
 */
export const limits = {
  /** Lines returned when `limit` is not given. */
  defaultLines: 2_000,
  /** Longer lines are cut, with a marker. */
  maxLineChars: 2_000,
  /** Largest file read whole (without `offset`/`limit`). */
  maxWholeFileBytes: 256 * 1024,
  /** Largest image returned as an image block. */
  maxImageBytes: 3.75 * 1024 * 1024,
  /** Largest notebook shown cell by cell (its images make it larger than a text file read whole). */
  maxNotebookBytes: 16 * 1024 * 1024
} as const

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * Read's input, as Claude Code names it.
 *
 * @since 0.1.0
 * @category models
 */
export const ReadInput = Schema.Struct({
  file_path: PathString("The absolute path to the file to read"),
  offset: Schema.optional(WholeNumber(0)).annotations({
    description:
      "The line number to start reading from (1-based). Only provide if the file is too large to read at once"
  }),
  limit: Schema.optional(WholeNumber(1)).annotations({
    description: "The number of lines to read. Only provide if the file is too large to read at once."
  }),
  pages: Schema.optional(Schema.String).annotations({
    description: `Page range for PDF files (e.g., "1-5", "3", "10-20"). Only applicable to PDF files. Maximum ` +
      `${Pdf.maxPagesPerRead} pages per request.`
  })
})

/**
 * What Read found.
 *
 * @since 0.1.0
 * @category models
 */
export const ReadOutput = Schema.Union(
  Schema.TaggedStruct("Text", {
    path: Schema.String,
    /** The lines, numbered `cat -n` style. */
    content: Schema.String,
    startLine: Schema.Number,
    lineCount: Schema.Number,
    /** Whether lines follow the window. */
    more: Schema.Boolean
  }),
  Schema.TaggedStruct("Image", {
    path: Schema.String,
    mediaType: Schema.Literal("image/png", "image/jpeg", "image/gif", "image/webp"),
    base64: Schema.String,
    bytes: Schema.Number
  }),
  Schema.TaggedStruct("Pdf", {
    path: Schema.String,
    totalPages: Schema.Number,
    /** Each page read, its text as pdf.js extracts it (`cut` when it was longer than the per-page cap). */
    pages: Schema.Array(Schema.Struct({ page: Schema.Number, text: Schema.String, cut: Schema.Boolean }))
  }),
  Schema.TaggedStruct("Notebook", {
    path: Schema.String,
    /** Each cell with its id (or `cell-N`), its source and its outputs (text, and images as base64). */
    cells: Schema.Array(Schema.Struct({
      id: Schema.String,
      cellType: Schema.String,
      source: Schema.String,
      outputs: Schema.Array(Schema.Union(
        Schema.TaggedStruct("Text", { text: Schema.String }),
        Schema.TaggedStruct("Image", { mediaType: Schema.Literal("image/png", "image/jpeg"), base64: Schema.String })
      ))
    }))
  }),
  Schema.TaggedStruct("Empty", { path: Schema.String }),
  Schema.TaggedStruct("PastEnd", { path: Schema.String, offset: Schema.Number, totalLines: Schema.Number })
)

/**
 * @since 0.1.0
 * @category models
 */
export type ReadOutput = typeof ReadOutput.Type

/**
 * The Read tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Read = Tool.make("Read", {
  description: [
    "Reads a text file, an image or a PDF from the local filesystem. Use it to look at a file before you edit it, " +
    "and whenever you know (or have found with Glob or Grep) the path of a file whose content you need.",
    "- file_path: an absolute path; a relative one is resolved against the working directory.",
    `- Reads up to ${limits.defaultLines} lines from the start by default. For long files pass offset (the line to start at, 1-based) and limit (how many lines); a file over ${
      limits.maxWholeFileBytes / 1024
    } KiB must be read in ranges.`,
    `- Lines longer than ${limits.maxLineChars} characters are cut. Output is numbered like \`cat -n\` (line numbers ` +
    `from 1); the numbers are not part of the file, so leave them out of Edit's old_string.`,
    "- PNG, JPEG, GIF and WebP files come back as images; other binary files (except PDFs) cannot be read.",
    `- PDF files come back as text, page by page. A PDF of more than ${Pdf.maxPagesWithoutRange} pages must be read ` +
    `with pages (e.g. pages: "1-5"), at most ${Pdf.maxPagesPerRead} pages per call.`,
    "- Directories cannot be read: use Glob to list files. Files outside the workspace or protected by rules are " +
    "refused."
  ].join("\n"),
  input: ReadInput,
  output: ReadOutput,
  maxResultChars: Infinity,
  fileAccess: "read",
  // Bounded in time like everything else; a timeout stops the work (the call's signal, or the child process).
  timeout: Duration.minutes(1)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const fail = (message: string) => Effect.fail(new Tool.ToolError({ message }))

const kib = (bytes: number) => `${Math.round(bytes / 1024)} KB`

/**
 * Read's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  Read,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fileState = yield* FileState
    // Optional, so Read alone needs no store: with one, what it saved for this session may be read back.
    const store = Option.getOrUndefined(yield* Effect.serviceOption(ResultStore))
    const access = yield* FileAccess.current
    /** What is at a path, from a stat of its real target (stat only: opening a FIFO would block). */
    const inspect = (path: string) =>
      Effect.flatMap(workspace.resolve(path), (resolved) =>
        Effect.map(access.stat(resolved.real), (stat) => ({
          resolved,
          stat,
          refusal: specialFileReason(resolved, stat)
        })))
    const shown = (absolute: string) => displayPath(absolute, workspace.cwd)

    /** Reads the file the call was decided on (see `openDecided`): from its descriptor, never again by path. */
    const readDecided = (input: typeof ReadInput.Type, planned: string) =>
      Effect.scoped(Effect.gen(function*() {
        const { handle, resolved } = yield* openDecided(access, workspace, input.file_path, planned).pipe(
          Effect.mapError((message) => new Tool.ToolError({ message }))
        )
        const stat = handle.info
        const path = shown(resolved.absolute)
        const real = handle.realPath

        if (stat.size === 0) {
          yield* fileState.record(real, { contentHash: emptyHash, mtimeMs: stat.mtimeMs, size: 0, partial: false })
          return { _tag: "Empty" as const, path }
        }

        const kind = sniff(yield* Effect.mapError(handle.read(0, 8192), ioError(path)))
        if (kind._tag === "Binary" && kind.description === pdfDescription) {
          if (stat.size > Pdf.maxPdfBytes) {
            return yield* fail(
              `The PDF ${path} is ${(stat.size / 1024 / 1024).toFixed(1)} MB, more than the ${
                Pdf.maxPdfBytes / 1024 / 1024
              } MB limit for PDFs.`
            )
          }
          const bytes = Buffer.from(yield* Effect.mapError(handle.read(0, stat.size), ioError(path)))
          const text = yield* Pdf.pdfText(bytes, (total) => selectPages(input.pages, total)).pipe(
            Effect.mapError((reason) => new Tool.ToolError({ message: `Cannot read ${path}: ${reason}` }))
          )
          yield* fileState.record(real, {
            contentHash: hashContent(bytes),
            mtimeMs: stat.mtimeMs,
            size: stat.size,
            partial: text.pages.length < text.totalPages
          })
          return { _tag: "Pdf" as const, path, totalPages: text.totalPages, pages: text.pages }
        }
        const ranged = input.offset !== undefined || input.limit !== undefined
        if (isNotebookName(real) && !ranged && input.pages === undefined && stat.size <= limits.maxNotebookBytes) {
          const bytes = Buffer.from(yield* Effect.mapError(handle.read(0, stat.size), ioError(path)))
          const parsed = parseNotebook(bytes.toString("utf8"))
          // A file named .ipynb that is not a notebook reads as text.
          if ("notebook" in parsed) {
            yield* fileState.record(real, {
              contentHash: hashContent(bytes),
              mtimeMs: stat.mtimeMs,
              size: stat.size,
              partial: false
            })
            const cells = parsed.notebook.json.cells.map((cell, index) => ({
              id: cellName(cell, index),
              cellType: cell.cell_type,
              source: sourceText(cell),
              outputs: cellOutputs(cell)
            }))
            return { _tag: "Notebook" as const, path, cells }
          }
        }
        if (input.pages !== undefined) {
          return yield* fail(
            `pages applies to PDF files only, and ${path} is not one: read it without pages (offset and limit select ` +
              `lines).`
          )
        }
        if (kind._tag === "Binary") {
          return yield* fail(
            `Cannot read ${path}: it is a binary file (${kind.description}). Only text files, PDFs and ` +
              `PNG/JPEG/GIF/WebP images can be read.`
          )
        }
        if (kind._tag === "Image") {
          if (stat.size > limits.maxImageBytes) {
            return yield* fail(
              `The image ${path} is ${(stat.size / 1024 / 1024).toFixed(1)} MB, more than the ${
                limits.maxImageBytes / 1024 / 1024
              } MB limit for images. Resize or compress it first.`
            )
          }
          const bytes = Buffer.from(yield* Effect.mapError(handle.read(0, stat.size), ioError(path)))
          yield* fileState.record(real, {
            contentHash: hashContent(bytes),
            mtimeMs: stat.mtimeMs,
            size: stat.size,
            partial: false
          })
          return {
            _tag: "Image" as const,
            path,
            mediaType: kind.mediaType,
            base64: bytes.toString("base64"),
            bytes: bytes.length
          }
        }

        if (!ranged && stat.size > limits.maxWholeFileBytes) {
          return yield* fail(`${path} grew past ${kib(limits.maxWholeFileBytes)}; read it with offset and limit.`)
        }
        const offset = Math.max(1, input.offset ?? 1)
        const window = yield* Effect.tryPromise({
          try: (signal) =>
            readLines(handle.chunks, {
              offset,
              limit: input.limit ?? limits.defaultLines,
              maxLineChars: limits.maxLineChars,
              signal
            }),
          catch: ioError(path)
        })
        if (window.lines.length === 0 && window.totalLines !== undefined) {
          return { _tag: "PastEnd" as const, path, offset, totalLines: window.totalLines }
        }
        yield* fileState.record(real, {
          contentHash: window.contentHash,
          mtimeMs: stat.mtimeMs,
          size: stat.size,
          partial: offset > 1 || !window.reachedEnd || window.cut
        })
        return {
          _tag: "Text" as const,
          path,
          content: numberLines(window.lines, offset),
          startLine: offset,
          lineCount: window.lines.length,
          more: !window.reachedEnd
        }
      }))

    return {
      // A soft interrupt: a read may be interrupted (Claude Code's default).
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          const { refusal, resolved, stat } = yield* inspect(input.file_path)
          if (refusal !== undefined) return yield* Tool.reject(refusal)
          if (stat === undefined) {
            return yield* Tool.reject(
              `File does not exist: ${resolved.absolute}. Check the path, or use Glob to find the file.`
            )
          }
          if (stat.type === "Directory") {
            return yield* Tool.reject(
              `${resolved.absolute} is a directory, not a file. Use Glob (or ls through Bash) to list it.`
            )
          }
          if (
            input.offset === undefined && input.limit === undefined && stat.size > limits.maxWholeFileBytes &&
            input.pages === undefined && !isPdfName(resolved.absolute) &&
            !(isNotebookName(resolved.absolute) && stat.size <= limits.maxNotebookBytes)
          ) {
            return yield* Tool.reject(
              `File content (${kib(stat.size)}) exceeds the maximum size for reading a whole file (${
                kib(limits.maxWholeFileBytes)
              }). ` +
                "Use the offset and limit parameters to read a range of lines (e.g. offset: 1, limit: 500), or use " +
                "Grep to search for specific content."
            )
          }
          return { ...input, file_path: resolved.absolute }
        }),

      traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
      claims: (input) => [Tool.Claim.read(fileResource(input.file_path, workspace.cwd, workspace.home))],
      // By path (as given and real) and by identity: a hard link of a file a rule names is that file.
      matchesRule: (content, input, context) => ruleCovers(content, input.file_path, context),

      // The real path is bound when the call is planned: the decision is made on it and the call opens exactly it.
      plan: (input) => {
        const planned = plannedRealPath(access, input.file_path, workspace.cwd, workspace.home)
        return {
          checkPermissions: () => checkFilePath(workspace, input.file_path, "Read", store?.owns),
          call: () => readDecided(input, planned)
        }
      },

      renderUse: (input) => [UiBlock.Title({ text: `Read(${shown(input.file_path)}${rangeLabel(input)})` })],
      renderResult: (output) => {
        switch (output._tag) {
          case "Text":
            return [
              UiBlock.Text({
                text: `Read ${output.lineCount} lines (${output.startLine}-${
                  output.startLine + output.lineCount - 1
                }) of ${output.path}`
              })
            ]
          case "Image":
            return [
              UiBlock.Image({ mediaType: output.mediaType, description: `${output.path} (${kib(output.bytes)})` })
            ]
          case "Pdf":
            return [UiBlock.Text({ text: `Read ${pageSpan(output)} of ${output.path}` })]
          case "Notebook":
            return [UiBlock.Text({ text: `Read ${output.cells.length} cells of ${output.path}` })]
          case "Empty":
            return [UiBlock.Notice({ level: "info", text: `${output.path} is empty` })]
          case "PastEnd":
            return [
              UiBlock.Notice({
                level: "warning",
                text: `${output.path} has ${output.totalLines} lines; offset ${output.offset} is past the end`
              })
            ]
        }
      },
      toModel: (output) => {
        switch (output._tag) {
          case "Text": {
            if (!output.more) return output.content
            const next = output.startLine + output.lineCount
            return `${output.content}\n\n(Showing lines ${output.startLine}-${
              next - 1
            }; the file continues. Use offset: ${next} to read on.)`
          }
          case "Image":
            return [{ type: "image", source: { type: "base64", media_type: output.mediaType, data: output.base64 } }]
          case "Pdf":
            return pdfModelText(output)
          case "Notebook":
            return notebookContent(output)
          case "Empty":
            return `The file ${output.path} exists but is empty.`
          case "PastEnd":
            return `The file ${output.path} is shorter than the requested offset (${output.offset}): it has ` +
              `${output.totalLines} lines.`
        }
      }
    }
  })
)

/**
 * Read's behaviour; requires the session's {@link Workspace} and {@link FileState}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Read, make)

const emptyHash = hashContent(new Uint8Array(0))

/** How `sniff` names a PDF. */
const pdfDescription = "PDF document"

const isPdfName = (path: string): boolean => path.toLowerCase().endsWith(".pdf")

const isNotebookName = (path: string): boolean => path.toLowerCase().endsWith(".ipynb")

type NotebookOutput = Extract<ReadOutput, { readonly _tag: "Notebook" }>

/** Each cell as `<cell id="..">` text, its outputs after it: text as text blocks, images as image blocks. */
const notebookContent = (output: NotebookOutput) => {
  if (output.cells.length === 0) return `The notebook ${output.path} has no cells.`
  const blocks: Array<
    | { readonly type: "text"; readonly text: string }
    | {
      readonly type: "image"
      readonly source: {
        readonly type: "base64"
        readonly media_type: "image/png" | "image/jpeg"
        readonly data: string
      }
    }
  > = []
  for (const cell of output.cells) {
    const type = cell.cellType === "code" ? "" : `<cell_type>${cell.cellType}</cell_type>`
    blocks.push({ type: "text", text: `<cell id="${cell.id}">${type}${cell.source}</cell id="${cell.id}">` })
    for (const out of cell.outputs) {
      blocks.push(
        out._tag === "Text"
          ? { type: "text", text: out.text }
          : { type: "image", source: { type: "base64", media_type: out.mediaType, data: out.base64 } }
      )
    }
  }
  return blocks
}

/** The pages a Read of a PDF returns: those `pages` names, or all of a short document. */
const selectPages = (pages: string | undefined, total: number): Either.Either<ReadonlyArray<number>, string> => {
  if (pages !== undefined) return Pdf.pagesOf(pages, total)
  if (total > Pdf.maxPagesWithoutRange) {
    return Either.left(
      `it has ${total} pages, more than ${Pdf.maxPagesWithoutRange} can be read at once. Read it in ranges with ` +
        `pages (e.g. pages: "1-${Pdf.maxPagesWithoutRange}"), at most ${Pdf.maxPagesPerRead} pages per call.`
    )
  }
  return Either.right(Array.from({ length: total }, (_, i) => i + 1))
}

type PdfOutput = Extract<ReadOutput, { readonly _tag: "Pdf" }>

const pageSpan = (output: PdfOutput): string => {
  const numbers = output.pages.map((p) => p.page)
  const label = numbers.length === 1 ? `page ${numbers[0]}` : `${numbers.length} pages`
  return `${label} (of ${output.totalPages})`
}

/** Each page under its own heading; a note when pages were left out or cut. */
const pdfModelText = (output: PdfOutput): string => {
  const body = output.pages.map(({ cut, page, text }) =>
    `--- Page ${page} of ${output.totalPages} ---\n${text === "" ? "(no text on this page)" : text}${
      cut ? `\n(page text cut at ${Pdf.maxPageChars} characters)` : ""
    }`
  ).join("\n\n")
  const last = output.pages.at(-1)?.page ?? 0
  const end = Math.min(output.totalPages, last + Pdf.maxPagesPerRead)
  const next = end === last + 1 ? `${end}` : `${last + 1}-${end}`
  const more = last < output.totalPages
    ? `\n\n(The PDF has ${output.totalPages} pages. Use pages: "${next}" to read on.)`
    : ""
  return `${body}${more}`
}

const ioError = (path: string) => (cause: unknown) =>
  new Tool.ToolError({ message: `Could not read ${path}: ${cause instanceof Error ? cause.message : String(cause)}` })

const rangeLabel = (input: typeof ReadInput.Type): string =>
  input.pages !== undefined
    ? `, pages ${input.pages}`
    : input.offset === undefined && input.limit === undefined
    ? ""
    : `, lines ${input.offset ?? 1}-${input.limit === undefined ? "" : (input.offset ?? 1) + input.limit - 1}`
