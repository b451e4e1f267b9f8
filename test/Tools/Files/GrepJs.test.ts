/**
 * Grep's JavaScript search (what runs on the memory layer) against ripgrep (what runs on the Node layer): the same
 * generated trees, patterns and flags, written to disk for rg and seeded in memory for the JavaScript search, must give
 * the same answer. ripgrep is the oracle here: an implementation written apart from ours. Lines and counts are compared
 * exactly (both go file by file in path order); files with matches as sorted lines, since they are put newest first and
 * the two file systems' times differ.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { rgPath } from "@vscode/ripgrep"
import { Effect, Layer } from "effect"
import * as fc from "effect/FastCheck"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Approver } from "../../../src/Permission/Approver.js"
import { FileAccess } from "../../../src/Session/FileAccess.js"
import { FileState } from "../../../src/Session/FileState.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { fileAccessMemory, testRuntime } from "../../../src/testing/index.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { ripgrepTypes } from "../../../src/Tools/internal/ripgrepTypes.js"
import { executeOne, tempDir, text, use, writeTree } from "./helpers.js"

const runtimeOver = (cwd: string, access: Layer.Layer<FileAccess>) => {
  const tools = FileTools.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
    Layer.provideMerge(access),
    Layer.provide(NodeContext.layer)
  )
  return testRuntime(FileTools.tools, tools, Approver.allowAll)
}

// "d.ts" beside "d/", and names whose UTF-16 and UTF-8 orders differ (U+FF01, U+E000, an emoji): rg sorts bytes.
const names = [
  "a.ts",
  "b.md",
  "c.txt",
  "d.ts",
  "d/e.ts",
  "d/f.md",
  "d/g/h.ts",
  ".dot.ts",
  "d/.gitignore",
  ".gitignore",
  // The other kinds rg reads, which outrank .gitignore whatever the depth: .ignore, .rgignore, git's exclude file.
  ".ignore",
  "d/.rgignore",
  ".git/info/exclude",
  "\uff01.ts",
  "\ue000.ts",
  "\u{1f600}.ts"
]
// Text where Rust's and JavaScript's regexes part ways: a CR (JavaScript's `.` and `$` stop at it), U+2028, an
// emoji, Greek, a BOM (JavaScript's `\s`), a word character that is not ASCII before a word.
const lines = [
  "foo",
  "bar baz",
  "Foo bar",
  "",
  "x foo y foo",
  "baz",
  "FOO",
  "end bar",
  "é foo",
  "éfoo a:😀",
  "foo\r",
  "a\rb\u2028c",
  "αβ x1 \ufeff"
]
const gitignores = ["*.md", "g/", "!f.md", "c.txt", "h.ts", "!*.md", "!c.txt", "a.ts"]

const tree = fc.dictionary(
  fc.constantFrom(...names),
  fc.array(fc.constantFrom(...lines), { maxLength: 8 }),
  { minKeys: 1 }
).map((files) =>
  Object.fromEntries(
    Object.entries(files).map((
      [name, content]
    ) => [
      name,
      /(?:ignore|exclude)$/.test(name)
        ? content.map((line, i) => gitignores[(i + line.length) % gitignores.length]).join("\n")
        : content.join("\n")
    ])
  )
)

const input = fc.record({
  // Some can match a newline (`.` under multiline, a negated class, `\\s`), which changes what rg counts.
  pattern: fc.constantFrom(
    "foo",
    "^bar",
    "o+",
    "F.o",
    "baz$",
    "\\bfoo\\b",
    "bar|baz",
    "[a-z]+ [a-z]+",
    "^$",
    "o[^a-z]",
    "o\\s+b",
    "\\w+",
    // Rust's syntax where JavaScript's reads otherwise or not at all.
    "a.b",
    "foo.$",
    "\\bfoo",
    "\\<foo\\>",
    "\\:.",
    "[[:digit:]]+",
    "\\p{Greek}+",
    "\\pL+",
    "\\x{41}",
    "\\Afoo",
    "\\s",
    "o\\z"
  ),
  output_mode: fc.constantFrom("content", "files_with_matches", "count"),
  "-i": fc.boolean(),
  "-o": fc.boolean(),
  "-n": fc.boolean(),
  context: fc.constantFrom(undefined, 0, 1, 2),
  "-A": fc.constantFrom(undefined, 1),
  multiline: fc.boolean(),
  glob: fc.constantFrom(undefined, "*.ts", "!*.md", "d/**", "*.{md,txt}", "[!a-c]*.ts"),
  type: fc.constantFrom(undefined, "ts", "md"),
  file: fc.constantFrom(undefined, "a.ts", "d/e.ts")
}, { requiredKeys: ["pattern", "output_mode"] })

/** Grep's answer through a runtime, as lines (sorted unless one file was searched). */
const answer = (layer: ReturnType<typeof runtimeOver>, grep: Record<string, unknown>, exact: boolean) =>
  Effect.map(executeOne(use("Grep", grep)).pipe(Effect.provide(layer)), (outcome) => {
    const lines = text(outcome).split("\n")
    return { status: outcome.status, lines: exact ? lines : lines.sort() }
  })

/**
 * One tree, written to disk for rg and seeded in memory for the JavaScript search: `rg` and `js` answer the same input
 * over each; `remove` deletes the directory.
 */
const onBoth = (files: Record<string, string>) => {
  const cwd = tempDir("grep-js-")
  writeTree(cwd, files)
  const memory = fileAccessMemory({
    files: Object.fromEntries(Object.entries(files).map(([name, content]) => [path.join(cwd, name), content]))
  })
  return {
    rg: (grep: Record<string, unknown>, exact: boolean) => answer(runtimeOver(cwd, FileAccess.layer), grep, exact),
    js: (grep: Record<string, unknown>, exact: boolean) => answer(runtimeOver(cwd, memory), grep, exact),
    remove: () => fs.rmSync(cwd, { recursive: true, force: true })
  }
}

describe("Grep's JavaScript search answers as ripgrep does", () => {
  it.effect.prop(
    "on generated trees, patterns and flags",
    [tree, input],
    ([files, generated]) =>
      Effect.gen(function*() {
        const cwd = tempDir("grep-js-")
        writeTree(cwd, files)
        const memory = fileAccessMemory({
          files: Object.fromEntries(Object.entries(files).map(([name, content]) => [path.join(cwd, name), content]))
        })
        const { file, ...rest } = generated
        // rg 15 with -o prints nothing for a pattern that only matches empty text under --multiline, and the whole
        // last line for `$` without it; with `\A`, a later line whole: its quirks, not an answer to copy.
        if (rest["-o"] === true && (rest.pattern === "^$" || rest.pattern === "\\Afoo")) return
        // Under --multiline with context, rg prints the context of an empty match of `^$` it does not report, in a
        // file after one with a match: another quirk.
        const context = (rest.context ?? 0) > 0 || rest["-A"] !== undefined
        if (rest.multiline === true && rest.pattern === "^$" && context) return
        const grep = {
          ...Object.fromEntries(Object.entries(rest).filter(([, value]) => value !== undefined)),
          ...(file === undefined ? {} : { path: file })
        }
        // Lines and counts come file by file in path order from both; files with matches newest first, and the two
        // file systems' modification times differ.
        const exact = file !== undefined || rest.output_mode !== "files_with_matches"
        const fromRg = yield* answer(runtimeOver(cwd, FileAccess.layer), grep, exact)
        const fromJs = yield* answer(runtimeOver(cwd, memory), grep, exact)
        fs.rmSync(cwd, { recursive: true, force: true })
        expect(fromJs).toEqual(fromRg)
      }),
    { fastCheck: { numRuns: 100 }, timeout: 120_000 }
  )

  // Found by the property above: rg -U -C1 '^$' over "foo\n" prints the context line "1-foo" and exits 1 (nothing
  // found). Both searches answer that nothing matched.
  it.effect("an empty match rg does not report is no match, whatever context rg printed around it", () =>
    Effect.gen(function*() {
      const cwd = tempDir("grep-js-")
      writeTree(cwd, { "a.ts": "foo\n" })
      const memory = fileAccessMemory({ files: { [path.join(cwd, "a.ts")]: "foo\n" } })
      const grep = { pattern: "^$", output_mode: "content", context: 1, multiline: true }
      const fromRg = yield* answer(runtimeOver(cwd, FileAccess.layer), grep, true)
      const fromJs = yield* answer(runtimeOver(cwd, memory), grep, true)
      fs.rmSync(cwd, { recursive: true, force: true })
      expect(fromRg).toEqual({ status: "success", lines: ["No matches found"] })
      expect(fromJs).toEqual(fromRg)
    }))

  it.effect("lists files in rg's order where UTF-16 and UTF-8 disagree (an emoji after U+E000 and U+FF01)", () =>
    Effect.gen(function*() {
      const cwd = tempDir("grep-js-")
      const files = { "\u{1f600}.ts": "foo\n", "\uff01.ts": "foo\n", "\ue000.ts": "foo\n", "a.ts": "foo\n" }
      writeTree(cwd, files)
      const memory = fileAccessMemory({
        files: Object.fromEntries(Object.entries(files).map(([name, content]) => [path.join(cwd, name), content]))
      })
      for (const output_mode of ["content", "count"]) {
        const fromRg = yield* answer(runtimeOver(cwd, FileAccess.layer), { pattern: "foo", output_mode }, true)
        const fromJs = yield* answer(runtimeOver(cwd, memory), { pattern: "foo", output_mode }, true)
        expect(fromRg.lines.filter((line) => !line.startsWith("Found ")).map((line) => line.split(":")[0])).toEqual([
          "a.ts",
          "\ue000.ts",
          "\uff01.ts",
          "\u{1f600}.ts"
        ])
        expect(fromJs).toEqual(fromRg)
      }
      fs.rmSync(cwd, { recursive: true, force: true })
    }))

  it.effect("negated bracket globs, type all, newline-only matches with -o, and a file named - answer as rg's do", () =>
    Effect.gen(function*() {
      const files = {
        "a1.ts": "foo\n",
        "ab.ts": "foo\n",
        "b.zzzq": "foo\n",
        "Makefile": "foo\n",
        "m.txt": "a\nb\n",
        "-": "foo\n"
      }
      const both = onBoth(files)
      const cases: ReadonlyArray<readonly [Record<string, unknown>, ReadonlyArray<string>]> = [
        [{ pattern: "foo", glob: "a[!0-9].ts" }, ["Found 1 file", "ab.ts"]],
        [{ pattern: "foo", type: "all" }, ["Found 3 files", "Makefile", "a1.ts", "ab.ts"]],
        [{ pattern: "\\n", multiline: true, "-o": true, output_mode: "content", path: "m.txt" }, ["No matches found"]],
        [{ pattern: "a\\n", multiline: true, "-o": true, output_mode: "content", path: "m.txt" }, ["m.txt:1:a"]],
        [{ pattern: "foo", path: "-", output_mode: "content" }, ["./-:1:foo"]],
        [{ pattern: "foo", path: "-" }, ["Found 1 file", "./-"]]
      ]
      for (const [grep, expected] of cases) {
        const exact = grep.output_mode === "content"
        const fromRg = yield* both.rg(grep, exact)
        const fromJs = yield* both.js(grep, exact)
        expect(fromRg).toEqual({ status: "success", lines: exact ? expected : [...expected].sort() })
        expect(fromJs).toEqual(fromRg)
      }
      // A type named like a property every object has is no type: a clear error, as rg gives, not a crash.
      for (const type of ["constructor", "__proto__", "toString"]) {
        const fromJs = yield* both.js({ pattern: "foo", type }, true)
        expect(fromJs).toEqual({
          status: "error",
          lines: [`<tool_use_error>Search failed: rg: unrecognized file type: ${type}</tool_use_error>`]
        })
      }
      both.remove()
    }))

  it.effect("reads Rust's spelling as rg does: lone ] and }, []a], loose property names, \\U, word-boundary forms", () =>
    Effect.gen(function*() {
      const content = "a{b}c]d αβ ab b x:y\tz A aP< \ufeffq\n"
      const both = onBoth({ "t.txt": content })
      const patterns = [
        "b}",
        "c]",
        "[]a]+",
        "[^]a ]+",
        "\\p{greek}+",
        "\\p{sc=Greek}",
        "\\U00000061",
        "\\u{62}",
        "\\b{start}b",
        "b\\b{end}",
        "\\<b",
        "b\\>",
        "[[:alpha:]]+",
        "[[:space:]]",
        "[[:punct:]]+",
        "\\x41",
        "x\\:y",
        "\\t",
        "a\\(?P<",
        "\\Aa",
        "\\P{Lu}+",
        "\\s\\S"
      ]
      for (const pattern of patterns) {
        const grep = { pattern, output_mode: "content", "-o": true }
        const fromRg = yield* both.rg(grep, true)
        const fromJs = yield* both.js(grep, true)
        expect(fromRg.status, pattern).toBe("success")
        expect(fromRg.lines[0], pattern).not.toBe("No matches found")
        expect(fromJs, pattern).toEqual(fromRg)
      }
      both.remove()
    }))

  it.effect("cuts a line over 500 bytes where rg does: after 500 characters as a person sees them, never inside one", () =>
    Effect.gen(function*() {
      const content = [
        `${"a".repeat(499)}${"é".repeat(10)} foo`,
        `${"a".repeat(497)}${"€".repeat(10)} foo`,
        `${"a".repeat(490)}${"e\u0301".repeat(10)} foo`,
        `${"a".repeat(490)}${"\u{1f600}".repeat(20)} foo`,
        `x${"a".repeat(600)} foo`
      ].join("\n")
      const both = onBoth({ "long.txt": content })
      for (const grep of [{ pattern: "foo" }, { pattern: "xa+", "-o": true }]) {
        const input = { ...grep, output_mode: "content" }
        const fromRg = yield* both.rg(input, true)
        expect(fromRg.lines.every((line) => line.includes(" [... "))).toBe(true)
        expect(yield* both.js(input, true)).toEqual(fromRg)
      }
      both.remove()
    }))

  it.effect("what rg refuses (look-around, backreferences, \\0, a newline outside multiline) is refused, not searched", () =>
    Effect.gen(function*() {
      const both = onBoth({ "a.ts": "aa\nab\n" })
      const refused = [
        "a(?=b)",
        "a(?!b)",
        "(?<=a)b",
        "(?<!a)b",
        "(a)\\1",
        "\\0",
        "a\\nb",
        "a\nb",
        "[\\n]",
        "[\\b]",
        "[\\<]",
        "\\cA",
        "\\x{D800}",
        "\\b{constructor}"
      ]
      for (const pattern of refused) {
        const fromRg = yield* both.rg({ pattern }, true)
        const fromJs = yield* both.js({ pattern }, true)
        expect(fromRg.status).toBe("error")
        expect(fromRg.lines.join("\n")).toMatch(/regex parse error|the literal "\\n" is not allowed in a regex/)
        expect(fromJs.status).toBe("error")
        expect(fromJs.lines.join("\n")).toMatch(/regex parse error|the literal "\\n" is not allowed in a regex/)
      }
      // Multiline, a newline is a pattern like any other.
      const across = { pattern: "a\\nab", multiline: true, output_mode: "content" }
      expect(yield* both.js(across, true)).toEqual(
        yield* both.rg(across, true)
      )
      both.remove()
    }))

  it.effect("ignore files rank by kind before depth, as rg ranks them; git's exclude file counts", () =>
    Effect.gen(function*() {
      const files = {
        ".ignore": "*.log\n",
        "sub/.gitignore": "!a.log\n",
        "sub/a.log": "hit\n",
        ".rgignore": "!b.txt\n",
        "deep/.ignore": "b.txt\n",
        "deep/b.txt": "hit\n",
        ".git/info/exclude": "c.txt\n",
        "c.txt": "hit\n",
        "d.txt": "hit\n"
      }
      const both = onBoth(files)
      const fromRg = yield* both.rg({ pattern: "hit" }, false)
      // .ignore outranks a deeper .gitignore; a root .rgignore outranks a deeper .ignore; the exclude file leaves c.txt out.
      expect(fromRg).toEqual({ status: "success", lines: ["Found 2 files", "d.txt", "deep/b.txt"] })
      expect(yield* both.js({ pattern: "hit" }, false)).toEqual(fromRg)
      both.remove()
    }))

  it.effect("files with matches come newest first, on the memory file system too", () =>
    Effect.gen(function*() {
      const cwd = tempDir("grep-js-")
      // Seeded in this order: each one's modification time is later than the one before.
      const memory = fileAccessMemory({
        files: { [path.join(cwd, "b.txt")]: "x\n", [path.join(cwd, "a.txt")]: "x\n", [path.join(cwd, "c.txt")]: "x\n" }
      })
      const answered = yield* answer(runtimeOver(cwd, memory), { pattern: "x" }, true)
      expect(answered.lines).toEqual(["Found 3 files", "c.txt", "a.txt", "b.txt"])
      const paged = yield* answer(runtimeOver(cwd, memory), { pattern: "x", offset: 1, head_limit: 1 }, true)
      expect(paged.lines[1]).toBe("a.txt")
    }))

  it("knows rg's file types: the table is `rg --type-list` of the ripgrep shipped", () => {
    const listed = childProcess.execFileSync(rgPath, ["--type-list"], { encoding: "utf8" }).trim().split("\n")
    expect(Object.entries(ripgrepTypes).map(([name, globs]) => `${name}: ${globs.join(", ")}`)).toEqual(listed)
  })
})
