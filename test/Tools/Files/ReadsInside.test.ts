/**
 * Reads stay inside, for the file tools: Glob lists a match by where it resolves (a symlink inside pointing outside is
 * not listed), Grep does not follow symlinks out of the workspace while it recurses, and a Read deny rule holds for
 * another name of the same file (a hard link), in Read, Grep and Glob. Through the runtime, full policy, default
 * mode, a denying approver.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { Approver } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { executeOne, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

const guardedRuntime = (cwd: string, deny: ReadonlyArray<string> = []) => {
  const tools = toolsLayer(cwd)
  const policy = RulePolicy.layer({ mode: "default", cliRules: { deny } }).pipe(
    Layer.provide(Layer.merge(tools, NodeContext.layer))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer(FileTools.tools), tools)),
    Layer.provide([policy, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )
}

const call = (name: string, input: Record<string, unknown>) =>
  executeOne(use(name, input)).pipe(Effect.map((outcome) => ({ status: outcome.status, text: text(outcome) })))

/** A workspace with symlinks to a directory and a file outside it, both holding a marker that must never show. */
const linkedWorkspace = () => {
  const outside = tempDir("outside-")
  writeTree(outside, { "passwd": "OUTSIDE_MARKER root:x:0:0\n", "deep/key.pem": "OUTSIDE_MARKER key\n" })
  const dir = tempDir("inside-")
  writeTree(dir, { "notes.txt": "inside root notes\n", "src/a.ts": "export const root = 1\n" })
  fs.symlinkSync(outside, path.join(dir, "out-dir"))
  fs.symlinkSync(path.join(outside, "passwd"), path.join(dir, "passwd-link"))
  fs.symlinkSync(path.join(dir, "notes.txt"), path.join(dir, "src", "notes-link.txt"))
  // Glob lists the newest first: notes.txt is the newer, whenever the files were written.
  fs.utimesSync(path.join(dir, "src", "a.ts"), new Date(2020, 0, 1), new Date(2020, 0, 1))
  fs.utimesSync(path.join(dir, "notes.txt"), new Date(2021, 0, 1), new Date(2021, 0, 1))
  return dir
}

describe("Glob lists a match by where it resolves", () => {
  const dir = linkedWorkspace()

  it.effect("a pattern through a symlinked directory that leaves the workspace lists nothing, and says one match was left out", () =>
    Effect.gen(function*() {
      const result = yield* call("Glob", { pattern: "out-dir/passwd" })
      expect(result.status).toBe("success")
      expect(result.text).toBe(
        "No files found\n(1 match left out: it resolves through a symlink outside the searched directory)"
      )
      const deep = yield* call("Glob", { pattern: "out-dir/deep/*.pem" })
      expect(deep.text).not.toContain("key.pem")
      expect(deep.text).toContain("left out")
    }).pipe(Effect.provide(guardedRuntime(dir))))

  it.effect("recursive patterns list the workspace's own files and nothing behind outward links", () =>
    Effect.gen(function*() {
      for (const pattern of ["**/*", "*", "**/passwd*", "*/*"]) {
        const result = yield* call("Glob", { pattern })
        expect(result.status).toBe("success")
        expect(result.text).not.toContain("passwd")
        expect(result.text).not.toContain("out-dir")
      }
      expect((yield* call("Glob", { pattern: "**/*.ts" })).text).toBe("src/a.ts")
    }).pipe(Effect.provide(guardedRuntime(dir))))
})

describe("Grep does not follow symlinks out of the workspace while recursing", () => {
  const dir = linkedWorkspace()

  it.effect("no output mode shows a line, a name or a count from behind an outward link", () =>
    Effect.gen(function*() {
      for (const output_mode of ["files_with_matches", "content", "count"] as const) {
        for (const pattern of ["OUTSIDE_MARKER", "root"]) {
          const result = yield* call("Grep", { pattern, output_mode })
          expect(result.status).toBe("success")
          expect(result.text).not.toContain("OUTSIDE_MARKER")
          expect(result.text).not.toContain("passwd")
          expect(result.text).not.toContain("out-dir")
        }
      }
      // The workspace's own files are found (in ripgrep's order, which its threads decide).
      const found = (yield* call("Grep", { pattern: "root" })).text.split("\n")
      expect(found[0]).toBe("Found 2 files")
      expect(found.slice(1).sort()).toEqual(["notes.txt", "src/a.ts"])
    }).pipe(Effect.provide(guardedRuntime(dir))))

  it.effect("naming the outward link itself asks, and with no one to ask it is denied", () =>
    Effect.gen(function*() {
      const result = yield* call("Grep", { pattern: "OUTSIDE_MARKER", path: "out-dir" })
      expect(result.status).toBe("denied")
      expect(result.text).not.toContain("key.pem")
    }).pipe(Effect.provide(guardedRuntime(dir))))
})

describe("a Read deny rule holds for another name of the same file", () => {
  const setUp = () => {
    const dir = tempDir("hardlink-")
    writeTree(dir, { "secret.env": "SECRET=hunter2\n", "notes.txt": "hello\n" })
    fs.linkSync(path.join(dir, "secret.env"), path.join(dir, "innocent.txt"))
    fs.mkdirSync(path.join(dir, "sub"))
    fs.linkSync(path.join(dir, "secret.env"), path.join(dir, "sub", "copy.md"))
    return dir
  }

  it.effect("Read of a hard link of a denied file is denied, saying why; other files still read", () => {
    const dir = setUp()
    return Effect.gen(function*() {
      for (const file of ["innocent.txt", "sub/copy.md", path.join(dir, "innocent.txt")]) {
        const result = yield* call("Read", { file_path: file })
        expect(result.status).toBe("denied")
        expect(result.text).toContain("was denied: deny rule `Read(./secret.env)` from cliArg")
        expect(result.text).not.toContain("hunter2")
      }
      expect((yield* call("Read", { file_path: "secret.env" })).status).toBe("denied")
      const notes = yield* call("Read", { file_path: "notes.txt" })
      expect(notes).toEqual({ status: "success", text: "     1\thello" })
    }).pipe(Effect.provide(guardedRuntime(dir, ["Read(./secret.env)"])))
  })

  it.effect("an Edit deny rule holds for a hard link too: Write and Edit of it are denied and the file is unchanged", () => {
    const dir = setUp()
    return Effect.gen(function*() {
      expect((yield* call("Read", { file_path: "innocent.txt" })).status).toBe("success")
      const write = yield* call("Write", { file_path: "innocent.txt", content: "SECRET=pwned\n" })
      expect(write.status).toBe("denied")
      expect(write.text).toContain("was denied: deny rule `Edit(./secret.env)` from cliArg")
      expect((yield* call("Read", { file_path: "sub/copy.md" })).status).toBe("success")
      const edit = yield* call("Edit", { file_path: "sub/copy.md", old_string: "hunter2", new_string: "pwned" })
      expect(edit.status).toBe("denied")
      expect(fs.readFileSync(path.join(dir, "secret.env"), "utf8")).toBe("SECRET=hunter2\n")
      // A file with one name is not affected.
      expect((yield* call("Read", { file_path: "notes.txt" })).status).toBe("success")
    }).pipe(Effect.provide(guardedRuntime(dir, ["Edit(./secret.env)"])))
  })

  it.effect("Grep and Glob withhold every name of the file", () => {
    const dir = setUp()
    return Effect.gen(function*() {
      const grep = yield* call("Grep", { pattern: "hunter2", output_mode: "content" })
      expect(grep.text).toBe("No matches found\n(3 files hidden by permission rules)")
      const glob = yield* call("Glob", { pattern: "**/*" })
      expect(glob.text).toBe("notes.txt\n(3 files hidden by permission rules)")
    }).pipe(Effect.provide(guardedRuntime(dir, ["Read(./secret.env)"])))
  })

  it.effect("the same holds for a bare-name rule, and for a denied file outside the workspace linked in", () => {
    const dir = setUp()
    const outside = tempDir("hardlink-out-")
    writeTree(outside, { "id_key": "PRIVATE KEY\n" })
    fs.linkSync(path.join(outside, "id_key"), path.join(dir, "key.txt"))
    return Effect.gen(function*() {
      expect((yield* call("Read", { file_path: "innocent.txt" })).status).toBe("denied")
      const key = yield* call("Read", { file_path: "key.txt" })
      expect(key.status).toBe("denied")
      expect(key.text).not.toContain("PRIVATE")
      expect((yield* call("Grep", { pattern: "PRIVATE" })).text).toBe(
        "No files found\n(1 file hidden by permission rules)"
      )
    }).pipe(Effect.provide(guardedRuntime(dir, ["Read(secret.env)", `Read(/${outside}/id_key)`])))
  })
})
