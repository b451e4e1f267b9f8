/**
 * WebFetch benchmarks, against a node:http server on 127.0.0.1 in the same process.
 *
 * - Fetch and convert a 1 MB HTML page through the whole ToolRuntime pipeline (median ms; cache off).
 * - A 100 KB text page: the tool through the runtime, and the tool's service alone, against a raw undici request
 *   (keep-alive, body read as text) of the same page, interleaved run by run (target <= 1.5x).
 *
 * Run: `npm run build && npx tsx bench/webfetch.ts` or `npm run bench -- webfetch`
 *
 * @since 0.2.0
 */
import * as Undici from "@effect/platform-node/Undici"
import { Effect, ManagedRuntime, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { testRuntime } from "../dist/testing/index.js"
import { WebFetchTool } from "../dist/Tools/WebFetch.js"
import { median, report } from "./stats.js"

const paragraph =
  `<p>Effect is a <b>powerful</b> TypeScript library with <a href="/docs">documentation</a>, <code>code</code> and <em>emphasis</em>.</p>\n`
const htmlPage =
  `<!doctype html><html><head><title>Bench</title><style>p{margin:0}</style><script>var x = 1</script></head><body><h1>Bench page</h1>${
    `<section><h2>Section</h2>${paragraph.repeat(20)}<ul><li>one</li><li>two</li></ul></section>\n`.repeat(
      Math.ceil(1_000_000 / (paragraph.length * 20 + 80))
    )
  }</body></html>`
const textPage = "plain text line for the benchmark, sixty-four characters long.\n".repeat(1600)

const listen = (): Promise<{ server: http.Server; port: number }> =>
  new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      if (request.url === "/page.html") {
        response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        response.end(htmlPage)
      } else {
        response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
        response.end(textPage)
      }
    })
    server.keepAliveTimeout = 60_000
    server.listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as AddressInfo).port }))
  })

export const run = async (): Promise<void> => {
  const { port, server } = await listen()
  const base = `http://127.0.0.1:${port}`
  const options = { allowPrivate: ["127.0.0.1"], plainHttp: ["127.0.0.1"], cacheTtl: 0 }
  const runtime = ManagedRuntime.make(testRuntime([WebFetchTool], WebFetchTool.layer(options)))
  const serviceRuntime = ManagedRuntime.make(WebFetchTool.layer(options))
  const service = await serviceRuntime.runPromise(WebFetchTool)
  let id = 0
  const viaRuntime = (url: string) =>
    runtime.runPromise(
      Effect.flatMap(ToolRuntime, (rt) =>
        rt.executeOne({ type: "tool_use", id: `toolu_${++id}`, name: "WebFetch", input: { url, prompt: "Summarise" } }))
    )
  const viaService = (url: string) =>
    serviceRuntime.runPromise(
      Effect.flatMap(Scope.make(), (scope) =>
        Effect.provideService(service.plan({ url, prompt: "Summarise" }).call(context), Scope.Scope, scope))
    )
  const context = {
    toolUseId: "toolu_bench",
    toolName: "WebFetch",
    progress: () => Effect.void,
    isReadDenied: () => false
  }
  const raw = async (url: string) => {
    const response = await Undici.request(url)
    return (await response.body.text()).length
  }
  const time = async (f: () => Promise<unknown>): Promise<number> => {
    const started = performance.now()
    await f()
    return performance.now() - started
  }

  // The 1 MB page: fetch and convert.
  const first = await viaRuntime(`${base}/page.html`)
  if (first.status !== "success") throw new Error(`bench fetch failed: ${JSON.stringify(first.result)}`)
  const htmlTimes: Array<number> = []
  for (let i = 0; i < 7; i++) htmlTimes.push(await time(() => viaRuntime(`${base}/page.html`)))

  // The 100 KB text page, interleaved.
  for (let i = 0; i < 20; i++) {
    await raw(`${base}/text`)
    await viaRuntime(`${base}/text`)
    await viaService(`${base}/text`)
  }
  const rawTimes: Array<number> = []
  const toolTimes: Array<number> = []
  const serviceTimes: Array<number> = []
  const serviceRatios: Array<number> = []
  for (let i = 0; i < 300; i++) {
    const rawTime = await time(() => raw(`${base}/text`))
    const serviceTime = await time(() => viaService(`${base}/text`))
    rawTimes.push(rawTime)
    serviceTimes.push(serviceTime)
    serviceRatios.push(serviceTime / rawTime)
    toolTimes.push(await time(() => viaRuntime(`${base}/text`)))
  }
  const rawMedian = median(rawTimes)
  report("WebFetch (loopback server, same process)", [
    [
      `fetch + convert ${(htmlPage.length / 1e6).toFixed(2)} MB HTML`,
      `${median(htmlTimes).toFixed(1)} ms`,
      "median of 7, whole pipeline, cache off"
    ],
    ["raw undici request, 100 KB text", `${rawMedian.toFixed(3)} ms`, "median of 300, keep-alive, body as text"],
    [
      "WebFetch service call, 100 KB text",
      `${median(serviceTimes).toFixed(3)} ms`,
      `${(median(serviceTimes) / rawMedian).toFixed(2)}x raw; median per-round ratio ${
        median(serviceRatios).toFixed(2)
      }x (target <= 1.5x)`
    ],
    [
      "WebFetch through ToolRuntime, 100 KB",
      `${median(toolTimes).toFixed(3)} ms`,
      `${(median(toolTimes) / rawMedian).toFixed(2)}x raw (pipeline and result budget included)`
    ]
  ])
  await runtime.dispose()
  await serviceRuntime.dispose()
  server.closeAllConnections()
  server.close()
}

if (import.meta.url === `file://${process.argv[1]}`) await run()
