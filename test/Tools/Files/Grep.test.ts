import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Fiber } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Grep } from "../../../src/Tools/Grep.js"
import type { GrepInput } from "../../../src/Tools/Grep.js"
import { spawnAsNobody } from "../../support/index.js"
import { context, executeOne, runtimeLayer, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

describe("Grep", () => {
  const dir = tempDir("grep-")
  writeTree(dir, {
    ".gitignore": "ignored/\n",
    "src/a.ts": "export const Alpha = 1\nconst beta = 2\n// -flag here\n",
    "src/b.py": "alpha = 1\nBETA = 2\n",
    "src/c.ts": "function f() {\n  return 1\n}\n",
    "ignored/x.ts": "alpha\n"
  })
  const layer = runtimeLayer(dir)
  const grep = (input: Record<string, unknown>) => executeOne(use("Grep", input))

  it.effect("lists files with matches by default, relative to the working directory, gitignored files left out", () =>
    Effect.gen(function*() {
      const outcome = yield* grep({ pattern: "alpha", "-i": true })
      const lines = text(outcome).split("\n")
      expect(lines[0]).toBe("Found 2 files")
      expect(lines.slice(1).sort()).toEqual(["src/a.ts", "src/b.py"])
    }).pipe(Effect.provide(layer)))

  it.effect("content mode shows lines with numbers and context; count mode counts", () =>
    Effect.gen(function*() {
      expect(text(yield* grep({ pattern: "beta", output_mode: "content", path: "src/a.ts" }))).toBe(
        "src/a.ts:2:const beta = 2"
      )
      expect(text(yield* grep({ pattern: "beta", output_mode: "content", path: "src/a.ts", "-n": false, "-B": 1 })))
        .toBe(
          "src/a.ts-export const Alpha = 1\nsrc/a.ts:const beta = 2"
        )
      expect(text(yield* grep({ pattern: "=", output_mode: "count", type: "py" }))).toBe(
        "Found 2 total occurrences across 1 file\nsrc/b.py:2"
      )
    }).pipe(Effect.provide(layer)))

  it.effect("glob filter, multiline, head_limit", () =>
    Effect.gen(function*() {
      expect(text(yield* grep({ pattern: "1", glob: "*.py" }))).toBe("Found 1 file\nsrc/b.py")
      expect(text(yield* grep({ pattern: "f\\(\\) \\{.*return", multiline: true }))).toBe("Found 1 file\nsrc/c.ts")
      const limited = yield* grep({ pattern: ".", output_mode: "content", path: "src/c.ts", head_limit: 2 })
      expect(text(limited).split("\n")).toEqual([
        "src/c.ts:1:function f() {",
        "src/c.ts:2:  return 1",
        "(Output truncated at head_limit or the size cap: narrow the search, raise head_limit, or read on with offset.)"
      ])
    }).pipe(Effect.provide(layer)))

  it.effect("a pattern starting with - is a pattern, not an option", () =>
    Effect.gen(function*() {
      expect(text(yield* grep({ pattern: "-flag", output_mode: "content" }))).toBe("src/a.ts:3:// -flag here")
      expect(text(yield* grep({ pattern: "--files" }))).toBe("No files found")
    }).pipe(Effect.provide(layer)))

  it.effect("no match is not an error; a bad regex is, with rg's message", () =>
    Effect.gen(function*() {
      const none = yield* grep({ pattern: "zzz_nothing", output_mode: "content" })
      expect(none.status).toBe("success")
      expect(text(none)).toBe("No matches found")
      const bad = yield* grep({ pattern: "(unclosed" })
      expect(bad.status).toBe("error")
      expect(text(bad)).toContain("ripgrep failed")
      expect(text(bad)).toContain("unclosed group")
    }).pipe(Effect.provide(layer)))

  it.live("interrupting a call kills ripgrep", () =>
    Effect.gen(function*() {
      // rg reading a FIFO with no writer blocks forever: a call that can only end by interruption.
      const fifo = path.join(tempDir("grep-fifo-"), "blocked-fifo")
      childProcess.execFileSync("mkfifo", [fifo])
      const running = () =>
        childProcess.execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) =>
          l.includes(fifo) && !l.startsWith("ps ")
        )
      const service = yield* Grep
      const fiber = yield* Effect.fork(Effect.scoped(service.plan({ pattern: "x", path: fifo }).call(context)))
      while (running().length === 0) yield* Effect.sleep("10 millis")
      yield* Fiber.interrupt(fiber)
      for (let i = 0; i < 100 && running().length > 0; i++) yield* Effect.sleep("10 millis")
      expect(running()).toEqual([])
    }).pipe(Effect.provide(toolsLayer(dir))))

  it.live("reaching head_limit stops ripgrep: no rg process is left once the call returns", () =>
    Effect.gen(function*() {
      // 2 million matching lines: rg would print for a long while; the call wants 5 of them.
      const big = tempDir("grep-big-")
      fs.writeFileSync(path.join(big, "many.txt"), Buffer.alloc(4_000_000, "x\n"))
      const running = () =>
        childProcess.execFileSync("ps", ["-eo", "args"], { encoding: "utf8" }).split("\n").filter((l) =>
          l.includes(big) && !l.startsWith("ps ")
        )
      const service = yield* Grep
      const output = yield* Effect.scoped(
        service.plan({ pattern: "x", path: big, output_mode: "content", head_limit: 5 }).call(context)
      )
      expect(output.lines).toHaveLength(5)
      expect(output.truncated).toBe(true)
      // The call returns once its teardown found nothing running: checked at once.
      expect(running()).toEqual([])
    }).pipe(Effect.provide(toolsLayer(dir))))

  it.effect("refuses a FIFO or device as path at validation", () =>
    Effect.gen(function*() {
      expect(text(yield* grep({ pattern: "x", path: "/dev/zero" }))).toContain("character device")
    }).pipe(Effect.provide(layer)))

  // What rg's threads print comes in no fixed order; a list paged through with offset must be one list. Files with
  // matches: newest first, ties by path as localeCompare orders it, then by code units (Claude Code's order, and
  // Glob's); content and count: file by file in the order of a walk that takes each directory's entries by name, as
  // their UTF-8 bytes compare ("a/x.txt" before "a.txt": "a" < "a.txt"). Names mix what sorts differently by locale, by
  // UTF-16 and by bytes: "-" and "." below "/", an accent spelled NFC and NFD, U+FF01, U+E000, an emoji.
  const part = fc.constantFrom("a", "b", "a-b", "a.b", "B", "\u00e9", "e\u0301", "\uff01", "\ue000", "\u{1f600}")
  const name = fc.tuple(fc.array(part, { maxLength: 2 }), part).map(([dirs, file]) =>
    [...dirs, `${file}.txt`].join("/")
  )
  const utf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))
  const walkOrder = (a: { shown: string }, b: { shown: string }) => {
    const [x, y] = [a.shown.split("/"), b.shown.split("/")]
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] !== y[i]) return utf8(x[i]!, y[i]!)
    }
    return x.length - y.length
  }
  const withoutSeparators = (lines: ReadonlyArray<string>) => lines.filter((line) => line !== "--")
  let run = 0
  it.effect.prop(
    "one order from run to run: pages read with offset and head_limit put together are the whole list, in order",
    [
      // Every file ends in ".txt" and no directory does, so no name is both.
      fc.uniqueArray(fc.record({ name, mtime: fc.integer({ min: 1, max: 4 }), hits: fc.integer({ min: 0, max: 3 }) }), {
        minLength: 1,
        maxLength: 12,
        selector: (file) => file.name
      }),
      fc.integer({ min: 1, max: 5 })
    ],
    ([files, pageSize]) =>
      Effect.gen(function*() {
        const root = `order-${++run}`
        for (const file of files) {
          const absolute = path.join(dir, root, file.name)
          fs.mkdirSync(path.dirname(absolute), { recursive: true })
          fs.writeFileSync(absolute, Array.from({ length: file.hits }, (_, i) => `hit ${i}\nmiss\n`).join(""))
          // A few seconds apart at most: ties are frequent.
          fs.utimesSync(absolute, 1_700_000_000 + file.mtime, 1_700_000_000 + file.mtime)
        }
        const matching = files.filter((file) => file.hits > 0).map((file) => ({
          ...file,
          shown: `${root}/${file.name}`
        }))
        const walked = [...matching].sort(walkOrder)
        const lines = (file: typeof matching[number], context: boolean) =>
          Array.from(
            { length: file.hits },
            (_, i) => [`${file.shown}:${2 * i + 1}:hit ${i}`, ...(context ? [`${file.shown}-${2 * i + 2}-miss`] : [])]
          ).flat()
        const cases = [
          {
            input: {},
            expected: [...matching].sort((a, b) =>
              b.mtime - a.mtime || a.shown.localeCompare(b.shown) || (a.shown < b.shown ? -1 : 1)
            ).map((file) => file.shown)
          },
          { input: { output_mode: "count" }, expected: walked.map((file) => `${file.shown}:${file.hits}`) },
          { input: { output_mode: "content" }, expected: walked.flatMap((file) => lines(file, false)) },
          // With context, each file's lines are one group: rg separates the groups of different files with "--".
          {
            input: { output_mode: "content", "-A": 1 },
            expected: walked.flatMap((file, i) => [...(i === 0 ? [] : ["--"]), ...lines(file, true)])
          }
        ]
        for (const { expected, input } of cases) {
          const entries = (output: string) =>
            output.split("\n").filter((line) =>
              !line.startsWith("Found ") && !line.startsWith("(") && line !== "No files found" &&
              line !== "No matches found"
            )
          const whole = entries(text(yield* grep({ pattern: "hit", path: root, ...input })))
          expect(whole).toEqual(expected)
          // Separators are not lines of a file: offset and head_limit count the others, and a page neither starts nor
          // ends with one.
          const pages: Array<string> = []
          const total = withoutSeparators(whole).length
          for (let offset = 0; offset < total; offset += pageSize) {
            const page = entries(
              text(yield* grep({ pattern: "hit", path: root, ...input, offset, head_limit: pageSize }))
            )
            expect(withoutSeparators(page)).toHaveLength(Math.min(pageSize, total - offset))
            expect(page[0]).not.toBe("--")
            expect(page.at(-1)).not.toBe("--")
            pages.push(...page)
          }
          expect(withoutSeparators(pages)).toEqual(withoutSeparators(whole))
        }
      }).pipe(Effect.provide(layer)),
    { fastCheck: { numRuns: 25 }, timeout: 120_000 }
  )

  it.effect(
    "over the size cap, files with matches are the first ones in path order, the same every call",
    () =>
      Effect.gen(function*() {
        // Some 4.7 MB of paths (the cap is 4 MB): 22,000 files under 40 directories with 200-character names.
        const root = "over-cap"
        const all: Array<string> = []
        for (let d = 0; d < 40; d++) {
          const directory = `d${String(d).padStart(2, "0")}${"x".repeat(200)}`
          fs.mkdirSync(path.join(dir, root, directory), { recursive: true })
          for (let f = 0; f < 550; f++) {
            const name = `f${String(f).padStart(3, "0")}.txt`
            fs.writeFileSync(path.join(dir, root, directory, name), "hit\n")
            all.push(`${root}/${directory}/${name}`)
          }
        }
        const service = yield* Grep
        // The tool's own output: the model would get a preview of it and the rest in a file.
        const answer = () => Effect.scoped(service.plan({ pattern: "hit", path: root }).call(context))
        const first = yield* answer()
        const shown = first.lines
        expect(first.truncated).toBe(true)
        expect(shown.length).toBeGreaterThan(10_000)
        expect(shown.length).toBeLessThan(all.length)
        // Which files: the first in path order (names of equal length here, so plain comparison is path order).
        expect([...shown].sort()).toEqual([...all].sort().slice(0, shown.length))
        expect(yield* answer()).toEqual(first)
        // The list is cut as a whole: the model is told that offset will not reach the rest, and to narrow the search.
        expect(first.capped).toBe(true)
        const past = yield* Effect.scoped(
          service.plan({ pattern: "hit", path: root, offset: shown.length, head_limit: 100 }).call(context)
        )
        expect(past).toMatchObject({ lines: [], capped: true })
        const told = service.plan({ pattern: "hit", path: root, offset: shown.length, head_limit: 100 }).toModel(past)
        expect(told).toContain("cannot reach the others. Narrow the search with path, glob or type.")
        expect(told).not.toContain("read on with offset")
        fs.rmSync(path.join(dir, root), { recursive: true, force: true })
      }).pipe(Effect.provide(toolsLayer(dir))),
    60_000
  )

  // Searched from the working directory itself, these files print as bare names: "--" reads like a separator.
  const dashes = tempDir("grep-dashes-")
  writeTree(dashes, { "--": "hit\n", "a.txt": "hit\n", "b.txt": "hit\n", "-": "hit\n\n" })
  for (const [i, name] of ["b.txt", "--", "a.txt", "-"].entries()) {
    fs.utimesSync(path.join(dashes, name), 1_700_000_000 + i, 1_700_000_000 + i)
  }

  it.effect("a file named \"--\" or \"-\" is a file: paged like any other, searched rather than standard input", () =>
    Effect.gen(function*() {
      const service = yield* Grep
      const call = (input: Partial<GrepInput>) =>
        Effect.map(
          Effect.scoped(service.plan({ pattern: "^hit$", ...input }).call(context)),
          (output) => output.lines
        )
      expect(yield* call({})).toEqual(["-", "a.txt", "--", "b.txt"])
      const pages: Array<string> = []
      for (let offset = 0; offset < 4; offset++) pages.push(...(yield* call({ offset, head_limit: 1 })))
      expect(pages).toEqual(["-", "a.txt", "--", "b.txt"])
      // The file "-" has an empty line after its match: without line numbers that context line prints as "--" too.
      const content = { output_mode: "content", "-n": false, "-A": 1 } as const
      expect(yield* call(content)).toEqual(["-:hit", "--", "--", "--:hit", "--", "a.txt:hit", "--", "b.txt:hit"])
      const lines: Array<ReadonlyArray<string>> = []
      for (let offset = 0; offset < 6; offset++) lines.push(yield* call({ ...content, offset, head_limit: 1 }))
      expect(lines).toEqual([["-:hit"], ["--"], ["--:hit"], ["a.txt:hit"], ["b.txt:hit"], []])
      // The file "-" named as the path: its contents, not standard input.
      expect(yield* call({ path: "-", output_mode: "content" })).toEqual(["./-:1:hit"])
    }).pipe(Effect.provide(toolsLayer(dashes))))

  it.effect("head_limit 0 is no limit, in every mode", () =>
    Effect.gen(function*() {
      const service = yield* Grep
      for (const output_mode of ["files_with_matches", "content", "count"] as const) {
        const call = (input: Partial<GrepInput>) =>
          Effect.scoped(service.plan({ pattern: "alpha", "-i": true, output_mode, ...input }).call(context))
        const all = yield* call({})
        expect(all.lines.length).toBeGreaterThan(1)
        expect(yield* call({ head_limit: 0 })).toEqual(all)
        expect((yield* call({ head_limit: 0, offset: 1 })).lines).toEqual(all.lines.slice(1))
      }
    }).pipe(Effect.provide(toolsLayer(dir))))

  it.effect("offset reaches past the size cap: only the lines of the page count toward it", () =>
    Effect.gen(function*() {
      // About 7 MB of output lines (the cap is 4 MB).
      const file = path.join(dir, "long-output.txt")
      fs.writeFileSync(file, Array.from({ length: 60_000 }, (_, i) => `hit ${i} ${"x".repeat(100)}\n`).join(""))
      const service = yield* Grep
      const page = yield* Effect.scoped(
        service.plan({ pattern: "hit", path: file, output_mode: "content", offset: 55_000, head_limit: 3 }).call(
          context
        )
      )
      expect(page.lines.map((line) => line.split(":").slice(1, 2).join())).toEqual(["55001", "55002", "55003"])
      expect(page.truncated).toBe(true)
      fs.rmSync(file)
    }).pipe(Effect.provide(toolsLayer(dir))))
})

describe("Grep with a file rg cannot read", () => {
  it(
    "a page with no lines, or no match at all, is an answer with rg's complaint, not a failure",
    () => {
      const base = tempDir("grep-unreadable-")
      writeTree(base, { "a.txt": "foo\nfoo\n", "b.txt": "foo\n", "locked.txt": "foo\n" })
      // mkdtemp makes the directory 0700: let the search (as nobody, when the tests run as root) in.
      fs.chmodSync(base, 0o755)
      fs.chmodSync(path.join(base, "locked.txt"), 0o000)
      // Root reads any file: the search then runs as nobody, in a child process.
      const probe = spawnAsNobody(`
        const { Effect } = await import("effect")
        const { Grep } = await import(${JSON.stringify(path.resolve("src/Tools/Grep.ts"))})
        const { context, toolsLayer } = await import(${JSON.stringify(path.resolve("test/Tools/Files/helpers.ts"))})
        const inputs = [
          { pattern: "foo", output_mode: "content" },
          { pattern: "foo", output_mode: "content", offset: 3 },
          { pattern: "foo", output_mode: "count", offset: 2 },
          { pattern: "foo", offset: 2 },
          { pattern: "zzz" }
        ]
        const answers = await Effect.runPromise(Effect.forEach(inputs, (input) =>
          Effect.flatMap(Grep, (grep) => Effect.either(Effect.scoped(grep.plan(input).call(context)))).pipe(
            Effect.map((answer) => answer._tag === "Left" ? { failed: answer.left.message } : answer.right)
          )).pipe(Effect.provide(toolsLayer(${JSON.stringify(base)}))))
        console.log(JSON.stringify(answers))
      `)
      expect(probe.stderr).toBe("")
      const [all, pastEnd, countPastEnd, filesPastEnd, none] = JSON.parse(probe.stdout.trim()) as Array<
        { readonly lines: ReadonlyArray<string>; readonly warning?: string; readonly failed?: string }
      >
      const complaint = expect.stringMatching(/^rg: .*locked\.txt: Permission denied \(os error 13\)$/)
      expect(all).toMatchObject({ lines: ["a.txt:1:foo", "a.txt:2:foo", "b.txt:1:foo"], warning: complaint })
      for (const page of [pastEnd, countPastEnd, filesPastEnd, none]) {
        expect(page).toMatchObject({ lines: [], truncated: false, warning: complaint })
      }
    },
    // A child process that compiles TypeScript at start: seconds on a loaded machine.
    30_000
  )
})
