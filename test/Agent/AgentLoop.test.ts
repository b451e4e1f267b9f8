/**
 * The agent loop over a scripted ModelBackend (the backend is the collaborator here; the loop over a real HTTP server
 * speaking the Messages API is in AgentLoop.messages.test.ts): turns, streaming into the runtime, cancellation, broken
 * replies, the turn limit, and the invariant that every tool_use in the history is answered.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Deferred, Effect, Exit, Fiber, Layer, Option, Ref, Schema, Scope, Stream } from "effect"
import * as FastCheck from "effect/FastCheck"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as AgentLoop from "../../src/Agent/AgentLoop.js"
import type { Message, ModelEvent as ModelEventType, ModelRequest } from "../../src/Agent/ModelBackend.js"
import { ModelBackend, ModelError, ModelEvent } from "../../src/Agent/ModelBackend.js"
import {
  Approver,
  PermissionPolicy,
  ResultStore,
  Session,
  Tool,
  ToolEvent,
  ToolHooks,
  ToolRegistry,
  ToolRuntime
} from "../../src/index.js"
import { recordingTracer } from "../support/index.js"

// ---------------------------------------------------------------------------------------------------------------
// tools: notes in memory, and a wait that only ends when interrupted
// ---------------------------------------------------------------------------------------------------------------

const ReadNote = Tool.make("ReadNote", {
  description: "Reads a note.",
  input: Schema.Struct({ name: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const WriteNote = Tool.make("WriteNote", {
  description: "Writes a note.",
  input: Schema.Struct({ name: Schema.String, text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const Wait = Tool.make("Wait", {
  description: "Waits until stopped.",
  input: Schema.Struct({}),
  output: Schema.String,
  touchesEnvironment: false
})

const Offline = Tool.make("Offline", {
  description: "A tool whose server is down.",
  input: Schema.Struct({}),
  output: Schema.String,
  touchesEnvironment: false
})

/** The runtime over a registry (merged into what it provides), with tool-only permissions and no approver. */
const runtimeOver = (registry: Layer.Layer<ToolRegistry>) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(registry),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )

/** The tool_results of a message, as the assertions read them. */
const resultsOf = (message: Message | undefined) =>
  message!.content as ReadonlyArray<
    { readonly tool_use_id: string; readonly content: unknown; readonly is_error?: boolean }
  >

const notesRuntime = (notes: Ref.Ref<ReadonlyMap<string, string>>, waiting: Deferred.Deferred<void>) =>
  runtimeOver(
    ToolRegistry.layer([ReadNote, WriteNote, Wait, Offline]).pipe(Layer.provide(Layer.mergeAll(
      ReadNote.implement({
        traits: () => ({ readOnly: true, concurrencySafe: true }),
        claims: ({ name }) => [Tool.Claim.read(`note:${name}`)],
        call: ({ name }) => Effect.map(Ref.get(notes), (all) => all.get(name) ?? `(no note ${name})`)
      }),
      WriteNote.implement({
        claims: ({ name }) => [Tool.Claim.write(`note:${name}`)],
        call: ({ name, text }) =>
          Effect.as(Ref.update(notes, (all) => new Map([...all, [name, text]])), `wrote ${name}`)
      }),
      Wait.implement({
        traits: () => ({ readOnly: true, concurrencySafe: true }),
        call: () => Effect.zipRight(Deferred.succeed(waiting, undefined), Effect.never)
      }),
      Offline.implement({
        isEnabled: Effect.succeed(Tool.Availability.disabled("the server is down")),
        call: () => Effect.succeed("never")
      })
    )))
  )

// ---------------------------------------------------------------------------------------------------------------
// a scripted model: one list of events per request
// ---------------------------------------------------------------------------------------------------------------

type Reply = ReadonlyArray<ModelEventType | Effect.Effect<void, ModelError>>

/** Streams the events of a tool_use, its input split in two pieces. */
const toolUse = (id: string, name: string, input: object): ReadonlyArray<ModelEventType> => {
  const json = JSON.stringify(input)
  const half = Math.floor(json.length / 2)
  return [
    ModelEvent.ToolUseStart({ id, name }),
    ModelEvent.ToolUseDelta({ id, partialJson: json.slice(0, half) }),
    ModelEvent.ToolUseDelta({ id, partialJson: json.slice(half) }),
    ModelEvent.ToolUseEnd({ id })
  ]
}
const stop = (reason: "end_turn" | "tool_use") =>
  ModelEvent.Stop({ reason, usage: { inputTokens: 10, outputTokens: 5 } })

const scripted = (replies: ReadonlyArray<Reply>, requests: Ref.Ref<ReadonlyArray<ModelRequest>>) =>
  Layer.effect(
    ModelBackend,
    Effect.gen(function*() {
      const next = yield* Ref.make(0)
      return {
        stream: (request: ModelRequest) =>
          Stream.unwrap(Effect.gen(function*() {
            yield* Ref.update(requests, (all) => [...all, request])
            const index = yield* Ref.getAndUpdate(next, (n) => n + 1)
            const reply = replies[index] ?? [ModelEvent.TextDelta({ text: "(no more replies)" }), stop("end_turn")]
            // An Effect in the script runs at that point of the stream (a wait, a failure).
            return Stream.fromIterable(reply).pipe(
              Stream.mapEffect((item) =>
                Effect.isEffect(item) ? Effect.as(item, Option.none()) : Effect.succeed(Option.some(item))
              ),
              Stream.filterMap((item) => item)
            )
          }))
      }
    })
  )

/** Every tool_use of an assistant message is answered, in order, by the tool_results of the next message. */
const answeredInOrder = (messages: ReadonlyArray<Message>): boolean =>
  messages.every((message, index) => {
    if (message.role !== "assistant" || typeof message.content === "string") return true
    const ids = message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
    if (ids.length === 0) return true
    const next = messages[index + 1]
    if (next === undefined || next.role !== "user" || typeof next.content === "string") return false
    const answered = next.content.flatMap((block) => (block.type === "tool_result" ? [block.tool_use_id] : []))
    return JSON.stringify(answered) === JSON.stringify(ids)
  })

const setup = <A, E>(
  replies: ReadonlyArray<Reply>,
  body: (ctx: {
    readonly requests: Ref.Ref<ReadonlyArray<ModelRequest>>
    readonly notes: Ref.Ref<ReadonlyMap<string, string>>
    readonly waiting: Deferred.Deferred<void>
  }) => Effect.Effect<A, E, ModelBackend | ToolRuntime | ToolRegistry>
) =>
  Effect.gen(function*() {
    const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
    const notes = yield* Ref.make<ReadonlyMap<string, string>>(new Map([["todo", "buy milk"]]))
    const waiting = yield* Deferred.make<void>()
    return yield* body({ requests, notes, waiting }).pipe(
      Effect.provide(Layer.merge(notesRuntime(notes, waiting), scripted(replies, requests)))
    )
  })

const user: Message = { role: "user", content: "Copy the todo note to done." }

describe("AgentLoop", () => {
  it.effect("with a tracer installed, a conversation is one AgentLoop.run span and an AgentLoop.turn span per turn", () =>
    setup([[...toolUse("toolu_1", "ReadNote", { name: "todo" }), stop("tool_use")], [
      ModelEvent.TextDelta({ text: "Done." }),
      stop("end_turn")
    ]], () =>
      Effect.gen(function*() {
        const { spans, tracer } = recordingTracer()
        yield* AgentLoop.run({ messages: [user] }).pipe(Effect.withTracer(tracer))
        const loop = spans.filter((span) => span.name.startsWith("AgentLoop."))
        expect(loop.map((span) => span.name)).toEqual(["AgentLoop.run", "AgentLoop.turn", "AgentLoop.turn"])
        expect(loop.map((span) => span.attributes.get("turn"))).toEqual([undefined, 1, 2])
        expect(loop.every((span) => span.status._tag === "Ended")).toBe(true)
      })))

  describe("a backend made of a pull (ModelBackend.fromPull)", () => {
    const replies: ReadonlyArray<ReadonlyArray<ReadonlyArray<ModelEventType>>> = [
      [[ModelEvent.TextDelta({ text: "Reading." }), ...toolUse("toolu_1", "ReadNote", { name: "todo" })], [
        stop("tool_use")
      ]],
      [[ModelEvent.TextDelta({ text: "It says buy milk." }), stop("end_turn")]]
    ]
    /** One chunk per pull, then the end: the first request gets the tool_use, the second the answer. */
    const scripted = (request: ModelRequest) =>
      Effect.sync(() => {
        const chunks = [...replies[request.messages.length === 1 ? 0 : 1]!]
        return Effect.suspend(() => {
          const chunk = chunks.shift()
          return chunk === undefined ? Effect.fail(Option.none()) : Effect.succeed(Chunk.unsafeFromArray(chunk))
        })
      })
    const runWith = (backend: ModelBackend["Type"]) =>
      Effect.gen(function*() {
        const notes = yield* Ref.make<ReadonlyMap<string, string>>(new Map([["todo", "buy milk"]]))
        const waiting = yield* Deferred.make<void>()
        return yield* AgentLoop.run({ messages: [user] }).pipe(
          Effect.provide(notesRuntime(notes, waiting)),
          Effect.provideService(ModelBackend, backend)
        )
      })
    const expectAnswered = (result: AgentLoop.LoopResult) => {
      expect(result.stopReason).toBe("end_turn")
      expect(result.turns).toBe(2)
      expect(result.text).toBe("It says buy milk.")
      expect(result.messages[2]).toEqual({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "buy milk" }]
      })
    }

    it.effect("the loop reads its reply chunk by chunk, and its stream is the same reply", () =>
      Effect.gen(function*() {
        const backend = ModelBackend.fromPull(scripted)
        expectAnswered(yield* runWith(backend))
        const streamed = yield* Stream.runCollect(
          backend.stream({ system: undefined, messages: [user], tools: [], maxTokens: 1024 })
        )
        expect(Chunk.toReadonlyArray(streamed)).toEqual(replies[0]!.flat())
      }))

    it.effect("a wrapper that replaces its stream is what the loop reads (the pull beside it is not)", () =>
      Effect.gen(function*() {
        const made = ModelBackend.fromPull(scripted)
        let seen = 0
        const wrapped = {
          ...made,
          stream: (r: ModelRequest) => made.stream(r).pipe(Stream.tap(() => Effect.sync(() => seen++)))
        }
        expectAnswered(yield* runWith(wrapped))
        expect(seen).toBe(replies.flat(2).length)
      }))

    it.effect("a pull set beside a stream by hand is not read: the stream is", () =>
      Effect.gen(function*() {
        const made = ModelBackend.fromPull(scripted)
        expectAnswered(
          yield* runWith({
            stream: made.stream,
            pull: () => Effect.dieMessage("the loop read a pull not its stream's")
          })
        )
      }))
  })

  it.effect("three turns: the model asks, the runtime runs, the model gets the results, the model answers", () =>
    setup([
      [
        ModelEvent.TextDelta({ text: "Reading " }),
        ModelEvent.TextDelta({ text: "both." }),
        ...toolUse("toolu_1", "ReadNote", { name: "todo" }),
        ...toolUse("toolu_2", "ReadNote", { name: "done" }),
        stop("tool_use")
      ],
      [...toolUse("toolu_3", "WriteNote", { name: "done", text: "buy milk" }), stop("tool_use")],
      [ModelEvent.TextDelta({ text: "Copied." }), stop("end_turn")]
    ], ({ notes, requests }) =>
      Effect.gen(function*() {
        const result = yield* AgentLoop.run({ messages: [user], system: "You are terse." })
        expect(result.stopReason).toBe("end_turn")
        expect(result.turns).toBe(3)
        expect(result.text).toBe("Copied.")
        expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 15 })
        expect((yield* Ref.get(notes)).get("done")).toBe("buy milk")
        expect(result.messages.map((message) => message.role)).toEqual([
          "user",
          "assistant",
          "user",
          "assistant",
          "user",
          "assistant"
        ])
        expect(result.messages[1]).toEqual({
          role: "assistant",
          content: [
            { type: "text", text: "Reading both." },
            { type: "tool_use", id: "toolu_1", name: "ReadNote", input: { name: "todo" } },
            { type: "tool_use", id: "toolu_2", name: "ReadNote", input: { name: "done" } }
          ]
        })
        expect(result.messages[2]).toEqual({
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "buy milk" },
            { type: "tool_result", tool_use_id: "toolu_2", content: "(no note done)" }
          ]
        })
        expect(answeredInOrder(result.messages)).toBe(true)
        // Each request carries the conversation so far and the tools' definitions.
        const sent = yield* Ref.get(requests)
        expect(sent.map((request) => request.messages.length)).toEqual([1, 3, 5])
        expect(sent[0]!.system).toBe("You are terse.")
        // Without a catalogue every registered tool that can work now is sent (Offline cannot).
        expect(sent[0]!.tools.map((tool) => tool.name)).toEqual(["ReadNote", "WriteNote", "Wait"])
        expect(sent[1]!.messages).toEqual(result.messages.slice(0, 3))
      })))

  it.effect("a tool_use runs while the model is still streaming the rest of its reply", () =>
    Effect.gen(function*() {
      const firstDone = yield* Deferred.make<void>()
      yield* setup([
        // The reply only goes on once the first call has completed: it must have run before the reply ended.
        [
          ...toolUse("toolu_1", "WriteNote", { name: "a", text: "1" }),
          Deferred.await(firstDone),
          ...toolUse("toolu_2", "ReadNote", { name: "a" }),
          stop("tool_use")
        ],
        [ModelEvent.TextDelta({ text: "done" }), stop("end_turn")]
      ], () =>
        Effect.scoped(Effect.gen(function*() {
          const handle = yield* AgentLoop.start({ messages: [user] })
          const events = yield* handle.events.pipe(
            Stream.tap((event) =>
              event._tag === "Tool" && ToolEvent.$is("Completed")(event.event) &&
                event.event.outcome.toolUseId === "toolu_1"
                ? Deferred.succeed(firstDone, undefined)
                : Effect.void
            ),
            Stream.runCollect
          )
          const all = Chunk.toReadonlyArray(events)
          expect(all.at(-1)?._tag).toBe("Finished")
          const result = yield* handle.await
          expect(result.messages[2]).toEqual({
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: "toolu_1", content: "wrote a" },
              { type: "tool_result", tool_use_id: "toolu_2", content: "1" }
            ]
          })
          expect(all.map((event) => event._tag).filter((tag) => tag !== "Tool")).toEqual([
            "Requested",
            "Replied",
            "Requested",
            "Text",
            "Replied",
            "Finished"
          ])
        })))
    }))

  it.effect("cancelling mid-reply stops the running call, never runs the one cut short, and answers both", () =>
    setup([
      [
        ...toolUse("toolu_1", "Wait", {}),
        ModelEvent.ToolUseStart({ id: "toolu_2", name: "WriteNote" }),
        ModelEvent.ToolUseDelta({ id: "toolu_2", partialJson: "{\"name\": \"todo\", \"te" }),
        Effect.never
      ]
    ], ({ notes, waiting }) =>
      Effect.scoped(Effect.gen(function*() {
        const handle = yield* AgentLoop.start({ messages: [user] })
        const drained = yield* Effect.fork(Stream.runDrain(handle.events))
        yield* Deferred.await(waiting)
        yield* handle.cancel
        const result = yield* handle.await
        yield* Fiber.join(drained)
        expect(result.stopReason).toBe("cancelled")
        expect(result.turns).toBe(1)
        expect(answeredInOrder(result.messages)).toBe(true)
        const [, reply, results] = result.messages
        expect(reply).toEqual({
          role: "assistant",
          content: [
            { type: "tool_use", id: "toolu_1", name: "Wait", input: {} },
            // What had arrived of the input when the reply stopped.
            { type: "tool_use", id: "toolu_2", name: "WriteNote", input: { name: "todo" } }
          ]
        })
        const content = results!.content as ReadonlyArray<
          { readonly tool_use_id: string; readonly content: unknown; readonly is_error?: boolean }
        >
        expect(content.map((block) => [block.tool_use_id, block.is_error])).toEqual([["toolu_1", true], [
          "toolu_2",
          true
        ]])
        expect(String(content[0]!.content)).toMatch(/interrupted/i)
        expect(String(content[1]!.content)).toMatch(/never ran|not run|was not started/i)
        // The cut-short write never ran.
        expect((yield* Ref.get(notes)).get("todo")).toBe("buy milk")
      }))))

  it.effect("cancelling after the reply has ended stops the call still running, and the loop ends cancelled", () =>
    setup(
      [[...toolUse("toolu_1", "Wait", {}), stop("tool_use")]],
      ({ waiting }) =>
        Effect.scoped(Effect.gen(function*() {
          const handle = yield* AgentLoop.start({ messages: [user] })
          yield* Effect.fork(Stream.runDrain(handle.events))
          yield* Deferred.await(waiting)
          yield* handle.cancel
          const result = yield* handle.await
          expect([result.stopReason, result.turns]).toEqual(["cancelled", 1])
          const results = resultsOf(result.messages.at(-1))
          expect(results.map((block) => [block.tool_use_id, block.is_error])).toEqual([["toolu_1", true]])
          expect(String(results[0]!.content)).toMatch(/interrupted/i)
        }))
    ))

  it.effect("a soft interrupt mid-reply lets a call whose tool blocks interrupts finish, and stops the others", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      const bothRunning = yield* Ref.make(0)
      const running = yield* Deferred.make<void>()
      const started = Ref.updateAndGet(bothRunning, (n) => n + 1).pipe(
        Effect.flatMap((n) => (n === 2 ? Deferred.succeed(running, undefined) : Effect.void))
      )
      const Finish = Tool.make("Finish", {
        description: "Finishes what it started.",
        input: Schema.Struct({}),
        output: Schema.String,
        touchesEnvironment: false
      })
      const Idle = Tool.make("Idle", {
        description: "Waits until stopped.",
        input: Schema.Struct({}),
        output: Schema.String,
        touchesEnvironment: false
      })
      const runtime = runtimeOver(
        ToolRegistry.layer([Finish, Idle]).pipe(Layer.provide(Layer.mergeAll(
          Finish.implement({
            traits: () => ({ readOnly: true, concurrencySafe: true }),
            interruptBehavior: "block",
            call: () => Effect.zipRight(Effect.zipRight(started, Deferred.await(release)), Effect.succeed("finished"))
          }),
          Idle.implement({
            traits: () => ({ readOnly: true, concurrencySafe: true }),
            interruptBehavior: "cancel",
            call: () => Effect.zipRight(started, Effect.never)
          })
        )))
      )
      const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
      const result = yield* Effect.scoped(Effect.gen(function*() {
        const handle = yield* AgentLoop.start({ messages: [user] })
        yield* Effect.fork(Stream.runDrain(handle.events))
        yield* Deferred.await(running)
        yield* handle.interrupt
        // The blocking call is still going: the loop waits for it.
        yield* Deferred.succeed(release, undefined)
        return yield* handle.await
      })).pipe(
        Effect.provide(Layer.merge(
          runtime,
          scripted([[...toolUse("toolu_1", "Finish", {}), ...toolUse("toolu_2", "Idle", {}), Effect.never]], requests)
        ))
      )
      expect([result.stopReason, result.turns]).toEqual(["cancelled", 1])
      expect(answeredInOrder(result.messages)).toBe(true)
      const results = resultsOf(result.messages.at(-1))
      expect(results[0]).toEqual({ type: "tool_result", tool_use_id: "toolu_1", content: "finished" })
      expect([results[1]!.tool_use_id, results[1]!.is_error]).toEqual(["toolu_2", true])
      expect(String(results[1]!.content)).toMatch(/interrupted/i)
    }))

  it.effect("a stop before the reply is read sends no request: the turn ends cancelled with nothing to answer", () =>
    setup(
      [[...toolUse("toolu_1", "WriteNote", { name: "todo", text: "x" }), stop("tool_use")]],
      ({ notes, requests }) =>
        Effect.scoped(Effect.gen(function*() {
          const loop = yield* Deferred.make<AgentLoop.LoopHandle>()
          const handle = yield* AgentLoop.start({
            messages: [user],
            // Called in the conversation's fiber, right before the request goes out.
            onEvent: (event) =>
              event._tag === "Requested" ? Effect.flatMap(Deferred.await(loop), (h) => h.cancel) : Effect.void
          })
          yield* Deferred.succeed(loop, handle)
          yield* Effect.fork(Stream.runDrain(handle.events))
          const result = yield* handle.await
          expect(result.stopReason).toBe("cancelled")
          expect(result.messages).toEqual([user])
          expect(yield* Ref.get(requests)).toEqual([])
          expect((yield* Ref.get(notes)).get("todo")).toBe("buy milk")
        }))
    ))

  it.effect("onEvent is called one event at a time, though the runtime's events come from another fiber", () =>
    setup([
      [
        ModelEvent.TextDelta({ text: "a" }),
        ...toolUse("toolu_1", "ReadNote", { name: "todo" }),
        ModelEvent.TextDelta({ text: "b" }),
        ...toolUse("toolu_2", "ReadNote", { name: "a" }),
        ModelEvent.TextDelta({ text: "c" }),
        stop("tool_use")
      ],
      [ModelEvent.TextDelta({ text: "done" }), stop("end_turn")]
    ], () =>
      Effect.gen(function*() {
        let inFlight = 0
        let most = 0
        let seen = 0
        const result = yield* AgentLoop.run({
          messages: [user],
          onEvent: () =>
            Effect.gen(function*() {
              inFlight++
              seen++
              most = Math.max(most, inFlight)
              // A slow UI: the other fiber gets every chance to call in meanwhile.
              for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
              inFlight--
            })
        })
        expect(result.stopReason).toBe("end_turn")
        expect(seen).toBeGreaterThan(10)
        expect(most).toBe(1)
      })))

  it.effect("interrupting the fiber of run (no handle to stop it) stops the reply and the call it started", () =>
    Effect.gen(function*() {
      const released = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const Hold = Tool.make("Hold", {
        description: "Holds a resource until stopped.",
        input: Schema.Struct({}),
        output: Schema.String,
        touchesEnvironment: false
      })
      const runtime = runtimeOver(
        ToolRegistry.layer([Hold]).pipe(Layer.provide(Hold.implement({
          traits: () => ({ readOnly: true, concurrencySafe: true }),
          interruptBehavior: "cancel",
          call: () =>
            Effect.acquireRelease(Deferred.succeed(started, undefined), () => Deferred.succeed(released, undefined))
              .pipe(Effect.zipRight(Effect.never))
        })))
      )
      const requests = yield* Ref.make<ReadonlyArray<ModelRequest>>([])
      const fiber = yield* AgentLoop.run({ messages: [user] }).pipe(
        Effect.provide(Layer.merge(runtime, scripted([[...toolUse("toolu_1", "Hold", {}), Effect.never]], requests))),
        Effect.fork
      )
      yield* Deferred.await(started)
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
      // The call's scope was closed on the way out.
      expect(yield* Deferred.isDone(released)).toBe(true)
    }))

  it.effect("closing the Scope of a started loop ends its events for a consumer outside it", () =>
    setup([[...toolUse("toolu_1", "Wait", {}), stop("tool_use")]], ({ waiting }) =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const handle = yield* Scope.extend(AgentLoop.start({ messages: [user] }), scope)
        const consumer = yield* Effect.fork(Stream.runCollect(handle.events))
        yield* Deferred.await(waiting)
        yield* Scope.close(scope, Exit.void)
        const seen = Chunk.toReadonlyArray(yield* Fiber.join(consumer))
        expect(seen.map((event) => event._tag)).toContain("Requested")
      })))

  it.effect("a reply that breaks off is a typed error whose history answers the tool_use that had arrived", () =>
    setup([
      [
        ...toolUse("toolu_1", "ReadNote", { name: "todo" }),
        Effect.fail(new ModelError({ reason: "Api", message: "overloaded_error: Overloaded" }))
      ]
    ], () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(AgentLoop.run({ messages: [user] }))
        expect(error._tag).toBe("AgentLoopError")
        expect(error.error.reason).toBe("Api")
        expect(error.message).toBe("the model request of turn 1 failed (Api): overloaded_error: Overloaded")
        expect(answeredInOrder(error.messages)).toBe(true)
        expect(error.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"])
      })))

  it.effect("run: a reply that breaks off inside a tool_use never runs it, and answers it as never run", () =>
    setup([
      [
        ...toolUse("toolu_1", "ReadNote", { name: "todo" }),
        ModelEvent.ToolUseStart({ id: "toolu_2", name: "WriteNote" }),
        ModelEvent.ToolUseDelta({ id: "toolu_2", partialJson: "{\"name\": \"todo\", \"text\": \"x\"}" }),
        Effect.fail(new ModelError({ reason: "Transport", message: "connection reset" }))
      ]
    ], ({ notes }) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(AgentLoop.run({ messages: [user] }))
        expect(answeredInOrder(error.messages)).toBe(true)
        const results = resultsOf(error.messages.at(-1))
        // The complete one was answered (run, or stopped with the broken reply before it started).
        expect(results[0]!.tool_use_id).toBe("toolu_1")
        expect([results[1]!.tool_use_id, results[1]!.is_error, results[1]!.content]).toEqual([
          "toolu_2",
          true,
          AgentLoop.cutShortMessage
        ])
        // Its input had all arrived but for the block's end: the write never ran.
        expect((yield* Ref.get(notes)).get("todo")).toBe("buy milk")
      })))

  it.effect("events out of order, a reused id and a reply without a stop reason are Malformed", () =>
    Effect.forEach([
      {
        reply: [ModelEvent.ToolUseDelta({ id: "toolu_9", partialJson: "{}" })],
        says: "input for a tool_use that is not open (toolu_9)"
      },
      {
        reply: [...toolUse("toolu_1", "ReadNote", { name: "a" }), ...toolUse("toolu_1", "ReadNote", { name: "b" })],
        says: "two tool_use blocks have the id toolu_1"
      },
      { reply: [ModelEvent.TextDelta({ text: "hi" })], says: "the reply ended without a stop reason" },
      {
        reply: [
          ModelEvent.ToolUseStart({ id: "toolu_1", name: "WriteNote" }),
          ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: "{}" }),
          stop("tool_use")
        ],
        says: "the reply ended inside a tool_use (toolu_1)"
      },
      { reply: [ModelEvent.ToolUseStart({ id: "", name: "ReadNote" })], says: "a tool_use block has an empty id" }
    ], ({ reply, says }) =>
      setup([reply], () =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(AgentLoop.run({ messages: [user] }))
          expect([error.error.reason, error.error.message]).toEqual(["Malformed", says])
          expect(answeredInOrder(error.messages)).toBe(true)
        })), { discard: true }))

  it.effect("a Session in context is saved after every turn, before the next request", () =>
    Effect.gen(function*() {
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "etr-loop-session-"))
      const stateFile = path.join(directory, "session.json")
      const savedBefore: Array<readonly [number, boolean]> = []
      yield* setup([
        [...toolUse("toolu_1", "ReadNote", { name: "todo" }), stop("tool_use")],
        [ModelEvent.TextDelta({ text: "done" }), stop("end_turn")]
      ], () =>
        AgentLoop.run({
          messages: [user],
          onEvent: (event) =>
            event._tag === "Requested"
              ? Effect.sync(() => void savedBefore.push([event.turn, fs.existsSync(stateFile)]))
              : Effect.void
        }).pipe(Effect.provide(Session.layer({ directory }))))
      expect(savedBefore).toEqual([[1, false], [2, true]])
      fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.effect("the turn limit ends a model that never stops calling tools, with its last calls answered", () =>
    setup(
      Array.from({ length: 5 }, (_, i) => [...toolUse(`toolu_${i}`, "ReadNote", { name: "todo" }), stop("tool_use")]),
      ({ requests }) =>
        Effect.gen(function*() {
          const result = yield* AgentLoop.run({ messages: [user], maxTurns: 3 })
          expect(result.stopReason).toBe("max_turns")
          expect(result.turns).toBe(3)
          expect((yield* Ref.get(requests)).length).toBe(3)
          expect(result.messages.at(-1)?.role).toBe("user")
          expect(answeredInOrder(result.messages)).toBe(true)
        })
    ))

  // Any script: replies of text and tool_uses (some cut short), ending normally, breaking off, or cancelled at any
  // point. Whatever happens, the history is valid to send again.
  const arbitraryStep = FastCheck.oneof(
    FastCheck.record({
      kind: FastCheck.constant("text" as const),
      text: FastCheck.string({ minLength: 1, maxLength: 5 })
    }),
    FastCheck.record({ kind: FastCheck.constant("read" as const), name: FastCheck.constantFrom("todo", "a") }),
    FastCheck.record({ kind: FastCheck.constant("write" as const), name: FastCheck.constantFrom("todo", "a") }),
    FastCheck.record({ kind: FastCheck.constant("cut" as const) })
  )
  const arbitraryReply = FastCheck.record({
    steps: FastCheck.array(arbitraryStep, { maxLength: 4 }),
    end: FastCheck.constantFrom("stop" as const, "stop" as const, "fail" as const, "cancel" as const)
  })

  it.effect.prop(
    "a tool_use reaches the runtime with the same input whether it is handed over whole (nobody listens) or in parts",
    [
      FastCheck.oneof(
        // A well-formed input, one with a wrong type, and text that is not JSON (or is JSON but not an object).
        FastCheck.string({ maxLength: 12 }).map((name) => JSON.stringify({ name })),
        FastCheck.integer().map((name) => JSON.stringify({ name })),
        FastCheck.string({ maxLength: 16 }),
        FastCheck.constantFrom("", " ", "[1]", "\"todo\"", "{\"name\": \"todo\"", "{\"name\": \"todo\"}x")
      ),
      FastCheck.array(FastCheck.nat(), { maxLength: 4 })
    ],
    ([json, cuts]) =>
      Effect.gen(function*() {
        // The input in pieces, cut where the generator says.
        const at = [...new Set(cuts.map((cut) => cut % (json.length + 1)))].sort((a, b) => a - b)
        const pieces = [0, ...at].map((start, i) => json.slice(start, [...at, json.length][i]))
        const reply: Reply = [
          ModelEvent.ToolUseStart({ id: "toolu_1", name: "ReadNote" }),
          ...pieces.map((partialJson) => ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson })),
          ModelEvent.ToolUseEnd({ id: "toolu_1" }),
          stop("tool_use")
        ]
        const answer = (listened: boolean) =>
          setup([reply], () =>
            Effect.map(
              AgentLoop.run({ messages: [user], maxTurns: 1, ...(listened ? { onEvent: () => Effect.void } : {}) }),
              (result) => result.messages[2]
            ))
        const [whole, inParts] = [yield* answer(false), yield* answer(true)]
        expect(whole).toEqual(inParts)
      }),
    { fastCheck: { numRuns: 80 } }
  )

  it.effect.prop("every tool_use in the history is answered, in order, however the conversation ends", [
    FastCheck.array(arbitraryReply, { minLength: 1, maxLength: 4 })
  ], ([script]) =>
    Effect.gen(function*() {
      let id = 0
      const cancelNow = yield* Deferred.make<void>()
      const replies: Array<Reply> = script.map(({ end, steps }) => {
        const events: Array<ModelEventType | Effect.Effect<void, ModelError>> = []
        for (const step of steps) {
          const toolUseId = `toolu_${id++}`
          if (step.kind === "text") events.push(ModelEvent.TextDelta({ text: step.text }))
          else if (step.kind === "read") events.push(...toolUse(toolUseId, "ReadNote", { name: step.name }))
          else if (step.kind === "write") {
            events.push(...toolUse(toolUseId, "WriteNote", { name: step.name, text: "x" }))
          } else {events.push(
              ModelEvent.ToolUseStart({ id: toolUseId, name: "WriteNote" }),
              ModelEvent.ToolUseDelta({ id: toolUseId, partialJson: "{\"na" })
            )}
        }
        const cut = steps.some((step) => step.kind === "cut")
        if (end === "fail") {
          events.push(Effect.fail(new ModelError({ reason: "Transport", message: "connection reset" })))
        } else if (end === "cancel") events.push(Deferred.succeed(cancelNow, undefined), Effect.never)
        else if (!cut) {
          events.push(
            stop(steps.some((step) => step.kind === "read" || step.kind === "write") ? "tool_use" : "end_turn")
          )
        } else events.push(Effect.fail(new ModelError({ reason: "Malformed", message: "cut" })))
        return events
      })
      return yield* setup(replies, () =>
        Effect.scoped(Effect.gen(function*() {
          const handle = yield* AgentLoop.start({ messages: [user], maxTurns: 4 })
          yield* Effect.fork(Stream.runDrain(handle.events).pipe(Effect.ignore))
          yield* Effect.fork(Effect.zipRight(Deferred.await(cancelNow), handle.cancel))
          const exit = yield* Effect.exit(handle.await)
          const messages = exit._tag === "Success" ? exit.value.messages : yield* handle.messages
          expect(answeredInOrder(messages)).toBe(true)
          // Roles alternate after the first message (a reply with nothing in it is not kept).
          expect(messages.every((message, i) => i === 0 || message.role !== messages[i - 1]!.role)).toBe(true)
        })))
    }), { fastCheck: { numRuns: 60 }, timeout: 60_000 })
})
