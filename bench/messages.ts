/**
 * The Messages API backend's cost per streamed reply: a 200 kB Write input in 2,000 `input_json_delta`s and a
 * 300-piece text, from the scripted MessagesServer in a child process on 127.0.0.1, read through `AnthropicMessages`
 * (fetch, Sse, Schema decoding, the reply's checks, the time bounds, Effect streams) side by side, in the same process
 * and from the same server, with a bare reader (fetch, the same Sse parser, `JSON.parse` per event, nothing checked).
 * Client CPU time and wall time per reply, median of runs.
 */
import * as Sse from "@effect/experimental/Sse"
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import { Effect, Layer, Redacted, Stream } from "effect"
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
  const parser = Sse.makeParser((event) => {
    if (event._tag === "Event") {
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

const timed = async <A>(
  f: () => Promise<A>
): Promise<{ readonly value: A; readonly wall: number; readonly cpu: number }> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  const value = await f()
  const used = process.cpuUsage(cpu)
  return { value, wall: performance.now() - start, cpu: (used.user + used.system) / 1000 }
}

const startServer = (): Promise<{ readonly url: string; readonly stop: () => void }> =>
  new Promise((resolve, reject) => {
    const child = childProcess.spawn(process.execPath, [
      "--import",
      "tsx",
      path.join(import.meta.dirname, "fixtures", "messages-server.ts")
    ], { stdio: ["pipe", "pipe", "inherit"] })
    child.on("error", reject)
    child.stdout.setEncoding("utf8")
    child.stdout.once("data", (line: string) => resolve({ url: line.trim(), stop: () => child.stdin.end() }))
  })

export const run = async (): Promise<void> => {
  const server = await startServer()
  try {
    const backend = AnthropicMessages.layer({ model: "bench", apiKey: Redacted.make("k"), baseUrl: server.url }).pipe(
      Layer.provide(FetchHttpClient.layer)
    )
    const model = await Effect.runPromise(Effect.provide(ModelBackend, backend))
    const ours = () => Effect.runPromise(Stream.runCount(model.stream(request)))
    const RUNS = 15
    for (let i = 0; i < 3; i++) {
      await ours()
      await bare(server.url)
    }
    const oursRuns: Array<{ wall: number; cpu: number; value: number }> = []
    const bareRuns: Array<{ wall: number; cpu: number; value: number }> = []
    for (let i = 0; i < RUNS; i++) {
      oursRuns.push(await timed(ours))
      bareRuns.push(await timed(() => bare(server.url)))
    }
    const wireEvents = bareRuns[0]!.value
    const row = (
      name: string,
      runs: ReadonlyArray<{ wall: number; cpu: number }>
    ): readonly [string, string, string] => {
      const cpu = median(runs.map((r) => r.cpu))
      return [
        name,
        `${cpu.toFixed(1)} ms CPU`,
        `${median(runs.map((r) => r.wall)).toFixed(1)} ms wall, ${
          ((cpu * 1000) / wireEvents).toFixed(1)
        } us CPU per wire event`
      ]
    }
    report(
      `Messages API: one streamed reply (${wireEvents} events, a 200 kB input in 2,000 deltas; ${
        oursRuns[0]!.value
      } ModelEvents), median of ${RUNS}`,
      [
        row("AnthropicMessages", oursRuns),
        row("bare fetch + Sse + JSON.parse", bareRuns)
      ]
    )
  } finally {
    server.stop()
  }
}
