/**
 * Read deny rules hold inside searches: Grep and Glob over a directory, through the ToolRuntime with the full
 * permission policy, never show a denied file, its lines or its name; they only say how many files they withheld.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { Approver } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { Grep } from "../../../src/Tools/Grep.js"
import { context, executeOne, runtimeLayer, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

const workspace = () => {
  const dir = tempDir("withheld-")
  writeTree(dir, {
    ".env": "SECRET=hunter2\n",
    "secrets/key.txt": "hunter2\n",
    "secrets/a:1:b.txt": "hunter2\n",
    "src/app.ts": "const before = 0\nconst password = \"hunter2\"\nconst after = 1\n"
  })
  fs.symlinkSync("../secrets/key.txt", path.join(dir, "src", "link.txt"))
  return dir
}

/** The file tools under the full policy with `deny` rules; nothing is ever approved by a person. */
const guardedRuntime = (cwd: string, deny: ReadonlyArray<string>) => {
  const tools = toolsLayer(cwd)
  const policy = RulePolicy.layer({ cliRules: { deny } }).pipe(Layer.provide(Layer.merge(tools, NodeContext.layer)))
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer(FileTools.tools), tools)),
    Layer.provide([policy, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )
}

const rules = ["Read(./.env)", "Read(./secrets/**)"]
const grep = (input: Record<string, unknown>) =>
  executeOne(use("Grep", input)).pipe(Effect.map((outcome) => ({ status: outcome.status, text: text(outcome) })))
const glob = (input: Record<string, unknown>) =>
  executeOne(use("Glob", input)).pipe(Effect.map((outcome) => ({ status: outcome.status, text: text(outcome) })))

const leaksNothing = (output: string) => {
  expect(output).not.toContain(".env")
  expect(output).not.toContain("SECRET")
  expect(output).not.toContain("secrets")
  expect(output).not.toContain("key.txt")
  expect(output).not.toContain("link.txt")
}

describe("searches honour Read deny rules", () => {
  const dir = workspace()
  const layer = guardedRuntime(dir, rules)

  it.effect("Grep over `.` in files_with_matches mode lists only the allowed file and says how many were hidden", () =>
    Effect.gen(function*() {
      const result = yield* grep({ pattern: "hunter2", path: "." })
      expect(result.status).toBe("success")
      expect(result.text.split("\n")).toEqual(["Found 1 file", "src/app.ts", "(3 files hidden by permission rules)"])
      leaksNothing(result.text)
    }).pipe(Effect.provide(layer)))

  it.effect("Grep in content mode shows only the allowed file's lines, with or without line numbers and context", () =>
    Effect.gen(function*() {
      const plain = yield* grep({ pattern: "hunter2", path: ".", output_mode: "content" })
      expect(plain.text.split("\n")).toEqual([
        "src/app.ts:2:const password = \"hunter2\"",
        "(3 files hidden by permission rules)"
      ])
      const context = yield* grep({ pattern: "hunter2", output_mode: "content", "-C": 1, "-n": false })
      expect(context.text.split("\n")).toEqual([
        "src/app.ts-const before = 0",
        "src/app.ts:const password = \"hunter2\"",
        "src/app.ts-const after = 1",
        "(3 files hidden by permission rules)"
      ])
      leaksNothing(plain.text)
      leaksNothing(context.text)
    }).pipe(Effect.provide(layer)))

  it.effect("Grep in count mode counts only the allowed file", () =>
    Effect.gen(function*() {
      const result = yield* grep({ pattern: "hunter2", output_mode: "count" })
      expect(result.text.split("\n")).toEqual([
        "Found 1 total occurrence across 1 file",
        "src/app.ts:1",
        "(3 files hidden by permission rules)"
      ])
      leaksNothing(result.text)
    }).pipe(Effect.provide(layer)))

  it.effect("withheld files do not use up head_limit", () =>
    Effect.gen(function*() {
      const result = yield* grep({ pattern: "hunter2", head_limit: 1 })
      expect(result.text.split("\n").slice(0, 2)).toEqual(["Found 1 file", "src/app.ts"])
    }).pipe(Effect.provide(layer)))

  it.effect("Glob `**/*` lists neither `.env`, nor anything in `secrets/`, nor the link into it", () =>
    Effect.gen(function*() {
      const result = yield* glob({ pattern: "**/*" })
      expect(result.status).toBe("success")
      expect(result.text.split("\n")).toEqual(["src/app.ts", "(3 files hidden by permission rules)"])
      leaksNothing(result.text)
    }).pipe(Effect.provide(layer)))

  it.effect("a search rooted in a denied directory, or at a link into it, is denied outright", () =>
    Effect.gen(function*() {
      for (
        const input of [{ pattern: "hunter2", path: "secrets" }, { pattern: "hunter2", path: "src/link.txt" }, {
          pattern: "x",
          path: ".env"
        }]
      ) {
        const result = yield* grep(input)
        expect(result.status).toBe("denied")
        expect(result.text).not.toContain("hunter2\n")
      }
      expect((yield* glob({ pattern: "*", path: "secrets" })).status).toBe("denied")
    }).pipe(Effect.provide(layer)))

  it.effect("with nothing denied nothing is hidden, and no note is added", () =>
    Effect.gen(function*() {
      const result = yield* grep({ pattern: "SECRET", path: "." })
      expect(result.text).toBe("Found 1 file\n.env")
    }).pipe(Effect.provide(guardedRuntime(dir, ["Read(./secrets/**)", "Edit(./.env)"]))))

  it.effect("the tool-only policy hides nothing", () =>
    Effect.gen(function*() {
      const found = yield* grep({ pattern: "hunter2" })
      expect(found.text.split("\n").slice(1).sort()).toEqual([
        ".env",
        "secrets/a:1:b.txt",
        "secrets/key.txt",
        "src/app.ts"
      ])
      expect(found.text).not.toContain("hidden")
      const listed = yield* glob({ pattern: "**/*" })
      expect(listed.text.split("\n").sort()).toEqual([".env", "secrets/a:1:b.txt", "secrets/key.txt", "src/app.ts"])
    }).pipe(Effect.provide(runtimeLayer(dir))))
})

describe("Grep ties every line to its file, whatever the file is called", () => {
  const dir = tempDir("withheld-names-")
  writeTree(dir, {
    "a:1:b.ts": "x\nneedle\n",
    "c-2-d.ts": "needle\n",
    "deny:me.txt": "needle\n",
    "deny-me-too.txt": "y\nneedle\nz\n"
  })
  const layer = guardedRuntime(dir, ["Read(deny*)"])

  it.effect("paths with `:` and `-` come back whole, in every mode, and denied ones stay out", () =>
    Effect.gen(function*() {
      const content = yield* grep({ pattern: "needle", output_mode: "content", "-B": 1 })
      const lines = content.text.split("\n")
      expect(lines.at(-1)).toBe("(2 files hidden by permission rules)")
      expect(lines.slice(0, -1).filter((line) => line !== "--").sort()).toEqual([
        "a:1:b.ts-1-x",
        "a:1:b.ts:2:needle",
        "c-2-d.ts:1:needle"
      ])
      // A separator only ever stands between two groups that are shown.
      expect(lines[0]).not.toBe("--")
      expect(lines.at(-2)).not.toBe("--")
      expect(lines.some((line, i) => line === "--" && lines[i + 1] === "--")).toBe(false)
      const count = yield* grep({ pattern: "needle", output_mode: "count" })
      expect(count.text.split("\n").slice(1, -1).sort()).toEqual(["a:1:b.ts:1", "c-2-d.ts:1"])
      const files = yield* grep({ pattern: "needle" })
      expect(files.text.split("\n").slice(1, -1).sort()).toEqual(["a:1:b.ts", "c-2-d.ts"])
      for (const output of [content.text, count.text, files.text]) expect(output).not.toContain("deny")
    }).pipe(Effect.provide(layer)))
})

describe("Grep keeps denied files out whatever rg prints between records", () => {
  const dir = tempDir("withheld-binary-")
  writeTree(dir, {
    // Matches, then a NUL byte past rg's first look: rg prints the matches, then a note with no NUL after the path.
    "a.bin": Buffer.concat([Buffer.from("hunter2\n".repeat(30_000)), Buffer.from([0])]),
    "secrets/key.txt": "hunter2 SECRET=xyz\n",
    "src/app.ts": "const password = \"hunter2\"\n"
  })
  // A name with a newline whose last part is a denied path: shown, it could pass for a record of that file.
  fs.mkdirSync(path.join(dir, "x\nsecrets"))
  fs.writeFileSync(path.join(dir, "x\nsecrets", "key.txt"), "hunter2 SECRET=abc\n")
  const layer = guardedRuntime(dir, ["Read(./secrets/**)"])

  it.effect("rg's note that it stopped at a binary file's NUL byte is a line of its own: the next file is checked", () =>
    Effect.gen(function*() {
      const note = "a.bin: WARNING: stopped searching binary file after match (found \"\\0\" byte around offset 240000)"
      // The whole answer, from the tool itself (through the runtime it would be saved to a file, being large).
      const service = yield* Grep
      const denied = (file: string) => file.split(path.sep).includes("secrets")
      const whole = yield* Effect.scoped(
        service.plan({ pattern: "hunter2", output_mode: "content" }).call({ ...context, isReadDenied: denied })
      )
      // rg printed the matches it had read before the NUL byte (how many depends on its buffer), then the note.
      const at = whole.lines.indexOf(note)
      expect(at).toBeGreaterThan(1000)
      expect(whole.lines.slice(0, at).every((line) => /^a\.bin:\d+:hunter2$/.test(line))).toBe(true)
      expect(whole.lines.slice(at + 1)).toEqual(["src/app.ts:1:const password = \"hunter2\""])
      expect(whole.withheld).toBe(2)
      // Through the runtime and its deny rules, a page that starts just before the note.
      const page = yield* grep({ pattern: "hunter2", output_mode: "content", offset: at - 1 })
      expect(page.text.split("\n")).toEqual([
        whole.lines[at - 1],
        note,
        "src/app.ts:1:const password = \"hunter2\"",
        "(2 files hidden by permission rules)"
      ])
      expect(page.text).not.toContain("SECRET")
    }).pipe(Effect.provide(Layer.merge(layer, toolsLayer(dir)))))
})

describe("Grep does not take a file's name for one of rg's notes", () => {
  const dir = tempDir("withheld-notes-")
  const note = (path: string, stopped: boolean) =>
    `${path}: ${
      stopped ? "WARNING: stopped searching binary file after match" : "binary file matches"
    } (found "\\0" byte around offset 1)`
  writeTree(dir, {
    // Names that hold a note's line and a newline, in a denied directory: the part after the newline is allowed.
    [`private/${note("X", false)}\nsecret`]: "TOPSECRET one\n",
    "private/Y": "TOPSECRET two\n",
    [`private/${note("./private/Y", true).slice("./private/".length)}\nsecret2`]: "TOPSECRET three\n",
    "public.txt": "TOPSECRET public\n"
  })
  const layer = guardedRuntime(dir, ["Read(./private/**)"])

  it.effect("a name made to look like a note, even after the file it names, stays withheld", () =>
    Effect.gen(function*() {
      for (const output_mode of ["content", "files_with_matches", "count"]) {
        const found = yield* grep({ pattern: "TOPSECRET", output_mode })
        expect(found.text).not.toContain("one")
        expect(found.text).not.toContain("two")
        expect(found.text).not.toContain("three")
        expect(found.text).not.toContain("secret")
        expect(found.text).not.toContain("private")
        expect(found.text).toContain("public")
        expect(found.text).toContain("(3 files hidden by permission rules)")
      }
    }).pipe(Effect.provide(layer)))
})

describe("rg's complaints name no denied file", () => {
  const dir = tempDir("withheld-complaints-")
  writeTree(dir, { "top.txt": "nothing\n" })
  // Under a denied directory whose name holds a newline, a tree deeper than PATH_MAX: rg complains "File name too
  // long" about it, and the complaint runs over two lines.
  const deep = (first: string) =>
    childProcess.execFileSync("bash", [
      "-c",
      `mkdir -p "$1" && cd "$1" && for i in $(seq 20); do mkdir "$2" && cd "$2"; done && echo hit > f.txt`,
      "deep",
      path.join(dir, first),
      "d".repeat(250)
    ])
  deep("private/x\ny")
  deep("pub/x\nz")
  const layer = guardedRuntime(dir, ["Read(./private/**)"])

  it.effect("a complaint about a denied path is left out whole, one about an allowed path is a warning, not a failure", () =>
    Effect.gen(function*() {
      const found = yield* grep({ pattern: "hit" })
      expect(found.status).toBe("success")
      expect(found.text).not.toContain("private")
      expect(found.text).toContain("(ripgrep reported: rg: ./pub/x\nz/ddd")
      expect(found.text).toMatch(/: File ?name too long \(os error 36\)\)$/)
    }).pipe(Effect.provide(layer)))
})
