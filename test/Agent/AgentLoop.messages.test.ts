/**
 * The agent loop end to end over HTTP: the AnthropicMessages backend against the scripted Messages server on
 * 127.0.0.1, which checks every request as the API does (a tool_use without its tool_result, a tool_reference to a
 * tool not in `tools`, ... are answered with a 400). A deferred tool found by ToolSearch, a cancel mid-reply, a broken
 * reply and an error status; after each, the history the loop kept is accepted by the server again.
 */
import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Redacted, Ref, Schema, Stream } from "effect"
import * as AgentLoop from "../../src/Agent/AgentLoop.js"
import * as AnthropicMessages from "../../src/Agent/AnthropicMessages.js"
import type { Message } from "../../src/Agent/ModelBackend.js"
import {
  Approver,
  DiscoveredTools,
  PermissionPolicy,
  ResultStore,
  Tool,
  ToolEvent,
  ToolHooks,
  ToolRuntime
} from "../../src/index.js"
import * as MessagesServer from "../../src/testing/MessagesServer.js"
import { Search } from "../../src/Tools/index.js"

const Forecast = Tool.make("mcp__weather__get_forecast", {
  description: "Weather forecast for a city, for the next days.",
  input: Schema.Struct({ city: Schema.String }),
  output: Schema.String,
  loading: "deferred",
  touchesEnvironment: false
})
const Note = Tool.make("WriteNote", {
  description: "Writes a note.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

const runtime = (written: Ref.Ref<ReadonlyArray<string>>) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(
      Search.catalogLayer([Note, Forecast]).pipe(Layer.provide([
        Forecast.implement({ call: ({ city }) => Effect.succeed(`${city}: sunny`) }),
        Note.implement({ call: ({ text }) => Effect.as(Ref.update(written, (all) => [...all, text]), "written") }),
        DiscoveredTools.layer()
      ]))
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )

const over = (server: MessagesServer.MessagesServer, retry?: AnthropicMessages.Options["retry"]) =>
  AnthropicMessages.layer({ model: "scripted", baseUrl: server.url, apiKey: Redacted.make("scripted"), retry }).pipe(
    Layer.provide(FetchHttpClient.layer)
  )

interface Sent {
  readonly messages: ReadonlyArray<Message>
  readonly tools: ReadonlyArray<{ readonly name: string; readonly defer_loading?: boolean }>
  readonly system?: string
}

const user: Message = { role: "user", content: "What is the weather in Oslo?" }

describe("AgentLoop over the Messages API", () => {
  it.live("three turns: ToolSearch finds a deferred tool, the next request carries it, the model calls it and answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* MessagesServer.make([
        MessagesServer.Reply.Message({
          content: [MessagesServer.toolUse("toolu_1", "ToolSearch", { query: "weather forecast" })]
        }),
        MessagesServer.Reply.Message({
          content: [MessagesServer.toolUse("toolu_2", "mcp__weather__get_forecast", { city: "Oslo" })]
        }),
        MessagesServer.Reply.Message({ content: [MessagesServer.text("Sunny in Oslo.")] })
      ])
      const result = yield* AgentLoop.run({ messages: [user], system: "Be brief." }).pipe(
        Effect.provide(Layer.merge(runtime(written), over(server)))
      )
      expect([result.stopReason, result.turns, result.text]).toEqual(["end_turn", 3, "Sunny in Oslo."])
      const sent = (yield* server.requests) as ReadonlyArray<Sent>
      // First request: the deferred tool is only announced.
      expect(sent[0]!.tools.map((tool) => tool.name)).toEqual(["WriteNote", "ToolSearch"])
      expect(sent[0]!.system).toContain("Be brief.")
      expect(sent[0]!.system).toContain("mcp__weather__get_forecast")
      // Second: the search's result is a tool_reference, and the tool is sent with defer_loading.
      expect(sent[1]!.messages.at(-1)).toEqual({
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "tool_reference", tool_name: "mcp__weather__get_forecast" }]
        }]
      })
      expect(sent[1]!.tools.find((tool) => tool.name === "mcp__weather__get_forecast")?.defer_loading).toBe(true)
      expect(sent[2]!.messages.at(-1)).toEqual({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_2", content: "Oslo: sunny" }]
      })
      // The server took every request (a refused one would have failed the loop).
      expect(sent.length).toBe(3)
    })))

  it.live("cancelling while the model is still writing a call: the connection is dropped, the call never runs, every tool_use is answered", () =>
    Effect.scoped(Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* MessagesServer.make([
        MessagesServer.Reply.Message({ content: [MessagesServer.toolUse("toolu_1", "WriteNote", { text: "first" })] }),
        MessagesServer.Reply.Hold({
          content: [MessagesServer.toolUse("toolu_2", "WriteNote", { text: "second" }, ["{\"text\": \"sec", "ond\"}"])]
        }),
        MessagesServer.Reply.Message({ content: [MessagesServer.text("Understood, I stopped.")] })
      ])
      const handle = yield* AgentLoop.start({ messages: [user] }).pipe(
        Effect.provide(Layer.merge(runtime(written), over(server)))
      )
      const previewed = yield* Deferred.make<void>()
      const drained = yield* Effect.fork(Stream.runForEach(handle.events, (event) =>
        // Once the first piece of its input has been seen (the held reply sends no more).
        event._tag === "Tool" && ToolEvent.$is("Previewed")(event.event) && event.event.toolUseId === "toolu_2" &&
          JSON.stringify(event.event.partialInput) === JSON.stringify({ text: "sec" })
          ? Deferred.succeed(previewed, undefined)
          : Effect.void))
      yield* Deferred.await(previewed)
      yield* handle.cancel
      const result = yield* handle.await
      yield* Fiber.join(drained)
      yield* server.awaitDisconnects(1)
      expect(result.stopReason).toBe("cancelled")
      expect(yield* Ref.get(written)).toEqual(["first"])
      expect(result.messages.at(-2)).toEqual({
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_2", name: "WriteNote", input: { text: "sec" } }]
      })
      expect(result.messages.at(-1)).toEqual({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_2", content: AgentLoop.cutShortMessage, is_error: true }]
      })
      // The history goes on: the server accepts it as the next request.
      const resumed = yield* AgentLoop.run({ messages: [...result.messages, { role: "user", content: "Stop there." }] })
        .pipe(
          Effect.provide(Layer.merge(runtime(written), over(server)))
        )
      expect(resumed.text).toBe("Understood, I stopped.")
    })))

  it.live("a malformed event and an overloaded API are AgentLoopErrors whose history the server accepts again", () =>
    Effect.scoped(Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* MessagesServer.make([
        MessagesServer.Reply.Message({
          content: [MessagesServer.text("Noting."), MessagesServer.toolUse("toolu_1", "WriteNote", { text: "a" })]
        }),
        MessagesServer.Reply.MalformedEvent(),
        MessagesServer.Reply.HttpError({ status: 529, errorType: "overloaded_error", message: "Overloaded" }),
        MessagesServer.Reply.Message({ content: [MessagesServer.text("Back.")] })
      ])
      // Retries off: this test wants the 529 as an error.
      const layer = Layer.merge(runtime(written), over(server, false))
      const malformed = yield* Effect.flip(AgentLoop.run({ messages: [user] }).pipe(Effect.provide(layer)))
      expect([malformed.turn, malformed.error.reason]).toEqual([2, "Malformed"])
      expect(malformed.message).toMatch(/^the model request of turn 2 failed \(Malformed\): /)
      expect(malformed.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"])
      const overloaded = yield* Effect.flip(AgentLoop.run({ messages: malformed.messages }).pipe(Effect.provide(layer)))
      expect([overloaded.error.reason, overloaded.error.status]).toEqual(["Status", 529])
      expect(overloaded.error.message).toContain("Overloaded")
      const resumed = yield* AgentLoop.run({ messages: overloaded.messages }).pipe(Effect.provide(layer))
      expect(resumed.text).toBe("Back.")
      expect(yield* Ref.get(written)).toEqual(["a"])
    })))

  it.live("a 529 before the reply is retried as the API asks: the loop shows a Retrying event and the turn completes", () =>
    Effect.scoped(Effect.gen(function*() {
      const written = yield* Ref.make<ReadonlyArray<string>>([])
      const server = yield* MessagesServer.make([
        MessagesServer.Reply.HttpError({
          status: 529,
          errorType: "overloaded_error",
          message: "Overloaded",
          retryAfterMs: "5"
        }),
        MessagesServer.Reply.Message({ content: [MessagesServer.text("Fine now.")] })
      ])
      const events: Array<AgentLoop.LoopEvent> = []
      const result = yield* AgentLoop.run({
        messages: [user],
        onEvent: (event) => Effect.sync(() => void events.push(event))
      }).pipe(Effect.provide(Layer.merge(runtime(written), over(server))))
      expect(result.text).toBe("Fine now.")
      expect((yield* server.requests).length).toBe(2)
      const retries = events.filter((event) => event._tag === "Retrying")
      expect(retries).toHaveLength(1)
      expect(retries[0]).toMatchObject({ turn: 1, attempt: 1, status: 529, delayMillis: 5 })
    })))
})
