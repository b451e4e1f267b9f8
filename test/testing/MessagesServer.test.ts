/**
 * The scripted Messages server as an oracle: it refuses what the real API refuses (with Anthropic's error shape),
 * records every request, answers from its script in order, streams events in the API's order, and lets go of a
 * held connection when its Scope closes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import { MessagesServer } from "effect-tool-runtime/testing"
import * as fc from "effect/FastCheck"

const { Reply, text, toolUse } = MessagesServer

const headers = { "x-api-key": "k", "anthropic-version": "2023-06-01", "content-type": "application/json" }

const post = (
  url: string,
  body: unknown,
  extra: { readonly headers?: Record<string, string>; readonly path?: string } = {}
) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}${extra.path ?? "/v1/messages"}`, {
      method: "POST",
      headers: extra.headers ?? headers,
      body: typeof body === "string" ? body : JSON.stringify(body)
    })
    const raw = await response.text()
    return {
      status: response.status,
      contentType: response.headers.get("content-type"),
      raw,
      json: raw.startsWith("{") ? JSON.parse(raw) as unknown : undefined
    }
  })

const base = { model: "m", max_tokens: 100 }
const tools = [
  { name: "ToolSearch", description: "Finds tools.", input_schema: { type: "object" } },
  { name: "WebFetch", description: "Fetches.", input_schema: { type: "object" }, defer_loading: true }
]
const searched = (result: ReadonlyArray<unknown>) => [
  { role: "user", content: "go" },
  { role: "assistant", content: [{ type: "tool_use", id: "toolu_s", name: "ToolSearch", input: { query: "web" } }] },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_s", content: result }] }
]

const invalid = (message: string) => ({
  type: "error",
  error: { type: "invalid_request_error", message },
  request_id: expect.stringMatching(/^req_/)
})

describe("MessagesServer: it refuses what the API refuses", () => {
  it.scoped("a tool_reference to a tool not in tools: 400 \"Tool reference 'X' not found in available tools\"; a known one passes", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([Reply.Message({ content: [text("found it")] })])
      const missing = yield* post(server.url, {
        ...base,
        tools,
        messages: searched([{ type: "tool_reference", tool_name: "Grep" }])
      })
      expect(missing.status).toBe(400)
      expect(missing.json).toEqual(invalid("Tool reference 'Grep' not found in available tools"))
      const known = yield* post(server.url, {
        ...base,
        tools,
        messages: searched([{ type: "tool_reference", tool_name: "WebFetch" }])
      })
      expect(known.status).toBe(200)
      expect(known.json).toMatchObject({ content: [{ type: "text", text: "found it" }] })
    }))

  it.scoped("a tool_use without a tool_result right after: 400 with the API's message; the refused request uses up no reply", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([Reply.Message({ content: [text("first reply")] })])
      const refused = yield* post(server.url, {
        ...base,
        messages: [
          { role: "user", content: "go" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "toolu_a", name: "A", input: {} }, {
              type: "tool_use",
              id: "toolu_b",
              name: "B",
              input: {}
            }]
          },
          {
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_a", content: "done" }, { type: "text", text: "and?" }]
          }
        ]
      })
      expect(refused.status).toBe(400)
      expect(refused.json).toEqual(invalid(
        "messages.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
      ))
      const next = yield* post(server.url, { ...base, messages: [{ role: "user", content: "hi" }] })
      expect(next.json).toMatchObject({ content: [{ type: "text", text: "first reply" }] })
      expect((yield* server.requests).length).toBe(2)
    }))

  it.scoped("a tool_result whose tool_use is not in the message before: 400", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([])
      const refused = yield* post(server.url, {
        ...base,
        messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_z", content: "?" }] }]
      })
      expect(refused.json).toEqual(invalid(
        "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_z. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
      ))
    }))

  it.scoped("tools: duplicate names, a bad name, defer_loading with cache_control, every tool deferred: 400 each", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([])
      const tool = (name: string, extra: object = {}) => ({ name, input_schema: { type: "object" }, ...extra })
      const messages = [{ role: "user", content: "hi" }]
      const answers = yield* Effect.forEach([
        [tool("A"), tool("A")],
        [tool("A"), tool("bad name")],
        [tool("A"), tool("B", { defer_loading: true, cache_control: { type: "ephemeral" } })],
        [tool("A", { defer_loading: true })],
        [{ name: "A", input_schema: { type: "string" } }]
      ], (tools) => post(server.url, { ...base, tools, messages }))
      expect(answers.map((answer) => (answer.json as { error: { message: string } }).error.message)).toEqual([
        "tools: Tool names must be unique.",
        "tools.1.name: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        "tools.1: a tool with defer_loading cannot have cache_control",
        "tools: at least one tool must not be deferred (defer_loading)",
        "tools.0.input_schema: input_schema.type must be \"object\""
      ])
      expect(answers.every((answer) => answer.status === 400)).toBe(true)
    }))

  it.scoped("headers, path and body: 401 without x-api-key, 400 without anthropic-version, 404 elsewhere, 400 for non-JSON and unknown fields", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([])
      const body = { ...base, messages: [{ role: "user", content: "hi" }] }
      const noKey = yield* post(server.url, body, { headers: { "anthropic-version": "2023-06-01" } })
      expect([noKey.status, (noKey.json as { error: { type: string } }).error.type]).toEqual([
        401,
        "authentication_error"
      ])
      const noVersion = yield* post(server.url, body, { headers: { "x-api-key": "k" } })
      expect(noVersion.json).toEqual(invalid("anthropic-version: header is required"))
      const elsewhere = yield* post(server.url, body, { path: "/v1/complete" })
      expect(elsewhere.status).toBe(404)
      const notJson = yield* post(server.url, "{nope")
      expect((notJson.json as { error: { message: string } }).error.message).toMatch(
        /^The request body is not valid JSON/
      )
      const extra = yield* post(server.url, { ...body, temperature_x: 1 })
      expect(extra.status).toBe(400)
      expect((extra.json as { error: { message: string } }).error.message).toMatch(/temperature_x/)
      expect((yield* server.requests).length).toBe(5)
    }))

  const conversation = fc.array(
    fc.record({ asked: fc.integer({ min: 0, max: 3 }), drop: fc.boolean(), extra: fc.boolean() }),
    { minLength: 1, maxLength: 4 }
  )

  it.effect.prop("a conversation passes exactly when every turn's tool_results answer exactly that turn's tool_uses", [
    conversation
  ], ([turns]) =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([Reply.Message({ content: [text("ok")] })])
      const messages: Array<unknown> = [{ role: "user", content: "start" }]
      turns.forEach((turn, t) => {
        const asked = Array.from({ length: turn.asked }, (_, i) => `toolu_${t}_${i}`)
        const answered = [...(turn.drop ? asked.slice(1) : asked), ...(turn.extra ? [`toolu_other_${t}`] : [])]
        messages.push(
          {
            role: "assistant",
            content: [
              { type: "text", text: `turn ${t}` },
              ...asked.map((id) => ({ type: "tool_use", id, name: "T", input: {} }))
            ]
          },
          {
            role: "user",
            content: [...answered.map((id) => ({ type: "tool_result", tool_use_id: id, content: "r" })), {
              type: "text",
              text: "next"
            }]
          }
        )
      })
      // Oracle: a turn is answered exactly when nothing was dropped from a non-empty set of tool_uses and nothing extra added.
      const valid = turns.every((turn) => !(turn.drop && turn.asked > 0) && !turn.extra)
      const answer = yield* post(server.url, { ...base, messages })
      expect(answer.status).toBe(valid ? 200 : 400)
    }).pipe(Effect.scoped), { fastCheck: { numRuns: 40 }, timeout: 60_000 })
})

describe("MessagesServer: the script", () => {
  it.scoped("a function of the request and its position; a list beyond its end answers 500 api_error saying so", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make((request, index) =>
        Reply.Message({ content: [text(`${index}:${request.messages.length}`)] })
      )
      const first = yield* post(server.url, { ...base, messages: [{ role: "user", content: "a" }] })
      const second = yield* post(server.url, {
        ...base,
        messages: [{ role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "c" }]
      })
      expect([first.json, second.json]).toMatchObject([{ content: [{ text: "0:1" }] }, { content: [{ text: "1:3" }] }])
      const short = yield* MessagesServer.make([])
      const beyond = yield* post(short.url, { ...base, messages: [{ role: "user", content: "a" }] })
      expect(beyond.status).toBe(500)
      expect(beyond.json).toMatchObject({
        error: { type: "api_error", message: "MessagesServer: the script has no reply for request 1 (it has 0)" }
      })
    }))

  it.scoped("a streamed reply is server-sent events in the API's order: a ping after the first block starts, an empty first input piece", () =>
    Effect.gen(function*() {
      const server = yield* MessagesServer.make([
        Reply.Message({ content: [text("hello there"), toolUse("toolu_1", "Read", { file_path: "a" })] })
      ])
      const answer = yield* post(server.url, { ...base, stream: true, messages: [{ role: "user", content: "hi" }] })
      expect(answer.contentType).toMatch(/^text\/event-stream/)
      const events = answer.raw.split("\n\n").filter((event) => event !== "").map((event) => {
        const name = /^event: (.*)$/m.exec(event)![1]
        const data = JSON.parse(/^data: (.*)$/m.exec(event)![1]!) as { type: string; delta?: { partial_json?: string } }
        expect(data.type).toBe(name)
        return data
      })
      const types = events.map((event) => event.type)
      expect(types[0]).toBe("message_start")
      expect(types.slice(-2)).toEqual(["message_delta", "message_stop"])
      expect(types.slice(0, 3)).toEqual(["message_start", "content_block_start", "ping"])
      const pieces = events.filter((event) => event.delta?.partial_json !== undefined).map((event) =>
        event.delta!.partial_json
      )
      expect(pieces[0]).toBe("")
      expect(pieces.length).toBeGreaterThan(2)
      expect(pieces.join("")).toBe(JSON.stringify({ file_path: "a" }))
    }))

  it.effect("closing the Scope lets go of a held connection: the client sees the body end, the close does not hang", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const server = yield* MessagesServer.make([Reply.Hold({ content: [text("waiting")] })]).pipe(Scope.extend(scope))
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/messages`, {
          method: "POST",
          headers,
          body: JSON.stringify({ ...base, stream: true, messages: [{ role: "user", content: "hi" }] })
        })
      )
      const reader = response.body!.getReader()
      const first = yield* Effect.promise(() => reader.read())
      expect(new TextDecoder().decode(first.value)).toMatch(/message_start/)
      expect(yield* server.inFlight).toBe(1)
      yield* Scope.close(scope, Exit.void)
      const drain = async (): Promise<string> => {
        for (;;) if ((await reader.read()).done) return "ended"
      }
      const rest = yield* Effect.promise(() => drain().catch(() => "broken"))
      expect(["ended", "broken"]).toContain(rest)
    }))
})
