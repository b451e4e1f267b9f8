/**
 * Bounded start-up (issue 22, item 4): servers connect in parallel, and building the layer waits for them at most
 * `startupTimeout`. A server that never answers `initialize`, or answers garbage, does not hold back the others (or
 * the built-in tools); it stays "Connecting" in the background with the reason, and closing the scope stops it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as childProcess from "node:child_process"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { awaitStatus, config, fixtureEntry, pollFor, resultText, runtimeLayer, use } from "./helpers.js"

const marker = `startup-test-${process.pid}-${Date.now()}`
const silent = { command: process.execPath, args: ["-e", "setInterval(() => {}, 1000)", marker] }

/** The processes whose command line holds the marker (pgrep exits 1 when none). */
const left = (): string => {
  try {
    return childProcess.execFileSync("pgrep", ["-f", marker], { encoding: "utf8" }).trim()
  } catch {
    return ""
  }
}
const garbage = {
  command: process.execPath,
  args: ["-e", "setInterval(() => process.stdout.write('garbage {\\n'), 50)"]
}

describe("bounded start-up", () => {
  it.live(
    "a silent and a garbage server do not delay the layer (whose connect timeout is a minute); the good one works",
    () =>
      Effect.gen(function*() {
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(
          runtimeLayer(config({ silent, garbage, fixture: fixtureEntry() }), {
            allow: ["mcp__fixture"],
            servers: { connectTimeout: "60 seconds", startupTimeout: "3 seconds" }
          }),
          scope
        )
        const status = yield* Effect.flatMap(McpServers, (servers) => servers.status).pipe(Effect.provide(context))
        const stateOf = (name: string) => status.find((s) => s.name === name)!.state._tag
        expect(stateOf("silent")).toBe("Connecting")
        expect(stateOf("garbage")).toBe("Connecting")
        // The good server is up (now or soon: it connects on its own, whatever the others do); its call works.
        yield* awaitStatus((all) => all.find((s) => s.name === "fixture" && s.state._tag === "Connected")).pipe(
          Effect.provide(context)
        )
        const [outcome] = yield* ToolRuntime.execute([use("mcp__fixture__text", { chars: 3 })]).pipe(
          Effect.provide(context)
        )
        expect(outcome!.status).toBe("success")
        expect(resultText(outcome!.result.content)).toContain("xxx")
        // A call to a server still starting fails at once, naming the server and why, beside a call that works.
        const [silentCall, garbageCall, fixtureCall] = yield* ToolRuntime.execute([
          { ...use("mcp__silent__anything", {}), id: "toolu_silent" },
          { ...use("mcp__garbage__anything", {}), id: "toolu_garbage" },
          { ...use("mcp__fixture__text", { chars: 2 }), id: "toolu_fixture" }
        ]).pipe(Effect.provide(context))
        expect(silentCall!.status).toBe("error")
        expect(resultText(silentCall!.result.content)).toContain(
          "mcp__silent__anything is not available right now: server silent is not connected: "
        )
        expect(garbageCall!.status).toBe("error")
        expect(resultText(garbageCall!.result.content)).toContain("server garbage is not connected: ")
        expect(fixtureCall!.status).toBe("success")
        // A name of no configured server is still an unknown tool.
        const [unknown] = yield* ToolRuntime.execute([use("mcp__nobody__x", {})]).pipe(Effect.provide(context))
        expect(resultText(unknown!.result.content)).toContain("No such tool available")
        expect(left()).not.toBe("")
        yield* Scope.close(scope, Exit.void)
        // Closing the scope stops the server that never answered (not after the minute's connect timeout).
        yield* pollFor(() => (left() === "" ? true : undefined), 5_000)
      }),
    30_000
  )
})
