/**
 * Read on PDFs, as Claude Code reads them (its `pages` parameter: "1-5", "3", "10-20"; at most 20 pages a call; a
 * long PDF must be read in ranges). Claude Code hands the model the pages themselves; this runtime hands it their
 * text, page by page (pdf.js), which every provider can take.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Option } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { FileState } from "../../src/Session/FileState.js"
import { maxPagesPerRead, pagesOf } from "../../src/Tools/internal/pdf.js"
import { executeOne, runtimeLayer, tempDir, text, use, writeTree } from "../Tools/Files/helpers.js"
import { makePdf } from "./pdfFixture.js"

describe("Read on PDFs", () => {
  const dir = tempDir("cc-pdf-")
  const pages = (n: number) => Array.from({ length: n }, (_, i) => `Text of page ${i + 1}`)
  writeTree(dir, {
    "short.pdf": makePdf(pages(3)),
    "long.pdf": makePdf(pages(25)),
    "notes.txt": "plain\n",
    "fake.pdf": "%PDF-1.7\nnot really\n"
  })
  const layer = runtimeLayer(dir)
  const read = (file: string, extra: Record<string, unknown> = {}) =>
    executeOne(use("Read", { file_path: path.join(dir, file), ...extra }))

  it.effect("Claude Code reads a short PDF whole; so do we, as text page by page", () =>
    Effect.gen(function*() {
      const outcome = yield* read("short.pdf")
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toBe(
        [1, 2, 3].map((n) => `--- Page ${n} of 3 ---\nText of page ${n}`).join("\n\n")
      )
      const record = yield* Effect.flatMap(FileState, (state) => state.get(path.join(dir, "short.pdf")))
      expect(Option.getOrThrow(record)).toMatchObject({ partial: false })
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code reads pages: \"2-3\" of a PDF; so do we, and say how to read on", () =>
    Effect.gen(function*() {
      expect(text(yield* read("short.pdf", { pages: "2-3" }))).toBe(
        "--- Page 2 of 3 ---\nText of page 2\n\n--- Page 3 of 3 ---\nText of page 3"
      )
      const first = text(yield* read("long.pdf", { pages: "1-5" }))
      expect(first).toContain("--- Page 5 of 25 ---\nText of page 5")
      expect(first).not.toContain("page 6")
      expect(first).toContain(`(The PDF has 25 pages. Use pages: "6-25" to read on.)`)
      expect(text(yield* read("long.pdf", { pages: "24" }))).toContain("Text of page 24")
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code wants pages for a PDF over 10 pages; so do we, saying how", () =>
    Effect.gen(function*() {
      const outcome = yield* read("long.pdf")
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("it has 25 pages, more than 10 can be read at once")
      expect(text(outcome)).toContain(`pages: "1-10"`)
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code reads at most 20 pages a call; so do we", () =>
    Effect.gen(function*() {
      const outcome = yield* read("long.pdf", { pages: "1-21" })
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("names more than 20 pages")
      expect((yield* read("long.pdf", { pages: "1-20" })).status).toBe("success")
    }).pipe(Effect.provide(layer)))

  it.effect("a range the PDF does not have, a malformed range, a broken PDF: each refused, saying why", () =>
    Effect.gen(function*() {
      expect(text(yield* read("short.pdf", { pages: "7" }))).toContain("the document has 3 pages")
      expect(text(yield* read("short.pdf", { pages: "two" }))).toContain("is not a page range")
      expect(text(yield* read("short.pdf", { pages: "3-1" }))).toContain("a range goes up")
      expect(text(yield* read("fake.pdf"))).toContain("it is not a PDF that can be read")
    }).pipe(Effect.provide(layer)))

  it.effect("pages on a file that is not a PDF is refused (not silently ignored)", () =>
    Effect.gen(function*() {
      const outcome = yield* read("notes.txt", { pages: "1" })
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("pages applies to PDF files only")
    }).pipe(Effect.provide(layer)))

  it.effect("a PDF over the whole-file text limit is still read (the limit is for text files)", () =>
    Effect.gen(function*() {
      const big = makePdf(["Big page", `${"padding ".repeat(40_000)}`])
      fs.writeFileSync(path.join(dir, "big.pdf"), big)
      expect(big.length).toBeGreaterThan(256 * 1024)
      const outcome = yield* read("big.pdf", { pages: "1" })
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toContain("Big page")
    }).pipe(Effect.provide(layer)))

  it("the CLI reads a PDF too (pdf.js loaded from the one-file bundle)", () => {
    const cli = path.resolve("dist/bin/effect-tool-runtime.js")
    const input = JSON.stringify([{
      type: "tool_use",
      id: "t1",
      name: "Read",
      input: { file_path: "short.pdf", pages: "2" }
    }])
    const run = childProcess.spawnSync(process.execPath, [cli, "exec", "--cwd", dir, "--no-claude-settings"], {
      input,
      encoding: "utf8",
      env: { ...process.env, HOME: dir }
    })
    expect(run.stderr).toBe("")
    const result = JSON.parse(run.stdout) as { results: Array<{ content: string }> }
    expect(result.results[0]!.content).toBe(
      "--- Page 2 of 3 ---\nText of page 2\n\n(The PDF has 3 pages. Use pages: \"3\" to read on.)"
    )
  })

  it.prop(
    "pagesOf names the pages of its ranges, each once, in order, at most 20; or refuses",
    [
      fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), fc.boolean()), {
        minLength: 1,
        maxLength: 4
      }),
      fc.integer({ min: 1, max: 40 })
    ],
    ([ranges, total]) => {
      // Overlapping ranges count each page once ("1-15,1-15" is 15 pages).
      const spec = ranges.map(([a, b, single]) => (single ? `${a}` : `${a}-${b}`)).join(",")
      // Oracle, in plain words: each range from a to b (or a alone), clipped at the document's end.
      const wanted = new Set<number>()
      let ok = true
      for (const [a, b, single] of ranges) {
        const last = single ? a : b
        if (a < 1 || last < a || a > total) ok = false
        for (let p = a; p <= Math.min(last, total); p++) wanted.add(p)
      }
      const result = pagesOf(spec, total)
      if (!ok || wanted.size > maxPagesPerRead) {
        expect(Either.isLeft(result)).toBe(true)
      } else {
        expect(result).toEqual(Either.right([...wanted].sort((x, y) => x - y)))
      }
    }
  )

  it("overlapping ranges count each page once", () => {
    expect(pagesOf("1-15,1-15", 30)).toEqual(Either.right(Array.from({ length: 15 }, (_, i) => i + 1)))
    expect(Either.isLeft(pagesOf("1-15,10-25", 30))).toBe(true)
  })
})
