/**
 * `effect-tool-runtime serve`: a long-running process speaking JSON lines. The session (files read, session rules,
 * approvals, saved output) lives in memory for the whole process, and in `--session DIR` between processes (saved
 * after every turn).
 *
 * Requests, one per line on standard input:
 * - `{"type":"turn","id":"t1","tool_uses":[...]}` or `{"type":"turn","id":"t1","message":{"role":"assistant",...}}`
 * - `{"type":"approval","id":"a1","answer":"allow_once" | "allow_session" | "allow_always" | "deny" | "deny_and_stop"
 *   | "edit", "rules"?: [...], "message"?: "...", "input"?: {...}}`, answering an `approval_request`
 * - `{"type":"answer","id":"question-1","answers":{"<question>":"<answer>",...}}` (every question answered: a label,
 *   labels joined with ", ", or the person's own words) or `{"type":"answer","id":"question-1","declined":true,
 *   "message"?:"..."}`, answering a `question_request`
 *
 * Lines on standard output, each one JSON object:
 * - `{"type":"ready","session":DIR,"persistent":bool}` once, first
 * - `{"type":"tools","included":[names],"deferred":[names],"announcement":TEXT|null,"tools":[Anthropic definitions]}`
 *   after `ready`, and after any turn that changed it: the definitions to send, and the deferred tools to announce
 * - `{"type":"event","turn":"t1","event":"started",...}` as things happen (queued, started, progress, decided, completed, ...)
 * - `{"type":"approval_request","turn":"t1","id":"a1","tool_use_id","tool_name","message","suggestions","input"}`
 *   (and `"token"` in a durable turn: the name of the pending approval across processes)
 * - `{"type":"question_request","turn":"t1","id":"question-1","tool_use_id","questions":[...]}`: AskUserQuestion's
 *   questions (`question`, `header`, `options` [{label, description}], `multiSelect`)
 * - `{"type":"result","turn":"t1","results":[...],"outcomes":[...]}` when a turn ends
 * - `{"type":"error","id":...,"message":"..."}` for a line that is not a request; the process stays up
 * - `{"type":"pending","turn":"t1","message":"..."}` with `--durable`: the turn was left unfinished (an approval open
 *   at end of input or at a signal); sent again to a later `serve --durable` of the session, it resumes
 *
 * Turns run one at a time, in the order received; approval answers are read while a turn runs. End of input ends
 * the process once the turns received have finished (an approval still open then is denied, a question declined). A signal cancels the
 * running turn and those queued (every tool_use still gets its outcome) and exits 130/143.
 *
 * A broken standard output (EPIPE: the client closed it, or died) is the client cancelling: the running turn and
 * those queued are cancelled as after a signal (running calls interrupted, their process trees stopped, the audit
 * log written; nothing more is printed), and the process exits 141 with one line on standard error. Closing
 * standard input alone still means "finish the turns sent, then exit".
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Queue from "effect/Queue"
import * as Runtime from "effect/Runtime"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"
import { requestEnabled } from "../Catalog/ToolCatalog.js"
import { ApprovalAnswer, Approver } from "../Permission/Approver.js"
import type { ApprovalRequest } from "../Permission/Approver.js"
import type { ToolEvent } from "../Runtime/Events.js"
import type { RunHandle } from "../Runtime/ToolRuntime.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { Session } from "../Session/Session.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type { Outcome } from "../Tool/Outcome.js"
import type { QuestionReply, QuestionRequest } from "../Tool/Question.js"
import type { ToolUseBlock } from "../Tool/Wire.js"
import type { DurableRun } from "./durable.js"
import { forgetOnForcedExit } from "./exec.js"
import { decodeTurn, parseJson, UsageError } from "./input.js"
import { approverFor, runtimeLayer, sessionLayer } from "./layer.js"
import type { RuntimeOptions } from "./layer.js"
import { eventJson, onOutputBroken, suggestionsRecorder, summary, writeJsonLine } from "./output.js"
import { onFirstSignal } from "./signals.js"

// -----------------------------------------------------------------------------
// requests
// -----------------------------------------------------------------------------

const TurnRequest = Schema.Struct({
  type: Schema.Literal("turn"),
  id: Schema.String.pipe(Schema.minLength(1)),
  tool_uses: Schema.optional(Schema.Unknown),
  message: Schema.optional(Schema.Unknown)
})

const ApprovalReply = Schema.Struct({
  type: Schema.Literal("approval"),
  id: Schema.String,
  answer: Schema.Literal("allow_once", "allow_session", "allow_always", "deny", "deny_and_stop", "edit"),
  rules: Schema.optional(Schema.Array(Schema.String)),
  message: Schema.optional(Schema.String),
  input: Schema.optional(Schema.Unknown)
})
type ApprovalReply = typeof ApprovalReply.Type

const QuestionAnswer = Schema.Struct({
  type: Schema.Literal("answer"),
  id: Schema.String,
  answers: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  declined: Schema.optional(Schema.Boolean),
  message: Schema.optional(Schema.String)
})
type QuestionAnswer = typeof QuestionAnswer.Type

const Request = Schema.Union(TurnRequest, ApprovalReply, QuestionAnswer)

/** What the client is asked and has not answered yet: an approval, or an AskUserQuestion's questions. */
type Waiting =
  | {
    readonly kind: "approval"
    readonly request: ApprovalRequest
    readonly answer: Deferred.Deferred<ApprovalAnswer>
  }
  | {
    readonly kind: "question"
    readonly request: QuestionRequest
    readonly answer: Deferred.Deferred<QuestionReply>
  }

interface Turn {
  readonly id: string
  readonly toolUses: ReadonlyArray<ToolUseBlock>
}

const idOf = (json: unknown): string | null =>
  typeof json === "object" && json !== null && typeof (json as { id?: unknown }).id === "string"
    ? (json as { id: string }).id
    : null

/** What a request line asks for, or why it is not a request (the id echoed when the line had one). */
export type BadLine = { readonly id: string | null; readonly error: UsageError }

export const parseRequest = (line: string): Either.Either<Turn | ApprovalReply | QuestionAnswer, BadLine> =>
  Either.flatMap(
    Either.mapLeft(parseJson(line, "the line"), (error): BadLine => ({ id: null, error })),
    (json): Either.Either<Turn | ApprovalReply | QuestionAnswer, BadLine> => {
      const decoded = Schema.decodeUnknownEither(Request)(json, { onExcessProperty: "ignore" })
      if (Either.isLeft(decoded)) {
        return Either.left({
          id: idOf(json),
          error: new UsageError({
            message: `not a request: expected {"type":"turn",...}, {"type":"approval",...} or {"type":"answer",...}`
          })
        })
      }
      const request = decoded.right
      if (request.type === "approval" || request.type === "answer") return Either.right(request)
      const body = request.tool_uses ?? request.message
      if (body === undefined || (request.tool_uses !== undefined && request.message !== undefined)) {
        return Either.left({
          id: request.id,
          error: new UsageError({ message: "a turn has either tool_uses or message" })
        })
      }
      return Either.map(
        Either.mapLeft(
          decodeTurn(body, request.tool_uses !== undefined ? "tool_uses" : "message"),
          (error) => ({ id: request.id, error })
        ),
        (toolUses): Turn => ({ id: request.id, toolUses })
      )
    }
  )

const answerOf = (reply: ApprovalReply, request: ApprovalRequest): ApprovalAnswer => {
  switch (reply.answer) {
    case "allow_once":
      return ApprovalAnswer.AllowOnce()
    case "allow_session":
      return ApprovalAnswer.AllowSession({ rules: reply.rules ?? request.suggestions })
    case "allow_always":
      return ApprovalAnswer.AllowAlways({ rules: reply.rules ?? request.suggestions })
    case "deny":
      return ApprovalAnswer.Deny({ message: reply.message, cancelRun: false })
    case "deny_and_stop":
      return ApprovalAnswer.Deny({
        message: reply.message ?? "The user denied this call and stopped the run.",
        cancelRun: true
      })
    case "edit":
      return ApprovalAnswer.Edit({ input: reply.input ?? request.input })
  }
}

/**
 * The person's reply to a question request, or why the line cannot be one (the request then stays open): declined,
 * or an answer for every question and for no other.
 */
const replyOf = (line: QuestionAnswer, request: QuestionRequest): Either.Either<QuestionReply, string> => {
  if (line.declined === true) {
    return Either.right({ _tag: "Declined", ...(line.message === undefined ? {} : { message: line.message }) })
  }
  const answers = line.answers ?? {}
  const asked = request.questions.map((q) => q.question)
  const unknown = Object.keys(answers).filter((key) => !asked.includes(key))
  if (unknown.length > 0) {
    return Either.left(`${JSON.stringify(unknown[0])} is not one of the questions asked (${JSON.stringify(asked)})`)
  }
  const missing = asked.filter((question) => answers[question] === undefined)
  if (missing.length > 0) {
    return Either.left(
      `no answer to ${JSON.stringify(missing[0])}: answer every question ("answers": {question: answer}), or ` +
        `decline ("declined": true)`
    )
  }
  return Either.right({ _tag: "Answered", answers })
}

// -----------------------------------------------------------------------------
// the loop
// -----------------------------------------------------------------------------

/** The exit code after the client closed standard output: 128 + SIGPIPE, as a shell reports a broken pipe. */
export const CLIENT_GONE_EXIT = 141

/** The default longest request line: 16 MiB. */
const DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024

/** A line of standard input, or the length of one that was longer than the limit and was skipped. */
type InputLine = { readonly _tag: "Line"; readonly text: string } | { readonly _tag: "TooLong"; readonly bytes: number }

/**
 * Standard input as lines of at most `maxBytes` bytes. A longer line is never held in memory: its bytes are counted
 * and dropped up to its newline, and it becomes one `TooLong` item; reading goes on with the next line.
 */
export const boundedLines = <E>(
  bytes: Stream.Stream<Uint8Array, E>,
  maxBytes: number
): Stream.Stream<InputLine, E> =>
  Stream.suspend(() => {
    const decoder = new TextDecoder()
    let parts: Array<Uint8Array> = []
    let held = 0
    let skipping: number | undefined
    const take = (chunk: Uint8Array) => {
      if (skipping !== undefined) skipping += chunk.length
      else if (held + chunk.length > maxBytes) {
        skipping = held + chunk.length
        parts = []
        held = 0
      } else {
        parts.push(chunk)
        held += chunk.length
      }
    }
    const end = (out: Array<InputLine>) => {
      if (skipping !== undefined) out.push({ _tag: "TooLong", bytes: skipping })
      else if (held > 0 || parts.length > 0) {
        out.push({ _tag: "Line", text: decoder.decode(Buffer.concat(parts)).replace(/\r$/, "") })
      }
      parts = []
      held = 0
      skipping = undefined
    }
    return bytes.pipe(
      Stream.mapConcat((chunk) => {
        const out: Array<InputLine> = []
        let start = 0
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
          take(chunk.subarray(start, i))
          end(out)
          start = i + 1
        }
        if (start < chunk.length) take(chunk.subarray(start))
        return out
      }),
      Stream.concat(Stream.suspend(() => {
        const out: Array<InputLine> = []
        end(out)
        return Stream.fromIterable(out)
      }))
    )
  })

/** Standard input as bounded lines. */
const stdinLines = (maxBytes: number): Stream.Stream<InputLine, UsageError> =>
  boundedLines(
    NodeStream.fromReadable<UsageError, Uint8Array>(
      () => process.stdin,
      (error) =>
        new UsageError({
          message: `cannot read standard input: ${error instanceof Error ? error.message : String(error)}`
        })
    ),
    maxBytes
  )

/** Runs `serve`. */
export const serve = (options: RuntimeOptions) =>
  Effect.gen(function*() {
    const pending = new Map<string, Waiting>()
    let approvals = 0
    let questions = 0
    /** The ids of the requests answered (ids are never reused, so this says "already answered"). */
    const answered = new Set<string>()
    let currentTurn: string | undefined
    let inputEnded = false
    /** Set when standard output broke: the client is gone. */
    let clientGone: NodeJS.ErrnoException | undefined
    const noOneLeft = (request: ApprovalRequest) =>
      ApprovalAnswer.Deny({
        message: `${request.toolName} needs approval and the client closed its ${
          clientGone === undefined ? "input" : "output"
        }; it was denied.`,
        cancelRun: false
      })
    const noOneToAnswer = (): QuestionReply => ({
      _tag: "Declined",
      message: `the client closed its ${clientGone === undefined ? "input" : "output"} before answering`
    })

    const channel = Layer.succeed(Approver, {
      ask: (request) =>
        Effect.gen(function*() {
          if (inputEnded) {
            if (options.durable === undefined) return noOneLeft(request)
            // No one left to answer a durable turn's question: it stays open for a later process.
            leavePending?.()
            return yield* Effect.never
          }
          const id = `approval-${++approvals}`
          const answer = yield* Deferred.make<ApprovalAnswer>()
          pending.set(id, { kind: "approval", request, answer })
          yield* writeJsonLine({
            type: "approval_request",
            turn: currentTurn ?? null,
            id,
            tool_use_id: request.toolUseId,
            tool_name: request.toolName,
            message: request.message,
            suggestions: request.suggestions,
            input: request.input,
            ...(request.token === undefined ? {} : { token: request.token })
          })
          return yield* Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => pending.delete(id))))
        }),
      // AskUserQuestion: the questions go to the client as a `question_request`, answered by an `answer` line.
      answer: (request) =>
        Effect.gen(function*() {
          if (inputEnded) return noOneToAnswer()
          const id = `question-${++questions}`
          const answer = yield* Deferred.make<QuestionReply>()
          pending.set(id, { kind: "question", request, answer })
          yield* writeJsonLine({
            type: "question_request",
            turn: currentTurn ?? null,
            id,
            tool_use_id: request.toolUseId,
            questions: request.questions
          })
          return yield* Deferred.await(answer).pipe(Effect.ensuring(Effect.sync(() => pending.delete(id))))
        })
    })

    /** Leaves a durable turn's open questions for a later process (set while a durable turn waits on one). */
    let leavePending: (() => void) | undefined
    const body = (durable: DurableRun | undefined) =>
      Effect.gen(function*() {
        yield* forgetOnForcedExit
        const session = yield* Session
        const toolRuntime = yield* ToolRuntime
        const runtime = yield* Effect.runtime<never>()
        const turns = yield* Queue.unbounded<Turn | undefined>()
        const active = new Set<string>()
        let stopping = false
        let running: RunHandle | undefined

        const onLine = (line: string): Effect.Effect<void> => {
          if (line.trim() === "") return Effect.void
          const parsed = parseRequest(line)
          if (Either.isLeft(parsed)) {
            return writeJsonLine({ type: "error", id: parsed.left.id, message: parsed.left.error.message })
          }
          const request = parsed.right
          if ("toolUses" in request) {
            if (active.has(request.id)) {
              return writeJsonLine({
                type: "error",
                id: request.id,
                message: `turn ${request.id} is already running or queued`
              })
            }
            active.add(request.id)
            return Queue.offer(turns, request)
          }
          const waiting = pending.get(request.id)
          const kind = request.type === "approval" ? "approval" : "question"
          if (waiting === undefined || waiting.kind !== kind) {
            return writeJsonLine({
              type: "error",
              id: request.id,
              message: waiting !== undefined
                ? `${request.id} is ${
                  waiting.kind === "approval"
                    ? `an approval request: answer it with {"type":"approval",...}`
                    : `a question request: answer it with {"type":"answer",...}`
                }`
                : answered.has(request.id)
                ? `${kind} request ${request.id} was already answered; this answer was ignored`
                : `no open ${kind} request ${request.id}`
            })
          }
          // The first answer counts: the request is closed at once, so a second one (even on the next line) is an
          // error.
          if (waiting.kind === "approval" && request.type === "approval") {
            pending.delete(request.id)
            answered.add(request.id)
            return Deferred.succeed(waiting.answer, answerOf(request, waiting.request))
          }
          if (waiting.kind === "question" && request.type === "answer") {
            const reply = replyOf(request, waiting.request)
            if (Either.isLeft(reply)) {
              return writeJsonLine({
                type: "error",
                id: request.id,
                message: `${reply.left}; question request ${request.id} is still open`
              })
            }
            pending.delete(request.id)
            answered.add(request.id)
            return Deferred.succeed(waiting.answer, reply.right)
          }
          return Effect.void
        }

        /** End of input (or a signal): no more turns; open questions are denied, since no one is left to answer. */
        const endInput = Effect.suspend(() => {
          inputEnded = true
          // A durable turn's open approvals are not denied: the turn is left for a later process to resume.
          if (durable !== undefined && [...pending.values()].some((waiting) => waiting.kind === "approval")) {
            leavePending?.()
            return Queue.offer(turns, undefined)
          }
          return Effect.zipRight(
            Effect.forEach(
              [...pending.values()],
              (waiting) =>
                waiting.kind === "approval"
                  ? Deferred.succeed(waiting.answer, noOneLeft(waiting.request))
                  : Deferred.succeed(waiting.answer, noOneToAnswer()),
              { discard: true }
            ),
            Queue.offer(turns, undefined)
          )
        })

        const reader = yield* Effect.forkScoped(
          stdinLines(options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES).pipe(
            Stream.runForEach((item) =>
              item._tag === "Line" ? onLine(item.text) : writeJsonLine({
                type: "error",
                id: null,
                message: `a request line of ${item.bytes} bytes is longer than the limit of ${
                  options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES
                } bytes (--max-line-bytes); it was skipped`
              })
            ),
            Effect.catchAll((error) => writeJsonLine({ type: "error", id: null, message: error.message })),
            Effect.zipRight(endInput)
          )
        )
        /** A signal, or the client gone: stop reading, deny what is open, cancel the running turn and the queued. */
        const stop = () => {
          stopping = true
          if (durable !== undefined) {
            // Nothing is denied or cancelled: the durable turn is left as it is, for a later process.
            leavePending?.()
            Runtime.runFork(runtime)(Effect.zipRight(Fiber.interrupt(reader), Queue.offer(turns, undefined)))
            return
          }
          Runtime.runFork(runtime)(
            Effect.zipRight(Fiber.interrupt(reader), Effect.zipRight(endInput, running?.cancel ?? Effect.void))
          )
        }
        const unregister = onFirstSignal(stop)
        yield* Effect.addFinalizer(() => Effect.sync(unregister))
        const unregisterBroken = onOutputBroken((error) => {
          clientGone = error
          if (!stopping) stop()
        })
        yield* Effect.addFinalizer(() => Effect.sync(unregisterBroken))

        yield* writeJsonLine({ type: "ready", session: session.directory, persistent: session.persistent })
        // What the model may call: a `tools` line now, and again after a turn that changed it (ToolSearch loaded a
        // tool, an MCP server's tools arrived).
        let lastTools: string | undefined
        const announceTools = Effect.gen(function*() {
          const request = yield* requestEnabled("anthropic")
          const key = JSON.stringify([request.included, request.deferred])
          if (key === lastTools) return
          lastTools = key
          yield* writeJsonLine({
            type: "tools",
            included: request.included,
            deferred: request.deferred,
            announcement: request.announcement ?? null,
            tools: request.tools
          })
        })
        yield* announceTools

        /** An event line of the turn (the suggestions it carries kept for the result). */
        const printEvent = (turn: Turn, suggestions: ReturnType<typeof suggestionsRecorder>) => (event: ToolEvent) => {
          suggestions.record(event)
          return writeJsonLine({ type: "event", turn: turn.id, ...eventJson(event) })
        }

        /** A turn ended: the session saved, its `result` line, and a `tools` line if what the model may call changed. */
        const finishTurn = (
          turn: Turn,
          outcomes: ReadonlyArray<Outcome>,
          suggestions: ReturnType<typeof suggestionsRecorder>
        ) =>
          Effect.gen(function*() {
            yield* session.checkpoint.pipe(
              Effect.catchAll((error) => writeJsonLine({ type: "error", id: turn.id, message: error.message }))
            )
            yield* writeJsonLine({
              type: "result",
              turn: turn.id,
              results: outcomes.map((outcome) => outcome.result),
              outcomes: outcomes.map((outcome) => summary(outcome, suggestions.of(outcome.toolUseId)))
            })
            yield* announceTools
          })

        /**
         * A durable turn: its events and result as for any turn. A signal, or an approval with no one left to answer
         * it, leaves the turn pending instead (its questions unanswered, its record as it is): a later `serve` or
         * `exec --durable` of the session sent the same turn resumes it. Then this and the queued turns get a
         * `pending` line, and the process ends. Returns whether the turn finished.
         */
        const runDurable = (durable: DurableRun, turn: Turn) =>
          Effect.gen(function*() {
            const suggestions = suggestionsRecorder()
            const fiber = yield* Effect.fork(durable({
              toolUses: turn.toolUses,
              mode: options.scheduling,
              onEvent: printEvent(turn, suggestions)
            }))
            const left = yield* Deferred.make<void>()
            leavePending = () => Effect.runSync(Deferred.succeed(left, undefined))
            if (stopping) leavePending()
            const outcomes = yield* Effect.raceFirst(
              Fiber.join(fiber),
              Effect.as(Deferred.await(left), undefined)
            ).pipe(Effect.ensuring(Effect.sync(() => (leavePending = undefined))))
            if (outcomes === undefined) {
              yield* Fiber.interrupt(fiber)
              const unfinished = [turn, ...(yield* Queue.takeAll(turns))].filter((queued) => queued !== undefined)
              yield* Effect.forEach(unfinished, (queued) =>
                writeJsonLine({
                  type: "pending",
                  turn: queued.id,
                  message: "this durable turn was left unfinished; send it again (serve or exec --durable with this " +
                    "--session) to resume it: what completed is not run again, an open question is asked again"
                }), { discard: true })
              return false
            }
            yield* finishTurn(turn, outcomes, suggestions)
            return true
          })

        // A background task that ends (or stalls at a prompt) is an event line of its own, at once, once.
        const tasks = yield* TaskRegistry
        yield* Effect.forkScoped(Effect.forever(Effect.flatMap(tasks.awaitNotifications, (taken) =>
          Effect.forEach(taken, (notice) =>
            writeJsonLine({
              type: "event",
              turn: null,
              event: notice.kind === "ended" ? "task_ended" : "task_stalled",
              task_id: notice.task.id,
              status: notice.task.status._tag,
              ...(notice.task.status._tag === "Exited" ? { exit_code: notice.task.status.code } : {}),
              notification: notice.text
            }), { discard: true }))))

        for (;;) {
          const turn = yield* Queue.take(turns)
          if (turn === undefined) {
            break
          }
          currentTurn = turn.id
          if (durable !== undefined) {
            const finished = yield* runDurable(durable, turn)
            active.delete(turn.id)
            currentTurn = undefined
            if (!finished) break
            continue
          }
          yield* Effect.scoped(
            Effect.gen(function*() {
              const handle = yield* toolRuntime.start(turn.toolUses, { mode: options.scheduling })
              running = handle
              if (stopping) {
                yield* handle.cancel
              }
              const suggestions = suggestionsRecorder()
              const printer = yield* Effect.forkScoped(Stream.runForEach(handle.events, printEvent(turn, suggestions)))
              const outcomes = yield* handle.await
              yield* Fiber.join(printer)
              running = undefined
              yield* finishTurn(turn, outcomes, suggestions)
            })
          )
          active.delete(turn.id)
          currentTurn = undefined
        }
      })
    const approver = approverFor(options, channel)
    const withRuntime = options.durable === undefined
      ? body(undefined).pipe(Effect.provide(runtimeLayer(options, approver)))
      // Loaded only here: the durable dependencies stay out of every other start.
      : Effect.flatMap(
        Effect.promise(() =>
          import("./durable.js")
        ),
        (durable) =>
          Effect.flatMap(durable.durableRun, body).pipe(
            Effect.provide(durable.durableRuntimeLayer(options, approver))
          )
      )
    yield* Effect.scoped(withRuntime).pipe(
      // Background tasks live as long as this process (the session's owner here).
      Effect.provide(TaskRegistry.layerSession()),
      Effect.provide(sessionLayer(options))
    )
    if (clientGone === undefined) {
      return 0
    }
    yield* Effect.sync(() =>
      process.stderr.write(
        `effect-tool-runtime: the client closed standard output (${
          clientGone?.code ?? clientGone?.message
        }); its turns were cancelled\n`
      )
    )
    return CLIENT_GONE_EXIT
  })
