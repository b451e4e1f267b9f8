/**
 * A scripted model that speaks the Anthropic Messages API on 127.0.0.1, for testing an agent loop without a key:
 * point `AnthropicMessages.layer({ baseUrl: server.url, apiKey })` (or any Messages client) at it.
 *
 * ```ts
 * const server = yield* MessagesServer.make([
 *   MessagesServer.Reply.Message({ content: [MessagesServer.toolUse("toolu_1", "Read", { file_path: "a.txt" })] }),
 *   MessagesServer.Reply.Message({ content: [MessagesServer.text("The file says hello.")] })
 * ])
 * // ... run the loop against server.url ...
 * const bodies = yield* server.requests   // what the loop sent, request by request
 * ```
 *
 * A streamed request (`stream: true`) gets server-sent events as the API sends them: `message_start`, each block's
 * `content_block_start` (the first one followed by a `ping`), its text or input JSON in several deltas,
 * `content_block_stop`, `message_delta` with the stop_reason and usage, `message_stop`. Any other request gets one JSON
 * Message.
 *
 * Requests are checked a little as the real API checks them, and a request that fails a check is answered with a
 * 400 in Anthropic's error shape (and uses up no reply of the script): the body must fit the Messages request
 * (no unknown fields), every tool_use in the history needs a tool_result in the next message, every tool_result
 * needs its tool_use in the message before, `tool_use` ids are unique, a `tool_reference` must name a tool in
 * `tools` ("Tool reference 'X' not found in available tools"), tool names are unique and valid, a deferred tool has
 * no `cache_control`, and not every tool is deferred. `x-api-key` and `anthropic-version` headers are required.
 *
 * Replies can also be faults, to test a client's error handling: an HTTP error status, an event that is not JSON, an
 * unknown block type, a tool_use without an id, a stream cut before `message_stop`, an `error` event, any raw
 * events or body, and a reply that holds the connection open until the client leaves (for cancellation tests:
 * `awaitDisconnects` sees the client go).
 *
 * @since 0.2.0
 */
import * as Sse from "@effect/experimental/Sse"
import * as Data from "effect/Data"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import * as FiberSet from "effect/FiberSet"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { describeParseError, Wire } from "../Agent/AnthropicMessages.js"
import type { MessagesRequest } from "../Agent/AnthropicMessages.js"
import type { StopReason } from "../Agent/ModelBackend.js"
import { nextTurn } from "../Shared/realTime.js"

// ---------------------------------------------------------------------------------------------------------------
// the script
// ---------------------------------------------------------------------------------------------------------------

/**
 * A content block of a scripted reply. `pieces`, when given, are exactly the deltas streamed for the block (a text
 * block's `text_delta`s, a tool_use's `input_json_delta`s; they need not add up, to test a client); by default the
 * text or the input's JSON is split into a few pieces.
 *
 * @since 0.2.0
 * @category models
 */
export type ReplyBlock =
  | { readonly type: "text"; readonly text: string; readonly pieces?: ReadonlyArray<string> | undefined }
  | {
    readonly type: "tool_use"
    readonly id: string
    readonly name: string
    readonly input: Readonly<Record<string, unknown>>
    readonly pieces?: ReadonlyArray<string> | undefined
  }

/**
 * A text block.
 *
 * @since 0.2.0
 * @category constructors
 */
export const text = (text: string, pieces?: ReadonlyArray<string>): ReplyBlock =>
  pieces === undefined ? { type: "text", text } : { type: "text", text, pieces }

/**
 * A tool_use block.
 *
 * @since 0.2.0
 * @category constructors
 */
export const toolUse = (
  id: string,
  name: string,
  input: Readonly<Record<string, unknown>>,
  pieces?: ReadonlyArray<string>
): ReplyBlock =>
  pieces === undefined ? { type: "tool_use", id, name, input } : { type: "tool_use", id, name, input, pieces }

/**
 * What the scripted model answers to one request.
 *
 * @since 0.2.0
 * @category models
 */
export type Reply = Data.TaggedEnum<{
  /** A reply: its blocks and stop_reason (default `tool_use` when a tool_use is among the blocks, else `end_turn`). */
  Message: { readonly content: ReadonlyArray<ReplyBlock>; readonly stopReason?: StopReason | undefined }
  /** An HTTP error status with Anthropic's error body, e.g. 429 `rate_limit_error`, 529 `overloaded_error`. */
  HttpError: {
    readonly status: number
    readonly errorType: string
    readonly message: string
    /** Sent as the `retry-after` header (seconds, as the API sends it with 429 and 529). */
    readonly retryAfter?: string | undefined
    /** Sent as the `retry-after-ms` header. */
    readonly retryAfterMs?: string | undefined
  }
  /** `message_start`, then an event whose data is not JSON. Streamed requests only. */
  MalformedEvent: {}
  /** `message_start`, then a content block of the given type (e.g. `"thinking"`). Streamed requests only. */
  UnknownBlock: { readonly blockType: string }
  /**
   * `message_start`, then a tool_use block without an id (or with the given one, e.g. `""`). Streamed requests only.
   */
  ToolUseWithoutId: { readonly name: string; readonly id?: string | undefined }
  /**
   * The message's events without `message_stop` (or only its first `keep` events), then the body ends. Streamed
   * requests only.
   */
  Truncated: { readonly content: ReadonlyArray<ReplyBlock>; readonly keep?: number | undefined }
  /** `message_start`, a `ping`, then an `error` event. Streamed requests only. */
  ErrorEvent: { readonly errorType: string; readonly message: string }
  /**
   * Exactly these events (an object is sent as JSON, a string as the data itself), then the body ends (with
   * `end: false`, the connection stays open until the client leaves). Streamed requests only.
   */
  Events: { readonly events: ReadonlyArray<unknown>; readonly end?: boolean | undefined }
  /** Any response at all. */
  Raw: { readonly status: number; readonly contentType: string; readonly body: string }
  /**
   * `message_start`, the first block's start and first piece (in one write, so the client sees them together),
   * then nothing until the client disconnects (a non-streamed request gets nothing at all).
   */
  Hold: { readonly content: ReadonlyArray<ReplyBlock> }
}>

/**
 * Constructors of {@link Reply}.
 *
 * @since 0.2.0
 * @category constructors
 */
export const Reply = Data.taggedEnum<Reply>()

/**
 * The scripted model: a list of replies (the n-th request that passes the checks gets the n-th reply; a request
 * beyond the list gets a 500 `api_error` saying so) or a function of the request and its position.
 *
 * @since 0.2.0
 * @category models
 */
export type Script =
  | ReadonlyArray<Reply>
  | ((request: MessagesRequest, index: number) => Reply | Effect.Effect<Reply>)

// ---------------------------------------------------------------------------------------------------------------
// the server
// ---------------------------------------------------------------------------------------------------------------

/**
 * One request the server received.
 *
 * @since 0.2.0
 * @category models
 */
export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** Which connection it came on (1, 2, ... in the order connections opened): a reused connection repeats a number. */
  readonly connection: number
  /** The body as JSON, or the raw text when it is not JSON. */
  readonly body: unknown
}

/**
 * A running scripted server.
 *
 * @since 0.2.0
 * @category models
 */
export interface MessagesServer {
  /** `http://127.0.0.1:PORT`: the base URL (requests go to `/v1/messages`). */
  readonly url: string
  /** Every request body received, in order, as JSON (rejected ones too). */
  readonly requests: Effect.Effect<ReadonlyArray<unknown>>
  /** Every request received, with its method, path and headers. */
  readonly received: Effect.Effect<ReadonlyArray<Received>>
  /** How many replies the client left before they were complete. */
  readonly disconnects: Effect.Effect<number>
  /** Waits until at least `count` replies were left by their client (and their handlers have finished). */
  readonly awaitDisconnects: (count: number) => Effect.Effect<void>
  /** How many replies are being sent right now (0 once every held reply has seen its client go). */
  readonly inFlight: Effect.Effect<number>
}

/** One response's connection: whether the client left before the response was complete, and when it closed. */
interface Connection {
  left: boolean
  readonly closed: Deferred.Deferred<void>
}

/** Bodies above this size are refused, as the API does (413). */
const maxBodyBytes = 32 * 1024 * 1024

/**
 * Starts a scripted Messages API server on 127.0.0.1 (a free port) for the Scope; closing the Scope closes it and
 * every open connection.
 *
 * @since 0.2.0
 * @category constructors
 */
export const make = (script: Script): Effect.Effect<MessagesServer, never, Scope.Scope> =>
  Effect.gen(function*() {
    const received = yield* Ref.make<ReadonlyArray<Received>>([])
    const disconnects = yield* SubscriptionRef.make(0)
    const inFlight = yield* Ref.make(0)
    const answered = yield* Ref.make(0)
    const run = yield* FiberSet.makeRuntime<never, void, never>()
    const sockets = new WeakMap<object, number>()
    let opened = 0
    const connectionNumber = (req: http.IncomingMessage): number => {
      const known = sockets.get(req.socket)
      if (known !== undefined) return known
      sockets.set(req.socket, ++opened)
      return opened
    }

    const nextReply = (request: MessagesRequest): Effect.Effect<Reply> =>
      Effect.flatMap(Ref.getAndUpdate(answered, (n) => n + 1), (index) => {
        if (typeof script === "function") {
          const reply = script(request, index)
          return Effect.isEffect(reply) ? reply : Effect.succeed(reply)
        }
        return Effect.succeed(
          script[index] ??
            Reply.HttpError({
              status: 500,
              errorType: "api_error",
              message: `MessagesServer: the script has no reply for request ${index + 1} (it has ${script.length})`
            })
        )
      })

    const handle = (req: http.IncomingMessage, res: http.ServerResponse, connection: Connection): Effect.Effect<void> =>
      Effect.gen(function*() {
        const raw = yield* readBody(req)
        const body = raw === undefined ? undefined : parseJson(raw)
        yield* Ref.update(
          received,
          (
            all
          ) => [...all, {
            method: req.method ?? "",
            path: req.url ?? "",
            headers: req.headers,
            connection: connectionNumber(req),
            body
          }]
        )
        if (raw === undefined) {
          return errorResponse(
            res,
            413,
            "request_too_large",
            `Request exceeds the maximum allowed number of bytes (${maxBodyBytes})`
          )
        }
        const checked = checkRequest(req, body)
        if (Either.isLeft(checked)) {
          return errorResponse(res, checked.left.status, checked.left.type, checked.left.message)
        }
        const reply = yield* nextReply(checked.right).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.succeed(
              Reply.HttpError({
                status: 500,
                errorType: "api_error",
                message: `MessagesServer: the script failed: ${String(defect)}`
              })
            )
          )
        )
        yield* send(res, checked.right, reply, connection)
        yield* Deferred.await(connection.closed)
      }).pipe(
        Effect.ensuring(Effect.suspend(() => {
          if (!res.destroyed && !res.writableEnded) res.destroy()
          return Effect.zipRight(
            Ref.update(inFlight, (n) => n - 1),
            connection.left ? SubscriptionRef.update(disconnects, (n) => n + 1) : Effect.void
          )
        }))
      )

    const server = yield* Effect.acquireRelease(
      Effect.async<http.Server>((resume) => {
        const server = http.createServer((req, res) => {
          // Listened for at once, so no close is missed; every response closes, finished or not.
          const connection: Connection = { left: false, closed: Deferred.unsafeMake(FiberId.none) }
          res.once("close", () => {
            connection.left = !res.writableFinished
            Deferred.unsafeDone(connection.closed, Exit.void)
          })
          Effect.runSync(Ref.update(inFlight, (n) => n + 1))
          run(handle(req, res, connection))
        })
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    const port = (server.address() as AddressInfo).port
    return {
      url: `http://127.0.0.1:${port}`,
      requests: Effect.map(Ref.get(received), (all) => all.map((r) => r.body)),
      received: Ref.get(received),
      disconnects: SubscriptionRef.get(disconnects),
      awaitDisconnects: (count) =>
        disconnects.changes.pipe(Stream.filter((n) => n >= count), Stream.runHead, Effect.asVoid),
      inFlight: Ref.get(inFlight)
    }
  })

// ---------------------------------------------------------------------------------------------------------------
// reading and checking a request
// ---------------------------------------------------------------------------------------------------------------

/** The body as text, or undefined when it is larger than the API accepts. */
const readBody = (req: http.IncomingMessage): Effect.Effect<string | undefined> =>
  Effect.async<string | undefined>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size <= maxBodyBytes) chunks.push(chunk)
    })
    req.on(
      "end",
      () => resume(Effect.succeed(size > maxBodyBytes ? undefined : Buffer.concat(chunks).toString("utf8")))
    )
    req.on("error", () => resume(Effect.succeed("")))
  })

const parseJson = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

interface Rejection {
  readonly status: number
  readonly type: string
  readonly message: string
}

const decodeRequest = Schema.decodeUnknownEither(Wire.MessagesRequest, { onExcessProperty: "error", errors: "all" })

const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/** The request as the real API would accept it, or why it would refuse it. */
const checkRequest = (req: http.IncomingMessage, body: unknown): Either.Either<MessagesRequest, Rejection> => {
  const invalid = (message: string) => Either.left<Rejection>({ status: 400, type: "invalid_request_error", message })
  if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== "/v1/messages") {
    return Either.left({ status: 404, type: "not_found_error", message: `Not Found: ${req.method} ${req.url}` })
  }
  if (typeof req.headers["x-api-key"] !== "string" || req.headers["x-api-key"] === "") {
    return Either.left({ status: 401, type: "authentication_error", message: "x-api-key header is required" })
  }
  if (typeof req.headers["anthropic-version"] !== "string") return invalid("anthropic-version: header is required")
  if (typeof body === "string") return invalid(`The request body is not valid JSON: ${body.slice(0, 100)}`)
  const decoded = decodeRequest(body)
  if (Either.isLeft(decoded)) return invalid(describeParseError(decoded.left))
  const problem = problemOf(decoded.right)
  return problem === undefined ? Either.right(decoded.right) : invalid(problem)
}

/** The first thing the real API would object to in a well-formed request. */
const problemOf = (request: MessagesRequest): string | undefined => {
  const tools = request.tools ?? []
  if (request.messages.length === 0) return "messages: at least one message is required"
  const names = new Set<string>()
  for (const [i, tool] of tools.entries()) {
    if (!toolNamePattern.test(tool.name)) return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'`
    if (names.has(tool.name)) return "tools: Tool names must be unique."
    names.add(tool.name)
    if (tool.defer_loading === true && tool.cache_control !== undefined) {
      return `tools.${i}: a tool with defer_loading cannot have cache_control`
    }
  }
  if (tools.length > 0 && tools.every((tool) => tool.defer_loading === true)) {
    return "tools: at least one tool must not be deferred (defer_loading)"
  }
  const seen = new Set<string>()
  for (const [i, message] of request.messages.entries()) {
    const blocks = typeof message.content === "string" ? [] : message.content
    const uses = blocks.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
    for (const id of uses) {
      if (seen.has(id)) return `messages.${i}: \`tool_use\` ids must be unique`
      seen.add(id)
    }
    if (message.role === "assistant" && uses.length > 0) {
      const next = request.messages[i + 1]
      const answered = new Set(
        next === undefined || next.role !== "user" || typeof next.content === "string"
          ? []
          : next.content.flatMap((block) => (block.type === "tool_result" ? [block.tool_use_id] : []))
      )
      const missing = uses.filter((id) => !answered.has(id))
      if (missing.length > 0) {
        return `messages.${i + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${
          missing.join(", ")
        }. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      }
    }
    const previous = request.messages[i - 1]
    const asked = new Set(
      previous === undefined || previous.role !== "assistant" || typeof previous.content === "string"
        ? []
        : previous.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
    )
    for (const [j, block] of blocks.entries()) {
      if (block.type !== "tool_result") continue
      if (message.role !== "user" || !asked.has(block.tool_use_id)) {
        return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ` +
          `${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the ` +
          `previous message.`
      }
      if (typeof block.content === "string") continue
      for (const part of block.content) {
        if (part.type === "tool_reference" && !names.has(part.tool_name)) {
          return `Tool reference '${part.tool_name}' not found in available tools`
        }
      }
    }
  }
  return undefined
}

// ---------------------------------------------------------------------------------------------------------------
// answering
// ---------------------------------------------------------------------------------------------------------------

let ids = 0
const nextId = (prefix: string): string => `${prefix}_scripted_${(++ids).toString().padStart(6, "0")}`

const errorResponse = (
  res: http.ServerResponse,
  status: number,
  type: string,
  message: string,
  retry: { readonly retryAfter?: string | undefined; readonly retryAfterMs?: string | undefined } = {}
): void => {
  const requestId = nextId("req")
  res.writeHead(status, {
    "content-type": "application/json",
    "request-id": requestId,
    ...(retry.retryAfter === undefined ? {} : { "retry-after": retry.retryAfter }),
    ...(retry.retryAfterMs === undefined ? {} : { "retry-after-ms": retry.retryAfterMs })
  })
  res.end(JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }))
}

const estimateTokens = (value: unknown): number => Math.max(1, Math.ceil(JSON.stringify(value).length / 4))

/** Splits text into about `count` pieces, never inside a code point. */
const split = (text: string, count: number): ReadonlyArray<string> => {
  const points = Array.from(text)
  const size = Math.max(1, Math.ceil(points.length / count))
  const pieces: Array<string> = []
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(""))
  return pieces
}

const stopReasonOf = (content: ReadonlyArray<ReplyBlock>, stopReason: StopReason | undefined): StopReason =>
  stopReason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn")

/** The events of one streamed message, in the API's order. */
const messageEvents = (
  request: MessagesRequest,
  content: ReadonlyArray<ReplyBlock>,
  stopReason?: StopReason
): ReadonlyArray<object> => {
  const events: Array<object> = [{
    type: "message_start",
    message: {
      id: nextId("msg"),
      type: "message",
      role: "assistant",
      model: request.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: estimateTokens([request.system, request.messages, request.tools]), output_tokens: 1 }
    }
  }]
  for (const [index, block] of content.entries()) {
    if (block.type === "text") {
      events.push({ type: "content_block_start", index, content_block: { type: "text", text: "" } })
      if (index === 0) events.push({ type: "ping" })
      for (const piece of block.pieces ?? split(block.text, 3)) {
        events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } })
      }
    } else {
      events.push({
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} }
      })
      if (index === 0) events.push({ type: "ping" })
      // The API's first input piece is empty; then the JSON in several pieces.
      for (const piece of block.pieces ?? ["", ...split(JSON.stringify(block.input), 3)]) {
        events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } })
      }
    }
    events.push({ type: "content_block_stop", index })
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: stopReasonOf(content, stopReason), stop_sequence: null },
      usage: { output_tokens: estimateTokens(content) }
    },
    { type: "message_stop" }
  )
  return events
}

const eventOf = (event: unknown): string => {
  const data = typeof event === "string" ? event : JSON.stringify(event)
  const type = typeof event === "object" && event !== null && typeof (event as { type?: unknown }).type === "string"
    ? (event as { type: string }).type
    : "message"
  return Sse.encoder.write({ _tag: "Event", event: type, id: undefined, data })
}

const startEvents = (res: http.ServerResponse): void => {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    "request-id": nextId("req")
  })
  res.flushHeaders()
}

const writeEvents = (res: http.ServerResponse, events: ReadonlyArray<unknown>): Effect.Effect<void> =>
  Effect.forEach(events, (event) =>
    Effect.zipRight(
      Effect.sync(() => {
        if (!res.destroyed) res.write(eventOf(event))
      }),
      // A turn of the event loop between events: each leaves in its own write, as a real stream's do.
      nextTurn
    ), { discard: true })

const send = (
  res: http.ServerResponse,
  request: MessagesRequest,
  reply: Reply,
  connection: Connection
): Effect.Effect<void> => {
  const untilClosed = () => Deferred.await(connection.closed)
  const streamed = request.stream === true
  const start = (): object => messageEvents(request, [])[0]!
  if (!streamed) {
    return Reply.$match(reply, {
      Message: ({ content, stopReason }) =>
        Effect.sync(() => {
          res.writeHead(200, { "content-type": "application/json", "request-id": nextId("req") })
          res.end(JSON.stringify({
            id: nextId("msg"),
            type: "message",
            role: "assistant",
            model: request.model,
            content: content.map((block) => (block.type === "text"
              ? { type: "text", text: block.text }
              : { type: "tool_use", id: block.id, name: block.name, input: block.input })
            ),
            stop_reason: stopReasonOf(content, stopReason),
            stop_sequence: null,
            usage: {
              input_tokens: estimateTokens([request.system, request.messages, request.tools]),
              output_tokens: estimateTokens(content)
            }
          }))
        }),
      HttpError: ({ errorType, message, retryAfter, retryAfterMs, status }) =>
        Effect.sync(() => errorResponse(res, status, errorType, message, { retryAfter, retryAfterMs })),
      Raw: (raw) => Effect.sync(() => rawResponse(res, raw)),
      Hold: () => untilClosed(),
      MalformedEvent: () => streamOnly(res, "MalformedEvent"),
      UnknownBlock: () => streamOnly(res, "UnknownBlock"),
      ToolUseWithoutId: () => streamOnly(res, "ToolUseWithoutId"),
      Truncated: () => streamOnly(res, "Truncated"),
      ErrorEvent: () => streamOnly(res, "ErrorEvent"),
      Events: () => streamOnly(res, "Events")
    })
  }
  const stream = (events: ReadonlyArray<unknown>, end = true): Effect.Effect<void> =>
    Effect.zipRight(
      Effect.sync(() => startEvents(res)),
      Effect.zipRight(writeEvents(res, events), Effect.sync(() => (end ? res.end() : undefined)))
    )
  return Reply.$match(reply, {
    Message: ({ content, stopReason }) => stream(messageEvents(request, content, stopReason)),
    HttpError: ({ errorType, message, retryAfter, retryAfterMs, status }) =>
      Effect.sync(() => errorResponse(res, status, errorType, message, { retryAfter, retryAfterMs })),
    Raw: (raw) => Effect.sync(() => rawResponse(res, raw)),
    MalformedEvent: () =>
      stream([
        start(),
        "{\"type\": \"content_block_start\", \"index\": 0, \"content_block\": {\"type\": \"text\", \"te"
      ]),
    UnknownBlock: ({ blockType }) =>
      stream([start(), { type: "content_block_start", index: 0, content_block: { type: blockType } }]),
    ToolUseWithoutId: ({ id, name }) =>
      stream([start(), {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", ...(id === undefined ? {} : { id }), name, input: {} }
      }]),
    Truncated: ({ content, keep }) => {
      const events = messageEvents(request, content)
      return stream(events.slice(0, keep ?? events.length - 1))
    },
    ErrorEvent: ({ errorType, message }) =>
      stream([start(), { type: "ping" }, { type: "error", error: { type: errorType, message } }]),
    Events: ({ end, events }) => end === false ? Effect.zipRight(stream(events, false), untilClosed()) : stream(events),
    Hold: ({ content }) => {
      const events = messageEvents(request, content)
      const firstDelta = events.findIndex((event) => (event as { type: string }).type === "content_block_delta")
      const head = events.slice(0, firstDelta === -1 ? 1 : firstDelta + 1)
      return Effect.zipRight(
        Effect.sync(() => {
          startEvents(res)
          res.write(head.map(eventOf).join(""))
        }),
        untilClosed()
      )
    }
  })
}

const rawResponse = (
  res: http.ServerResponse,
  raw: { readonly status: number; readonly contentType: string; readonly body: string }
): void => {
  res.writeHead(raw.status, { "content-type": raw.contentType })
  res.end(raw.body)
}

const streamOnly = (res: http.ServerResponse, tag: string): Effect.Effect<void> =>
  Effect.sync(() =>
    errorResponse(res, 500, "api_error", `MessagesServer: the reply ${tag} is for streamed requests (stream: true)`)
  )
