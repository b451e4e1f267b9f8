import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import { FileState, hashContent } from "../../src/Session/FileState.js"
import type { FileRecord } from "../../src/Session/FileState.js"

const record = (size: number): FileRecord => ({
  contentHash: hashContent(String(size)),
  mtimeMs: 1,
  size,
  partial: false
})

describe("FileState", () => {
  it.effect("evicts the least recently used entry past maxEntries", () =>
    Effect.gen(function*() {
      const state = yield* FileState
      yield* state.record("/a", record(1))
      yield* state.record("/b", record(1))
      yield* state.get("/a") // /a is now more recent than /b
      yield* state.record("/c", record(1))
      expect(yield* state.paths).toEqual(["/a", "/c"])
      expect(Option.isNone(yield* state.get("/b"))).toBe(true)
    }).pipe(Effect.provide(FileState.layer({ maxEntries: 2 }))))

  it.effect("evicts by total bytes, always keeping the newest entry", () =>
    Effect.gen(function*() {
      const state = yield* FileState
      yield* state.record("/a", record(40))
      yield* state.record("/b", record(40))
      yield* state.record("/c", record(40))
      expect(yield* state.paths).toEqual(["/b", "/c"])
      yield* state.record("/huge", record(500))
      expect(yield* state.paths).toEqual(["/huge"])
    }).pipe(Effect.provide(FileState.layer({ maxBytes: 100 }))))

  it.effect("re-recording a path replaces its entry and its size", () =>
    Effect.gen(function*() {
      const state = yield* FileState
      yield* state.record("/a", record(90))
      yield* state.record("/a", record(10))
      yield* state.record("/b", record(90))
      expect(yield* state.paths).toEqual(["/a", "/b"])
    }).pipe(Effect.provide(FileState.layer({ maxBytes: 100 }))))

  it.effect.prop(
    "never holds more than maxEntries, nor more than maxBytes unless one entry alone does",
    [fc.array(
      fc.tuple(fc.constantFrom("/a", "/b", "/c", "/d", "/e", "/f"), fc.integer({ min: 0, max: 60 }), fc.boolean()),
      { maxLength: 40 }
    )],
    ([ops]) =>
      Effect.gen(function*() {
        const state = yield* FileState
        const sizes = new Map<string, number>()
        for (const [path, size, isGet] of ops) {
          if (isGet) yield* state.get(path)
          else {
            yield* state.record(path, record(size))
            sizes.set(path, size)
          }
          const paths = yield* state.paths
          const bytes = paths.reduce((sum, p) => sum + sizes.get(p)!, 0)
          expect(paths.length).toBeLessThanOrEqual(3)
          if (paths.length > 1) expect(bytes).toBeLessThanOrEqual(100)
        }
      }).pipe(Effect.provide(FileState.layer({ maxEntries: 3, maxBytes: 100 })))
  )
})
