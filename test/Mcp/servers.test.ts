/**
 * The other reference servers and transports (server-everything over Streamable HTTP on 127.0.0.1, filesystem,
 * memory), permissions rules for MCP names, hooks, the environment a stdio server gets, and long names.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Scope } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../src/Hooks/Hooks.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import {
  config,
  EVERYTHING,
  everythingEntry,
  FILESYSTEM,
  MEMORY,
  resultText,
  runtimeLayer,
  tempDir,
  use
} from "./helpers.js"

const freePort = Effect.async<number>((resume) => {
  const server = net.createServer()
  server.listen(0, "127.0.0.1", () => {
    const port = (server.address() as net.AddressInfo).port
    server.close(() => resume(Effect.succeed(port)))
  })
})

/** server-everything over HTTP on 127.0.0.1 (`streamableHttp` or `sse`) on `port`, stopped with the scope. */
const remoteEverything = (transport: "streamableHttp" | "sse", port: number) =>
  Effect.acquireRelease(
    Effect.async<childProcess.ChildProcess, Error>((resume) => {
      const child = childProcess.spawn(process.execPath, [EVERYTHING, transport], {
        env: { ...process.env, PORT: String(port) },
        stdio: ["ignore", "ignore", "pipe"]
      })
      let said = ""
      child.stderr!.on("data", (chunk: Buffer) => {
        said += chunk.toString()
        if (/listening on port|running on port/i.test(said)) resume(Effect.succeed(child))
      })
      child.on("exit", (code) => resume(Effect.fail(new Error(`server-everything exited (${code}): ${said}`))))
    }),
    (child) => Effect.sync(() => child.kill("SIGKILL"))
  )

const httpEverything = Effect.flatMap(
  freePort,
  (port) =>
    Effect.map(
      remoteEverything("streamableHttp", port),
      (child) => ({ child, port, url: `http://127.0.0.1:${port}/mcp` })
    )
)

describe("Streamable HTTP", () => {
  it.live(
    "server-everything over Streamable HTTP on 127.0.0.1: lists and echoes; rules decide per tool",
    () =>
      Effect.gen(function*() {
        const { url } = yield* httpEverything
        const layer = runtimeLayer(
          config({ remote: { type: "http", url, headers: { "X-Trace": "${TRACE:-none}" } } }),
          { allow: ["mcp__remote__echo"] }
        )
        const [echo, sum] = yield* ToolRuntime.execute([
          use("mcp__remote__echo", { message: "over http" }),
          use("mcp__remote__get-sum", { a: 2, b: 3 })
        ]).pipe(Effect.provide(layer))
        expect(echo?.status).toBe("success")
        expect(resultText(echo?.result.content)).toBe("Echo: over http")
        // Only echo is allowed by rule; the scripted approver is away: get-sum is denied.
        expect(sum?.status).toBe("denied")
      }).pipe(Effect.scoped),
    40_000
  )
})

describe("remote servers", () => {
  it.live(
    "a remote server that went away fails the call saying so; once it is back, the connection is restored",
    () =>
      Effect.gen(function*() {
        const first = yield* Scope.make()
        const { child, port, url } = yield* Scope.extend(httpEverything, first)
        const layer = runtimeLayer(config({ remote: { type: "http", url } }), {
          allow: ["mcp__remote"],
          servers: { restartDelay: "300 millis", maxRestarts: 8 }
        })
        yield* Effect.gen(function*() {
          const [before] = yield* ToolRuntime.execute([use("mcp__remote__echo", { message: "one" })])
          expect(before?.status).toBe("success")
          child.kill("SIGKILL")
          yield* Effect.promise(() => new Promise((resolve) => child.once("exit", resolve)))
          const [gone] = yield* ToolRuntime.execute([use("mcp__remote__echo", { message: "two" })])
          expect(gone?.status).toBe("error")
          expect(resultText(gone?.result.content)).toContain(
            "MCP server \"remote\" closed the connection while echo was running"
          )
          // The server comes back on the same port; the next call waits for the reconnection and succeeds.
          yield* remoteEverything("streamableHttp", port)
          const [after] = yield* ToolRuntime.execute([use("mcp__remote__echo", { message: "three" })])
          expect(after?.status).toBe("success")
          expect(resultText(after?.result.content)).toBe("Echo: three")
        }).pipe(Effect.provide(layer))
      }).pipe(Effect.scoped),
    60_000
  )

  it.live("server-everything over the older HTTP+SSE transport", () =>
    Effect.gen(function*() {
      const port = yield* freePort
      yield* remoteEverything("sse", port)
      const [echo] = yield* ToolRuntime.execute([use("mcp__legacy__echo", { message: "over sse" })]).pipe(
        Effect.provide(
          runtimeLayer(config({ legacy: { type: "sse", url: `http://127.0.0.1:${port}/sse` } }), {
            allow: ["mcp__legacy"]
          })
        )
      )
      expect(resultText(echo?.result.content)).toBe("Echo: over sse")
    }).pipe(Effect.scoped), 30_000)
})

describe("permission rules on MCP names", () => {
  const everything = config({ everything: everythingEntry() })
  const run = (rules: { allow?: ReadonlyArray<string>; deny?: ReadonlyArray<string> }) =>
    ToolRuntime.execute([
      use("mcp__everything__echo", { message: "x" }),
      use("mcp__everything__get-sum", { a: 1, b: 2 })
    ]).pipe(
      Effect.map((outcomes) => outcomes.map((o) => o.status)),
      Effect.provide(runtimeLayer(everything, rules))
    )

  it.live(
    "mcp__server allows every tool of the server; mcp__server__* the same; mcp__server__tool one tool",
    () =>
      Effect.gen(function*() {
        expect(yield* run({ allow: ["mcp__everything"] })).toEqual(["success", "success"])
        expect(yield* run({ allow: ["mcp__everything__*"] })).toEqual(["success", "success"])
        expect(yield* run({ allow: ["mcp__everything__echo"] })).toEqual(["success", "denied"])
        expect(yield* run({ allow: ["mcp__other"] })).toEqual(["denied", "denied"])
      }),
    60_000
  )

  it.live("a deny rule on the tool beats an allow rule on the server", () =>
    Effect.gen(function*() {
      expect(yield* run({ allow: ["mcp__everything"], deny: ["mcp__everything__get-sum"] })).toEqual([
        "success",
        "denied"
      ])
      expect(yield* run({ allow: ["mcp__everything__echo"], deny: ["mcp__everything"] })).toEqual(["denied", "denied"])
    }), 60_000)

  it.live(
    "hooks see the full name and the input; their matcher is tested against the full name",
    () =>
      Effect.gen(function*() {
        const dir = tempDir("mcp-hooks")
        const log = path.join(dir, "seen.jsonl")
        const hooks = Hooks.layer({
          cwd: dir,
          settingsHooks: [{
            PreToolUse: [{
              matcher: "mcp__everything__.*",
              hooks: [{ type: "command", command: `cat >> ${log}; echo >> ${log}` }]
            }]
          }]
        })
        const [outcome] = yield* ToolRuntime.execute([use("mcp__everything__echo", { message: "hooked" })]).pipe(
          Effect.provide(runtimeLayer(everything, { allow: ["mcp__everything"], hooks }))
        )
        expect(outcome?.status).toBe("success")
        const seen = fs.readFileSync(log, "utf8").trim().split("\n").map((line) =>
          JSON.parse(line) as { tool_name: string; tool_input: unknown }
        )
        expect(seen.map((s) => [s.tool_name, s.tool_input])).toEqual([["mcp__everything__echo", { message: "hooked" }]])
      }),
    30_000
  )
})

describe("stdio servers", () => {
  it.live(
    "get the minimal environment plus their configured env: nothing else of this process leaks",
    () =>
      Effect.gen(function*() {
        process.env.MCP_TEST_SECRET = "do-not-leak"
        const [outcome] = yield* ToolRuntime.execute([use("mcp__everything__get-env", {})]).pipe(
          Effect.provide(
            runtimeLayer(config({ everything: everythingEntry({ CONFIGURED: "${CONFIGURED_SOURCE:-from-config}" }) }), {
              allow: ["mcp__everything"]
            })
          )
        )
        delete process.env.MCP_TEST_SECRET
        const env = JSON.parse(resultText(outcome?.result.content)) as Record<string, string>
        expect(env.CONFIGURED).toBe("from-config")
        expect(env.MCP_TEST_SECRET).toBeUndefined()
        expect(
          Object.keys(env).filter((key) =>
            // The marker that lets closing the server end its whole tree (Subprocess.spawnService).
            !["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "CONFIGURED", "EFFECT_TOOL_RUNTIME_CALL"].includes(
              key
            )
          )
        ).toEqual([])
      }),
    30_000
  )

  it.live(
    "server-filesystem reads a file in its allowed directory; a file that does not exist is the server's error",
    () =>
      Effect.gen(function*() {
        const dir = fs.realpathSync(tempDir("mcp-fs"))
        fs.writeFileSync(path.join(dir, "note.txt"), "hello from disk\n")
        const [read, missing] = yield* ToolRuntime.execute([
          use("mcp__fs__read_text_file", { path: path.join(dir, "note.txt") }),
          use("mcp__fs__read_text_file", { path: path.join(dir, "absent.txt") })
        ]).pipe(
          Effect.provide(
            runtimeLayer(config({ fs: { command: process.execPath, args: [FILESYSTEM, dir] } }), { allow: ["mcp__fs"] })
          )
        )
        expect(read?.status).toBe("success")
        expect(resultText(read?.result.content)).toContain("hello from disk")
        expect(missing?.status).toBe("error")
        expect(resultText(missing?.result.content)).toMatch(/ENOENT|no such file/i)
      }),
    30_000
  )

  it.live("server-memory keeps what one call stores for the next", () =>
    Effect.gen(function*() {
      const file = path.join(tempDir("mcp-memory"), "memory.jsonl")
      const [created, graph] = yield* ToolRuntime.execute([
        use("mcp__memory__create_entities", {
          entities: [{ name: "Ada", entityType: "person", observations: ["wrote the first program"] }]
        }),
        use("mcp__memory__read_graph", {})
      ]).pipe(
        Effect.provide(
          runtimeLayer(
            config({ memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: file } } }),
            { allow: ["mcp__memory"] }
          )
        )
      )
      expect(created?.status).toBe("success")
      expect(resultText(graph?.result.content)).toContain("wrote the first program")
    }), 30_000)

  it.live(
    "names over 64 characters are shortened with a stable hash, reported, and still callable",
    () =>
      Effect.gen(function*() {
        const server = "a-server-with-a-really-quite-long-name-for-testing"
        const registry = yield* ToolRegistry
        const status = yield* (yield* McpServers).status
        const renamed = status[0]!.renamed.find((r) => r.tool === "trigger-long-running-operation")
        expect(renamed?.reason).toBe("too long")
        expect(renamed!.name).toHaveLength(64)
        expect(renamed!.name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
        expect(registry.tools.every((tool) => tool.definition.name.length <= 64)).toBe(true)
        expect(registry.lookup(`mcp__${server}__echo`)._tag).toBe("Some")
        const [outcome] = yield* ToolRuntime.execute([use(renamed!.name, { duration: 0.1, steps: 1 })])
        expect(outcome?.status).toBe("success")
        // The same configuration always gives the same name.
        const again = yield* Effect.flatMap(McpServers, (s) => s.status).pipe(
          Effect.provide(McpServers.layer(config({ [server]: everythingEntry() }))),
          Effect.scoped
        )
        expect(again[0]!.renamed.find((r) => r.tool === "trigger-long-running-operation")?.name).toBe(renamed!.name)
      }).pipe(
        Effect.provide(
          runtimeLayer(config({ "a-server-with-a-really-quite-long-name-for-testing": everythingEntry() }), {
            allow: ["mcp__a-server-with-a-really-quite-long-name-for-testing"]
          })
        )
      ),
    30_000
  )
})
