/**
 * The @effect/ai adapter under `LanguageModel.generateText`, with a scripted LanguageModel: tool calls are governed
 * by the runtime (a denied call reaches the model as an error result; a parallel read pair runs concurrently; a bad
 * input gets our model-readable InvalidInput).
 */
import { LanguageModel } from "@effect/ai"
import type * as Response from "@effect/ai/Response"
import * as AiTool from "@effect/ai/Tool"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import * as EffectAi from "../../src/Integrations/EffectAi.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"

const ReadFile = Tool.make("ReadFile", {
  description: "Reads a file.",
  input: Schema.Struct({ path: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const DeleteFile = Tool.make("DeleteFile", {
  description: "Deletes a file.",
  input: Schema.Struct({ path: Schema.String }),
  output: Schema.String
})

const tools = (starts: Ref.Ref<ReadonlyArray<readonly [string, number]>>) =>
  Layer.mergeAll(
    ReadFile.implement({
      traits: () => ({ readOnly: true, concurrencySafe: true }),
      claims: ({ path }) => [Tool.Claim.read(`file:${path}`)],
      call: ({ path }) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          yield* Ref.update(starts, (all) => [...all, [path, now] as const])
          yield* Effect.sleep(10)
          return `contents of ${path}`
        })
    }),
    DeleteFile.implement({
      // A person must approve deletes; the approver below refuses.
      checkPermissions: () => Effect.succeed(PermissionCheck.ask("Delete a file?")),
      call: ({ path }) => Effect.succeed(`deleted ${path}`)
    })
  )

const runtime = (starts: Ref.Ref<ReadonlyArray<readonly [string, number]>>) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(Layer.provide(ToolRegistry.layer([ReadFile, DeleteFile]), tools(starts))),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )

/** A model that answers every request with the given tool calls. */
const scriptedModel = (
  calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>,
  seen?: Ref.Ref<ReadonlyArray<unknown>>
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.gen(function*() {
          if (seen !== undefined) yield* Ref.update(seen, (all) => [...all, options.tools])
          return calls.map((call, i): Response.PartEncoded => ({
            type: "tool-call",
            id: `call_${i}`,
            name: call.name,
            params: call.params
          }))
        }),
      streamText: () => Effect.dieMessage("not used") as never
    })
  )

const generate = (calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) =>
  Effect.gen(function*() {
    const starts = yield* Ref.make<ReadonlyArray<readonly [string, number]>>([])
    const seen = yield* Ref.make<ReadonlyArray<unknown>>([])
    const response = yield* Effect.scoped(
      Effect.gen(function*() {
        const toolkit = yield* EffectAi.toolkit()
        const fiber = yield* Effect.fork(
          LanguageModel.generateText({ prompt: "go", toolkit, concurrency: "unbounded" })
        )
        yield* TestClock.adjust(100)
        return yield* Fiber.join(fiber)
      })
    ).pipe(Effect.provide(scriptedModel(calls, seen)), Effect.provide(runtime(starts)))
    return { response, starts: yield* Ref.get(starts), seen: yield* Ref.get(seen) }
  })

describe("@effect/ai adapter", () => {
  it.effect("a denied call reaches the model as an error result; an allowed one as its result", () =>
    Effect.gen(function*() {
      const { response } = yield* generate([{ name: "ReadFile", params: { path: "/a" } }, {
        name: "DeleteFile",
        params: { path: "/a" }
      }])
      expect(response.toolResults.map((r) => [r.name, r.isFailure, r.result])).toEqual([
        ["ReadFile", false, "contents of /a"],
        [
          "DeleteFile",
          true,
          "<tool_use_error>Permission to use DeleteFile was denied: No one was available to approve DeleteFile; it was denied.</tool_use_error>"
        ]
      ])
    }))

  it.effect("a parallel read pair runs concurrently under the runtime's scheduler", () =>
    Effect.gen(function*() {
      const { starts } = yield* generate([{ name: "ReadFile", params: { path: "/a" } }, {
        name: "ReadFile",
        params: { path: "/b" }
      }])
      expect(starts).toEqual([["/a", 0], ["/b", 0]])
    }))

  it.effect("a bad input is answered with the runtime's model-readable InvalidInput, not an AiError", () =>
    Effect.gen(function*() {
      const { response } = yield* generate([{ name: "ReadFile", params: { file: "/a" } }])
      expect(response.toolResults[0]!.isFailure).toBe(true)
      expect(response.toolResults[0]!.result).toContain("The required parameter `path` is missing")
    }))

  it.effect("the model is shown each tool's real JSON Schema", () =>
    Effect.gen(function*() {
      const { seen } = yield* generate([])
      const sent = (seen[0] as ReadonlyArray<AiTool.Any>).map((
        t
      ) => [t.name, AiTool.getJsonSchemaFromSchemaAst(t.parametersSchema.ast)])
      expect(sent).toContainEqual(["ReadFile", {
        type: "object",
        required: ["path"],
        properties: { path: { type: "string" } },
        additionalProperties: false
      }])
    }))
})
