/**
 * The file tools through FileAccess: one behaviour suite for Read, Write and Edit on the Node layer (a real temp
 * directory) and on the memory layer (a directory that does not exist on disk, which stays absent), and the
 * check-then-use window: a symlink swapped between the decision and the call does not redirect the read.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Approver } from "../../../src/Permission/Approver.js"
import { FileAccess } from "../../../src/Session/FileAccess.js"
import { FileState } from "../../../src/Session/FileState.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { fileAccessMemory, testRuntime } from "../../../src/testing/index.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { Read } from "../../../src/Tools/Read.js"
import { context, executeOne, tempDir, text, use, writeTree } from "./helpers.js"

const seed = { "notes.txt": "alpha\nbeta\ngamma\n", "src/a.ts": "export const a = 1\n" }

interface Setup {
  readonly cwd: string
  readonly layer: ReturnType<typeof runtimeOver>
  /** What the file holds, read through the same layer's FileAccess. */
  readonly contentOf: ReturnType<typeof contentThrough>
}

const contentThrough = (cwd: string) => (relative: string) =>
  Effect.flatMap(FileAccess, (access) =>
    Effect.scoped(
      access.openRead(path.join(cwd, relative)).pipe(
        Effect.flatMap((handle) => handle.read(0, handle.info.size)),
        Effect.map((bytes) => new TextDecoder().decode(bytes)),
        Effect.orElseSucceed(() => undefined)
      )
    ))

const runtimeOver = (cwd: string, access: Layer.Layer<FileAccess>) => {
  const tools = FileTools.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
    Layer.provideMerge(access),
    Layer.provide(NodeContext.layer)
  )
  return Layer.merge(testRuntime(FileTools.tools, tools, Approver.allowAll), tools)
}

const nodeSetup = (): Setup => {
  const cwd = tempDir("access-node-")
  writeTree(cwd, seed)
  return { cwd, layer: runtimeOver(cwd, FileAccess.layer), contentOf: contentThrough(cwd) }
}

// A path that is not on disk: any touch of the disk would fail to find it (or create it, which the test checks).
const memoryCwd = path.join(tempDir("access-memory-"), "not-on-disk", "work")
const memorySetup = (): Setup => {
  const files = Object.fromEntries(Object.entries(seed).map(([name, content]) => [path.join(memoryCwd, name), content]))
  return {
    cwd: memoryCwd,
    layer: runtimeOver(memoryCwd, fileAccessMemory({ files })),
    contentOf: contentThrough(memoryCwd)
  }
}

describe.each([["node", nodeSetup], ["memory", memorySetup]] as const)("file tools on the %s layer", (_name, setup) => {
  it.effect("Read numbers the lines of a file", () => {
    const { layer } = setup()
    return Effect.gen(function*() {
      const outcome = yield* executeOne(use("Read", { file_path: "notes.txt" }))
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toBe("     1\talpha\n     2\tbeta\n     3\tgamma")
      const ranged = yield* executeOne(use("Read", { file_path: "notes.txt", offset: 2, limit: 1 }))
      expect(text(ranged)).toContain("     2\tbeta")
      const missing = yield* executeOne(use("Read", { file_path: "nope.txt" }))
      expect(text(missing)).toContain("File does not exist")
    }).pipe(Effect.provide(layer))
  })

  it.effect("Write creates a file and replaces a read one; Edit changes it", () => {
    const { contentOf, layer } = setup()
    return Effect.gen(function*() {
      const created = yield* executeOne(use("Write", { file_path: "new/dir/file.txt", content: "one\ntwo\n" }))
      expect(text(created)).toContain("File created successfully")
      expect(yield* contentOf("new/dir/file.txt")).toBe("one\ntwo\n")

      yield* executeOne(use("Read", { file_path: "src/a.ts" }))
      const edited = yield* executeOne(
        use("Edit", { file_path: "src/a.ts", old_string: "= 1", new_string: "= 2", replace_all: false })
      )
      expect(edited.status).toBe("success")
      expect(yield* contentOf("src/a.ts")).toBe("export const a = 2\n")
    }).pipe(Effect.provide(layer))
  })

  it.effect("Write over a file never read is refused", () => {
    const { contentOf, layer } = setup()
    return Effect.gen(function*() {
      const refused = yield* executeOne(use("Write", { file_path: "notes.txt", content: "gone" }))
      expect(text(refused)).toContain("has not been read yet")
      expect(yield* contentOf("notes.txt")).toBe(seed["notes.txt"])
    }).pipe(Effect.provide(layer))
  })
})

describe("the memory layer", () => {
  it("left nothing on disk", () => {
    // Runs after the suite above (vitest keeps file order): the memory workspace's directory was never created.
    expect(fs.existsSync(path.dirname(memoryCwd))).toBe(false)
  })
})

describe("resolve, check and open in one step", () => {
  // Layout: <base>/work is the workspace, <base>/outside holds a secret; work/link -> work/inside.txt.
  const layout = () => {
    const base = tempDir("access-swap-")
    writeTree(base, { "work/inside.txt": "inside\n", "outside/secret.txt": "secret\n" })
    const work = path.join(base, "work")
    fs.symlinkSync(path.join(work, "inside.txt"), path.join(work, "link"))
    const tools = FileTools.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Workspace.layer({ cwd: work }), FileState.layer())),
      Layer.provide(NodeContext.layer)
    )
    return { base, work, tools }
  }

  it.effect("a symlink swapped between the decision and the call is refused, and the secret is not read", () => {
    const { base, tools, work } = layout()
    return Effect.gen(function*() {
      const read = yield* Read
      const invocation = read.plan({ file_path: path.join(work, "link") })
      // Decided on what the link points to now: inside the workspace, so no opinion (the policy allows reads inside).
      const check = yield* invocation.checkPermissions(context)
      expect(check._tag).toBe("Passthrough")
      // The swap, after the decision and before the call.
      fs.rmSync(path.join(work, "link"))
      fs.symlinkSync(path.join(base, "outside", "secret.txt"), path.join(work, "link"))
      const result = yield* Effect.either(Effect.scoped(invocation.call(context)))
      expect(result._tag).toBe("Left")
      expect(JSON.stringify(result)).toContain("changed after permission was decided")
      expect(JSON.stringify(result)).not.toContain("secret\\n")
    }).pipe(Effect.provide(tools))
  })

  it.effect("the planned file itself replaced by a symlink is refused by the no-follow open", () => {
    const { base, tools, work } = layout()
    return Effect.gen(function*() {
      const read = yield* Read
      const target = path.join(work, "inside.txt")
      const invocation = read.plan({ file_path: target })
      expect((yield* invocation.checkPermissions(context))._tag).toBe("Passthrough")
      fs.rmSync(target)
      fs.symlinkSync(path.join(base, "outside", "secret.txt"), target)
      const result = yield* Effect.either(Effect.scoped(invocation.call(context)))
      expect(result._tag).toBe("Left")
      expect(JSON.stringify(result)).not.toContain("secret\\n")
    }).pipe(Effect.provide(tools))
  })

  it.effect("without a swap the planned call reads the file", () => {
    const { tools, work } = layout()
    return Effect.gen(function*() {
      const read = yield* Read
      const invocation = read.plan({ file_path: path.join(work, "link") })
      const output = yield* Effect.scoped(invocation.call(context))
      expect(output).toMatchObject({ _tag: "Text", content: "     1\tinside" })
    }).pipe(Effect.provide(tools))
  })
})
