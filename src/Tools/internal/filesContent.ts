/**
 * Reading file content for the model: what kind of file a few bytes say it is (image, other binary, text), and a
 * streaming line reader that returns a window of lines without holding more than a chunk and the window in memory.
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import { StringDecoder } from "node:string_decoder"

// ---------------------------------------------------------------------------------------------------------------
// sniffing
// ---------------------------------------------------------------------------------------------------------------

/** The image types a model accepts. */
export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp"

/** What the first bytes of a file say it is. */
export type Sniffed =
  | { readonly _tag: "Text" }
  | { readonly _tag: "Image"; readonly mediaType: ImageMediaType }
  | { readonly _tag: "Binary"; readonly description: string }

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, at = 0): boolean =>
  bytes.length >= at + signature.length && signature.every((b, i) => bytes[at + i] === b)

const ascii = (text: string): ReadonlyArray<number> => [...text].map((c) => c.charCodeAt(0))

const binarySignatures: ReadonlyArray<readonly [ReadonlyArray<number>, string, number?]> = [
  [ascii("%PDF-"), "PDF document"],
  [[0x50, 0x4b, 0x03, 0x04], "ZIP archive (or a format built on ZIP: jar, docx, xlsx...)"],
  [[0x1f, 0x8b], "gzip-compressed data"],
  [ascii("BZh"), "bzip2-compressed data"],
  [[0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00], "xz-compressed data"],
  [[0x28, 0xb5, 0x2f, 0xfd], "zstd-compressed data"],
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], "7-zip archive"],
  [ascii("ustar"), "tar archive", 257],
  [[0x7f, 0x45, 0x4c, 0x46], "ELF executable or library"],
  [[0xcf, 0xfa, 0xed, 0xfe], "Mach-O executable"],
  [[0xfe, 0xed, 0xfa, 0xcf], "Mach-O executable"],
  [[0xca, 0xfe, 0xba, 0xbe], "Java class file or Mach-O universal binary"],
  [ascii("MZ"), "Windows executable"],
  [[0x00, 0x61, 0x73, 0x6d], "WebAssembly module"],
  [ascii("SQLite format 3"), "SQLite database"],
  [ascii("ID3"), "MP3 audio"],
  [ascii("OggS"), "Ogg media"],
  [ascii("fLaC"), "FLAC audio"],
  [ascii("ftyp"), "MP4/QuickTime media", 4],
  [[0x49, 0x49, 0x2a, 0x00], "TIFF image"],
  [[0x4d, 0x4d, 0x00, 0x2a], "TIFF image"],
  [[0x00, 0x00, 0x01, 0x00], "ICO image"],
  [ascii("wOFF"), "WOFF font"],
  [ascii("wOF2"), "WOFF2 font"]
]

/** Classifies a file from its first bytes (8 KB is plenty): images by magic number, binaries by magic or NUL bytes. */
export const sniff = (head: Uint8Array): Sniffed => {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
    return { _tag: "Image", mediaType: "image/png" }
  }
  if (startsWith(head, [0xff, 0xd8, 0xff])) return { _tag: "Image", mediaType: "image/jpeg" }
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) {
    return { _tag: "Image", mediaType: "image/gif" }
  }
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) {
    return { _tag: "Image", mediaType: "image/webp" }
  }
  for (const [signature, description, at] of binarySignatures) {
    if (startsWith(head, signature, at ?? 0)) return { _tag: "Binary", description }
  }
  if (head.includes(0)) return { _tag: "Binary", description: "binary data (contains NUL bytes)" }
  return { _tag: "Text" }
}

/** The first `length` bytes of a file. */
export const readHead = async (path: string, length = 8192): Promise<Uint8Array> => {
  const handle = await fs.promises.open(path, "r")
  try {
    const buffer = Buffer.alloc(length)
    const { bytesRead } = await handle.read(buffer, 0, length, 0)
    return buffer.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
}

// ---------------------------------------------------------------------------------------------------------------
// lines
// ---------------------------------------------------------------------------------------------------------------

/** What {@link readLines} asks for. */
export interface LineRequest {
  /** 1-based number of the first line. */
  readonly offset: number
  readonly limit: number
  /** Longer lines are cut to this many characters, marked. */
  readonly maxLineChars: number
  readonly signal?: AbortSignal
  /** Read chunk size; default 64 KB (tests make it tiny to cross chunk boundaries everywhere). */
  readonly chunkBytes?: number
}

/** A window of lines. */
export interface LineWindow {
  /** The lines from `offset`, cut when too long, without their line endings. */
  readonly lines: ReadonlyArray<string>
  /** Whether the whole file was scanned (then `totalLines` and `contentHash` are known). */
  readonly reachedEnd: boolean
  readonly totalLines: number | undefined
  /** sha256 of the bytes, when the whole file was scanned. */
  readonly contentHash: string | undefined
  /** Whether any returned line was cut. */
  readonly cut: boolean
}

/** The marker after a line cut for length. */
export const cutMarker = (omitted: number): string => `… [line truncated: ${omitted} more characters]`

/**
 * Streams a file and keeps only the requested lines; stops reading as soon as the line after the window starts.
 * Lines end at `\n` (a `\r` before it is dropped); a final newline does not start another line.
 */
export const readLines = async (
  source: string | ((chunkBytes: number) => AsyncIterable<Uint8Array>),
  request: LineRequest
): Promise<LineWindow> => {
  const { limit, maxLineChars, offset } = request
  const last = offset + limit - 1
  const chunkBytes = request.chunkBytes ?? 64 * 1024
  const stream = typeof source === "string"
    ? fs.createReadStream(source, { highWaterMark: chunkBytes })
    : source(chunkBytes)
  const hash = crypto.createHash("sha256")
  const decoder = new StringDecoder("utf8")
  const lines: Array<string> = []
  let lineNo = 1
  let current = "" // the kept start of the current line (at most maxLineChars + 1 characters)
  let currentLength = 0 // its full length
  let cut = false
  let more = false

  let keeping = lineNo >= offset && lineNo <= last
  let endsWithCR = false
  const append = (text: string) => {
    if (text.length === 0) return
    if (keeping && current.length <= maxLineChars) current += text.slice(0, maxLineChars + 1 - current.length)
    currentLength += text.length
    endsWithCR = text.endsWith("\r")
  }
  const endLine = () => {
    if (keeping) {
      const fullLength = currentLength - (endsWithCR ? 1 : 0)
      if (fullLength > maxLineChars) {
        lines.push(current.slice(0, maxLineChars) + cutMarker(fullLength - maxLineChars))
        cut = true
      } else {
        lines.push(current.slice(0, fullLength))
      }
    }
    lineNo++
    current = ""
    currentLength = 0
    endsWithCR = false
    keeping = lineNo >= offset && lineNo <= last
  }

  try {
    outer: for await (const chunk of stream) {
      request.signal?.throwIfAborted()
      let bytes = Buffer.from(chunk as Uint8Array)
      hash.update(bytes)
      // Lines before the window are counted on the bytes: nothing is decoded or allocated for them.
      if (lineNo < offset) {
        let at = 0
        while (lineNo < offset) {
          const newline = bytes.indexOf(0x0a, at)
          if (newline === -1) break
          lineNo++
          currentLength = 0
          at = newline + 1
        }
        if (lineNo < offset) {
          currentLength += bytes.length - at
          continue
        }
        keeping = lineNo <= last
        bytes = bytes.subarray(at)
      }
      const text = decoder.write(bytes)
      let start = 0
      while (start < text.length) {
        if (lineNo > last) {
          more = true
          break outer
        }
        const newline = text.indexOf("\n", start)
        if (newline === -1) {
          append(text.slice(start))
          break
        }
        append(text.slice(start, newline))
        endLine()
        start = newline + 1
      }
    }
    if (!more) {
      const rest = decoder.end()
      if (rest.length > 0) append(rest)
      if (currentLength > 0) endLine()
    }
  } finally {
    if ("destroy" in stream && typeof stream.destroy === "function") stream.destroy()
  }
  return {
    lines,
    reachedEnd: !more,
    totalLines: more ? undefined : lineNo - 1,
    contentHash: more ? undefined : hash.digest("hex"),
    cut
  }
}

/** `cat -n` numbering: the number right-aligned in six columns, a tab, the line. */
export const numberLines = (lines: ReadonlyArray<string>, firstLine: number): string =>
  lines.map((line, i) => `${String(firstLine + i).padStart(6)}\t${line}`).join("\n")
