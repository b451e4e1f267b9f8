/**
 * The @effect/ai model backend with a scripted LanguageModel: the Prompt it is sent, the events its stream parts
 * become, its errors, and that @effect/ai never runs a tool itself.
 */
import { AiError, LanguageModel, Prompt } from "@effect/ai"
import type * as Response from "@effect/ai/Response"
import * as AiTool from "@effect/ai/Tool"
import { describe, expect, it } from "@effect/vitest"
import {
  Cause,
  Chunk,
  Context,
  Deferred,
  Effect,
  Either,
  Exit,
  FastCheck as fc,
  Fiber,
  Layer,
  Option,
  Stream
} from "effect"
import type { Message, ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend, ModelEvent } from "../../src/Agent/ModelBackend.js"
import type * as Definitions from "../../src/Catalog/Definitions.js"
import * as EffectAiModel from "../../src/Integrations/EffectAiModel.js"

const object = (properties: Record<string, object>, required: ReadonlyArray<string>): Definitions.JsonSchema =>
  ({ type: "object", properties, required, additionalProperties: false }) as unknown as Definitions.JsonSchema

const tools: ReadonlyArray<Definitions.AnthropicTool> = [
  { name: "ReadFile", description: "Reads a file.", input_schema: object({ path: { type: "string" } }, ["path"]) },
  { name: "ToolSearch", description: "Finds tools.", input_schema: object({ query: { type: "string" } }, ["query"]) },
  {
    name: "DbQuery",
    description: "Runs a query.",
    input_schema: object({ sql: { type: "string" } }, ["sql"]),
    defer_loading: true
  }
]

const request = (messages: ReadonlyArray<Message>, system?: string): ModelRequest => ({
  system,
  messages,
  tools,
  maxTokens: 1024
})

const usage = { inputTokens: 12, outputTokens: 7, totalTokens: 19 }
const finish = (reason: Response.FinishReason = "stop"): Response.StreamPartEncoded => ({
  type: "finish",
  reason,
  usage
})

/** A LanguageModel whose every stream is `reply`; it records what each request carried. */
const scriptedModel = (reply: Stream.Stream<Response.StreamPartEncoded, AiError.AiError>) => {
  const seen: Array<LanguageModel.ProviderOptions> = []
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.dieMessage("not used"),
      streamText: (options) => {
        seen.push(options)
        return reply
      }
    })
  )
  return { seen, layer }
}

/** The backend's events for one request, or its failure, and what the model was sent. */
const run = (req: ModelRequest, reply: Stream.Stream<Response.StreamPartEncoded, AiError.AiError>) =>
  Effect.gen(function*() {
    const model = scriptedModel(reply)
    const exit = yield* Effect.flatMap(ModelBackend, (backend) => Stream.runCollect(backend.stream(req))).pipe(
      Effect.map(Chunk.toReadonlyArray),
      Effect.provide(EffectAiModel.layer.pipe(Layer.provide(model.layer))),
      Effect.exit
    )
    return { exit, seen: model.seen }
  })

const events = (req: ModelRequest, parts: ReadonlyArray<Response.StreamPartEncoded>) =>
  run(req, Stream.fromIterable(parts)).pipe(Effect.flatMap(({ exit }) => exit))

/** A reply of these parts, in one chunk. */
const script = (...parts: Array<Response.StreamPartEncoded>) => Stream.fromIterable(parts)

const failure = (req: ModelRequest, reply: Stream.Stream<Response.StreamPartEncoded, AiError.AiError>) =>
  run(req, reply).pipe(Effect.flatMap(({ exit }) => Effect.flip(exit)))

/** A Prompt's messages as plain data (without @effect/ai's type ids), to compare with toEqual. */
const plain = (prompt: Prompt.Prompt) =>
  prompt.content.map(({ role, content, options }) => ({
    role,
    content: typeof content === "string" ? content : content.map(({ [Prompt.PartTypeId]: _id, ...part }) => part),
    options
  }))

const hello = request([{ role: "user", content: "hello" }])

describe("EffectAiModel: the conversation as a Prompt", () => {
  it.effect("text, two tool_uses and their results (one an error, one only tool_references) become exactly this Prompt", () =>
    Effect.gen(function*() {
      const conversation: ReadonlyArray<Message> = [
        { role: "user", content: "Read /a and find a database tool." },
        {
          role: "assistant",
          content: [
            { type: "text", text: "On it." },
            { type: "tool_use", id: "toolu_1", name: "ReadFile", input: { path: "/a" } },
            { type: "tool_use", id: "toolu_2", name: "ToolSearch", input: { query: "database" } }
          ]
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: "<tool_use_error>File does not exist.</tool_use_error>",
              is_error: true
            },
            {
              type: "tool_result",
              tool_use_id: "toolu_2",
              content: [{ type: "tool_reference", tool_name: "DbQuery" }, {
                type: "tool_reference",
                tool_name: "DbSchema"
              }]
            },
            { type: "text", text: "Carry on." }
          ]
        }
      ]
      const { seen } = yield* run(request(conversation, "You are terse."), Stream.make(finish()))
      expect(seen).toHaveLength(1)
      expect(plain(seen[0]!.prompt)).toEqual([
        { role: "system", content: "You are terse.", options: {} },
        {
          role: "user",
          content: [{ type: "text", text: "Read /a and find a database tool.", options: {} }],
          options: {}
        },
        {
          role: "assistant",
          content: [
            { type: "text", text: "On it.", options: {} },
            {
              type: "tool-call",
              id: "toolu_1",
              name: "ReadFile",
              params: { path: "/a" },
              providerExecuted: false,
              options: {}
            },
            {
              type: "tool-call",
              id: "toolu_2",
              name: "ToolSearch",
              params: { query: "database" },
              providerExecuted: false,
              options: {}
            }
          ],
          options: {}
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              id: "toolu_1",
              name: "ReadFile",
              isFailure: true,
              result: "<tool_use_error>File does not exist.</tool_use_error>",
              providerExecuted: false,
              options: {}
            },
            {
              type: "tool-result",
              id: "toolu_2",
              name: "ToolSearch",
              isFailure: false,
              result: "Loaded tools: DbQuery, DbSchema",
              providerExecuted: false,
              options: {}
            }
          ],
          options: {}
        },
        { role: "user", content: [{ type: "text", text: "Carry on.", options: {} }], options: {} }
      ])
    }))

  it.effect("every tool of the request, deferred ones too, goes to @effect/ai with its input_schema as the JSON Schema", () =>
    Effect.gen(function*() {
      const { seen } = yield* run(hello, Stream.make(finish()))
      const sent = seen[0]!.tools.map((
        tool
      ) => [tool.name, tool.description, AiTool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)])
      expect(sent).toEqual(tools.map((tool) => [tool.name, tool.description, tool.input_schema]))
    }))

  it("a result's text is kept, an image becomes [image], each run of tool_references one Loaded tools line", () => {
    expect(
      EffectAiModel.resultText([
        { type: "text", text: "Found:" },
        { type: "tool_reference", tool_name: "A" },
        { type: "tool_reference", tool_name: "B" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
        { type: "tool_reference", tool_name: "C" }
      ])
    ).toBe("Found:\nLoaded tools: A, B\n[image]\nLoaded tools: C")
    expect(EffectAiModel.resultText("plain")).toBe("plain")
  })

  // Conversations as the loop builds them: user texts, and assistant turns of tool_uses each answered in the next
  // user message (results in the order of the calls, sometimes followed by text).
  const resultContent = fc.oneof(
    fc.string(),
    fc.array(
      fc.oneof(
        fc.record({ type: fc.constant("text" as const), text: fc.string() }),
        fc.record({ type: fc.constant("tool_reference" as const), tool_name: fc.constantFrom("A", "B") })
      ),
      { maxLength: 3 }
    )
  )
  const turn = fc.oneof(
    fc.string().map((text): ReadonlyArray<Message> => [{ role: "user", content: text }]),
    fc
      .record({
        text: fc.option(fc.string(), { nil: undefined }),
        calls: fc.array(
          fc.record({ name: fc.constantFrom("ReadFile", "ToolSearch"), content: resultContent, isError: fc.boolean() }),
          { minLength: 1, maxLength: 4 }
        ),
        after: fc.option(fc.string(), { nil: undefined })
      })
      .map(({ text, calls, after }): ReadonlyArray<Message> => [
        {
          role: "assistant",
          content: [
            ...(text === undefined ? [] : [{ type: "text" as const, text }]),
            ...calls.map((call) => ({ type: "tool_use" as const, id: "", name: call.name, input: {} }))
          ]
        },
        {
          role: "user",
          content: [
            ...calls.map((call) => ({
              type: "tool_result" as const,
              tool_use_id: "",
              content: call.content,
              is_error: call.isError
            })),
            ...(after === undefined ? [] : [{ type: "text" as const, text: after }])
          ]
        }
      ])
  )
  /** Gives every tool_use a fresh id and its result the same one. */
  const numbered = (turns: ReadonlyArray<ReadonlyArray<Message>>): ReadonlyArray<Message> => {
    let uses = 0
    let results = 0
    return turns.flat().map((message) =>
      typeof message.content === "string"
        ? message
        : {
          ...message,
          content: message.content.map((block) =>
            block.type === "tool_use"
              ? { ...block, id: `toolu_${uses++}` }
              : block.type === "tool_result"
              ? { ...block, tool_use_id: `toolu_${results++}` }
              : block
          )
        }
    )
  }

  it.prop(
    "every tool call in the Prompt has exactly one result, with its id and name, after it and in the calls' order",
    [fc.array(turn, { minLength: 1, maxLength: 6 })],
    ([turns]) => {
      const messages = numbered(turns)
      const prompt = EffectAiModel.toPrompt(undefined, messages)
      const parts = prompt.content.flatMap((message, at) =>
        typeof message.content === "string" ? [] : message.content.map((part) => ({ role: message.role, at, part }))
      )
      const calls = parts.flatMap((
        { part, at }
      ) => (part.type === "tool-call" ? [{ id: part.id, name: part.name, at }] : []))
      const results = parts.flatMap((
        { part, role, at }
      ) => (part.type === "tool-result" ? [{ id: part.id, name: part.name, role, at }] : []))
      const usesInConversation = messages.flatMap((
        m
      ) => (typeof m.content === "string" ? [] : m.content.filter((b) => b.type === "tool_use")))
      expect(calls).toHaveLength(usesInConversation.length)
      expect(results.map((r) => r.id)).toEqual(calls.map((c) => c.id))
      for (const call of calls) {
        const answers = results.filter((r) => r.id === call.id)
        expect(answers).toHaveLength(1)
        expect(answers[0]!.name).toBe(call.name)
        expect(answers[0]!.role).toBe("tool")
        expect(answers[0]!.at).toBeGreaterThan(call.at)
      }
    }
  )
})

describe("EffectAiModel: the reply as ModelEvents", () => {
  it.effect("streamed text and tool params become TextDelta, ToolUseStart/Delta/End and a Stop, in order", () =>
    Effect.gen(function*() {
      const got = yield* events(hello, [
        { type: "text-start", id: "t0" },
        { type: "text-delta", id: "t0", delta: "Let me " },
        { type: "text-delta", id: "t0", delta: "look." },
        { type: "text-end", id: "t0" },
        { type: "tool-params-start", id: "toolu_1", name: "ReadFile" },
        { type: "tool-params-delta", id: "toolu_1", delta: "{\"path\":" },
        { type: "tool-params-delta", id: "toolu_1", delta: "\"/a\"}" },
        { type: "tool-params-end", id: "toolu_1" },
        // Providers repeat a streamed call as a complete part; it must not start a second tool_use.
        { type: "tool-call", id: "toolu_1", name: "ReadFile", params: { path: "/a" } },
        finish("tool-calls")
      ])
      expect(got).toEqual([
        ModelEvent.TextDelta({ text: "Let me " }),
        ModelEvent.TextDelta({ text: "look." }),
        ModelEvent.ToolUseStart({ id: "toolu_1", name: "ReadFile" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "{\"path\":" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "\"/a\"}" }),
        ModelEvent.ToolUseEnd({ id: "toolu_1" }),
        ModelEvent.Stop({ reason: "tool_use", usage: { inputTokens: 12, outputTokens: 7 } })
      ])
    }))

  it.effect("a tool call that arrives only complete becomes Start, one Delta whose JSON parses back to its params, End", () =>
    Effect.gen(function*() {
      const params = { sql: "select 1", options: { limit: 3, tags: ["a", "b"], dry: false, note: null } }
      const got = yield* events(hello, [
        { type: "tool-call", id: "toolu_9", name: "DbQuery", params },
        finish("tool-calls")
      ])
      expect(got.map((event) => event._tag)).toEqual(["ToolUseStart", "ToolUseDelta", "ToolUseEnd", "Stop"])
      expect(got[0]).toEqual(ModelEvent.ToolUseStart({ id: "toolu_9", name: "DbQuery" }))
      const delta = got[1]!
      expect(delta._tag === "ToolUseDelta" && delta.id === "toolu_9" ? JSON.parse(delta.partialJson) : undefined)
        .toEqual(params)
      expect(got[2]).toEqual(ModelEvent.ToolUseEnd({ id: "toolu_9" }))
    }))

  it.effect("a streamed tool call without params gets `{}` as its JSON", () =>
    Effect.gen(function*() {
      const got = yield* events(hello, [
        { type: "tool-params-start", id: "toolu_1", name: "ToolSearch" },
        { type: "tool-params-end", id: "toolu_1" },
        { type: "tool-call", id: "toolu_1", name: "ToolSearch", params: {} },
        finish("tool-calls")
      ])
      expect(got.slice(0, 3)).toEqual([
        ModelEvent.ToolUseStart({ id: "toolu_1", name: "ToolSearch" }),
        ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "{}" }),
        ModelEvent.ToolUseEnd({ id: "toolu_1" })
      ])
    }))

  it.effect("finish reasons map onto the Messages API's stop reasons", () =>
    Effect.gen(function*() {
      const table: ReadonlyArray<readonly [Response.FinishReason, string]> = [
        ["tool-calls", "tool_use"],
        ["stop", "end_turn"],
        ["length", "max_tokens"],
        ["content-filter", "refusal"],
        ["pause", "pause_turn"],
        ["error", "end_turn"],
        ["other", "end_turn"],
        ["unknown", "end_turn"]
      ]
      for (const [reason, expected] of table) {
        const got = yield* events(hello, [finish(reason)])
        expect([reason, got]).toEqual([reason, [
          ModelEvent.Stop({ reason: expected as never, usage: { inputTokens: 12, outputTokens: 7 } })
        ]])
      }
    }))

  it.effect("a finish without token counts has no usage; the events end at the first finish", () =>
    Effect.gen(function*() {
      const got = yield* events(hello, [
        {
          type: "finish",
          reason: "stop",
          usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
        },
        { type: "text-delta", id: "t1", delta: "after the end" }
      ])
      expect(got).toEqual([ModelEvent.Stop({ reason: "end_turn", usage: undefined })])
    }))

  it.effect("@effect/ai does not run the tool calls itself: the toolkit's handler is never invoked", () =>
    Effect.gen(function*() {
      // The backend's toolkit handler dies when called, so a resolved call would fail this run with a defect. The
      // finish comes in a later chunk: @effect/ai resolves the calls of a chunk before it reads the next one.
      const reply = Stream.make<Array<Response.StreamPartEncoded>>({
        type: "tool-call",
        id: "toolu_1",
        name: "ReadFile",
        params: { path: "/a" }
      }).pipe(
        Stream.concat(Stream.make(finish("tool-calls")))
      )
      const { exit } = yield* run(hello, reply)
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(Exit.isSuccess(exit) ? exit.value.map((event) => event._tag) : []).toEqual([
        "ToolUseStart",
        "ToolUseDelta",
        "ToolUseEnd",
        "Stop"
      ])
      // ... and the handler really would have died (so the assertion above can fail).
      const handled = yield* Effect.exit(EffectAiModel.toToolkit(tools).handle("ReadFile", { path: "/a" }))
      expect(Exit.isFailure(handled) && Cause.isDie(handled.cause)).toBe(true)
    }))
})

describe("EffectAiModel: options", () => {
  /** A provider's per-request config, read the way providers read theirs (`Effect.serviceOption`). */
  class MaxTokens extends Context.Tag("test/MaxTokens")<MaxTokens, number>() {}

  it.effect("configure hands the provider its config for each request; toolChoice reaches @effect/ai", () =>
    Effect.gen(function*() {
      const model = scriptedModel(
        Stream.unwrap(
          Effect.map(
            Effect.serviceOption(MaxTokens),
            (max) =>
              script(
                { type: "text-delta", id: "t", delta: `max_tokens=${Option.getOrElse(max, () => "unset")}` },
                finish()
              )
          )
        )
      )
      const firstText = (backend: Layer.Layer<ModelBackend, never, LanguageModel.LanguageModel>) =>
        Effect.flatMap(ModelBackend, (b) => Stream.runHead(b.stream({ ...hello, maxTokens: 333 }))).pipe(
          Effect.provide(backend.pipe(Layer.provide(model.layer)))
        )
      const configured = yield* firstText(EffectAiModel.layerWith({
        toolChoice: { tool: "ReadFile" },
        configure: (req) => Stream.provideService(MaxTokens, req.maxTokens)
      }))
      expect(configured).toEqual(Option.some(ModelEvent.TextDelta({ text: "max_tokens=333" })))
      expect(model.seen[0]!.toolChoice).toEqual({ tool: "ReadFile" })
      const unconfigured = yield* firstText(EffectAiModel.layer)
      expect(unconfigured).toEqual(Option.some(ModelEvent.TextDelta({ text: "max_tokens=unset" })))
      expect(model.seen[1]!.toolChoice).toBe("auto")
    }))
})

describe("EffectAiModel: interruption", () => {
  it.effect("interrupting the events stops the provider's stream", () =>
    Effect.gen(function*() {
      const released = yield* Deferred.make<void>()
      const reply = Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-delta", id: "t", delta: "Hi" }).pipe(
        Stream.concat(Stream.never),
        Stream.ensuring(Deferred.succeed(released, undefined))
      )
      const first = yield* Deferred.make<ModelEvent>()
      const model = scriptedModel(reply)
      const fiber = yield* Effect.flatMap(ModelBackend, (backend) =>
        Stream.runForEach(backend.stream(hello), (event) => Deferred.succeed(first, event))).pipe(
          Effect.provide(EffectAiModel.layer.pipe(Layer.provide(model.layer))),
          Effect.fork
        )
      expect(yield* Deferred.await(first)).toEqual(ModelEvent.TextDelta({ text: "Hi" }))
      yield* Fiber.interrupt(fiber)
      expect(yield* Deferred.isDone(released)).toBe(true)
    }))
})

describe("EffectAiModel: errors", () => {
  const request_ = {
    method: "POST" as const,
    url: "https://api.example.test/v1/messages",
    urlParams: [],
    hash: Option.none(),
    headers: {}
  }
  const response = (status: number) => ({ status, headers: {} })

  it.effect("each AiError becomes a ModelError with a fitting reason, its message kept", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [AiError.AiError, string, number | undefined]> = [
        [
          new AiError.HttpRequestError({
            module: "M",
            method: "m",
            reason: "Transport",
            request: request_,
            description: "connection reset"
          }),
          "Transport",
          undefined
        ],
        [
          new AiError.HttpResponseError({
            module: "M",
            method: "m",
            reason: "StatusCode",
            request: request_,
            response: response(529),
            description: "overloaded"
          }),
          "Status",
          529
        ],
        [
          new AiError.HttpResponseError({
            module: "M",
            method: "m",
            reason: "Decode",
            request: request_,
            response: response(200),
            description: "not JSON"
          }),
          "Malformed",
          200
        ],
        [new AiError.MalformedOutput({ module: "M", method: "m", description: "bad part" }), "Malformed", undefined],
        [new AiError.MalformedInput({ module: "M", method: "m", description: "bad prompt" }), "Malformed", undefined],
        [new AiError.UnknownError({ module: "M", method: "m", description: "something" }), "Api", undefined]
      ]
      for (const [error, reason, status] of cases) {
        const got = yield* failure(hello, Stream.fail(error))
        expect([error._tag, got.reason, got.status, got.message]).toEqual([error._tag, reason, status, error.message])
      }
    }))

  it.effect("an error after some events still fails the stream, and the events before it were delivered", () =>
    Effect.gen(function*() {
      const model = scriptedModel(
        Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-delta", id: "t", delta: "Hi" }).pipe(
          Stream.concat(
            Stream.fail(new AiError.UnknownError({ module: "M", method: "m", description: "overloaded_error" }))
          )
        )
      )
      const seen: Array<ModelEvent> = []
      const result = yield* Effect.flatMap(
        ModelBackend,
        (backend) => Stream.runForEach(backend.stream(hello), (event) => Effect.sync(() => seen.push(event)))
      ).pipe(
        Effect.provide(EffectAiModel.layer.pipe(Layer.provide(model.layer))),
        Effect.either
      )
      expect(seen).toEqual([ModelEvent.TextDelta({ text: "Hi" })])
      expect(Either.isLeft(result) ? result.left.reason : undefined).toBe("Api")
    }))

  it.effect("an error part in the stream is an Api error with its message", () =>
    Effect.gen(function*() {
      const got = yield* failure(
        hello,
        script({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } })
      )
      expect([got.reason, got.message]).toEqual(["Api", "{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}"])
    }))

  it.effect("a tool call without an id is Malformed, streamed or complete", () =>
    Effect.gen(function*() {
      const streamed = yield* failure(
        hello,
        script(
          { type: "tool-params-start", id: "", name: "ReadFile" },
          { type: "tool-params-end", id: "" },
          finish("tool-calls")
        )
      )
      const complete = yield* failure(
        hello,
        script({ type: "tool-call", id: "", name: "ReadFile", params: {} }, finish("tool-calls"))
      )
      expect([streamed.reason, streamed.message]).toEqual(["Malformed", "A tool call of ReadFile has no id."])
      expect([complete.reason, complete.message]).toEqual(["Malformed", "A tool call of ReadFile has no id."])
    }))

  it.effect("events out of order, a call of a tool the request does not offer, and a reply without a finish are Malformed", () =>
    Effect.gen(function*() {
      const orphan = yield* failure(hello, script({ type: "tool-params-delta", id: "toolu_1", delta: "{}" }, finish()))
      const unfinished = yield* failure(
        hello,
        script({ type: "tool-params-start", id: "toolu_1", name: "ReadFile" }, finish("tool-calls"))
      )
      const unknownTool = yield* failure(
        hello,
        script({ type: "tool-call", id: "toolu_1", name: "Nope", params: {} }, finish("tool-calls"))
      )
      const noFinish = yield* failure(hello, script({ type: "text-delta", id: "t", delta: "Hi" }))
      expect([orphan.reason, orphan.message]).toEqual([
        "Malformed",
        "Params arrived for the tool call toolu_1, which has not started."
      ])
      expect([unfinished.reason, unfinished.message]).toEqual([
        "Malformed",
        "The reply finished while the tool call toolu_1 was still streaming."
      ])
      expect(unknownTool.reason).toBe("Malformed")
      expect([noFinish.reason, noFinish.message]).toEqual(["Malformed", "The reply ended without a finish."])
    }))
})
