/**
 * The agent loop: from a model's reply to the next request.
 *
 * Each turn sends the conversation with the session's tool definitions (the `ToolCatalog`'s, so deferred tools stay
 * behind ToolSearch until discovered; every registered tool when there is no catalogue), streams the model's reply,
 * hands each tool_use to the governed runtime **as it streams** (a read may finish before the model has finished
 * writing the next call), and answers every tool_use with its tool_result (a ToolSearch's `tool_reference` blocks
 * included) in the next user message. It stops when the model ends its turn without calling a tool, at the turn
 * limit, or when it is cancelled; events stream out for a UI.
 *
 * ```ts
 * const result = yield* AgentLoop.run({ messages: [{ role: "user", content: "Fix the typo in notes.txt" }] })
 * // result.messages: the whole conversation; result.stopReason: "end_turn" | "max_turns" | "cancelled" | ...
 * ```
 *
 * With a `Session` in context, the session is saved after every turn. With a `TaskRegistry` in context, the ends of
 * background tasks (and their stalls at a prompt) are added to the next request, once each, as `<task-notification>`
 * text after the last user message's content, so the model never has to poll.
 *
 * The history the loop keeps is always valid to send again: every tool_use in it is followed by its tool_result,
 * also when the loop was cancelled mid-reply or the model's response broke off (a call that never ran is answered
 * as such; a call that started and was stopped says so). The backend is the {@link ModelBackend} in context:
 * `AnthropicMessages` (the Messages API) or `EffectAiModel` (any @effect/ai `LanguageModel`).
 *
 * @since 0.2.0
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Mailbox from "effect/Mailbox"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as Definitions from "../Catalog/Definitions.js"
import { requestEnabled, ToolCatalog } from "../Catalog/ToolCatalog.js"
import { ToolRegistry } from "../Catalog/ToolRegistry.js"
import { AuditLog } from "../Runtime/AuditLog.js"
import type { ToolEvent } from "../Runtime/Events.js"
import { parseComplete, parsePartial, ToolUsePart } from "../Runtime/Preview.js"
import type { RunHandle, RunOptions } from "../Runtime/ToolRuntime.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { Session } from "../Session/Session.js"
import { withSpan } from "../Shared/tracing.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type { Outcome } from "../Tool/Outcome.js"
import { filterEnabled } from "../Tool/Tool.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import * as Pulled from "./internal/pulled.js"
import type { ContentBlock, Message, ModelEvent, ModelRequest, StopReason } from "./ModelBackend.js"
import { ModelBackend, ModelError } from "./ModelBackend.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * What a conversation starts from and how far it may go.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoopOptions {
  /** The conversation so far; normally it ends with the person's message. */
  readonly messages: ReadonlyArray<Message>
  /** The system prompt. The announcement of deferred tools (ToolSearch) is appended to it. */
  readonly system?: string | undefined
  /** At most this many model requests. Default 20. */
  readonly maxTurns?: number | undefined
  /** `max_tokens` of each request. Default 4,096. */
  readonly maxTokens?: number | undefined
  /** How each turn's tool calls run (scheduling mode, concurrency, timeouts). */
  readonly run?: RunOptions | undefined
  /**
   * Called with every event, one at a time, in the order they happen (a UI that renders as it goes). The reply's
   * events wait for it; the runtime's events of calls already running are not held back by it.
   */
  readonly onEvent?: ((event: LoopEvent) => Effect.Effect<void>) | undefined
}

/**
 * Why the loop ended: the model's own stop reason when it ended its turn without calling a tool, `"max_turns"` at
 * the turn limit (the history then ends with the last tool_results), or `"cancelled"`.
 *
 * @since 0.2.0
 * @category models
 */
export type LoopStopReason = StopReason | "max_turns" | "cancelled"

/**
 * The end of a conversation.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoopResult {
  /** The whole conversation: the given messages, then every reply and every answer to it. */
  readonly messages: ReadonlyArray<Message>
  readonly stopReason: LoopStopReason
  /** How many model requests were made. */
  readonly turns: number
  /** The text of the model's last reply. */
  readonly text: string
  /** Tokens over all requests, as the backend reported them. */
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
}

/**
 * What happens during a conversation, for a UI.
 *
 * @since 0.2.0
 * @category models
 */
export type LoopEvent = Data.TaggedEnum<{
  /** A request is sent: which tools it carries. */
  Requested: { readonly turn: number; readonly tools: ReadonlyArray<string>; readonly deferred: ReadonlyArray<string> }
  /** More text of the model's reply. */
  Text: { readonly turn: number; readonly text: string }
  /**
   * The model API asked to wait (429 rate limit, 529 overloaded) before the reply began: the request is sent again
   * after `delayMillis` (the backend's `Retrying` event).
   */
  Retrying: {
    readonly turn: number
    readonly attempt: number
    readonly maxRetries: number
    readonly status: number
    readonly delayMillis: number
    readonly message: string
  }
  /** What the runtime reports about a call (queued, previewed, started, decided, progress, completed). */
  Tool: { readonly turn: number; readonly event: ToolEvent }
  /**
   * A background task ended (or stalled at a prompt) and the request of `turn` tells the model, once: the task's id,
   * its status and the `<task-notification>` text added.
   *
   * @since 0.3.0
   */
  TaskNotified: {
    readonly turn: number
    readonly taskId: string
    readonly kind: "ended" | "stalled"
    readonly status: string
    readonly text: string
  }
  /** A turn is complete: the model's reply and, when it called tools, the tool_results that answer them. */
  Replied: { readonly turn: number; readonly reply: Message; readonly results: Message | undefined }
  /** The conversation ended. */
  Finished: { readonly result: LoopResult }
}>

/**
 * Constructors and matchers for {@link LoopEvent}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const LoopEvent = Data.taggedEnum<LoopEvent>()

/**
 * A model request failed. `messages` is the conversation up to the failure, still valid to send again: a reply cut
 * short is kept with what had arrived, and every tool_use in it has its tool_result.
 *
 * @since 0.2.0
 * @category errors
 */
export class AgentLoopError extends Data.TaggedError("AgentLoopError")<{
  readonly error: ModelError
  readonly turn: number
  readonly messages: ReadonlyArray<Message>
}> {
  override get message(): string {
    return `the model request of turn ${this.turn} failed (${this.error.reason}): ${this.error.message}`
  }
}

/**
 * A running conversation.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoopHandle {
  /** Everything that happens, ending with `Finished`. Single consumer; events wait for it (unbounded). */
  readonly events: Stream.Stream<LoopEvent, AgentLoopError>
  /**
   * Stops the conversation now: the model's reply stops streaming, running calls are interrupted, queued ones never
   * start, and the loop ends with `"cancelled"` (every tool_use answered).
   */
  readonly cancel: Effect.Effect<void>
  /**
   * A softer stop (the person typed a new message): like `cancel`, but calls whose tool finishes rather than stops
   * (`interruptBehavior: "block"`: Bash, edits) finish first.
   */
  readonly interrupt: Effect.Effect<void>
  /** The conversation so far, at any moment. */
  readonly messages: Effect.Effect<ReadonlyArray<Message>>
  /** The end of the conversation. */
  readonly await: Effect.Effect<LoopResult, AgentLoopError>
}

// ---------------------------------------------------------------------------------------------------------------
// the loop
// ---------------------------------------------------------------------------------------------------------------

type Requirements = ModelBackend | ToolRuntime | ToolRegistry

/**
 * Runs a conversation to its end.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Schema, Stream } from "effect"
 * import {
 *   AgentLoop,
 *   Approver,
 *   ModelBackend,
 *   ModelEvent,
 *   PermissionPolicy,
 *   ResultStore,
 *   Tool,
 *   ToolHooks,
 *   ToolRegistry,
 *   ToolRuntime
 * } from "effect-tool-runtime"
 *
 * const Echo = Tool.make("Echo", {
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 *
 * // A model that calls Echo once, then answers (`AnthropicMessages.layer` is the real one).
 * const Model = Layer.succeed(ModelBackend, {
 *   stream: (request) =>
 *     request.messages.length === 1
 *       ? Stream.make(
 *         ModelEvent.ToolUseStart({ id: "toolu_1", name: "Echo" }),
 *         ModelEvent.ToolUseDelta({ id: "toolu_1", partialJson: `{"text": "hello"}` }),
 *         ModelEvent.ToolUseEnd({ id: "toolu_1" }),
 *         ModelEvent.Stop({ reason: "tool_use", usage: undefined })
 *       )
 *       : Stream.make(
 *         ModelEvent.TextDelta({ text: "Done." }),
 *         ModelEvent.Stop({ reason: "end_turn", usage: undefined })
 *       )
 * })
 *
 * const Registry = ToolRegistry.layer([Echo]).pipe(
 *   Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))
 * )
 * const Runtime = ToolRuntime.layer.pipe(
 *   Layer.provide(Layer.mergeAll(Registry, PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none)),
 *   Layer.provide(ResultStore.layerMemory())
 * )
 *
 * // The conversation runs until the model ends its turn without calling a tool.
 * export const program = AgentLoop.run({ messages: [{ role: "user", content: "Say hello." }] }).pipe(
 *   Effect.map((result) => [result.stopReason, result.turns, result.text]), // ["end_turn", 2, "Done."]
 *   Effect.provide(Layer.mergeAll(Model, Runtime, Registry))
 * )
 * ```
 *
 * @since 0.2.0
 * @category running
 */
export const run = (options: LoopOptions): Effect.Effect<LoopResult, AgentLoopError, Requirements> =>
  withSpan(
    // Nobody holds a handle to stop it: the conversation runs in the caller's fiber, and its replies are read there.
    Effect.scoped(Effect.flatMap(conversationOf(options, options.onEvent, false), (made) => made.conversation)),
    "AgentLoop.run"
  )

/**
 * Starts a conversation whose events, cancellation and end are in the handle; it belongs to the Scope (closing it
 * stops everything).
 *
 * @since 0.2.0
 * @category running
 */
export const start = (options: LoopOptions): Effect.Effect<LoopHandle, never, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const events = yield* Mailbox.make<LoopEvent, AgentLoopError>()
    // Added first, so it runs last: a consumer outside the Scope sees the events end when the Scope closes.
    yield* Effect.addFinalizer(() => events.shutdown)
    const onEvent = options.onEvent
    const handle = yield* startWith(
      options,
      (event) => onEvent === undefined ? events.offer(event) : Effect.zipRight(onEvent(event), events.offer(event))
    )
    yield* Effect.forkScoped(Effect.flatMap(Effect.exit(Effect.asVoid(handle.await)), (exit) => events.done(exit)))
    return { ...handle, events: Mailbox.toStream(events) }
  }).pipe((started) => withSpan(started, "AgentLoop.start"))

/**
 * The conversation's events as a stream, ending with `Finished` (or failing with the {@link AgentLoopError}).
 *
 * @since 0.2.0
 * @category running
 */
export const stream = (options: LoopOptions): Stream.Stream<LoopEvent, AgentLoopError, Requirements> =>
  Stream.unwrapScoped(Effect.map(start(options), (handle) => handle.events))

/** `emitUnordered`: where events go; without it nobody listens, and the runtime's events are not read. */
const startWith = (
  options: LoopOptions,
  emitUnordered: ((event: LoopEvent) => Effect.Effect<unknown>) | undefined
): Effect.Effect<Omit<LoopHandle, "events">, never, Requirements | Scope.Scope> =>
  Effect.flatMap(
    conversationOf(options, emitUnordered, true),
    ({ conversation, history, stopWith }) =>
      Effect.map(Effect.forkScoped(conversation), (fiber) => ({
        cancel: stopWith("cancel"),
        interrupt: stopWith("interrupt"),
        messages: Ref.get(history),
        await: Fiber.join(fiber)
      }))
  )

/** A conversation, not yet running, and how to stop it. */
interface Conversation {
  readonly conversation: Effect.Effect<LoopResult, AgentLoopError>
  readonly history: Ref.Ref<ReadonlyArray<Message>>
  readonly stopWith: (how: "cancel" | "interrupt") => Effect.Effect<void>
}

/**
 * The conversation. `stoppable`: someone holds a handle that may stop it, so each reply is read in a fiber of its own
 * that a stop interrupts; otherwise (`run`) the replies are read in the conversation's own fiber.
 */
const conversationOf = (
  options: LoopOptions,
  emitUnordered: ((event: LoopEvent) => Effect.Effect<unknown>) | undefined,
  stoppable: boolean
): Effect.Effect<Conversation, never, Requirements | Scope.Scope> =>
  // Read off the context in one step, and built synchronously: a conversation's set-up was a tenth of a turn's steps.
  Effect.contextWith((context: Context.Context<Requirements | Scope.Scope>) => {
    // The conversation and the runtime's events are two fibers: one at a time, so a UI sees them in order.
    const lock = Effect.unsafeMakeSemaphore(1)
    const emit = emitUnordered === undefined
      ? (_event: LoopEvent) => Effect.void
      : (event: LoopEvent) => lock.withPermits(1)(emitUnordered(event))
    const backend = Context.get(context, ModelBackend)
    const runtime = Context.get(context, ToolRuntime)
    const registry = Context.get(context, ToolRegistry)
    const catalog = Context.getOption(context, ToolCatalog)
    // A session in context is saved after every turn (what the model read, discovered tools, approvals).
    const checkpoint = Option.match(Context.getOption(context, Session), {
      onNone: () => Effect.void,
      onSome: (session) =>
        Effect.catchAll(session.checkpoint, (error) =>
          Effect.logWarning(`the session could not be saved: ${error.message}`))
    })
    const history = Ref.unsafeMake<ReadonlyArray<Message>>(options.messages)
    // Nobody reads the runs' events, nor records them: a tool_use goes to its run whole when it ends, not part by part
    // (whose previews, a partial parse of the input per piece, would go nowhere).
    const wholeBlocks = emitUnordered === undefined && !Context.get(context, AuditLog).enabled
    // Background tasks that ended (or stalled) since the last request are told in the next one, once each.
    const notify = Option.match(Context.getOption(context, TaskRegistry), {
      onNone: () => (_turn: number) =>
        Effect.void,
      onSome: (tasks) => (turn: number) =>
        Effect.gen(function*() {
          yield* tasks.refresh
          const taken = yield* tasks.takeNotifications
          if (taken.length === 0) return
          yield* Ref.update(history, (messages) => withNotices(messages, taken.map((notice) => notice.text)))
          for (const notice of taken) {
            yield* emit(LoopEvent.TaskNotified({
              turn,
              taskId: notice.task.id,
              kind: notice.kind,
              status: notice.task.status._tag,
              text: notice.text
            }))
          }
        })
    })
    /**
     * A stop reaches what runs when it comes (the reply being read: its fiber is interrupted; the run of its calls:
     * cancelled or interrupted) and is read where the loop decides (between turns, after a reply). Nothing waits for
     * one: a conversation that is never stopped pays for no fiber to watch for it (a race per reply and a watcher per
     * run cost a sixth of the loop's own CPU in `bench/loop`).
     */
    let stopped: "cancel" | "interrupt" | undefined = undefined
    /** The fiber reading the current reply, while it reads. */
    let reading: Fiber.RuntimeFiber<unknown, unknown> | undefined = undefined
    /** The current reply's run, until the reply's scope closes: a stop after the reply ended still stops its calls. */
    let running: RunningReply | undefined = undefined
    /** Stops a run as the stop says, in a fiber of the reply's scope (what called the stop does not wait for it). */
    const stopRun = (run: RunningReply, how: "cancel" | "interrupt") =>
      Effect.asVoid(Effect.forkIn(how === "interrupt" ? run.handle.interrupt : run.handle.cancel, run.scope))
    const maxTurns = options.maxTurns === undefined || !Number.isFinite(options.maxTurns)
      ? 20
      : Math.max(1, Math.floor(options.maxTurns))
    const usage = { inputTokens: 0, outputTokens: 0 }

    const definitions = Option.match(catalog, {
      // Every registered tool that can work now (a down MCP server's tools are left out).
      onNone: () =>
        Effect.map(filterEnabled(registry.tools), (tools) => ({
          tools: tools.map((tool) => Definitions.anthropic(tool.definition)),
          included: tools.map((tool) => tool.definition.name),
          deferred: [] as ReadonlyArray<string>,
          announcement: undefined as string | undefined
        })),
      onSome: (service) =>
        Effect.map(
          requestEnabled("anthropic").pipe(
            Effect.provideService(ToolCatalog, service),
            Effect.provideService(ToolRegistry, registry)
          ),
          (request) => ({ ...request, tools: request.tools as ReadonlyArray<Definitions.AnthropicTool> })
        )
    })

    const finish = (stopReason: LoopStopReason, turns: number) =>
      Effect.gen(function*() {
        const messages = yield* Ref.get(history)
        const result: LoopResult = { messages, stopReason, turns, text: lastText(messages), usage: { ...usage } }
        yield* emit(LoopEvent.Finished({ result }))
        return result
      })

    const conversation = Effect.gen(function*() {
      for (let turn = 1;; turn++) {
        // A stop between turns ends the loop before its next request.
        if (stopped !== undefined) return yield* finish("cancelled", turn - 1)
        const request = yield* definitions
        yield* notify(turn)
        yield* emit(LoopEvent.Requested({ turn, tools: request.included, deferred: request.deferred }))
        const system = [options.system, request.announcement].filter((part) => part !== undefined && part !== "").join(
          "\n\n"
        )
        const reply = yield* replyTurn(turn, {
          system: system === "" ? undefined : system,
          messages: yield* Ref.get(history),
          tools: request.tools,
          maxTokens: options.maxTokens ?? 4096
        })
        if (reply.stop !== undefined && reply.stop.usage !== undefined) {
          usage.inputTokens += reply.stop.usage.inputTokens
          usage.outputTokens += reply.stop.usage.outputTokens
        }
        const answered: Array<Message> = []
        if (reply.message.content.length > 0) answered.push(reply.message)
        if (reply.results !== undefined) answered.push(reply.results)
        yield* Ref.update(history, (messages) => [...messages, ...answered])
        yield* checkpoint
        if (reply.message.content.length > 0 || reply.results !== undefined) {
          yield* emit(LoopEvent.Replied({ turn, reply: reply.message, results: reply.results }))
        }
        if (reply.error !== undefined) {
          return yield* Effect.fail(new AgentLoopError({ error: reply.error, turn, messages: yield* Ref.get(history) }))
        }
        if (reply.cancelled) return yield* finish("cancelled", turn)
        const stopReason = reply.stop!.reason
        // The model goes on after tool results, and after a pause (a long server-side turn it continues itself).
        const goesOn = reply.results !== undefined || stopReason === "pause_turn"
        if (!goesOn) return yield* finish(stopReason, turn)
        if (turn >= maxTurns) return yield* finish("max_turns", turn)
      }
    })

    interface Reply {
      readonly message: Message
      readonly results: Message | undefined
      readonly stop: Extract<ModelEvent, { _tag: "Stop" }> | undefined
      readonly error: ModelError | undefined
      readonly cancelled: boolean
    }

    /** A reply's run of tool calls, with the fiber that passes its events on (when someone listens). */
    interface TurnRun {
      readonly intake: Mailbox.Mailbox<ToolUseBlock | ToolUsePart>
      readonly handle: RunHandle
      readonly events: Fiber.RuntimeFiber<void> | undefined
    }

    /** A run in `scope`, whose tool_uses are offered to its intake as they stream. */
    const startRun = (turn: number, scope: Scope.Scope): Effect.Effect<TurnRun> =>
      Effect.gen(function*() {
        const intake = yield* Mailbox.make<ToolUseBlock | ToolUsePart>()
        const handle: RunHandle = yield* runtime.start(intake, options.run)
        const events = emitUnordered === undefined ? undefined : yield* Effect.forkIn(
          Pulled.runForEach(handle.events, (event) => emit(LoopEvent.Tool({ turn, event }))),
          scope
        )
        // A stop from now on reaches the run; one that came while it started, now.
        running = { handle, scope }
        if (stopped !== undefined) yield* stopRun(running, stopped)
        return { intake, handle, events }
      }).pipe(Scope.extend(scope))

    /**
     * One request and its answers. The tool_uses go into one run as they stream, started with the first of them (a
     * reply without one needs no run); when the reply stops early (cancelled, or the response broke), the run is
     * stopped before the intake ends, so a tool_use cut short is never executed, and it is still answered.
     */
    const replyTurn = (turn: number, request: ModelRequest) =>
      Effect.scoped(Effect.gen(function*() {
        const scope = yield* Effect.scope
        let run: TurnRun | undefined = undefined
        const content: Array<ContentBlock | OpenToolUse> = []
        const open = new Map<string, OpenToolUse>()
        let stop: Extract<ModelEvent, { _tag: "Stop" }> | undefined = undefined

        const onEvent = (event: ModelEvent): Effect.Effect<void, ModelError> => {
          switch (event._tag) {
            case "TextDelta": {
              const last = content.at(-1)
              if (last !== undefined && last.type === "text") {
                content[content.length - 1] = { type: "text", text: last.text + event.text }
              } else content.push({ type: "text", text: event.text })
              return Effect.asVoid(emit(LoopEvent.Text({ turn, text: event.text })))
            }
            case "ToolUseStart": {
              if (event.id === "") {
                return malformed("a tool_use block has an empty id")
              }
              if (open.has(event.id) || content.some((block) => block.type === "tool_use" && block.id === event.id)) {
                return malformed(`two tool_use blocks have the id ${event.id}`)
              }
              const block: OpenToolUse = { type: "open_tool_use", id: event.id, name: event.name, json: "" }
              open.set(event.id, block)
              content.push(block)
              const part = ToolUsePart.Start({ id: event.id, name: event.name })
              if (run !== undefined) return wholeBlocks ? Effect.void : Effect.asVoid(run.intake.offer(part))
              // A stop that interrupts the reply before the run is kept leaves it to the scope: nothing was offered to it,
              // and the block, still open, is answered as never run.
              return Effect.flatMap(startRun(turn, scope), (started) => {
                run = started
                return wholeBlocks ? Effect.void : Effect.asVoid(started.intake.offer(part))
              })
            }
            case "ToolUseDelta": {
              const block = open.get(event.id)
              if (block === undefined) return malformed(`input for a tool_use that is not open (${event.id})`)
              block.json += event.partialJson
              // An open block's run has started.
              return wholeBlocks ? Effect.void : Effect.asVoid(
                run!.intake.offer(ToolUsePart.Delta({ id: event.id, partialJson: event.partialJson }))
              )
            }
            case "ToolUseEnd": {
              const block = open.get(event.id)
              if (block === undefined) return malformed(`the end of a tool_use that is not open (${event.id})`)
              open.delete(event.id)
              content[content.indexOf(block)] = {
                type: "tool_use",
                id: block.id,
                name: block.name,
                input: inputOf(block.json)
              }
              return Effect.asVoid(run!.intake.offer(
                wholeBlocks
                  // The input the runtime would have assembled from the parts.
                  ? { type: "tool_use", id: block.id, name: block.name, input: parseComplete(block.json) }
                  : ToolUsePart.End({ id: event.id })
              ))
            }
            case "Retrying": {
              const { _tag, ...retry } = event
              return Effect.asVoid(emit(LoopEvent.Retrying({ turn, ...retry })))
            }
            case "Stop": {
              stop = event
              return Effect.void
            }
          }
        }

        // The backend's own pull when it has one: the same reply in fewer steps than its stream.
        const pulled = ModelBackend.replyOf(backend, request)
        const read = yield* unlessStopped(
          Pulled.forEach(pulled, onEvent).pipe(
            Effect.zipRight(Effect.suspend(() =>
              stop === undefined
                ? malformed("the reply ended without a stop reason")
                : open.size > 0
                ? malformed(`the reply ended inside a tool_use (${[...open.keys()].join(", ")})`)
                : Effect.void
            ))
          )
        )
        const error = read._tag === "Failed" ? read.error : undefined
        const stoppedBy = read._tag === "Stopped" ? read.how : undefined
        let outcomes: ReadonlyArray<Outcome> = []
        const started = run as TurnRun | undefined
        if (started !== undefined) {
          // Stopped before the intake ends: calls still open or queued are answered as never run.
          if (stoppedBy === "interrupt") yield* started.handle.interrupt
          else if (stoppedBy !== undefined || error !== undefined) yield* started.handle.cancel
          yield* started.intake.end
          outcomes = yield* started.handle.await
          if (started.events !== undefined) yield* Fiber.join(started.events)
          running = undefined
        }

        // A tool_use still open when the reply stopped is kept with what had arrived of its input, and answered here:
        // the runtime never ran it (its input was incomplete, and the run was stopped before the intake ended).
        const cutShort = new Set(open.keys())
        const blocks: Array<ContentBlock> = content.map((block) =>
          block.type === "open_tool_use"
            ? { type: "tool_use", id: block.id, name: block.name, input: partialInputOf(block.json) }
            : block
        )
        const message: Message = { role: "assistant", content: blocks }
        const reply: Reply = {
          message,
          results: blocks.some((block) => block.type === "tool_use")
            ? { role: "user", content: answers(blocks, outcomes, cutShort) }
            : undefined,
          stop,
          error,
          cancelled: stoppedBy !== undefined || stopped !== undefined
        }
        return reply
      })).pipe((reply) => withSpan(reply, "AgentLoop.turn", { attributes: { turn } }))

    /**
     * The reply read in a fiber of its own, which a stop interrupts (then `Stopped`, however far it had read); a
     * stop that came before it started means it is not read at all.
     */
    const unlessStopped = <E>(
      read: Effect.Effect<void, E>
    ): Effect.Effect<ReplyRead<E>> =>
      !stoppable ?
        Effect.match(read, { onSuccess: () => ({ _tag: "Read" }), onFailure: (error) => ({ _tag: "Failed", error }) }) :
        Effect.withFiberRuntime((self) => {
          if (stopped !== undefined) return Effect.succeed<ReplyRead<E>>({ _tag: "Stopped", how: stopped })
          return Effect.flatMap(Effect.fork(read), (fiber) => {
            reading = fiber
            // A stop that came while the fiber was being forked did not find it.
            if (stopped !== undefined) fiber.unsafeInterruptAsFork(self.id())
            return Effect.flatMap(
              Fiber.await(fiber),
              (exit): Effect.Effect<ReplyRead<E>> => {
                // (A conversation interrupted while it waits leaves a fiber here that has ended: nothing to stop.)
                reading = undefined
                if (Exit.isSuccess(exit)) return Effect.succeed({ _tag: "Read" })
                // Interrupted by the stop.
                if (stopped !== undefined && Cause.isInterruptedOnly(exit.cause)) {
                  return Effect.succeed({ _tag: "Stopped", how: stopped })
                }
                return Either.match(Cause.failureOrCause(exit.cause), {
                  onLeft: (error) => Effect.succeed({ _tag: "Failed", error }),
                  onRight: Effect.failCause
                })
              }
            )
          })
        })

    const stopWith = (how: "cancel" | "interrupt") =>
      Effect.withFiberRuntime<void>((self) => {
        if (stopped !== undefined) return Effect.void
        stopped = how
        reading?.unsafeInterruptAsFork(self.id())
        return running === undefined ? Effect.void : stopRun(running, how)
      })
    return { conversation, history, stopWith } satisfies Conversation
  })

/** The history with notices as text after the last user message's content (a new user message if none ends it). */
const withNotices = (messages: ReadonlyArray<Message>, notices: ReadonlyArray<string>): ReadonlyArray<Message> => {
  const blocks: Array<ContentBlock> = notices.map((text) => ({ type: "text", text }))
  const last = messages.at(-1)
  if (last === undefined || last.role !== "user") return [...messages, { role: "user", content: blocks }]
  const content: ReadonlyArray<ContentBlock> = typeof last.content === "string"
    ? [{ type: "text", text: last.content }]
    : last.content
  return [...messages.slice(0, -1), { role: "user", content: [...content, ...blocks] }]
}

/** A reply's run and the scope it lives in: what a stop reaches after the reply has been read. */
interface RunningReply {
  readonly handle: RunHandle
  readonly scope: Scope.Scope
}

/** How reading a reply ended: to its end, with the reply's failure, or cut short by a stop. */
type ReplyRead<E> =
  | { readonly _tag: "Read" }
  | { readonly _tag: "Failed"; readonly error: E }
  | { readonly _tag: "Stopped"; readonly how: "cancel" | "interrupt" }

interface OpenToolUse {
  readonly type: "open_tool_use"
  readonly id: string
  readonly name: string
  json: string
}

const malformed = (message: string) => Effect.fail(new ModelError({ reason: "Malformed", message }))

/** The input of a complete tool_use for the history: its JSON when it is an object (the runtime answers the rest). */
const inputOf = (json: string): unknown => {
  if (json.trim() === "") return {}
  try {
    const value: unknown = JSON.parse(json)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}
  } catch {
    return partialInputOf(json)
  }
}

/** The input of a tool_use cut short, for the history: as much of its object as arrived. */
const partialInputOf = (json: string): unknown => {
  const value = parsePartial(json)
  return typeof value === "object" && value !== null && !Array.isArray(value) ? value : {}
}

/**
 * The model-facing answer to a tool_use the reply stopped in the middle of.
 *
 * @since 0.2.0
 * @category messages
 */
export const cutShortMessage = "This tool call never ran: the reply stopped before its input was complete."

/** The tool_results in the order of the reply's tool_uses (the runtime answers each one, in model order). */
const answers = (
  blocks: ReadonlyArray<ContentBlock>,
  outcomes: ReadonlyArray<Outcome>,
  cutShort: ReadonlySet<string>
): ReadonlyArray<ContentBlock> => {
  const byId = new Map(outcomes.map((outcome) => [outcome.toolUseId, outcome.result]))
  return blocks.flatMap((block) => {
    if (block.type !== "tool_use") return []
    const result = cutShort.has(block.id) ? undefined : byId.get(block.id)
    return [result ?? { type: "tool_result" as const, tool_use_id: block.id, content: cutShortMessage, is_error: true }]
  })
}

const lastText = (messages: ReadonlyArray<Message>): string => {
  const last = [...messages].reverse().find((message) => message.role === "assistant")
  if (last === undefined) return ""
  return typeof last.content === "string"
    ? last.content
    : last.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("")
}
