import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { complaintPaths, complaintsOf, recordReader } from "../../../src/Tools/internal/filesRipgrep.js"
import type { RgRecord } from "../../../src/Tools/internal/filesRipgrep.js"

/** rg's `--null` output for records, as rg writes it. */
const print = (records: ReadonlyArray<RgRecord>, mode: "content" | "files_with_matches" | "count"): string =>
  records.map((record) => {
    switch (record._tag) {
      case "Separator":
        return "\0--\n"
      case "BinaryNotice":
        return `${record.text}\n`
      case "Entry":
        return mode === "files_with_matches" ? `${record.path}\0` : `${record.path}\0${record.rest}\n`
    }
  }).join("")

/** Any path rg could print: not empty, no NUL; `:`, `-`, digits and newlines included. */
const pathArb = fc.stringMatching(/^[a-z0-9:\-./\n ]{1,12}$/)
const restArb = fc.stringMatching(/^[0-9]{1,3}[:-][^\n]{0,12}$/)

/** rg's two notes about a binary file, as its `write_binary_message` prints them after the path. */
const noteArb = fc.record({
  path: pathArb,
  stopped: fc.boolean(),
  offset: fc.nat()
}).map(({ offset, path, stopped }): RgRecord => ({
  _tag: "BinaryNotice",
  path,
  text: `${path}: ${
    stopped ? "WARNING: stopped searching binary file after match" : "binary file matches"
  } (found "\\0" byte around offset ${offset})`
}))

const split = (text: string, cuts: ReadonlyArray<number>): Array<string> => {
  const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let from = 0
  for (const point of points) {
    chunks.push(text.slice(from, point))
    from = point
  }
  chunks.push(text.slice(from))
  return chunks
}

describe("recordReader", () => {
  it.prop(
    "content records and rg's notes about binary files come back whole and in order, however the output is chunked",
    [
      fc.array(
        fc.oneof(
          fc.record({ path: pathArb, rest: restArb }).map((r): RgRecord => ({ _tag: "Entry", ...r })),
          fc.constant<RgRecord>({ _tag: "Separator" }),
          noteArb
        )
      ),
      fc.array(fc.nat())
    ],
    ([records, cuts]) => {
      const read = recordReader("content")
      const got = split(print(records, "content"), cuts).flatMap(read)
      expect(got).toEqual(records)
    }
  )

  it.prop(
    "files_with_matches records are NUL-terminated paths",
    [fc.array(pathArb), fc.array(fc.nat())],
    ([paths, cuts]) => {
      const records = paths.map((path): RgRecord => ({ _tag: "Entry", path, rest: "" }))
      const read = recordReader("files_with_matches")
      expect(split(print(records, "files_with_matches"), cuts).flatMap(read)).toEqual(records)
    }
  )

  it("reads rg's notice for a binary target as a line of its own, and never answers an incomplete record", () => {
    const read = recordReader("content")
    expect(read("a:b.dat: binary file matches (found \"\\0\" byte around offset 7)\nx.ts\0" + "1:hit\ny.ts\0" + "2:cu"))
      .toEqual([
        {
          _tag: "BinaryNotice",
          path: "a:b.dat",
          text: "a:b.dat: binary file matches (found \"\\0\" byte around offset 7)"
        },
        { _tag: "Entry", path: "x.ts", rest: "1:hit" }
      ])
  })
  it("a note after a match in a walked binary file is a line of its own, not the start of the next record's path", () => {
    const read = recordReader("content")
    const output = "./a.bin\x00" + "24576:hunter2\n" +
      "./a.bin: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset 240000)\n" +
      "./secrets/key.txt\x00" + "1:hunter2\n"
    expect(read(output)).toEqual([
      { _tag: "Entry", path: "./a.bin", rest: "24576:hunter2" },
      {
        _tag: "BinaryNotice",
        path: "./a.bin",
        text: "./a.bin: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset 240000)"
      },
      { _tag: "Entry", path: "./secrets/key.txt", rest: "1:hunter2" }
    ])
  })
})

describe("complaintPaths", () => {
  it("offers every place the path in `rg: <path>: <why>` could end", () => {
    expect(complaintPaths("rg: ./a: b.txt: Permission denied (os error 13)")).toEqual(
      expect.arrayContaining(["./a", "./a: b.txt"])
    )
  })

  it("a complaint about a path with a newline is one complaint, and every part of it is a path it could name", () => {
    const stderr =
      "rg: ./private/x\ny/deep: File name too long (os error 36)\nrg: ./b.txt: Permission denied (os error 13)\n"
    const [first, second] = complaintsOf(stderr)
    expect(first).toBe("rg: ./private/x\ny/deep: File name too long (os error 36)")
    expect(second).toBe("rg: ./b.txt: Permission denied (os error 13)")
    expect(complaintPaths(first!)).toEqual(expect.arrayContaining(["./private/x", "./private/x\ny/deep", "y/deep"]))
    // Text that is not one of rg's complaints is checked whole.
    expect(complaintPaths("something else")).toEqual(["something else"])
  })
})
