import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Grep } from "../../../src/Tools/Grep.js"
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
})
