import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, FastCheck as fc, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FileState, make as makeFileState } from "../../../src/Session/FileState.js"
import { Edit } from "../../../src/Tools/Edit.js"
import { applyAt, nearMatch, occurrences } from "../../../src/Tools/internal/filesEdit.js"
import { context, execute, executeOne, runtimeLayer, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

const read = (file: string) => use("Read", { file_path: file })
const edit = (file: string, old_string: string, new_string: string, replace_all?: boolean) =>
  use("Edit", { file_path: file, old_string, new_string, ...(replace_all === undefined ? {} : { replace_all }) })

describe("Edit", () => {
  const dir = tempDir()
  it.effect("replaces a unique string, shows a diff, and tells the model the line range", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "a.ts")
      writeTree(dir, { "a.ts": "const a = 1\nconst b = 2\nconst c = 3\n" })
      const [, outcome] = yield* execute(read(file), edit(file, "const b = 2", "const b = 20\nconst bb = 21"))
      expect(outcome!.status).toBe("success")
      expect(text(outcome!)).toBe("The file a.ts has been updated (1 replacement, lines 2-3).")
      expect(fs.readFileSync(file, "utf8")).toBe("const a = 1\nconst b = 20\nconst bb = 21\nconst c = 3\n")
      const diff = outcome!.ui.find((b) => b._tag === "Diff")
      expect(diff).toMatchObject({ path: "a.ts" })
      expect(diff && diff._tag === "Diff" ? diff.patch : "").toContain("-const b = 2\n+const b = 20\n+const bb = 21")
    }).pipe(Effect.provide(runtimeLayer(dir))))

  it.effect("rejects an edit of a file never read, and identical strings", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "a.txt": "hello\n" })
      const layer = runtimeLayer(dir)
      const unread = yield* executeOne(edit(path.join(dir, "a.txt"), "hello", "bye")).pipe(Effect.provide(layer))
      expect(text(unread)).toContain("File has not been read yet")
      const same = yield* executeOne(edit(path.join(dir, "a.txt"), "hello", "hello")).pipe(Effect.provide(layer))
      expect(text(same)).toContain("No changes to make")
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("hello\n")
    }))

  it.effect("says how many times old_string occurs and where; replace_all replaces them all", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      writeTree(dir, { "a.txt": "x = 1\ny = 1\nz = 1\n" })
      const [, many, all] = yield* execute(read(file), edit(file, "= 1", "= 2"), edit(file, "= 1", "= 2", true)).pipe(
        Effect.provide(runtimeLayer(dir))
      )
      expect(text(many!)).toContain("Found 3 matches of old_string")
      expect(text(many!)).toContain("at lines 1, 2, 3")
      expect(text(all!)).toBe("The file a.txt has been updated (3 replacements, lines 1-3).")
      expect(fs.readFileSync(file, "utf8")).toBe("x = 2\ny = 2\nz = 2\n")
    }))

  it.effect("a string not found points at the near-match with its line number", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.py")
      writeTree(dir, { "a.py": "def f():\n    if x:\n        return 1\n    return 2\n" })
      const [, ws, fuzzy, none] = yield* execute(
        read(file),
        edit(file, "if x:\n    return 1", "if y:\n    return 1"),
        edit(file, "    retrun 2", "    return 3"),
        edit(file, "qqqqqqqqqqqqqq", "z")
      ).pipe(Effect.provide(runtimeLayer(dir)))
      expect(text(ws!)).toContain("String to replace not found")
      expect(text(ws!)).toContain("The passage at line 2 differs from old_string only in whitespace")
      expect(text(ws!)).toContain("     3\t        return 1")
      expect(text(fuzzy!)).toContain("The passage at line 4 is the closest match")
      expect(text(none!)).toContain("Read the file again")
      expect(fs.readFileSync(file, "utf8")).toBe("def f():\n    if x:\n        return 1\n    return 2\n")
    }))

  it.effect("an empty old_string creates a new file (or fills an empty one), never overwrites content", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "full.txt": "content\n", "empty.txt": "" })
      const [created, filled, refused] = yield* execute(
        edit(path.join(dir, "new/dir/n.txt"), "", "fresh\n"),
        edit(path.join(dir, "empty.txt"), "", "filled\n"),
        edit(path.join(dir, "full.txt"), "", "clobber\n")
      ).pipe(Effect.provide(runtimeLayer(dir)))
      expect(text(created!)).toBe("File created successfully at: new/dir/n.txt")
      expect(fs.readFileSync(path.join(dir, "new/dir/n.txt"), "utf8")).toBe("fresh\n")
      expect(filled!.status).toBe("success")
      expect(fs.readFileSync(path.join(dir, "empty.txt"), "utf8")).toBe("filled\n")
      expect(text(refused!)).toContain("already exists and is not empty")
      expect(fs.readFileSync(path.join(dir, "full.txt"), "utf8")).toBe("content\n")
    }))

  it.effect("matches LF old_string in a CRLF file and keeps CRLF", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "w.txt")
      writeTree(dir, { "w.txt": "one\r\ntwo\r\nthree\r\n" })
      const [, outcome] = yield* execute(read(file), edit(file, "one\ntwo", "uno\ndos")).pipe(
        Effect.provide(runtimeLayer(dir))
      )
      expect(outcome!.status).toBe("success")
      expect(fs.readFileSync(file, "utf8")).toBe("uno\r\ndos\r\nthree\r\n")
    }))

  it.effect("a file changed on disk between Read and Edit is rejected and nothing is written", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      writeTree(dir, { "a.txt": "v1\n" })
      const layer = runtimeLayer(dir)
      yield* Effect.gen(function*() {
        yield* executeOne(read(file))
        fs.writeFileSync(file, "v2 by someone else\n")
        const outcome = yield* executeOne(edit(file, "v2", "v3"))
        expect(outcome.status).toBe("error")
        expect(text(outcome)).toContain("modified since it was last read")
        expect(fs.readFileSync(file, "utf8")).toBe("v2 by someone else\n")
        expect(fs.readdirSync(dir)).toEqual(["a.txt"])
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a change landing between validate and call is caught in the call, and nothing is written", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "a.txt")
      writeTree(dir, { "a.txt": "one\ntwo\n" })
      yield* Effect.gen(function*() {
        yield* executeOne(read(file))
        const service = yield* Edit
        const validated = yield* service.plan({
          file_path: file,
          old_string: "one",
          new_string: "uno",
          replace_all: false
        }).validate(context)
        fs.writeFileSync(file, "one\ntwo\nthree\n")
        const failure = yield* Effect.flip(Effect.scoped(service.plan(validated).call(context)))
        expect(failure.message).toContain("modified since it was last read")
        expect(fs.readFileSync(file, "utf8")).toBe("one\ntwo\nthree\n")
      }).pipe(Effect.provide(runtimeLayer(dir)))
    }))

  it.effect("several edits of one file in one turn all apply, in model order", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "chain.txt")
      writeTree(dir, { "chain.txt": "a\n" })
      // Each edit only matches the result of the one before it.
      const outcomes = yield* execute(
        read(file),
        edit(file, "a", "ab"),
        edit(file, "ab", "abc"),
        edit(file, "abc", "abcd"),
        edit(file, "abcd", "abcde")
      ).pipe(Effect.provide(runtimeLayer(dir)))
      expect(outcomes.map((o) => o.status)).toEqual(["success", "success", "success", "success", "success"])
      expect(fs.readFileSync(file, "utf8")).toBe("abcde\n")
    }))

  it.live("edits of different files in one turn run concurrently", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "a.txt": "a\n", "b.txt": "b\n" })
      // A FileState whose record waits, once gated, until both edits are recording: were the edits serialised,
      // the first would wait forever and the turn would time out.
      const gated = yield* Ref.make(false)
      const arrived = yield* Ref.make(0)
      const bothInside = yield* Deferred.make<void>()
      const base = makeFileState()
      const fileState = Layer.succeed(FileState, {
        ...base,
        record: (p, r) =>
          Effect.gen(function*() {
            if (yield* Ref.get(gated)) {
              if ((yield* Ref.updateAndGet(arrived, (n) => n + 1)) === 2) yield* Deferred.succeed(bothInside, undefined)
              yield* Deferred.await(bothInside)
            }
            yield* base.record(p, r)
          })
      })
      const outcomes = yield* Effect.gen(function*() {
        yield* execute(read(path.join(dir, "a.txt")), read(path.join(dir, "b.txt")))
        yield* Ref.set(gated, true)
        return yield* execute(edit(path.join(dir, "a.txt"), "a", "A"), edit(path.join(dir, "b.txt"), "b", "B"))
      }).pipe(
        Effect.provide(runtimeLayer(dir, { fileState })),
        Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("edits were serialised") })
      )
      expect(outcomes.map((o) => o.status)).toEqual(["success", "success"])
      expect(yield* Ref.get(arrived)).toBe(2)
      expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("A\n")
      expect(fs.readFileSync(path.join(dir, "b.txt"), "utf8")).toBe("B\n")
    }))

  it.effect("edits are allowed after a ranged read (the model edits what it saw)", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const file = path.join(dir, "long.txt")
      writeTree(dir, { "long.txt": Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join("\n") })
      const [, outcome] = yield* execute(
        use("Read", { file_path: file, offset: 50, limit: 2 }),
        edit(file, "row 50\n", "row fifty\n")
      ).pipe(
        Effect.provide(runtimeLayer(dir))
      )
      expect(text(outcome!)).toBe("The file long.txt has been updated (1 replacement, line 50).")
    }))

  it.effect.prop(
    "for arbitrary contents and a unique substring, Edit produces exactly the expected text",
    [
      fc.tuple(
        fc.string({ unit: fc.constantFrom("a", "b", "\n", " ", "é", "$", "&", "\t", "x") }),
        fc.string({ maxLength: 40 }),
        fc.string({ maxLength: 20 }),
        fc.string({ maxLength: 20 })
      )
    ],
    ([[prefix, middle, suffix, replacement]]) =>
      Effect.gen(function*() {
        const needle = `<${middle}>`
        const content = prefix + needle + suffix
        // Only cases where the needle is unique (the property is about unique substrings).
        if (occurrences(content, needle).length !== 1 || needle === replacement) return
        const file = path.join(cwd, "p.txt")
        fs.writeFileSync(file, content)
        const [, outcome] = yield* execute(read(file), edit(file, needle, replacement))
        expect(outcome!.status).toBe("success")
        expect(fs.readFileSync(file, "utf8")).toBe(prefix + replacement + suffix)
      }).pipe(Effect.provide(runtimeLayer(cwd))),
    { fastCheck: { numRuns: 60 }, timeout: 60_000 }
  )
})

const cwd = tempDir("prop-")

describe("Edit internals", () => {
  it("replaces literally ($& and $1 are not patterns)", () => {
    const applied = applyAt("a-b-c", "-", "$&$1", occurrences("a-b-c", "-"))
    expect(applied.content).toBe("a$&$1b$&$1c")
    expect(applied.replacements).toBe(2)
  })

  it.prop("applyAt equals split/join for all occurrences", [
    fc.string(),
    fc.string({ minLength: 1, maxLength: 3 }),
    fc.string()
  ], ([content, needle, replacement]) => {
    expect(applyAt(content, needle, replacement, occurrences(content, needle)).content).toBe(
      content.split(needle).join(replacement)
    )
  })

  it("nearMatch prefers a whitespace-only difference", () => {
    expect(nearMatch("a\n  foo(1,  2)\nb\n", "foo(1, 2)")).toMatchObject({ line: 2, whitespaceOnly: true })
    expect(nearMatch("abc\n", "zzzzzz")).toBeUndefined()
  })
})

describe("Edit through the tool layer", () => {
  it.effect("validate normalises file_path to an absolute path", () =>
    Effect.gen(function*() {
      const service = yield* Edit
      const validated = yield* service.plan({
        file_path: "new.txt",
        old_string: "",
        new_string: "x",
        replace_all: false
      }).validate(context)
      expect(validated.file_path).toBe(path.join(cwd, "new.txt"))
    }).pipe(Effect.provide(toolsLayer(cwd))))
})
