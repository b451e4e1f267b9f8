/**
 * Previews of a tool_use whose input is still streaming: parsed as it comes, rendered with the tool's
 * `renderPartial`, published as `Previewed` events; nothing is decoded, checked or run until the block is complete,
 * and then the call ends exactly as if the whole input had come at once.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Mailbox, Ref, Schema, Stream } from "effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import type { ToolEvent } from "../../src/Runtime/Events.js"
import { parsePartial, previewOf, ToolUsePart } from "../../src/Runtime/Preview.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { Outcome } from "../../src/Tool/Outcome.js"
import { UiBlock } from "../../src/Tool/Presentation.js"
import * as Tool from "../../src/Tool/Tool.js"
import * as Edit from "../../src/Tools/Edit.js"

const PatchInput = Schema.Struct({
  file_path: Schema.String,
  old_string: Schema.String,
  new_string: Schema.String,
  replace_all: Schema.optional(Schema.Boolean),
  lines: Schema.optional(Schema.Array(Schema.Number))
})

/** Shaped like Edit; its own renderPartial shows the diff as far as it has come. */
const Patch = Tool.make("Patch", {
  description: "test",
  input: PatchInput,
  output: Schema.String,
  touchesEnvironment: false
})

const patchLayer = (calls: Ref.Ref<number>) =>
  Patch.implement({
    validate: (input) => (input.old_string === input.new_string
      ? Tool.reject("old_string and new_string are the same.")
      : Effect.succeed(input)),
    renderPartial: (partial) => [
      UiBlock.Title({ text: `Patching ${partial.file_path ?? "…"}` }),
      ...(partial.new_string === undefined
        ? []
        : [
          UiBlock.Diff({ path: partial.file_path ?? "", patch: `-${partial.old_string ?? ""}\n+${partial.new_string}` })
        ])
    ],
    call: (input) =>
      Effect.as(
        Ref.update(calls, (n) => n + 1),
        `${input.file_path}: ${input.old_string.length} -> ${input.new_string.length}`
      )
  })

const runtimeWith = (
  tools: Layer.Layer<never, never, never> | Layer.Layer<Tool.Identifier<"Patch">>,
  registry: Layer.Layer<ToolRegistry, never, never>
) =>
  ToolRuntime.layer.pipe(
    Layer.provide(registry),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()]),
    Layer.provide(tools)
  )

/** The text cut at the given places: the deltas a model would stream. */
const chunksOf = (text: string, cuts: ReadonlyArray<number>): ReadonlyArray<string> => {
  const at = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b)
  const chunks: Array<string> = []
  let from = 0
  for (const cut of [...at, text.length]) {
    if (cut > from) chunks.push(text.slice(from, cut))
    from = Math.max(from, cut)
  }
  return chunks
}

const streamed = (id: string, name: string, chunks: ReadonlyArray<string>) =>
  Stream.make(
    ToolUsePart.Start({ id, name }),
    ...chunks.map((partialJson) => ToolUsePart.Delta({ id, partialJson })),
    ToolUsePart.End({ id })
  )

/** What must be the same whether the input streamed or came whole. */
const essence = (outcome: Outcome) => ({
  status: outcome.status,
  result: outcome.result,
  output: outcome.output,
  ui: outcome.ui,
  executedInput: outcome.executedInput,
  error: outcome.error?._tag
})

const text = fc.string({
  unit: fc.oneof(fc.constantFrom("\"", "\\", "\n", "é", "😀", "{", "}", ":", ","), fc.char()),
  maxLength: 12
})

describe("previews of streaming input", () => {
  it.effect.prop(
    "every prefix previews without throwing, and the streamed call ends as the whole one does (oracle: the same call made whole)",
    {
      input: fc.record(
        {
          file_path: text,
          old_string: text,
          new_string: text,
          replace_all: fc.boolean(),
          lines: fc.array(fc.integer({ min: -1000, max: 1000 }), { maxLength: 3 }),
          extra: fc.string({ maxLength: 3 }) // an unexpected parameter: invalid input must stay invalid
        },
        { requiredKeys: ["file_path", "old_string", "new_string"] }
      ),
      cuts: fc.array(fc.nat({ max: 400 }), { maxLength: 12 })
    },
    ({ cuts, input }) =>
      Effect.gen(function*() {
        const calls = yield* Ref.make(0)
        const json = JSON.stringify(input)
        const tools = patchLayer(calls)
        const layer = runtimeWith(tools, Layer.provide(ToolRegistry.layer([Patch]), tools))
        const registry = yield* ToolRegistry.pipe(Effect.provide(Layer.provide(ToolRegistry.layer([Patch]), tools)))
        for (let i = 0; i <= json.length; i++) {
          const prefix = json.slice(0, i)
          expect(() => previewOf(registry, "Patch", parsePartial(prefix))).not.toThrow()
        }
        const { events, whole, streamedOutcomes } = yield* Effect.gen(function*() {
          const whole = yield* Effect.flatMap(ToolRuntime, (rt) =>
            rt.executeOne({ type: "tool_use", id: "toolu_p", name: "Patch", input: JSON.parse(json) }))
          const handle = yield* ToolRuntime.start(streamed("toolu_p", "Patch", chunksOf(json, cuts)))
          const events = yield* Stream.runCollect(handle.events)
          return { events: Chunk.toReadonlyArray(events), whole, streamedOutcomes: yield* handle.await }
        }).pipe(Effect.provide(layer), Effect.scoped)
        expect(streamedOutcomes.map(essence)).toEqual([essence(whole)])
        // Nothing ran before the block was complete: every preview comes before the call is queued, and the tool ran
        // once per successful call (the whole one and the streamed one).
        const queuedAt = events.findIndex((e) =>
          e._tag === "Queued"
        )
        const lastPreview = events.map((e) => e._tag).lastIndexOf("Previewed")
        expect(queuedAt).toBeGreaterThan(lastPreview)
        expect(yield* Ref.get(calls)).toBe(whole.status === "success" ? 2 : 0)
      }),
    { fastCheck: { numRuns: 80 }, timeout: 60_000 }
  )

  it.effect("a streamed Edit is previewed as Edit(src/a.ts) before its input is complete, then runs as usual", () =>
    Effect.gen(function*() {
      const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "preview-edit-")))
      fs.mkdirSync(path.join(cwd, "src"))
      const tools = Edit.layer.pipe(
        Layer.provide(
          Layer.mergeAll(Workspace.layer({ cwd }), FileState.layer()).pipe(Layer.provideMerge(NodeContext.layer))
        )
      )
      const layer = runtimeWith(tools, Layer.provide(ToolRegistry.layer([Edit.Edit]), tools))
      const chunks = [
        "{\"file_pa",
        "th\": \"src/a.ts\", \"old_str",
        "ing\": \"\", \"new_string\": \"export const a",
        " = 1\\n\"}"
      ]
      const events = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start(streamed("toolu_e", "Edit", chunks))
        return Chunk.toReadonlyArray(yield* Stream.runCollect(handle.events))
      }).pipe(Effect.provide(layer), Effect.scoped)
      const previews = events.filter((e): e is Extract<ToolEvent, { _tag: "Previewed" }> => e._tag === "Previewed")
      const first = previews.find((p) => p.ui.some((b) => b._tag === "Title" && b.text === "Edit(src/a.ts)"))
      expect(first).toBeDefined()
      expect(first!.partialInput).not.toHaveProperty("new_string")
      expect(events.indexOf(first!)).toBeLessThan(events.findIndex((e) => e._tag === "Queued"))
      const completed = events.find((e): e is Extract<ToolEvent, { _tag: "Completed" }> => e._tag === "Completed")
      expect(completed!.outcome.status).toBe("success")
      expect(fs.readFileSync(path.join(cwd, "src/a.ts"), "utf8")).toBe("export const a = 1\n")
    }))

  it.effect("a block that is not JSON when complete, or is cut off by the end of the stream, still gets its Outcome", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const tools = patchLayer(calls)
      const layer = runtimeWith(tools, Layer.provide(ToolRegistry.layer([Patch]), tools))
      const outcomes = yield* ToolRuntime.execute(Stream.concat(
        streamed("bad", "Patch", ["{\"file_path\": \"a\", oops}"]),
        Stream.make(
          ToolUsePart.Start({ id: "cut", name: "Patch" }),
          ToolUsePart.Delta({ id: "cut", partialJson: "{\"file_path\": \"b" })
        )
      )).pipe(Effect.provide(layer))
      expect(outcomes.map((o) => [o.toolUseId, o.status, o.error?._tag])).toEqual([["bad", "error", "InvalidInput"], [
        "cut",
        "error",
        "InvalidInput"
      ]])
      expect(outcomes[0]!.result.content).toBe(
        "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe input must be a JSON object, but was provided as `string`</tool_use_error>"
      )
      expect(yield* Ref.get(calls)).toBe(0)
    }))

  it.effect("a run fed by a Mailbox, in batches, gives what the same parts give as a Stream: its events and outcomes", () =>
    Effect.gen(function*() {
      const calls = yield* Ref.make(0)
      const tools = patchLayer(calls)
      const layer = runtimeWith(tools, Layer.provide(ToolRegistry.layer([Patch]), tools))
      const whole = { file_path: "a.ts", old_string: "x", new_string: "y" }
      const parts = [
        ...Chunk.toReadonlyArray(
          Effect.runSync(Stream.runCollect(streamed("p1", "Patch", chunksOf(JSON.stringify(whole), [5, 17, 30]))))
        ),
        { type: "tool_use" as const, id: "p2", name: "Patch", input: whole },
        ToolUsePart.Start({ id: "cut", name: "Patch" }),
        ToolUsePart.Delta({ id: "cut", partialJson: "{\"file_path\": \"b" })
      ]
      const run = (input: "stream" | "mailbox") =>
        Effect.gen(function*() {
          const mailbox = yield* Mailbox.make<(typeof parts)[number]>()
          const handle = yield* ToolRuntime.start(input === "stream" ? Stream.fromIterable(parts) : mailbox)
          if (input === "mailbox") {
            // Two batches: the first call's parts, then the rest (taken together by the intake).
            yield* mailbox.offerAll(parts.slice(0, 3))
            yield* Effect.yieldNow()
            yield* mailbox.offerAll(parts.slice(3))
            yield* mailbox.end
          }
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(handle.events))
          const outcomes = yield* handle.await
          return {
            events: events.map((event) =>
              event._tag === "Previewed" ? [event._tag, event.toolUseId, event.ui] : [
                event._tag,
                "toolUseId" in event ? event.toolUseId : undefined
              ]
            ),
            outcomes: outcomes.map((outcome) => [outcome.toolUseId, essence(outcome)])
          }
        }).pipe(Effect.provide(layer), Effect.scoped)
      const fromStream = yield* run("stream")
      const fromMailbox = yield* run("mailbox")
      expect(fromMailbox).toEqual(fromStream)
      expect(fromStream.outcomes.map(([id, outcome]) => [id, (outcome as { status: string }).status])).toEqual([
        ["p1", "success"],
        ["p2", "success"],
        ["cut", "error"]
      ])
      expect(fromStream.events.some(([tag]) => tag === "Previewed")).toBe(true)
    }))

  it("parsePartial reads what has come so far and never throws", () => {
    expect(parsePartial("")).toBeUndefined()
    expect(parsePartial("{\"file_path\": \"src/a")).toEqual({ file_path: "src/a" })
    expect(parsePartial("{\"a\": [1, 2")).toEqual({ a: [1, 2] })
    expect(parsePartial("}{")).toBeUndefined()
  })
})
