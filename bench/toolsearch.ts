/**
 * Tool definitions and tool search, three ways:
 *
 * - **context**: tokens of the first request's tool definitions with and without deferral, for the built-in tools +
 *   the recorded tool lists of server-everything, server-filesystem and server-memory + a synthetic catalogue of
 *   2,000 tools. Counted with OpenAI's o200k tokenizer (gpt-tokenizer) and with the library's estimate (chars/4),
 *   whose error against o200k is printed too. Target: >= 90% fewer with deferral at 2,000 tools (with 37 MCP tools
 *   the built-ins, always in full, are most of what is sent).
 * - **search**: index build time, and p50/p99 latency of the query set's queries, at 2,000 and 10,000 tools, side
 *   by side with a plain substring scan over names and descriptions (the peer). Target: p50 < 1 ms at 2,000.
 * - **request**: `ToolCatalog.request` (what every model request pays) at 2,000 deferred tools: unchanged inputs,
 *   after a discovery, after the tools changed (one more arrives, as an MCP server's list_changed brings it), and the
 *   agent loop's `requestEnabled` (every tool's `isEnabled` asked). Target: < 1 ms, incremental when tools change.
 * - **quality**: recall@1 and recall@5 of the query set (`fixtures/toolsearch-queries.json`, or the file named by
 *   `TOOLSEARCH_QUERIES`) over the same catalogue. Target: recall@5 >= 0.9.
 *
 * Run: `npm run build && npx tsx bench/toolsearch.ts` (`npm run bench -- toolsearch`).
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as fs from "node:fs"
import * as path from "node:path"
import { performance } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import * as Definitions from "../dist/Catalog/Definitions.js"
import { DiscoveredTools, requestEnabled, ToolCatalog } from "../dist/Catalog/ToolCatalog.js"
import { makeDynamicRegistry, ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import type { RegisteredTool } from "../dist/Catalog/ToolRegistry.js"
import * as Tool from "../dist/Tool/Tool.js"
import { builtinTools } from "../dist/Tools/index.js"
import { makeIndex, search, ToolSearch } from "../dist/Tools/ToolSearch.js"
import { recordedServers, synthetic } from "./fixtures/catalogue.js"
import type { Definition } from "./fixtures/catalogue.js"
import { report } from "./stats.js"

const here = path.dirname(fileURLToPath(import.meta.url))

const tokens = (value: unknown): number => encode(typeof value === "string" ? value : JSON.stringify(value)).length

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

interface Query {
  readonly query: string
  readonly expected: string
}

const queries = (): ReadonlyArray<Query> =>
  JSON.parse(
    fs.readFileSync(process.env["TOOLSEARCH_QUERIES"] ?? path.join(here, "fixtures", "toolsearch-queries.json"), "utf8")
  ) as ReadonlyArray<Query>

/** The first request a session sends: everything, or (with deferral) eager + always tools and the announcement. */
const firstRequest = (tools: ReadonlyArray<Definition>, mode: "on" | "off") =>
  Effect.runSync(
    ToolCatalog.request("anthropic").pipe(
      Effect.provide(
        ToolCatalog.layer(tools.map((definition) => ({ definition })), { mode }).pipe(
          Layer.provide(DiscoveredTools.layer())
        )
      )
    )
  )

const context = () => {
  const builtins = [...builtinTools.map((tool) => tool.definition), ToolSearch.definition]
  const servers = recordedServers()
  const rows: Array<readonly [string, string, string]> = []
  for (
    const [label, tools] of [
      ["built-ins + 3 MCP servers", [...builtins, ...servers]],
      ["built-ins + 3 MCP servers + 2,000 synthetic", [...builtins, ...servers, ...synthetic(2000)]]
    ] as const
  ) {
    const without = firstRequest(tools, "off")
    const withDeferral = firstRequest(tools, "on")
    const sentWithout = tokens(without.tools)
    const sentWith = tokens(withDeferral.tools) +
      (withDeferral.announcement === undefined ? 0 : tokens(withDeferral.announcement))
    rows.push([
      `${label}: no deferral`,
      `${sentWithout} tok`,
      `${without.included.length} tools in full (o200k; estimate ${without.estimatedTokens})`
    ])
    rows.push([
      `${label}: deferral on`,
      `${sentWith} tok`,
      `${withDeferral.included.length} in full + ${withDeferral.deferred.length} names announced (estimate ${withDeferral.estimatedTokens}); ${
        (100 * (1 - sentWith / sentWithout)).toFixed(1)
      }% fewer${
        // The built-ins always go in full (some 4,400 tokens): the target is for a large catalogue, not for 37 tools.
        tools.length > 1000 ? ", target >= 90%" : ""}`
    ])
  }
  report("toolsearch: context of the first request (Anthropic shape)", rows)

  // The estimate against the tokenizer, definition by definition.
  const estimateRows: Array<readonly [string, string, string]> = []
  for (
    const [label, tools] of [["built-in tools", builtins], ["3 MCP servers", servers], [
      "synthetic",
      synthetic(2000)
    ]] as const
  ) {
    const errors = tools.map((definition) => {
      const json = Definitions.anthropic(definition)
      const real = tokens(json)
      return (Definitions.estimateTokens(json) - real) / real
    })
    const mean = errors.reduce((sum, e) => sum + Math.abs(e), 0) / errors.length
    const worst = errors.reduce((w, e) => (Math.abs(e) > Math.abs(w) ? e : w), 0)
    const total = tools.reduce(
      (sum, definition) => sum + Definitions.estimateTokens(Definitions.anthropic(definition)),
      0
    )
    const realTotal = tools.reduce((sum, definition) => sum + tokens(Definitions.anthropic(definition)), 0)
    estimateRows.push([
      label,
      `${(100 * mean).toFixed(1)}%`,
      `mean |error| of chars/4 vs o200k per definition; worst ${
        (100 * worst).toFixed(1)
      }%; total ${total} vs ${realTotal} (${(100 * (total - realTotal) / realTotal).toFixed(1)}%)`
    ])
  }
  report("toolsearch: token estimate (chars/4) against o200k", estimateRows)
}

/** The peer: every query word must appear in the name or description (what a regex-style search does). */
const substringScan = (tools: ReadonlyArray<Definition>) => {
  const texts = tools.map((definition) => `${definition.name} ${definition.description}`.toLowerCase())
  return (query: string, limit: number): ReadonlyArray<string> => {
    const words = query.toLowerCase().split(/\s+/).filter((w) => w.length > 2)
    const out: Array<string> = []
    for (let i = 0; i < texts.length && out.length < limit; i++) {
      if (words.every((word) => texts[i]!.includes(word))) out.push(tools[i]!.name)
    }
    return out
  }
}

const speed = () => {
  const builtins = [...builtinTools.map((tool) => tool.definition)]
  const servers = recordedServers()
  const set = queries()
  const rows: Array<readonly [string, string, string]> = []
  for (const size of [2_000, 10_000]) {
    const tools = [...builtins, ...servers, ...synthetic(size - builtins.length - servers.length)]
    // Warm the definitions' schema cache (the catalogue builds it once per tool anyway).
    const builds: Array<number> = []
    let index = makeIndex(tools)
    for (let i = 0; i < 5; i++) {
      const started = performance.now()
      index = makeIndex(tools)
      builds.push(performance.now() - started)
    }
    builds.sort((a, b) => a - b)
    // One untimed round first: the first queries pay for the JIT.
    for (const { query } of set) search(index, query, 5)
    const times: Array<number> = []
    for (let round = 0; round < 5; round++) {
      for (const { query } of set) {
        const started = performance.now()
        search(index, query, 5)
        times.push(performance.now() - started)
      }
    }
    times.sort((a, b) => a - b)
    const scan = substringScan(tools)
    const scanTimes: Array<number> = []
    for (let round = 0; round < 5; round++) {
      for (const { query } of set) {
        const started = performance.now()
        scan(query, 5)
        scanTimes.push(performance.now() - started)
      }
    }
    scanTimes.sort((a, b) => a - b)
    rows.push([`${size} tools: index build`, `${builds[2]!.toFixed(1)} ms`, "median of 5"])
    rows.push([
      `${size} tools: query p50`,
      `${percentile(times, 50).toFixed(3)} ms`,
      `p99 ${percentile(times, 99).toFixed(3)} ms over ${times.length} queries${
        size === 2000 ? "; target p50 < 1 ms" : ""
      }`
    ])
    rows.push([
      `${size} tools: substring scan p50`,
      `${percentile(scanTimes, 50).toFixed(3)} ms`,
      `p99 ${percentile(scanTimes, 99).toFixed(3)} ms (the peer)`
    ])
  }
  report("toolsearch: search speed (MiniSearch)", rows)
}

const quality = () => {
  const tools = [...builtinTools.map((tool) => tool.definition), ...recordedServers(), ...synthetic(2000)]
  const index = makeIndex(tools)
  const scan = substringScan(tools)
  const set = queries()
  const known = new Set(tools.map((definition) => definition.name))
  const unknown = set.filter(({ expected }) => !known.has(expected))
  if (unknown.length > 0) {
    throw new Error(`queries expect tools not in the catalogue: ${unknown.map((q) => q.expected).join(", ")}`)
  }
  let at1 = 0
  let at5 = 0
  let scanAt5 = 0
  const misses: Array<string> = []
  for (const { expected, query } of set) {
    const result = search(index, query, 5)
    const names = result._tag === "Found" ? result.names : []
    if (names[0] === expected) at1++
    if (names.includes(expected)) at5++
    else misses.push(`${JSON.stringify(query)} -> ${names.slice(0, 3).join(", ") || "(nothing)"} (wanted ${expected})`)
    if (scan(query, 5).includes(expected)) scanAt5++
  }
  report(`toolsearch: quality over ${tools.length} tools, ${set.length} queries`, [
    ["recall@1", (at1 / set.length).toFixed(3), ""],
    ["recall@5", (at5 / set.length).toFixed(3), "target >= 0.9"],
    ["substring scan recall@5", (scanAt5 / set.length).toFixed(3), "the peer"]
  ])
  if (misses.length > 0) console.log(`  misses:\n    ${misses.join("\n    ")}`)
}

const requests = () => {
  const definitions = [...builtinTools.map((tool) => tool.definition), ...recordedServers(), ...synthetic(2000)]
  const registered = (definition: Definition): RegisteredTool => ({
    definition,
    service: Tool.serviceFrom(definition.name, {
      checkPermissions: () => Effect.succeed({ _tag: "Passthrough" as const }),
      call: () => Effect.void
    })
  })
  let tools: ReadonlyArray<RegisteredTool> = definitions.map(registered)
  const registry = makeDynamicRegistry(() => tools)
  const layer = ToolCatalog.layerFromRegistry({ mode: "on" }).pipe(
    Layer.provideMerge(Layer.succeed(ToolRegistry, registry)),
    Layer.provideMerge(DiscoveredTools.layer())
  )
  const rows = Effect.runSync(
    Effect.gen(function*() {
      const catalog = yield* ToolCatalog
      const time = <A>(effect: Effect.Effect<A>, before: () => void = () => {}, rounds = 200) =>
        Effect.gen(function*() {
          const samples: Array<number> = []
          for (let i = 0; i < rounds; i++) {
            before()
            const started = performance.now()
            yield* effect
            samples.push(performance.now() - started)
          }
          samples.sort((a, b) => a - b)
          return samples[Math.floor(samples.length / 2)]!
        })
      const first = yield* time(catalog.request("anthropic"), () => {
        tools = [...tools]
      }, 5)
      const unchanged = yield* time(catalog.request("anthropic"))
      const deferred = definitions.filter((definition) => catalog.isDeferred(definition.name)).map((d) => d.name)
      let next = 0
      const discovery = yield* time(catalog.request("anthropic"), () => {
        Effect.runSync(catalog.discovered.add([deferred[next++ % deferred.length]!]))
      })
      let added = 0
      const changed = yield* time(catalog.request("anthropic"), () => {
        const definition = Tool.make(`mcp__late__tool_${added++}`, {
          description: "A tool that arrived later.",
          input: Schema.Struct({ path: Schema.String }),
          loading: "deferred",
          touchesEnvironment: true
        }).definition
        tools = [...tools, registered(definition)]
      }, 50)
      const enabled = yield* time(
        requestEnabled("anthropic").pipe(
          Effect.provideService(ToolRegistry, registry),
          Effect.provideService(ToolCatalog, catalog)
        )
      )
      const note = (ms: number) => `target < 1 ms${ms < 1 ? "" : " (MISSED)"}`
      return [
        [`${deferred.length} deferred: first request (tools all new)`, `${first.toFixed(3)} ms`, "median of 5"],
        ["request, nothing changed", `${unchanged.toFixed(3)} ms`, note(unchanged)],
        ["request after a discovery", `${discovery.toFixed(3)} ms`, note(discovery)],
        ["request after one more tool arrived", `${changed.toFixed(3)} ms`, note(changed)],
        ["requestEnabled (the agent loop's), nothing changed", `${enabled.toFixed(3)} ms`, note(enabled)]
      ] as const
    }).pipe(Effect.provide(layer))
  )
  report("toolsearch: ToolCatalog.request, paid on every model request (median wall time)", rows)
}

export const run = async (): Promise<void> => {
  context()
  requests()
  speed()
  quality()
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
