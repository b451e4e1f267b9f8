import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Approver } from "../../../src/Permission/Approver.js"
import { FileAccess } from "../../../src/Session/FileAccess.js"
import { FileState } from "../../../src/Session/FileState.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { testRuntime } from "../../../src/testing/index.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { executeOne, runtimeLayer, tempDir, text, use, writeTree } from "./helpers.js"

const touch = (file: string, secondsAgo: number) => {
  const when = new Date(Date.now() - secondsAgo * 1000)
  fs.utimesSync(file, when, when)
}

describe("Glob", () => {
  const dir = tempDir("glob-")
  writeTree(dir, {
    ".gitignore": "node_modules\ndist/\n*.log\n",
    "src/old.ts": "",
    "src/new.ts": "",
    "src/mid.ts": "",
    "src/nested/.gitignore": "generated.ts\n",
    "src/nested/generated.ts": "",
    "src/nested/kept.ts": "",
    "node_modules/pkg/index.ts": "",
    "dist/out.ts": "",
    "debug.log": "",
    ".hidden/h.ts": ""
  })
  touch(path.join(dir, "src/old.ts"), 300)
  touch(path.join(dir, "src/mid.ts"), 200)
  touch(path.join(dir, "src/new.ts"), 10)
  touch(path.join(dir, "src/nested/kept.ts"), 250)
  touch(path.join(dir, ".hidden/h.ts"), 400)
  const layer = runtimeLayer(dir)

  it.effect("lists matches newest first, relative to the working directory, leaving out .gitignored files", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Glob", { pattern: "**/*.ts" }))
      expect(text(outcome).split("\n")).toEqual([
        "src/new.ts",
        "src/mid.ts",
        "src/nested/kept.ts",
        "src/old.ts",
        ".hidden/h.ts"
      ])
    }).pipe(Effect.provide(layer)))

  it.effect("searches under path, still honouring the root .gitignore; an absolute pattern works too", () =>
    Effect.gen(function*() {
      expect(text(yield* executeOne(use("Glob", { pattern: "*.ts", path: "src/nested" })))).toBe("src/nested/kept.ts")
      expect(text(yield* executeOne(use("Glob", { pattern: `${dir}/src/*.ts` }))).split("\n")).toEqual([
        "src/new.ts",
        "src/mid.ts",
        "src/old.ts"
      ])
      expect(text(yield* executeOne(use("Glob", { pattern: "**/*.log" })))).toBe("No files found")
    }).pipe(Effect.provide(layer)))

  it.effect("[!...] negates a bracket expression, as [^...] does (shells, ripgrep and Claude Code read it so)", () =>
    Effect.gen(function*() {
      expect(text(yield* executeOne(use("Glob", { pattern: "src/[!m]*.ts" }))).split("\n")).toEqual([
        "src/new.ts",
        "src/old.ts"
      ])
      expect(text(yield* executeOne(use("Glob", { pattern: "src/[^m]*.ts" }))).split("\n")).toEqual([
        "src/new.ts",
        "src/old.ts"
      ])
      expect(text(yield* executeOne(use("Glob", { pattern: "src/[m!]*.ts" })))).toBe("src/mid.ts")
      // A `[!` inside a set is two of its characters: `[[!]` is "[ or !".
      expect(text(yield* executeOne(use("Glob", { pattern: "src/[[!n]ew.ts" })))).toBe("src/new.ts")
    }).pipe(Effect.provide(layer)))

  it.effect("does not follow a symlinked directory out of the workspace", () =>
    Effect.gen(function*() {
      const work = tempDir("glob-link-")
      const outside = tempDir("glob-outside-")
      writeTree(outside, { "secret.ts": "" })
      writeTree(work, { "mine.ts": "" })
      fs.symlinkSync(outside, path.join(work, "out"))
      const outcome = yield* executeOne(use("Glob", { pattern: "**/*.ts" })).pipe(Effect.provide(runtimeLayer(work)))
      expect(text(outcome)).toBe("mine.ts")
    }))

  it.effect("refuses a pattern that climbs out with ..", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Glob", { pattern: "../**/*" }))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("may not contain `..`")
    }).pipe(Effect.provide(layer)))

  it.effect("returns at most 100 files, with a note saying so", () =>
    Effect.gen(function*() {
      const many = tempDir("glob-many-")
      writeTree(many, Object.fromEntries(Array.from({ length: 130 }, (_, i) => [`f${i}.txt`, ""])))
      const outcome = yield* executeOne(use("Glob", { pattern: "*.txt" })).pipe(Effect.provide(runtimeLayer(many)))
      const lines = text(outcome).split("\n")
      expect(lines).toHaveLength(101)
      expect(lines[100]).toBe(
        "(Results are truncated: showing the 100 most recently modified of 130 files. Use a more specific path or pattern.)"
      )
    }))

  it.effect("orders by the mtimes of the FileAccess in context: the Node layer with its own lstat decides, not the disk", () =>
    Effect.gen(function*() {
      const cwd = tempDir("glob-own-lstat-")
      const names = Array.from({ length: 120 }, (_, i) => `f${String(i).padStart(3, "0")}.txt`)
      writeTree(cwd, Object.fromEntries(names.map((name) => [name, ""])))
      // On disk f000 is the newest; the layer's lstat says the opposite (and ties every pair, which paths then order).
      names.forEach((name, i) => touch(path.join(cwd, name), i + 1))
      const node = yield* Effect.provide(FileAccess, FileAccess.layer)
      const own: FileAccess["Type"] = {
        ...node,
        lstat: (file) =>
          Effect.map(node.lstat(file), (info) =>
            info === undefined
              ? undefined
              : { ...info, mtimeMs: Math.floor(names.indexOf(path.basename(file)) / 2) })
      }
      const tools = FileTools.layer.pipe(
        Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
        Layer.provideMerge(Layer.succeed(FileAccess, own)),
        Layer.provide(NodeContext.layer)
      )
      const outcome = yield* executeOne(use("Glob", { pattern: "*.txt" })).pipe(
        Effect.provide(Layer.merge(testRuntime(FileTools.tools, tools, Approver.allowAll), tools))
      )
      const lines = text(outcome).split("\n")
      const expected = Array.from({ length: 60 }, (_, pair) => names.slice(118 - 2 * pair, 120 - 2 * pair)).flat()
      expect(lines.slice(0, 100)).toEqual(expected.slice(0, 100))
      expect(lines[100]).toContain("showing the 100 most recently modified of 120 files")
    }))
})
