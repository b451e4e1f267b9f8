/**
 * Per-call cost of an MCP tool through the whole runtime (registry snapshot, ajv input check, permission rules,
 * pipeline, result conversion) against the raw SDK client, both calling server-everything's `echo` over stdio, in
 * one process, batches interleaved. Each side talks to its own server process of the same build. Wall time: the
 * round trip to the server is most of the cost, and it is what a person waits for.
 *
 * On a busy machine wall time grows faster than the client's CPU: a client that has run more than some 25 µs since
 * it last woke (the answer handled, the next call decided) is usually preempted at the request's write by the server
 * it wakes, and then waits behind the machine's other work (with a 30 µs busy loop before each call the raw client's
 * median write goes from 2 to ~55 µs). Ours runs ~30 µs before each write and ~30 µs after each answer.
 *
 * `WARMUP=<calls>` sets the warm-up (default 1,000 calls each). Our side reaches its steady state later than the raw
 * client: its per-call code is still being optimised by V8 some 5,000 calls in (the compiler threads take up to
 * 300 µs of CPU per call between calls 1,000 and 2,000, under 15 µs after 5,000).
 */
import { NodeContext } from "@effect/platform-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import * as McpConfig from "../dist/Mcp/Config.js"
import { McpServers } from "../dist/Mcp/McpServers.js"
import { Approver } from "../dist/Permission/Approver.js"
import * as RulePolicy from "../dist/Permission/RulePolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import { Workspace } from "../dist/Session/Workspace.js"
import { median, report } from "./stats.js"

const BATCHES = 30
const BATCH = 100
const WARMUP = Number(process.env.WARMUP ?? 1000)
const SINGLES = 400

const require = createRequire(import.meta.url)
const EVERYTHING = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist/index.js"
)

/**
 * A Read served over MCP (stdio): our server (`effect-tool-runtime serve --mcp`, the whole pipeline: decode,
 * validate, rules, the scheduler's run, audit off) beside a minimal SDK server doing the same read with no checks
 * (bench/fixtures/mcp-read-server.mjs). The same SDK client drives both, calls interleaved one at a time.
 */
const serveRead = async (): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-mcp-serve-"))
  fs.writeFileSync(path.join(dir, "notes.txt"), Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n"))
  const home = path.join(dir, "home")
  fs.mkdirSync(home)
  const env = { ...process.env, HOME: home } as Record<string, string>
  const connect = async (args: ReadonlyArray<string>) => {
    const client = new Client({ name: "bench", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: [...args], cwd: dir, env, stderr: "ignore" })
    )
    return client
  }
  const ours = await connect([
    path.resolve(import.meta.dirname, "../dist/bin/effect-tool-runtime.js"),
    "serve",
    "--mcp"
  ])
  const minimal = await connect([path.resolve(import.meta.dirname, "fixtures/mcp-read-server.mjs")])
  const read = (client: Client) => client.callTool({ name: "Read", arguments: { file_path: "notes.txt" } })
  const same = [await read(ours), await read(minimal)].map((result) => JSON.stringify(result.content))
  if (same[0] !== same[1]) throw new Error(`the two servers read differently:\n${same[0]}\n${same[1]}`)
  for (let i = 0; i < 300; i++) {
    await read(ours)
    await read(minimal)
  }
  const times: [Array<number>, Array<number>] = [[], []]
  for (let i = 0; i < 500; i++) {
    for (const [c, client] of [ours, minimal].entries()) {
      const start = performance.now()
      await read(client)
      times[c]!.push((performance.now() - start) * 1000)
    }
  }
  await ours.close()
  await minimal.close()
  fs.rmSync(dir, { recursive: true, force: true })
  const [o, m] = times.map(median) as [number, number]
  report("mcp serve: a Read of a 50-line file over stdio, our server vs a minimal SDK server (median of 500 each)", [
    [
      "our server (governed)",
      `${o.toFixed(0)} us`,
      `${(o / m).toFixed(2)}x the minimal server, +${(o - m).toFixed(0)} us`
    ],
    ["minimal SDK server", `${m.toFixed(0)} us`, ""]
  ])
}

export const run = async (): Promise<void> => {
  await serveRead()
  const raw = new Client({ name: "bench-raw", version: "1.0.0" })
  await raw.connect(
    new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, "stdio"], stderr: "ignore" })
  )
  const rawCall = () => raw.callTool({ name: "echo", arguments: { message: "hi" } })

  const config = McpConfig.fromJson("bench", {
    mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }
  }, { trusted: true })
  const layer = ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      RulePolicy.layer({ cliRules: { allow: ["mcp__everything__echo"], deny: [], ask: [] } }).pipe(
        Layer.provide(Workspace.layer({ cwd: os.tmpdir() })),
        Layer.orDie
      ),
      ToolHooks.none,
      Approver.denyAll
    )),
    Layer.provideMerge(McpServers.extendRegistry.pipe(Layer.provide(ToolRegistry.layer([])))),
    Layer.provide(McpServers.layer(config)),
    Layer.provide(ResultStore.layerMemory()),
    Layer.provide(NodeContext.layer)
  )

  const [ours, theirs, oursCpu, theirsCpu, oursSingle, theirsSingle, oursSingleCpu, theirsSingleCpu] = await Effect
    .runPromise(
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        let id = 0
        const oursCall = Effect.flatMap(
          rt.executeOne({
            type: "tool_use",
            id: `toolu_${++id}`,
            name: "mcp__everything__echo",
            input: { message: "hi" }
          }),
          (outcome) =>
            outcome.status === "success"
              ? Effect.void
              : Effect.die(new Error(`echo failed: ${JSON.stringify(outcome.result)}`))
        )
        const rawEffect = Effect.promise(rawCall)
        for (let i = 0; i < WARMUP; i++) {
          yield* oursCall
          yield* rawEffect
        }
        const wall: [Array<number>, Array<number>] = [[], []]
        const cpu: [Array<number>, Array<number>] = [[], []]
        for (let b = 0; b < BATCHES; b++) {
          for (const [c, call] of [oursCall, rawEffect].entries()) {
            const start = performance.now()
            const startCpu = process.cpuUsage()
            for (let i = 0; i < BATCH; i++) yield* call
            const used = process.cpuUsage(startCpu)
            wall[c]!.push(((performance.now() - start) * 1000) / BATCH)
            cpu[c]!.push((used.user + used.system) / BATCH)
          }
        }
        // Calls as a model makes them: one at a time with a pause between (each server asleep when its call comes),
        // the two sides alternating call by call; each call's own latency.
        const single: [Array<number>, Array<number>] = [[], []]
        const singleCpu: [Array<number>, Array<number>] = [[], []]
        for (let i = 0; i < SINGLES; i++) {
          for (const [c, call] of [oursCall, rawEffect].entries()) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
            const start = performance.now()
            const startCpu = process.cpuUsage()
            yield* call
            const used = process.cpuUsage(startCpu)
            single[c]!.push((performance.now() - start) * 1000)
            singleCpu[c]!.push(used.user + used.system)
          }
        }
        return [...wall.map(median), ...cpu.map(median), ...single.map(median), ...singleCpu.map(median)]
      }).pipe(Effect.scoped, Effect.provide(layer))
    ) as [number, number, number, number, number, number, number, number]
  await raw.close()
  report(
    `mcp: server-everything echo over stdio, ours vs the raw SDK client, interleaved (after ${WARMUP} warm-up calls each)`,
    [
      [
        "one call at a time, ours",
        `${oursSingle.toFixed(0)} us`,
        `${
          (oursSingle / theirsSingle).toFixed(2)
        }x the raw client (target <= 1.2x; median of ${SINGLES} calls, 2 ms apart)`
      ],
      ["one call at a time, raw", `${theirsSingle.toFixed(0)} us`, ""],
      // After 2 ms asleep the same code costs this machine ~3x the CPU it costs back to back (caches and branch
      // predictors gone cold), on both sides: what a client runs per call weighs three times here.
      [
        "  client CPU, ours",
        `${oursSingleCpu.toFixed(0)} us`,
        `${(oursSingleCpu / theirsSingleCpu).toFixed(2)}x, ${
          (oursSingleCpu - theirsSingleCpu).toFixed(0)
        } us more than the raw client's (getrusage, whole microseconds)`
      ],
      ["  client CPU, raw", `${theirsSingleCpu.toFixed(0)} us`, ""],
      [
        "back to back, ours",
        `${ours.toFixed(0)} us`,
        `${(ours / theirs).toFixed(2)}x (target <= 1.2x; median of ${BATCHES} batches of ${BATCH})`
      ],
      ["back to back, raw", `${theirs.toFixed(0)} us`, ""],
      [
        "  client CPU, ours",
        `${oursCpu.toFixed(0)} us`,
        `${(oursCpu / theirsCpu).toFixed(2)}x, ${(oursCpu - theirsCpu).toFixed(0)} us more than the raw client's`
      ],
      ["  client CPU, raw", `${theirsCpu.toFixed(0)} us`, ""],
      // Both sides share the machine: a loaded one inflates every figure, the ratios less.
      ["  load average", os.loadavg().map((load) => load.toFixed(2)).join(" "), `on ${os.cpus().length} cores`]
    ]
  )
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
