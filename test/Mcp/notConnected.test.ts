/**
 * Errors true to what happened: a tool of an MCP server that is not connected (its program does not exist, so it
 * never starts) says "server X is not connected: <reason>", never "No such tool available"; a name of no server
 * still gets the unknown-tool answer.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { config, resultText, runtimeLayer, use } from "./helpers.js"

describe("a tool of a server that is not connected", () => {
  it.live("says the server is not connected, and why", () =>
    Effect.gen(function*() {
      const [down, unknown] = yield* ToolRuntime.execute([
        use("mcp__broken__search", { q: "x" }),
        use("mcp__nobody__search", {})
      ]).pipe(
        Effect.provide(
          runtimeLayer(config({ broken: { command: "/nonexistent/mcp-server", args: [] } }), {
            servers: { maxRestarts: 0 }
          })
        )
      )
      expect(down?.status).toBe("error")
      expect(resultText(down?.result.content)).toMatch(
        /mcp__broken__search is not available right now: server broken is not connected: .*(ENOENT|nonexistent)/
      )
      expect(resultText(down?.result.content)).not.toMatch(/No such tool/)
      expect(resultText(unknown?.result.content)).toMatch(/No such tool available: mcp__nobody__search/)
    }), 30_000)
})
