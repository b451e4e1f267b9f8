/**
 * Activity lines and grouped summaries: the defaults come from the tool's name and its main argument; a tool may
 * give its own; the Started event carries the line, and `activityOf` gives it for an Outcome or a tool_use.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, type Console, Effect, Layer, Schema, Stream } from "effect"
import { program, runtime } from "../../examples/preview.js"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { activityOf, summaryOf } from "../../src/Runtime/Activity.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import * as Tool from "../../src/Tool/Tool.js"

const Reader = Tool.make("Reader", {
  description: "test",
  input: Schema.Struct({ file_path: Schema.String, limit: Schema.optional(Schema.Number) }),
  output: Schema.String,
  touchesEnvironment: false
})
const Runner = Tool.make("Runner", {
  description: "test",
  input: Schema.Struct({ command: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

const tools = Layer.mergeAll(
  Reader.implement({ call: ({ file_path }) => Effect.succeed(file_path) }),
  Runner.implement({
    activity: ({ command }) => `Running ${command}`,
    summary: (inputs) => `Ran ${inputs.length} commands`,
    call: ({ command }) => Effect.succeed(command)
  })
)
const registryLayer = Layer.provide(ToolRegistry.layer([Reader, Runner]), tools)
const layer = ToolRuntime.layer.pipe(
  Layer.provide(registryLayer),
  Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
)

describe("activity and summary", () => {
  it.effect("defaults: the name and the main argument, on one short line; a group counts and lists", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.pipe(Effect.provide(registryLayer))
      expect(
        activityOf(registry, { type: "tool_use", id: "a", name: "Reader", input: { file_path: "src/a.ts", limit: 3 } })
      ).toBe("Reader src/a.ts")
      expect(
        summaryOf(registry, "Reader", [{ file_path: "a.ts" }, { file_path: "b.ts" }, { file_path: "c.ts" }, {
          file_path: "d.ts"
        }])
      ).toBe("Reader ×4: a.ts, b.ts, c.ts, +1 more")
      expect(summaryOf(registry, "Reader", [{ file_path: "a.ts" }])).toBe("Reader a.ts")
      expect(activityOf(registry, { type: "tool_use", id: "b", name: "Nope", input: { command: "ls\nrm -rf /" } }))
        .toBe("Nope ls")
      expect(Tool.mainArgument({ command: "x".repeat(100) })).toBe(`${"x".repeat(79)}…`)
      expect(Tool.mainArgument({ n: 1 })).toBeUndefined()
    }))

  it.effect("a tool's own activity and summary win; the Started event and activityOf(outcome) carry them", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry.pipe(Effect.provide(registryLayer))
      expect(summaryOf(registry, "Runner", [{ command: "a" }, { command: "b" }])).toBe("Ran 2 commands")
      const { events, outcomes } = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start([
          { type: "tool_use", id: "r", name: "Runner", input: { command: "npm test" } },
          { type: "tool_use", id: "f", name: "Reader", input: { file_path: "src/a.ts" } }
        ])
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(handle.events))
        return { events, outcomes: yield* handle.await }
      }).pipe(Effect.provide(layer), Effect.scoped)
      expect(events.flatMap((e) => (e._tag === "Started" ? [[e.toolUseId, e.activity]] : []))).toEqual([[
        "r",
        "Running npm test"
      ], ["f", "Reader src/a.ts"]])
      expect(outcomes.map((o) => activityOf(registry, o))).toEqual(["Running npm test", "Reader src/a.ts"])
    }))

  it.effect("examples/preview.ts runs: the Edit is previewed before it runs, then each call's activity line", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const base = yield* Effect.console
      const recording: Console.Console = {
        ...base,
        log: (...args: ReadonlyArray<unknown>) => Effect.sync(() => void lines.push(args.join(" ")))
      }
      const outcomes = yield* program.pipe(Effect.scoped, Effect.provide(runtime), Effect.withConsole(recording))
      expect(outcomes.map((o) => o.status)).toEqual(["success"])
      expect(lines.some((l) => l.startsWith("preview   Edit(src/greet.ts)"))).toBe(true)
      expect(lines.findIndex((l) => l.startsWith("preview"))).toBeLessThan(
        lines.findIndex((l) => l.startsWith("running   Edit "))
      )
      expect(lines.at(-1)).toMatch(/^done {6}Edit .*src\/greet\.ts: success$/)
    }))
})
