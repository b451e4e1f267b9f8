/**
 * FileAccess.lstatAll: many lstats in one Effect. On the Node layer it answers what the layer's `lstat` answers for
 * every path (files, directories, symlinks dangling or not, nothing there, a path through a file), in order; on any
 * other `lstat` (a layer of one's own, the memory layer) that `lstat` is asked for every path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, pipe } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FileAccess, lstatAll } from "../../src/Session/FileAccess.js"
import type { FileInfo } from "../../src/Session/FileAccess.js"
import { tempDir } from "../support/index.js"

const nodeAccess = Effect.runSync(Effect.provide(FileAccess, FileAccess.layer))

/** A directory with one of each kind of name, and the paths to ask about (nothing-there ones included). */
const layout = () => {
  const dir = tempDir("lstat-all-")
  fs.mkdirSync(path.join(dir, "sub"))
  fs.writeFileSync(path.join(dir, "file.txt"), "12345")
  fs.symlinkSync(path.join(dir, "file.txt"), path.join(dir, "link"))
  fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "dangling"))
  const names = ["file.txt", "sub", "link", "dangling", "missing", "file.txt/below"]
  return { dir, paths: names.map((name) => path.join(dir, name)) }
}

describe("FileAccess.lstatAll", () => {
  it.effect("on the Node layer: what its lstat answers for each path, in order", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      // Many times over, so that the batch spans more than one slice on any machine.
      const many = Array.from({ length: 4000 }, (_, i) => paths[i % paths.length]!)
      const one = yield* Effect.forEach(many, (file) => nodeAccess.lstat(file))
      const all = yield* lstatAll(nodeAccess, many)
      expect(all).toEqual(one)
      expect(all.slice(0, paths.length).map((info) => info?.type)).toEqual([
        "File",
        "Directory",
        "SymbolicLink",
        "SymbolicLink",
        undefined,
        undefined
      ])
      expect(all[0]?.size).toBe(5)
      expect(yield* lstatAll(nodeAccess, [])).toEqual([])
    }))

  it.effect("pipeable too", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      const [info] = yield* pipe(nodeAccess, lstatAll(paths.slice(0, 1)))
      expect(info?.type).toBe("File")
    }))

  it.effect("on a layer whose lstat is its own (the Node one with lstat replaced): that lstat, for every path", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      const asked: Array<string> = []
      const made = (file: string): FileInfo => ({
        type: "File",
        size: file.length,
        mtimeMs: 42,
        mode: 0o600,
        dev: 1,
        ino: asked.length,
        nlink: 1
      })
      const own: FileAccess["Type"] = {
        ...nodeAccess,
        lstat: (file) =>
          Effect.sync(() => {
            asked.push(file)
            return made(file)
          })
      }
      const all = yield* lstatAll(own, paths)
      expect([...asked].sort()).toEqual([...paths].sort())
      expect(all.map((info) => [info?.type, info?.size])).toEqual(paths.map((file) => ["File", file.length]))
    }))

  it.effect("on the memory layer: the memory's lstat", () =>
    Effect.gen(function*() {
      const access = yield* FileAccess
      const all = yield* lstatAll(access, ["/m/a.txt", "/m/link", "/m", "/m/none"])
      expect(all.map((info) => info?.type)).toEqual(["File", "SymbolicLink", "Directory", undefined])
    }).pipe(
      Effect.provide(FileAccess.layerMemory({ files: { "/m/a.txt": "a" }, symlinks: { "/m/link": "/m/a.txt" } }))
    ))
})
