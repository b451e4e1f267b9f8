/**
 * A stdio server that answers a call with a line that is not JSON-RPC (the real answer never comes): the call fails
 * at once with that reason, not after its timeout; the connection stays up and the next call works.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { config, fixtureEntry, resultText, runtimeLayer, use } from "./helpers.js"

describe("a malformed answer", () => {
  it.live(
    "fails the running call with the reason, well before its timeout; the server keeps serving",
    () =>
      Effect.gen(function*() {
        const started = Date.now()
        const [garbled] = yield* ToolRuntime.execute([use("mcp__fixture__garbled", {})])
        const elapsed = Date.now() - started
        expect(garbled?.status).toBe("error")
        expect(resultText(garbled?.result.content)).toMatch(
          /MCP server "fixture" sent a message that is not valid JSON-RPC while garbled was running \(.+\)/
        )
        // The tool's timeout is two minutes (the default): it did not wait for it.
        expect(elapsed).toBeLessThan(60_000)
        const [next] = yield* ToolRuntime.execute([use("mcp__fixture__text", { chars: 3 })])
        expect(next?.status).toBe("success")
        expect(resultText(next?.result.content)).toContain("xxx")
      }).pipe(
        Effect.provide(
          runtimeLayer(config({ fixture: fixtureEntry({ GARBLED: "1" }) }), { allow: ["mcp__fixture"] })
        )
      ),
    90_000
  )
})
