/**
 * Supervision of real server processes: a killed server fails its call fast and is restarted, cancellation and
 * timeouts reach the server, a message over the stdio buffer is reported and the connection restored, tools that
 * appear at run time enter the registry, and closing the scope leaves no process behind.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import {
  awaitStatus,
  config,
  everythingEntry,
  fixtureEntry,
  isAlive,
  MEMORY,
  pidOf,
  pollFor,
  resultText,
  runtimeLayer,
  tempDir,
  use
} from "./helpers.js"

const connectedPid =
  (name: string, not?: number) =>
  (status: ReadonlyArray<{ name: string; state: { _tag: string; pid?: number | undefined } }>) => {
    const state = status.find((s) => s.name === name)?.state
    return state?._tag === "Connected" && state.pid !== undefined && state.pid !== not ? state.pid : undefined
  }

describe("supervision", () => {
  it.live(
    "kill -9 mid-call: the call fails within a second saying so, the server is restarted, and the next call succeeds",
    () =>
      Effect.gen(function*() {
        const before = yield* awaitStatus(connectedPid("everything"))
        const handle = yield* ToolRuntime.start([
          use("mcp__everything__trigger-long-running-operation", { duration: 20, steps: 20 })
        ])
        // The first progress notification proves the call is running inside the server.
        yield* awaitProgress(handle.events)
        const killedAt = Date.now()
        process.kill(before, "SIGKILL")
        const [outcome] = yield* handle.await
        const elapsed = Date.now() - killedAt
        expect(outcome?.status).toBe("error")
        expect(resultText(outcome?.result.content)).toContain(
          "closed the connection while trigger-long-running-operation was running"
        )
        expect(elapsed).toBeLessThan(1_000)

        const [next] = yield* ToolRuntime.execute([use("mcp__everything__echo", { message: "again" })])
        expect(next?.status).toBe("success")
        expect(resultText(next?.result.content)).toBe("Echo: again")
        const after = yield* pidOf("everything")
        expect(after).toBeDefined()
        expect(after).not.toBe(before)
        expect(isAlive(before)).toBe(false)
      }).pipe(
        Effect.scoped,
        Effect.provide(runtimeLayer(config({ everything: everythingEntry() }), { allow: ["mcp__everything"] }))
      ),
    40_000
  )

  it.live(
    "a server that keeps dying is restarted a bounded number of times, then reported as down, and its calls fail at once",
    () =>
      Effect.gen(function*() {
        const down = yield* awaitStatus((
          status
        ) => (status[0]?.state._tag === "Down" ? status[0].state.reason : undefined))
        expect(down).toMatch(/gave up after 2 restarts/)
        const [outcome] = yield* ToolRuntime.execute([use("mcp__broken__anything", {})])
        // A server that never listed tools has none in the registry.
        expect(outcome?.status).toBe("error")
        // The server is named, with why it is not there (not "no such tool").
        expect(resultText(outcome?.result.content)).toContain(
          "mcp__broken__anything is not available right now: the MCP server \"broken\" is not running"
        )
      }).pipe(
        Effect.provide(
          runtimeLayer(config({ broken: { command: process.execPath, args: ["-e", "process.exit(3)"] } }), {
            servers: { maxRestarts: 2, restartDelay: "10 millis" }
          })
        )
      ),
    40_000
  )

  it.live("tools/list is followed page by page", () =>
    Effect.gen(function*() {
      const status = yield* awaitStatus((s) => (s[0]?.state._tag === "Connected" ? s[0] : undefined))
      expect([...status.tools].sort()).toEqual(
        ["add_tool", "fail", "slow", "strict", "text"].map((t) => `mcp__paged__${t}`)
      )
    }).pipe(Effect.provide(runtimeLayer(config({ paged: fixtureEntry({ PAGE_SIZE: "2" }) })))), 30_000)

  it.live(
    "a server that never answers initialize fails its connection after the connect timeout, and is reported",
    () =>
      Effect.gen(function*() {
        const reason = yield* awaitStatus((s) => (s[0]?.state._tag === "Down" ? s[0].state.reason : undefined))
        expect(reason).toMatch(/MCP server "mute" did not answer initialize within 300ms \(gave up after 1 restarts\)/)
      }).pipe(
        Effect.provide(
          runtimeLayer(config({ mute: { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)"] } }), {
            servers: { connectTimeout: "300 millis", maxRestarts: 1, restartDelay: "10 millis" }
          })
        )
      ),
    30_000
  )

  it.live("closing the scope stops every server: no process is left", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        runtimeLayer(
          config({
            everything: everythingEntry(),
            fixture: fixtureEntry(),
            memory: {
              command: process.execPath,
              args: [MEMORY],
              env: { MEMORY_FILE_PATH: path.join(tempDir("mcp-memory"), "memory.jsonl") }
            }
          })
        ),
        scope
      )
      const status = yield* Effect.flatMap(McpServers, (servers) => servers.status).pipe(Effect.provide(context))
      const pids = status.flatMap((
        s
      ) => (s.state._tag === "Connected" && s.state.pid !== undefined ? [s.state.pid] : []))
      expect(pids).toHaveLength(3)
      expect(pids.every(isAlive)).toBe(true)
      yield* Scope.close(scope, Exit.void)
      expect(pids.filter(isAlive)).toEqual([])
    }), 40_000)
})

const awaitProgress = (events: Stream.Stream<{ readonly _tag: string }>) =>
  events.pipe(Stream.filter((event) => event._tag === "Progress"), Stream.runHead)

describe("calls", () => {
  const cancelLog = path.join(tempDir("mcp-cancel"), "cancelled.log")
  const layer = runtimeLayer(
    config({ fixture: { ...fixtureEntry({ CANCEL_LOG: cancelLog }), toolTimeouts: { slow: 400 } } }),
    { allow: ["mcp__fixture"] }
  )

  it.live(
    "cancelling a run mid-call sends notifications/cancelled, and the Outcome says the call was interrupted while running",
    () =>
      Effect.gen(function*() {
        const handle = yield* ToolRuntime.start([use("mcp__fixture__slow", { ms: 30_000 })])
        yield* awaitProgress(handle.events)
        yield* handle.cancel
        const [outcome] = yield* handle.await
        expect(outcome?.status).toBe("interrupted")
        expect(resultText(outcome?.result.content)).toContain("was interrupted by the user while running")
        const cancelled = yield* pollFor(
          () => (fs.existsSync(cancelLog) ? fs.readFileSync(cancelLog, "utf8").trim() || undefined : undefined),
          5_000
        )
        expect(cancelled.split("\n")).toHaveLength(1)
      }).pipe(Effect.scoped, Effect.provide(layer)),
    30_000
  )

  it.live(
    "a per-tool timeout is a timeout, not an interruption, and the server is told to stop",
    () =>
      Effect.gen(function*() {
        const linesBefore = fs.existsSync(cancelLog)
          ? fs.readFileSync(cancelLog, "utf8").split("\n").filter(Boolean).length
          : 0
        const [outcome] = yield* ToolRuntime.execute([use("mcp__fixture__slow", { ms: 30_000 })])
        expect(outcome?.status).toBe("timed_out")
        expect(resultText(outcome?.result.content)).toContain("timed out after 400ms")
        yield* pollFor(
          () => (fs.existsSync(cancelLog) &&
              fs.readFileSync(cancelLog, "utf8").split("\n").filter(Boolean).length > linesBefore
            ? true
            : undefined),
          5_000
        )
      }).pipe(Effect.provide(layer)),
    30_000
  )

  it.live(
    "a message over the stdio buffer fails that call clearly, and the connection is restored for the next one",
    () =>
      Effect.gen(function*() {
        const [huge] = yield* ToolRuntime.execute([use("mcp__fixture__text", { chars: 11 * 1024 * 1024 })])
        expect(huge?.status).toBe("error")
        expect(resultText(huge?.result.content)).toContain("larger than the 10 MiB stdio limit")
        const [small] = yield* ToolRuntime.execute([use("mcp__fixture__text", { chars: 3 })])
        expect(small?.status).toBe("success")
        expect(resultText(small?.result.content)).toBe("xxx")
      }).pipe(Effect.provide(layer)),
    60_000
  )

  it.live(
    "output over the limit goes to the ResultStore, the model gets a preview and the path",
    () =>
      Effect.gen(function*() {
        const [outcome] = yield* ToolRuntime.execute([use("mcp__fixture__text", { chars: 60_000 })])
        expect(outcome?.status).toBe("success")
        expect(outcome?.persistedPath).toBeDefined()
        expect(fs.readFileSync(outcome!.persistedPath!, "utf8")).toBe("x".repeat(60_000))
        expect(resultText(outcome?.result.content)).toMatch(
          /^<persisted-output>\nOutput too large \(58\.6 KB\)\. Full output saved to: /
        )
      }).pipe(Effect.provide(layer)),
    30_000
  )

  it.live("isError from the server is an error outcome with the server's text", () =>
    Effect.gen(function*() {
      const [outcome] = yield* ToolRuntime.execute([use("mcp__fixture__fail", {})])
      expect(outcome?.status).toBe("error")
      expect(outcome?.result.content).toBe("<tool_use_error>the fixture always fails</tool_use_error>")
    }).pipe(Effect.provide(layer)), 30_000)

  it.live(
    "tools/list_changed adds the new tool to the registry; a run under way keeps its snapshot, the next run sees it",
    () =>
      Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const servers = yield* McpServers
        const outcomes = yield* ToolRuntime.execute(
          Stream.make(use("mcp__fixture__add_tool", { name: "fresh" })).pipe(
            // The second call arrives once the first finished (and the tool exists): still unknown to this run.
            Stream.concat(
              Stream.fromEffect(
                Effect.as(
                  Effect.provideService(
                    awaitStatus((s) => (s[0]?.tools.includes("mcp__fixture__fresh") ? true : undefined)),
                    McpServers,
                    servers
                  ),
                  use("mcp__fixture__fresh", {})
                )
              )
            )
          )
        )
        expect(outcomes[0]?.status).toBe("success")
        expect(resultText(outcomes[1]?.result.content)).toContain("No such tool available: mcp__fixture__fresh")
        expect(registry.lookup("mcp__fixture__fresh")._tag).toBe("Some")
        const [next] = yield* ToolRuntime.execute([use("mcp__fixture__fresh", {})])
        expect(next?.status).toBe("success")
        expect(resultText(next?.result.content)).toBe("fresh")
      }).pipe(Effect.provide(layer)),
    30_000
  )
})
