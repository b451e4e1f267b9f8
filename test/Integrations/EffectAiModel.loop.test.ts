/**
 * The agent loop over the @effect/ai backend, with a scripted LanguageModel: three turns in which the model asks,
 * the governed runtime runs (a denied call answered as an error), the model gets the results in its Prompt, and the
 * model answers.
 */
import { LanguageModel } from "@effect/ai"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref, Schema, Stream } from "effect"
import * as AgentLoop from "../../src/Agent/AgentLoop.js"
import { Approver, PermissionPolicy, ResultStore, Tool, ToolHooks, ToolRegistry, ToolRuntime } from "../../src/index.js"
import * as EffectAiModel from "../../src/Integrations/EffectAiModel.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"

const ReadNote = Tool.make("ReadNote", {
  description: "Reads a note.",
  input: Schema.Struct({ name: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const DeleteNote = Tool.make("DeleteNote", {
  description: "Deletes a note.",
  input: Schema.Struct({ name: Schema.String }),
  output: Schema.String
})

const runtime = (notes: Ref.Ref<ReadonlyMap<string, string>>) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(
      ToolRegistry.layer([ReadNote, DeleteNote]).pipe(Layer.provide(Layer.mergeAll(
        ReadNote.implement({
          traits: () => ({ readOnly: true, concurrencySafe: true }),
          claims: ({ name }) => [Tool.Claim.read(`note:${name}`)],
          call: ({ name }) => Effect.map(Ref.get(notes), (all) => all.get(name) ?? `(no note ${name})`)
        }),
        DeleteNote.implement({
          // A person must approve deletes; the approver below refuses.
          checkPermissions: () => Effect.succeed(PermissionCheck.ask("Delete a note?")),
          call: ({ name }) =>
            Effect.as(Ref.update(notes, (all) => new Map([...all].filter(([key]) => key !== name))), `deleted ${name}`)
        })
      )))
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )

const finish = (reason: Response.FinishReason): Response.StreamPartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: 10, outputTokens: 4, totalTokens: 14 }
})

/** One list of stream parts per request, in order; every request's Prompt is recorded. */
const scriptedModel = (
  replies: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>>,
  prompts: Array<Prompt.Prompt>
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.dieMessage("not used"),
      streamText: (options) => {
        prompts.push(options.prompt)
        return Stream.fromIterable(replies[prompts.length - 1] ?? [])
      }
    })
  )

describe("AgentLoop over EffectAiModel", () => {
  it.effect("three turns: the model asks, the runtime governs, the model gets the results, the model answers", () =>
    Effect.gen(function*() {
      const notes = yield* Ref.make<ReadonlyMap<string, string>>(new Map([["todo", "buy milk"]]))
      const prompts: Array<Prompt.Prompt> = []
      const replies: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>> = [
        [
          { type: "text-delta", id: "t", delta: "Reading." },
          { type: "tool-params-start", id: "call_1", name: "ReadNote" },
          { type: "tool-params-delta", id: "call_1", delta: "{\"name\":" },
          { type: "tool-params-delta", id: "call_1", delta: "\"todo\"}" },
          { type: "tool-params-end", id: "call_1" },
          { type: "tool-call", id: "call_1", name: "ReadNote", params: { name: "todo" } },
          finish("tool-calls")
        ],
        [{ type: "tool-call", id: "call_2", name: "DeleteNote", params: { name: "todo" } }, finish("tool-calls")],
        [{ type: "text-delta", id: "t", delta: "I may not delete it; it says buy milk." }, finish("stop")]
      ]
      const result = yield* AgentLoop.run({
        messages: [{ role: "user", content: "Read the todo note, then delete it." }]
      }).pipe(
        Effect.provide(EffectAiModel.layer.pipe(Layer.provide(scriptedModel(replies, prompts)))),
        Effect.provide(runtime(notes))
      )

      expect([result.stopReason, result.turns, result.text]).toEqual([
        "end_turn",
        3,
        "I may not delete it; it says buy milk."
      ])
      expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 12 })
      expect((yield* Ref.get(notes)).get("todo")).toBe("buy milk")
      // The third request's Prompt: each call answered by its result, the denied one as a failure.
      const calls = prompts[2]!.content.flatMap((message) =>
        typeof message.content === "string"
          ? []
          : message.content.flatMap((part) => (part.type === "tool-call" ? [[part.id, part.name, part.params]] : []))
      )
      const results = prompts[2]!.content.flatMap((message) =>
        typeof message.content === "string"
          ? []
          : message.content.flatMap((
            part
          ) => (part.type === "tool-result" ? [[part.id, part.name, part.isFailure, part.result]] : []))
      )
      expect(calls).toEqual([["call_1", "ReadNote", { name: "todo" }], ["call_2", "DeleteNote", { name: "todo" }]])
      expect(results).toEqual([
        ["call_1", "ReadNote", false, "buy milk"],
        [
          "call_2",
          "DeleteNote",
          true,
          "<tool_use_error>Permission to use DeleteNote was denied: No one was available to approve DeleteNote; it was denied.</tool_use_error>"
        ]
      ])
      expect(prompts.map((prompt) => prompt.content.map((message) => message.role))).toEqual([
        ["user"],
        ["user", "assistant", "tool"],
        ["user", "assistant", "tool", "assistant", "tool"]
      ])
    }))
})
