/**
 * One behaviour suite for the five file tools, run on both file-system layers: the Node layer over a real temp
 * directory and the memory layer seeded with the same tree (at a path that does not exist on disk). Each case states
 * what the tool must answer, computed here from the seed (and, for Glob's order, from the layer's own mtimes), so a
 * layer that differs fails. On the Node layer Grep runs ripgrep; on the memory layer its JavaScript search: the
 * Grep cases are where the two must agree.
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
import { FileAccess } from "../../../src/Session/FileAccess.js"
import { FileState } from "../../../src/Session/FileState.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { fileAccessMemory, testRuntime } from "../../../src/testing/index.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { executeOne, tempDir, text, use, writeTree } from "./helpers.js"

const long = `${"x".repeat(600)} TODO long\n`
const binary = new Uint8Array([...new TextEncoder().encode("ab"), 0, ...new TextEncoder().encode("TODO bin\n")])

/** The tree both layers hold (relative to the workspace). */
const seed: Record<string, string | Uint8Array> = {
  ".gitignore": "*.log\nbuild/\n",
  "notes.txt": "alpha\nbeta\ngamma\n",
  "src/a.ts": "export const a = 1\n// TODO one\n",
  "src/b.ts": "import { a } from \"./a\"\nexport const b = a + 1\n",
  "src/deep/c.ts": "// todo two\nconst c = 3\n",
  "src/deep/.gitignore": "gen.ts\n",
  "src/deep/gen.ts": "TODO generated\n",
  "docs/readme.md": "# TODO docs\nline two\nline three\nTODO again\n",
  "ctx.txt": "m1\na\nb\nc\nd\nm2\n",
  "multi.txt": "start\nmiddle\nend\n",
  "debug.log": "TODO log\n",
  "build/out.js": "TODO built\n",
  ".hidden/h.ts": "TODO hidden\n",
  ".git/config": "TODO git\n",
  ".env": "SECRET=TODO\n",
  "long.txt": long,
  "bin.dat": binary
}
/** Symlinks (relative to the workspace) to their targets: the searches never follow or list them. */
const links: Record<string, string> = { "link.ts": "src/a.ts", "linkdir": "src" }

/** The files Grep searches for `TODO` in a walk: not ignored, not under .git, not binary, not behind a link. */
const todoFiles = [".env", ".hidden/h.ts", "docs/readme.md", "long.txt", "src/a.ts"]

interface Setup {
  readonly name: string
  readonly cwd: string
  readonly access: Layer.Layer<FileAccess>
}

const nodeSetup = (): Setup => {
  const cwd = tempDir("behaviour-node-")
  writeTree(cwd, seed)
  for (const [link, target] of Object.entries(links)) fs.symlinkSync(path.join(cwd, target), path.join(cwd, link))
  return { name: "node", cwd, access: FileAccess.layer }
}

const memoryCwd = path.join(tempDir("behaviour-memory-"), "not-on-disk", "work")
const memorySetup = (): Setup => ({
  name: "memory",
  cwd: memoryCwd,
  access: fileAccessMemory({
    files: Object.fromEntries(Object.entries(seed).map(([name, content]) => [path.join(memoryCwd, name), content])),
    symlinks: Object.fromEntries(
      Object.entries(links).map(([link, target]) => [path.join(memoryCwd, link), path.join(memoryCwd, target)])
    )
  })
})

/** The five tools over a layer, with the tool-only policy and a runtime allowing everything. */
const runtimeOver = ({ access, cwd }: Setup) => {
  const tools = FileTools.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
    Layer.provideMerge(access),
    Layer.provide(NodeContext.layer)
  )
  return Layer.merge(testRuntime(FileTools.tools, tools, Approver.allowAll), tools)
}

/** The same with the full policy and deny rules. */
const guardedOver = ({ access, cwd }: Setup, deny: ReadonlyArray<string>) => {
  const tools = FileTools.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
    Layer.provideMerge(access),
    Layer.provide(NodeContext.layer)
  )
  const policy = RulePolicy.layer({ mode: "default", cliRules: { deny } }).pipe(
    Layer.provide(Layer.merge(tools, NodeContext.layer))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer(FileTools.tools), tools)),
    Layer.provide([policy, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()]),
    Layer.provideMerge(tools)
  )
}

const call = (name: string, input: Record<string, unknown>) =>
  executeOne(use(name, input)).pipe(Effect.map((outcome) => ({ status: outcome.status, text: text(outcome) })))

/** A file's content through the layer in context; undefined when it is not there. */
const contentOf = (file: string) =>
  Effect.flatMap(FileAccess, (access) =>
    Effect.scoped(
      access.openRead(file).pipe(
        Effect.flatMap((handle) => handle.read(0, handle.info.size)),
        Effect.map((bytes) => new TextDecoder().decode(bytes)),
        Effect.orElseSucceed(() => undefined)
      )
    ))

/** Lines of a files_with_matches or count answer after its summary line, sorted (rg's order is its threads'). */
const listed = (answer: string) => answer.split("\n").slice(1).sort()

describe.each([["node", nodeSetup], ["memory", memorySetup]] as const)("the file tools on the %s layer", (_, make) => {
  const setup = make()
  const { cwd } = setup
  const layer = runtimeOver(setup)

  describe("Read, Write, Edit", () => {
    it.effect("Read numbers the lines of a file; a range; a missing file", () =>
      Effect.gen(function*() {
        expect((yield* call("Read", { file_path: "notes.txt" })).text).toBe(
          "     1\talpha\n     2\tbeta\n     3\tgamma"
        )
        expect((yield* call("Read", { file_path: "notes.txt", offset: 2, limit: 1 })).text).toContain("     2\tbeta")
        expect((yield* call("Read", { file_path: "nope.txt" })).text).toContain("File does not exist")
      }).pipe(Effect.provide(layer)))

    it.effect("Read through a symlink inside the workspace reads its target", () =>
      Effect.gen(function*() {
        const read = yield* call("Read", { file_path: "link.ts" })
        expect(read.status).toBe("success")
        expect(read.text).toContain("     2\t// TODO one")
      }).pipe(Effect.provide(layer)))

    it.effect("Write creates a file (and its directories); Edit changes a read file", () =>
      Effect.gen(function*() {
        const created = yield* call("Write", { file_path: "new/dir/file.txt", content: "one\ntwo\n" })
        expect(created.text).toContain("File created successfully")
        expect(yield* contentOf(path.join(cwd, "new/dir/file.txt"))).toBe("one\ntwo\n")
        yield* call("Read", { file_path: "src/b.ts" })
        const edited = yield* call("Edit", { file_path: "src/b.ts", old_string: "a + 1", new_string: "a + 2" })
        expect(edited.status).toBe("success")
        expect(yield* contentOf(path.join(cwd, "src/b.ts"))).toBe("import { a } from \"./a\"\nexport const b = a + 2\n")
      }).pipe(Effect.provide(layer)))

    it.effect("Write over a file never read, and Edit of a string that is not there, are refused", () =>
      Effect.gen(function*() {
        expect((yield* call("Write", { file_path: "notes.txt", content: "gone" })).text).toContain(
          "has not been read yet"
        )
        yield* call("Read", { file_path: "notes.txt" })
        const missing = yield* call("Edit", { file_path: "notes.txt", old_string: "delta", new_string: "x" })
        expect(missing.status).toBe("error")
        expect(yield* contentOf(path.join(cwd, "notes.txt"))).toBe(seed["notes.txt"])
      }).pipe(Effect.provide(layer)))
  })

  describe("Glob", () => {
    /** Glob's answer for files (relative): newest first by the layer's own mtimes, ties by path. */
    const newestFirst = (files: ReadonlyArray<string>) =>
      Effect.flatMap(FileAccess, (access) =>
        Effect.map(
          Effect.forEach(files, (file) => Effect.map(access.lstat(path.join(cwd, file)), (info) => ({ file, info }))),
          (stamped) =>
            stamped.sort((a, b) =>
              b.info!.mtimeMs - a.info!.mtimeMs || path.join(cwd, a.file).localeCompare(path.join(cwd, b.file))
            ).map(({ file }) => file)
        ))

    it.effect("lists matches newest first; .gitignored, .git, and symlinks are left out; dotfiles are in", () =>
      Effect.gen(function*() {
        const answer = yield* call("Glob", { pattern: "**/*.ts" })
        const expected = yield* newestFirst([".hidden/h.ts", "src/a.ts", "src/b.ts", "src/deep/c.ts"])
        expect(answer.text.split("\n")).toEqual(expected)
      }).pipe(Effect.provide(layer)))

    it.effect("under path, an absolute pattern, a brace pattern, and no match", () =>
      Effect.gen(function*() {
        expect((yield* call("Glob", { pattern: "*.ts", path: "src" })).text.split("\n")).toEqual(
          yield* newestFirst(["src/a.ts", "src/b.ts"])
        )
        expect((yield* call("Glob", { pattern: `${cwd}/src/deep/*` })).text.split("\n")).toEqual(
          yield* newestFirst(["src/deep/.gitignore", "src/deep/c.ts"])
        )
        expect((yield* call("Glob", { pattern: "*.{md,txt}", path: "docs" })).text).toBe("docs/readme.md")
        expect((yield* call("Glob", { pattern: "**/*.log" })).text).toBe("No files found")
        expect((yield* call("Glob", { pattern: "src/a.ts" })).text).toBe("src/a.ts")
      }).pipe(Effect.provide(layer)))

    it.effect("refuses `..`, a missing directory, and a file as path", () =>
      Effect.gen(function*() {
        expect((yield* call("Glob", { pattern: "../**" })).text).toContain("may not contain `..`")
        expect((yield* call("Glob", { pattern: "*", path: "nope" })).text).toContain("Directory does not exist")
        expect((yield* call("Glob", { pattern: "*", path: "notes.txt" })).text).toContain("is not a directory")
      }).pipe(Effect.provide(layer)))
  })

  describe("Grep", () => {
    it.effect("files_with_matches: ignored, .git, binary and linked files are not searched; -i widens", () =>
      Effect.gen(function*() {
        const answer = yield* call("Grep", { pattern: "TODO" })
        expect(answer.text.split("\n")[0]).toBe(`Found ${todoFiles.length} files`)
        expect(listed(answer.text)).toEqual(todoFiles)
        const folded = yield* call("Grep", { pattern: "todo", "-i": true })
        expect(listed(folded.text)).toEqual([...todoFiles, "src/deep/c.ts"].sort())
        expect((yield* call("Grep", { pattern: "no such words" })).text).toBe("No files found")
      }).pipe(Effect.provide(layer)))

    it.effect("content with and without line numbers, -o, and under a path", () =>
      Effect.gen(function*() {
        const content = yield* call("Grep", { pattern: "TODO", path: "docs", output_mode: "content" })
        expect(content.text).toBe("docs/readme.md:1:# TODO docs\ndocs/readme.md:4:TODO again")
        const bare = yield* call("Grep", { pattern: "TODO", path: "docs", output_mode: "content", "-n": false })
        expect(bare.text).toBe("docs/readme.md:# TODO docs\ndocs/readme.md:TODO again")
        const only = yield* call("Grep", { pattern: "T.DO \\w+", path: "docs", output_mode: "content", "-o": true })
        expect(only.text).toBe("docs/readme.md:1:TODO docs\ndocs/readme.md:4:TODO again")
      }).pipe(Effect.provide(layer)))

    it.effect("context: -C, context, -A, -B, with separators between groups only", () =>
      Effect.gen(function*() {
        const grep = (extra: Record<string, unknown>) =>
          Effect.map(call("Grep", { pattern: "^m", path: "ctx.txt", output_mode: "content", ...extra }), (a) => a.text)
        expect(yield* grep({ "-C": 1 })).toBe("ctx.txt:1:m1\nctx.txt-2-a\n--\nctx.txt-5-d\nctx.txt:6:m2")
        expect(yield* grep({ context: 2 })).toBe(
          "ctx.txt:1:m1\nctx.txt-2-a\nctx.txt-3-b\nctx.txt-4-c\nctx.txt-5-d\nctx.txt:6:m2"
        )
        expect(yield* grep({ "-A": 1 })).toBe("ctx.txt:1:m1\nctx.txt-2-a\n--\nctx.txt:6:m2")
        expect(yield* grep({ "-B": 1 })).toBe("ctx.txt:1:m1\n--\nctx.txt-5-d\nctx.txt:6:m2")
      }).pipe(Effect.provide(layer)))

    it.effect("count mode counts matching lines per file", () =>
      Effect.gen(function*() {
        const counted = yield* call("Grep", { pattern: "TODO", output_mode: "count" })
        expect(counted.text.split("\n")[0]).toBe(`Found 6 total occurrences across ${todoFiles.length} files`)
        expect(listed(counted.text)).toEqual(todoFiles.map((file) => `${file}:${file === "docs/readme.md" ? 2 : 1}`))
      }).pipe(Effect.provide(layer)))

    it.effect("multiline lets a pattern span lines", () =>
      Effect.gen(function*() {
        const spanning = yield* call("Grep", {
          pattern: "start.middle",
          path: "multi.txt",
          output_mode: "content",
          multiline: true
        })
        expect(spanning.text).toBe("multi.txt:1:start\nmulti.txt:2:middle")
        const counted = yield* call("Grep", { pattern: "start\\nmiddle", multiline: true, output_mode: "count" })
        expect(listed(counted.text)).toEqual(["multi.txt:1"])
        const single = yield* call("Grep", { pattern: "start.middle", path: "multi.txt", output_mode: "content" })
        expect(single.text).toBe("No matches found")
      }).pipe(Effect.provide(layer)))

    it.effect("glob and type filters; a glob overrides .gitignore as in rg", () =>
      Effect.gen(function*() {
        expect(listed((yield* call("Grep", { pattern: "TODO", glob: "*.md" })).text)).toEqual(["docs/readme.md"])
        expect(listed((yield* call("Grep", { pattern: "TODO", type: "ts" })).text)).toEqual([
          ".hidden/h.ts",
          "src/a.ts"
        ])
        expect(listed((yield* call("Grep", { pattern: "TODO", glob: "*.log" })).text)).toEqual(["debug.log"])
        // A whitelist glob overrides ignore files: src/deep/gen.ts is searched.
        expect(listed((yield* call("Grep", { pattern: "TODO", glob: "src/**" })).text)).toEqual([
          "src/a.ts",
          "src/deep/gen.ts"
        ])
        expect(listed((yield* call("Grep", { pattern: "TODO", glob: "!*.ts" })).text)).toEqual(
          todoFiles.filter((file) => !file.endsWith(".ts"))
        )
      }).pipe(Effect.provide(layer)))

    it.effect("head_limit and offset page through one file's lines", () =>
      Effect.gen(function*() {
        const page = (head_limit: number, offset: number) =>
          Effect.map(
            call("Grep", { pattern: ".", path: "ctx.txt", output_mode: "content", head_limit, offset }),
            (a) => a.text
          )
        expect(yield* page(2, 0)).toBe(
          "ctx.txt:1:m1\nctx.txt:2:a\n(Output truncated at head_limit or the size cap: narrow the search, raise head_limit, or read on with offset.)"
        )
        expect((yield* page(2, 2)).split("\n").slice(0, 2)).toEqual(["ctx.txt:3:b", "ctx.txt:4:c"])
        expect(yield* page(10, 4)).toBe("ctx.txt:5:d\nctx.txt:6:m2")
      }).pipe(Effect.provide(layer)))

    it.effect("a long line is cut as rg cuts it; a binary file given as path says it matches", () =>
      Effect.gen(function*() {
        const cut = yield* call("Grep", { pattern: "TODO", path: "long.txt", output_mode: "content" })
        expect(cut.text).toBe(`long.txt:1:${"x".repeat(500)} [... omitted end of long line]`)
        const bin = yield* call("Grep", { pattern: "TODO", path: "bin.dat", output_mode: "content" })
        expect(bin.text).toBe("bin.dat: binary file matches (found \"\\0\" byte around offset 2)")
        expect((yield* call("Grep", { pattern: "TODO", path: "bin.dat" })).text).toBe("Found 1 file\nbin.dat")
      }).pipe(Effect.provide(layer)))

    it.effect("a bad pattern and a missing path are errors", () =>
      Effect.gen(function*() {
        const bad = yield* call("Grep", { pattern: "(unclosed" })
        expect(bad.status).toBe("error")
        expect(bad.text).toContain("regex parse error")
        expect((yield* call("Grep", { pattern: "x", path: "nope" })).text).toContain("Path does not exist")
      }).pipe(Effect.provide(layer)))
  })

  describe("deny rules hold the same way", () => {
    it.effect("Read(./.env) denies its Read and withholds it from Grep and Glob, saying how many", () =>
      Effect.gen(function*() {
        const read = yield* call("Read", { file_path: ".env" })
        expect(read.status).not.toBe("success")
        expect(read.text).not.toContain("SECRET")
        const grep = yield* call("Grep", { pattern: "TODO" })
        expect(listed(grep.text).filter((line) => !line.startsWith("("))).toEqual(
          todoFiles.filter((file) => file !== ".env")
        )
        expect(grep.text).toContain("(1 file hidden by permission rules)")
        const glob = yield* call("Glob", { pattern: ".env*" })
        expect(glob.text).toBe("No files found\n(1 file hidden by permission rules)")
      }).pipe(Effect.provide(guardedOver(setup, ["Read(./.env)"]))))
  })
})

describe("the memory layer", () => {
  it("left nothing on disk", () => {
    // Runs after the suites above (vitest keeps file order): the memory workspace's directory was never created.
    expect(fs.existsSync(path.dirname(memoryCwd))).toBe(false)
  })
})
