/**
 * The Messages API backend's cost per streamed reply, side by side in the same process and from the same server
 * (a child process on 127.0.0.1), with the official `@anthropic-ai/sdk` streaming the same reply and a bare reader
 * (fetch, eventsource-parser, `JSON.parse` per event, nothing checked):
 * - a 200 kB Write input in 2,000 `input_json_delta`s and a 300-piece text, from the scripted MessagesServer (an
 *   event per write);
 * - 10,000 text deltas arriving in ONE piece (the case that was quadratic with a parser that rescans its buffer).
 * Client CPU time and wall time per reply, median of runs.
 */
import Anthropic from "@anthropic-ai/sdk"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Effect, Layer, Redacted, Stream } from "effect"
import { createParser } from "eventsource-parser"
import * as childProcess from "node:child_process"
import * as path from "node:path"
import * as AnthropicMessages from "../dist/Agent/AnthropicMessages.js"
import { ModelBackend } from "../dist/Agent/ModelBackend.js"
import { median, report } from "./stats.js"

const request = {
  system: undefined,
  messages: [{ role: "user" as const, content: "write it" }],
  tools: [],
  maxTokens: 64_000
}
const body = JSON.stringify({ model: "bench", max_tokens: 64_000, stream: true, messages: request.messages })

const bare = async (url: string): Promise<number> => {
  let events = 0
  const parser = createParser({
    onEvent: (event) => {
      JSON.parse(event.data)
      events++
    }
  })
  const response = await fetch(`${url}/v1/messages`, {
    method: "POST",
    headers: { "x-api-key": "k", "anthropic-version": "2023-06-01" },
    body
  })
  const decoder = new TextDecoder()
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
  return events
}

/** The official SDK streaming the same request: every event, as its users iterate them. */
const sdk = async (client: Anthropic): Promise<number> => {
  let events = 0
  const stream = await client.messages.create({
    model: "bench",
    max_tokens: 64_000,
    messages: [{ role: "user", content: "write it" }],
    stream: true
  })
  for await (const _event of stream) events++
  return events
}

const timed = async <A>(
  f: () => Promise<A>
): Promise<{ readonly value: A; readonly wall: number; readonly cpu: number }> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const value = await f()
  const used = process.cpuUsage(cpu)
  return { value, wall: performance.now() - start, cpu: (used.user + used.system) / 1000 }
}

const startServer = (
  script: string,
  args: ReadonlyArray<string> = []
): Promise<{ readonly url: string; readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = childProcess.spawn(process.execPath, [
      "--import",
      "tsx",
      path.join(import.meta.dirname, "fixtures", script),
      ...args
    ], { stdio: ["pipe", "pipe", "inherit"] })
    child.on("error", reject)
    child.stdout.setEncoding("utf8")
    child.stdout.once("data", (line: string) => resolve({ url: line.trim(), stop: () => child.stdin.end() }))
  })

type Run = { readonly wall: number; readonly cpu: number; readonly value: number }

const compare = async (title: string, script: string, args: ReadonlyArray<string>, runs: number): Promise<void> => {
  const server = await startServer(script, args)
  try {
    const backend = AnthropicMessages.layer({ model: "bench", apiKey: Redacted.make("k"), baseUrl: server.url }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
    const model = await Effect.runPromise(Effect.provide(ModelBackend, backend))
    const client = new Anthropic({
      apiKey: "k",
      baseURL: server.url,
      maxRetries: 0,
      defaultHeaders: { "x-api-key": "k" }
    })
    const ours = () => Effect.runPromise(Stream.runCount(model.stream(request)))
    for (let i = 0; i < 3; i++) {
      await ours()
      await sdk(client)
      await bare(server.url)
    }
    const oursRuns: Array<Run> = []
    const sdkRuns: Array<Run> = []
    const bareRuns: Array<Run> = []
    for (let i = 0; i < runs; i++) {
      oursRuns.push(await timed(ours))
      sdkRuns.push(await timed(() => sdk(client)))
      bareRuns.push(await timed(() => bare(server.url)))
    }
    const wireEvents = bareRuns[0]!.value
    const sdkCpu = median(sdkRuns.map((r) => r.cpu))
    const row = (name: string, measured: ReadonlyArray<Run>): readonly [string, string, string] => {
      const cpu = median(measured.map((r) => r.cpu))
      return [
        name,
        `${cpu.toFixed(1)} ms CPU (${(cpu / sdkCpu).toFixed(2)}x the SDK)`,
        `${median(measured.map((r) => r.wall)).toFixed(1)} ms wall, ${
          ((cpu * 1000) / wireEvents).toFixed(1)
        } us CPU per wire event`
      ]
    }
    report(`${title} (${wireEvents} events; ${oursRuns[0]!.value} ModelEvents), median of ${runs}`, [
      row("AnthropicMessages", oursRuns),
      row("@anthropic-ai/sdk messages.create stream", sdkRuns),
      row("bare fetch + eventsource-parser + JSON.parse", bareRuns)
    ])
  } finally {
    server.stop()
  }
}

export const run = async (): Promise<void> => {
  await compare(
    "Messages API: one streamed reply, a 200 kB input in 2,000 deltas, an event per write",
    "messages-server.ts",
    [],
    15
  )
  await compare("Messages API: 10,000 text deltas in one piece", "sse-server.ts", ["10000"], 10)
}
