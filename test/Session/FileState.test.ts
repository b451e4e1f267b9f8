import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState, hashContent } from "../../src/Session/FileState.js"
import type { FileRecord } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { contentText } from "../../src/Tool/Wire.js"
import * as FileTools from "../../src/Tools/FileTools.js"
import { tempDir } from "../support/index.js"

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
      }).pipe(Effect.provide(FileState.layer({ maxEntries: 3, maxBytes: 100 }))),
    // 100 runs of up to 40 steps: seconds on a busy machine, so its own timeout.
    { timeout: 30_000 }
  )
})

describe("an Edit after its Read was evicted", () => {
  const use = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({
    type: "tool_use",
    id,
    name,
    input
  })
  it.effect("says the file must be read again; a file never read still says it has not been read", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-evicted")
      for (const name of ["a", "b", "c", "d"]) fs.writeFileSync(path.join(cwd, `${name}.txt`), `${name}\n`)
      const workspace = Workspace.layer({ cwd, home: cwd })
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.mergeAll(
          ToolRegistry.layer(FileTools.tools).pipe(
            Layer.provide(FileTools.layer.pipe(Layer.provide(FileState.layer({ maxEntries: 2 })))),
            Layer.provide(ResultStore.layerMemory()),
            Layer.provide(workspace)
          ),
          PermissionPolicy.toolOnly,
          Approver.allowAll,
          ToolHooks.none,
          ResultStore.layerMemory()
        )),
        Layer.provide(NodeContext.layer)
      )
      const outcomes = yield* Effect.gen(function*() {
        const runtime = yield* ToolRuntime
        // One after another: a, then b, then c (a memory of 2 drops a).
        for (const name of ["a", "b", "c"]) {
          const [read] = yield* runtime.execute([use(`r-${name}`, "Read", { file_path: `${name}.txt` })])
          expect(read!.status).toBe("success")
        }
        return yield* runtime.execute([
          use("e1", "Edit", { file_path: "a.txt", old_string: "a", new_string: "A" }),
          use("e2", "Edit", { file_path: "d.txt", old_string: "d", new_string: "D" }),
          use("e3", "Edit", { file_path: "c.txt", old_string: "c", new_string: "C" })
        ])
      }).pipe(Effect.provide(layer))
      expect(contentText(outcomes[0]!.result.content)).toMatch(/was read earlier.*no longer remembered.*Read it again/)
      expect(contentText(outcomes[1]!.result.content)).toMatch(/has not been read yet/)
      expect(outcomes[2]!.status).toBe("success")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("a\n")
    }))
})
