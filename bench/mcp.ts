/**
 * Per-call cost of an MCP tool through the whole runtime (registry snapshot, ajv input check, permission rules,
 * pipeline, result conversion) against the raw SDK client, both calling server-everything's `echo` over stdio, in
 * one process, batches interleaved. Each side talks to its own server process of the same build. Wall time: the
 * round trip to the server is most of the cost, and it is what a person waits for.
 */
import { NodeContext } from "@effect/platform-node"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { Effect, Layer } from "effect"
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
const WARMUP = 1000
const SINGLES = 400

const require = createRequire(import.meta.url)
const EVERYTHING = path.join(
  path.dirname(require.resolve("@modelcontextprotocol/server-everything/package.json")),
  "dist/index.js"
)

export const run = async (): Promise<void> => {
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

  const [ours, theirs, oursCpu, theirsCpu, oursSingle, theirsSingle] = await Effect.runPromise(
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
      for (let i = 0; i < SINGLES; i++) {
        for (const [c, call] of [oursCall, rawEffect].entries()) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
          const start = performance.now()
          yield* call
          single[c]!.push((performance.now() - start) * 1000)
        }
      }
      return [...wall.map(median), ...cpu.map(median), ...single.map(median)]
    }).pipe(Effect.scoped, Effect.provide(layer))
  ) as [number, number, number, number, number, number]
  await raw.close()
  report(
    `mcp: server-everything echo over stdio, ours vs the raw SDK client, interleaved (after ${WARMUP} warm-up calls each)`,
    [
      [
        "one call at a time, ours",
        `${oursSingle.toFixed(0)} us`,
        `${
          (oursSingle / theirsSingle).toFixed(2)
        }x the raw client (target <= 1.1x; median of ${SINGLES} calls, 2 ms apart)`
      ],
      ["one call at a time, raw", `${theirsSingle.toFixed(0)} us`, ""],
      [
        "back to back, ours",
        `${ours.toFixed(0)} us`,
        `${(ours / theirs).toFixed(2)}x (median of ${BATCHES} batches of ${BATCH})`
      ],
      ["back to back, raw", `${theirs.toFixed(0)} us`, ""],
      [
        "  client CPU, ours",
        `${oursCpu.toFixed(0)} us`,
        `${(oursCpu - theirsCpu).toFixed(0)} us more than the raw client's`
      ],
      ["  client CPU, raw", `${theirsCpu.toFixed(0)} us`, ""]
    ]
  )
}
