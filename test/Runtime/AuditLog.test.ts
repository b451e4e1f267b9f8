import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { AuditLog, search } from "../../src/Runtime/AuditLog.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import { UiBlock } from "../../src/Tool/Presentation.js"
import * as Tool from "../../src/Tool/Tool.js"

/** A tool whose model result holds text the UI never shows. */
const Split = Tool.make("Split", {
  description: "test",
  input: Schema.Struct({
    shown: Schema.String,
    hidden: Schema.String,
    ask: Schema.optionalWith(Schema.Boolean, { default: () => false })
  }),
  output: Schema.Struct({ shown: Schema.String, hidden: Schema.String }),
  touchesEnvironment: false
})
const SplitLive = Split.implement({
  traits: () => ({ concurrencySafe: true }),
  checkPermissions: ({ ask }) => Effect.succeed(ask ? PermissionCheck.ask("may I?") : PermissionCheck.passthrough()),
  renderUse: () => [UiBlock.Title({ text: "Split" })],
  renderResult: (output) => [UiBlock.Text({ text: `shown: ${output.shown}` })],
  toModel: (output) => `model gets: ${output.hidden}`,
  call: ({ hidden, shown }) => Effect.succeed({ shown, hidden })
})

const runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.provide(ToolRegistry.layer([Split]), SplitLive)),
  Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
)

const tempFile = () => path.join(fs.mkdtempSync(path.join(os.tmpdir(), "audit-")), "audit.jsonl")

const use = (id: string, shown: string, hidden: string, ask = false) => ({
  type: "tool_use" as const,
  id,
  name: "Split",
  input: { shown, hidden, ask }
})

describe("AuditLog", () => {
  it.effect("records every event and outcome with session id, tool_use id, decision, reason, executed input and audit text", () =>
    Effect.gen(function*() {
      const file = tempFile()
      yield* ToolRuntime.execute([use("a", "one", "x"), use("b", "two", "y", true)]).pipe(
        Effect.provide(runtime),
        Effect.provide(AuditLog.layerFile({ path: file, sessionId: "s-1" }))
      )
      const entries = fs.readFileSync(file, "utf8").trim().split("\n").map((line) => JSON.parse(line))
      expect(new Set(entries.map((e) => e.session_id))).toEqual(new Set(["s-1"]))
      const completed = entries.filter((e) => e.event === "Completed")
      expect(completed.map((e) => [e.tool_use_id, e.status, e.decision, e.audit])).toEqual([
        ["a", "success", "Allow", "Split\nshown: one"],
        ["b", "success", "Allow", "Split\nshown: two"]
      ])
      expect(completed[1].reason).toContain("user")
      expect(completed[1].executed_input).toEqual({ shown: "two", hidden: "y", ask: true })
      expect(entries.filter((e) => e.event === "PermissionRequested").map((e) => [e.tool_use_id, e.audit])).toEqual([[
        "b",
        "may I?\nSplit"
      ]])
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    }))

  it.effect.prop(
    "a transcript search never finds text the UI did not show, and finds what it showed",
    [fc.stringMatching(/^[a-z]{6,10}$/), fc.stringMatching(/^[A-Z]{6,10}$/)],
    ([shown, hidden]) =>
      Effect.gen(function*() {
        const file = tempFile()
        const [outcome] = yield* ToolRuntime.execute([use("a", shown, hidden)]).pipe(
          Effect.provide(runtime),
          Effect.provide(AuditLog.layerFile({ path: file, sessionId: "s" }))
        )
        // The model did get the hidden text: it exists in the run, just not on the screen.
        expect(outcome!.result.content).toContain(hidden)
        expect(yield* search(file, hidden)).toEqual([])
        expect((yield* search(file, shown)).map((e) => e.tool_use_id)).toContain("a")
      }),
    { fastCheck: { numRuns: 30 }, timeout: 60_000 }
  )

  it.effect("rotates by size, keeps at most maxFiles rotated files, and searches across them", () =>
    Effect.gen(function*() {
      const file = tempFile()
      yield* ToolRuntime.execute(Array.from({ length: 40 }, (_, i) => use(`t${i}`, `mark${i}`, "h"))).pipe(
        Effect.provide(runtime),
        Effect.provide(AuditLog.layerFile({ path: file, sessionId: "s", maxBytes: 2_000, maxFiles: 3 }))
      )
      const files = fs.readdirSync(path.dirname(file)).sort()
      expect(files).toEqual(["audit.jsonl", "audit.jsonl.1", "audit.jsonl.2", "audit.jsonl.3"])
      for (const name of files) expect(fs.statSync(path.join(path.dirname(file), name)).size).toBeLessThanOrEqual(2_000)
      // The newest entries survive; the oldest were rotated away.
      expect((yield* search(file, "mark39")).length).toBeGreaterThan(0)
      expect(yield* search(file, "shown: mark0")).toEqual([])
    }))

  it.effect("private: an existing file open to others is tightened to 0600; missing directories are made 0700", () =>
    Effect.gen(function*() {
      const base = fs.mkdtempSync(path.join(os.tmpdir(), "audit-"))
      const existing = path.join(base, "audit.jsonl")
      fs.writeFileSync(existing, "", { mode: 0o644 })
      fs.chmodSync(existing, 0o644)
      const nested = path.join(base, "logs", "deep", "audit.jsonl")
      for (const file of [existing, nested]) {
        yield* ToolRuntime.execute([use("a", "one", "x")]).pipe(
          Effect.provide(runtime),
          Effect.provide(AuditLog.layerFile({ path: file, sessionId: "s" }))
        )
        expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      }
      expect(fs.statSync(path.join(base, "logs")).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(base, "logs", "deep")).mode & 0o777).toBe(0o700)
      fs.rmSync(base, { recursive: true, force: true })
    }))
})
