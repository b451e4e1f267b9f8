/**
 * Glob's and Grep's newest-first selection (`internal/filesNewest`): the first `limit` files of a stable sort by mtime
 * (newest first), then path, then the order given — checked against that sort, written here in the plainest words.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { newest } from "../../../src/Tools/internal/filesNewest.js"

interface File {
  readonly file: string
  readonly mtimeMs: number
  readonly id: number
}

/**
 * The oracle: sort everything, then take the first `limit`. Ties on mtime go by path as `localeCompare` orders it, then
 * (for paths it calls equal, such as NFC and NFD spellings) by code units; the same path keeps the order given.
 */
const sortThenTake = (files: ReadonlyArray<File>, limit: number): Array<File> =>
  files
    .map((file, index) => ({ file, index }))
    .sort((a, b) =>
      b.file.mtimeMs - a.file.mtimeMs || a.file.file.localeCompare(b.file.file) ||
      (a.file.file < b.file.file ? -1 : a.file.file > b.file.file ? 1 : 0) || a.index - b.index
    )
    .slice(0, Math.max(0, limit))
    .map(({ file }) => file)

// Few paths and few mtimes, so that ties on both are common; limits below, at and above the count.
const files = fc.array(
  fc.record({
    file: fc.constantFrom("a", "b", "B", "a/b", "é", "e\u0301", "z"),
    mtimeMs: fc.integer({ min: 0, max: 4 })
  }),
  { maxLength: 40 }
).map((list) => list.map((file, id): File => ({ ...file, id })))

describe("newest", () => {
  it("answers what a full stable sort then a slice answers", () => {
    fc.assert(
      // Limits past a thousand take the full sort; below, the bounded list.
      fc.property(files, fc.oneof(fc.integer({ min: -1, max: 45 }), fc.integer({ min: 1020, max: 1030 })), (
        list,
        limit
      ) => {
        expect(newest(list, limit).map((file) => file.id)).toEqual(sortThenTake(list, limit).map((file) => file.id))
      }),
      { numRuns: 2000 }
    )
  })

  it("keeps the given order among files equal on mtime and path, also across the cut", () => {
    const same = Array.from({ length: 5 }, (_, id): File => ({ file: "x", mtimeMs: 1, id }))
    const list = [{ file: "y", mtimeMs: 2, id: 9 }, ...same]
    expect(newest(list, 3).map((file) => file.id)).toEqual([9, 0, 1])
  })
})
