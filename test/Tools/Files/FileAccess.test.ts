/**
 * The file tools through FileAccess (the behaviour suite on both layers is `Behaviour.test.ts`): a turn on the memory
 * layer never touches the disk, the Node layer's statSync tells "absent" from "cannot inspect", and the
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
import { spawnAsNobody } from "../../support/index.js"
import { context, execute, executeOne, tempDir, text, use, writeTree } from "./helpers.js"

/** Every file under a directory with its content: what the disk holds. */
const snapshot = (root: string): Record<string, string> =>
  Object.fromEntries(
    (fs.readdirSync(root, { recursive: true, withFileTypes: true }) as Array<fs.Dirent>)
      .filter((entry) => entry.isFile())
      .map((entry) => {
        const file = path.join(entry.parentPath, entry.name)
        return [path.relative(root, file), fs.readFileSync(file, "utf8")]
      })
  )

const memoryRuntime = (cwd: string, access: Layer.Layer<FileAccess>) => {
  const tools = FileTools.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
    Layer.provideMerge(access),
    Layer.provide(NodeContext.layer)
  )
  return Layer.merge(testRuntime(FileTools.tools, tools, Approver.allowAll), tools)
}

describe("a turn on the memory layer never touches the disk", () => {
  it.effect("over a real directory it shadows: every tool sees memory only, and the disk is unchanged", () => {
    // The disk and memory hold different files at the same paths: a tool that fell back to node:fs (or ripgrep) would
    // read DISK, list only-on-disk.ts, or write to the directory; each of those fails an assertion below.
    const cwd = tempDir("access-shadow-")
    writeTree(cwd, { "notes.txt": "DISK notes\n", "only-on-disk.ts": "DISK only\n" })
    const before = snapshot(cwd)
    const memory = fileAccessMemory({
      files: { [path.join(cwd, "notes.txt")]: "MEMORY notes\n", [path.join(cwd, "src/m.ts")]: "MEMORY code\n" }
    })
    return Effect.gen(function*() {
      const outcomes = yield* execute(
        use("Read", { file_path: "notes.txt" }),
        use("Glob", { pattern: "**/*" }),
        use("Grep", { pattern: "MEMORY" }),
        use("Grep", { pattern: "DISK" }),
        use("Grep", { pattern: "code", output_mode: "content" }),
        use("Write", { file_path: "made.txt", content: "made in memory\n" })
      )
      expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(6).fill("success"))
      const [read, glob, memoryHits, diskHits, content] = outcomes.map(text)
      expect(read).toBe("     1\tMEMORY notes")
      expect(glob!.split("\n").sort()).toEqual(["notes.txt", "src/m.ts"])
      expect(memoryHits!.split("\n").slice(1).sort()).toEqual(["notes.txt", "src/m.ts"])
      expect(diskHits).toBe("No files found")
      expect(content).toBe("src/m.ts:1:MEMORY code")
      const edited = yield* executeOne(
        use("Edit", { file_path: "notes.txt", old_string: "MEMORY", new_string: "EDITED" })
      )
      expect(edited.status).toBe("success")
      const access = yield* FileAccess
      const made = yield* Effect.scoped(
        Effect.flatMap(access.openRead(path.join(cwd, "made.txt")), (handle) => handle.read(0, handle.info.size))
      )
      expect(new TextDecoder().decode(made)).toBe("made in memory\n")
      expect(snapshot(cwd)).toEqual(before)
    }).pipe(Effect.provide(memoryRuntime(cwd, memory)))
  })

  it.effect("at a path that does not exist on disk: the turn works and nothing is created", () => {
    const base = tempDir("access-absent-")
    const cwd = path.join(base, "not-on-disk", "work")
    const memory = fileAccessMemory({ files: { [path.join(cwd, "a.txt")]: "hello\n" } })
    return Effect.gen(function*() {
      const outcomes = yield* execute(
        use("Glob", { pattern: "*.txt" }),
        use("Grep", { pattern: "hel+o", output_mode: "count" }),
        use("Read", { file_path: "a.txt" }),
        use("Write", { file_path: "deep/new.txt", content: "x" })
      )
      expect(outcomes.map(text)).toEqual([
        "a.txt",
        "Found 1 total occurrence across 1 file\na.txt:1",
        "     1\thello",
        expect.stringContaining("File created successfully")
      ])
      expect(fs.readdirSync(base)).toEqual([])
    }).pipe(Effect.provide(memoryRuntime(cwd, memory)))
  })
})

describe("the Node layer's statSync", () => {
  it(
    "answers undefined for nothing there, and fails clearly (never \"absent\") when the path cannot be inspected",
    () => {
      const base = tempDir("access-eacces-")
      writeTree(base, { "locked/file.txt": "x", "plain.txt": "y" })
      // mkdtemp makes the directory 0700: let the probe (as nobody) in, up to the locked directory.
      fs.chmodSync(base, 0o755)
      fs.chmodSync(path.join(base, "locked"), 0o000)
      try {
        // Root passes every permission check: the probe runs as nobody then, in a child process.
        const probe = spawnAsNobody(`
        const { Effect } = await import("effect")
        const { FileAccess } = await import(${JSON.stringify(path.resolve("src/Session/FileAccess.ts"))})
        const access = Effect.runSync(Effect.provide(FileAccess, FileAccess.layer))
        const answer = (file) => {
          try { return access.statSync(file)?.type ?? "absent" } catch (e) { return e._tag + " " + e.reason + " " + e.message }
        }
        console.log(JSON.stringify([${
          ["locked/file.txt", "plain.txt", "missing.txt", "plain.txt/below"].map((f) =>
            JSON.stringify(path.join(base, f))
          )
            .join(", ")
        }].map(answer)))
      `)
        expect(probe.stderr).toBe("")
        const answers = JSON.parse(probe.stdout.trim()) as Array<string>
        expect(answers[0]).toMatch(/^FileAccessError EACCES EACCES: permission denied, stat '.*locked\/file\.txt'$/)
        expect(answers.slice(1)).toEqual(["File", "absent", "absent"])
      } finally {
        fs.chmodSync(path.join(base, "locked"), 0o755)
      }
      // A child process that compiles TypeScript at start: seconds on a loaded machine.
    },
    30_000
  )
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
