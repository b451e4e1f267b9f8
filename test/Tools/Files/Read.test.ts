import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { FileState, hashContent } from "../../../src/Session/FileState.js"
import { cutMarker, readLines } from "../../../src/Tools/internal/filesContent.js"
import { executeOne, runtimeLayer, tempDir, text, use, writeTree } from "./helpers.js"

// A 1x1 PNG.
const png = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64"
)

describe("Read", () => {
  const dir = tempDir()
  writeTree(dir, {
    "a.txt": "alpha\nbeta\r\ngamma\n",
    "long.txt": `${"x".repeat(2500)}\nshort\n`,
    "empty.txt": "",
    "pic.png": png,
    "fake.png": "just text, despite the name\n",
    "data.bin": Buffer.from([0x01, 0x02, 0x00, 0x03]),
    "doc.pdf": "%PDF-1.7\n...",
    "big.txt": "y".repeat(300 * 1024),
    "many.txt": Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n")
  })
  fs.mkdirSync(path.join(dir, "sub"))
  const layer = runtimeLayer(dir)

  it.effect("returns cat -n numbered lines, CRLF endings dropped", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "a.txt") }))
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toBe("     1\talpha\n     2\tbeta\n     3\tgamma")
    }).pipe(Effect.provide(layer)))

  it.effect("accepts a path relative to the working directory and records a full read", () =>
    Effect.gen(function*() {
      yield* executeOne(use("Read", { file_path: "a.txt" }))
      const record = yield* Effect.flatMap(FileState, (state) => state.get(path.join(dir, "a.txt")))
      expect(Option.getOrThrow(record)).toMatchObject({ partial: false, size: 18 })
      expect(Option.getOrThrow(record).contentHash).toMatch(/^[0-9a-f]{64}$/)
    }).pipe(Effect.provide(layer)))

  it.effect("offset and limit give a window and record a partial read", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "many.txt"), offset: 1500, limit: 3 }))
      expect(text(outcome)).toBe(
        "  1500\tline 1500\n  1501\tline 1501\n  1502\tline 1502\n\n(Showing lines 1500-1502; the file continues. Use offset: 1503 to read on.)"
      )
      const record = yield* Effect.flatMap(FileState, (state) => state.get(path.join(dir, "many.txt")))
      expect(Option.getOrThrow(record)).toMatchObject({ partial: true, contentHash: undefined })
    }).pipe(Effect.provide(layer)))

  it.effect("reads 2,000 lines by default", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "many.txt") }))
      const lines = text(outcome).split("\n")
      expect(lines[1999]).toBe("  2000\tline 2000")
      expect(text(outcome)).toContain("Use offset: 2001 to read on.")
    }).pipe(Effect.provide(layer)))

  it.effect("cuts lines over 2,000 characters with a marker", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "long.txt") }))
      const [first, second] = text(outcome).split("\n")
      expect(first).toBe(`     1\t${"x".repeat(2000)}… [line truncated: 500 more characters]`)
      expect(second).toBe("     2\tshort")
    }).pipe(Effect.provide(layer)))

  it.effect("says an empty file is empty, and an offset past the end is past the end", () =>
    Effect.gen(function*() {
      expect(text(yield* executeOne(use("Read", { file_path: path.join(dir, "empty.txt") })))).toBe(
        "The file empty.txt exists but is empty."
      )
      expect(text(yield* executeOne(use("Read", { file_path: path.join(dir, "a.txt"), offset: 10 })))).toBe(
        "The file a.txt is shorter than the requested offset (10): it has 3 lines."
      )
    }).pipe(Effect.provide(layer)))

  it.effect("refuses a whole-file read over 256 KB and says how to read a range", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "big.txt") }))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("exceeds the maximum size for reading a whole file (256 KB)")
      expect(text(outcome)).toContain("offset and limit")
      const ranged = yield* executeOne(use("Read", { file_path: path.join(dir, "big.txt"), offset: 1, limit: 1 }))
      expect(ranged.status).toBe("success")
    }).pipe(Effect.provide(layer)))

  it.effect("returns images as image blocks, by content not by name", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "pic.png") }))
      expect(outcome.result.content).toEqual([{
        type: "image",
        source: { type: "base64", media_type: "image/png", data: png.toString("base64") }
      }])
      expect(outcome.ui.some((b) => b._tag === "Image")).toBe(true)
      expect(text(yield* executeOne(use("Read", { file_path: path.join(dir, "fake.png") })))).toBe(
        "     1\tjust text, despite the name"
      )
    }).pipe(Effect.provide(layer)))

  it.effect("refuses binary files with their type", () =>
    Effect.gen(function*() {
      const bin = yield* executeOne(use("Read", { file_path: path.join(dir, "data.bin") }))
      expect(bin.status).toBe("error")
      expect(text(bin)).toContain("binary file (binary data (contains NUL bytes))")
      expect(text(yield* executeOne(use("Read", { file_path: path.join(dir, "doc.pdf") })))).toContain(
        "it is not a PDF that can be read"
      )
    }).pipe(Effect.provide(layer)))

  it.effect("refuses directories, pointing at Glob", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "sub") }))
      expect(text(outcome)).toContain("is a directory")
      expect(text(outcome)).toContain("Glob")
    }).pipe(Effect.provide(layer)))

  it.effect("refuses device files and FIFOs without opening them", () =>
    Effect.gen(function*() {
      const zero = yield* executeOne(use("Read", { file_path: "/dev/zero" }))
      expect(zero.status).toBe("error")
      expect(text(zero)).toContain("character device")
      const fifo = path.join(dir, "pipe")
      childProcess.execFileSync("mkfifo", [fifo])
      // Opening a FIFO without a writer blocks forever: this returning at all shows it was never opened.
      const outcome = yield* executeOne(use("Read", { file_path: fifo }))
      expect(text(outcome)).toContain("FIFO")
      const fd = yield* executeOne(use("Read", { file_path: "/proc/self/fd/0" }))
      expect(fd.status).toBe("error")
    }).pipe(Effect.provide(layer)))

  it.effect("a missing file is a validation error naming the path", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: path.join(dir, "nope.txt") }))
      expect(text(outcome)).toBe(
        `<tool_use_error>File does not exist: ${
          path.join(dir, "nope.txt")
        }. Check the path, or use Glob to find the file.</tool_use_error>`
      )
    }).pipe(Effect.provide(layer)))
})

describe("readLines (streaming)", () => {
  const dir = tempDir("lines-")
  let n = 0
  it.effect.prop(
    "returns exactly the lines a whole-file split gives, whatever the chunk boundaries",
    [
      fc.string({ unit: fc.constantFrom("a", "b", "\n", "\r\n", "é", "😀", " "), maxLength: 80 }),
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 1, max: 30 }),
      fc.integer({ min: 1, max: 9 }),
      fc.integer({ min: 1, max: 12 })
    ],
    ([content, offset, limit, chunkBytes, maxLineChars]) =>
      Effect.promise(async () => {
        const file = path.join(dir, `f${n++}.txt`)
        fs.writeFileSync(file, content)
        const window = await readLines(file, { offset, limit, maxLineChars, chunkBytes })
        const all = content === "" ? [] : content.replace(/\n$/, "").split("\n").map((l) => l.replace(/\r$/, ""))
        const expected = all.slice(offset - 1, offset - 1 + limit).map((l) =>
          [...l].length === l.length && l.length > maxLineChars
            ? l.slice(0, maxLineChars) + cutMarker(l.length - maxLineChars)
            : l
        )
        // Lines with astral characters are compared by prefix only (cut positions count UTF-16 units).
        expect(window.lines.length).toBe(expected.length)
        window.lines.forEach((line, i) => {
          if ([...all[offset - 1 + i]!].length === all[offset - 1 + i]!.length) expect(line).toBe(expected[i])
        })
        expect(window.reachedEnd).toBe(offset - 1 + limit >= all.length)
        if (window.reachedEnd) {
          expect(window.totalLines).toBe(all.length)
          expect(window.contentHash).toBe(hashContent(Buffer.from(content)))
        }
      })
  )
})
