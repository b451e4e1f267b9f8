/**
 * Progress from an MCP server reaches whatever receives the run's events (its events stream, the audit log), and a
 * call nobody would hear progress from asks its server for none: its request carries no progress token, as the raw
 * SDK client's does not.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { AuditLog } from "../../src/Runtime/AuditLog.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { config, everythingEntry, fixtureEntry, resultText, runtimeLayer, use } from "./helpers.js"

const PROBE = "mcp__fixture__progress_probe"
const LONG = "mcp__everything__trigger-long-running-operation"

describe("progress from an MCP server", () => {
  const layer = runtimeLayer(
    config({ fixture: fixtureEntry({ PROGRESS_PROBE: "1" }), everything: everythingEntry() }),
    { allow: ["mcp__fixture", "mcp__everything"] }
  )

  it.live("a started run asks for progress (its events stream may carry it)", () =>
    Effect.gen(function*() {
      const handle = yield* ToolRuntime.start([use(PROBE, {})])
      yield* Stream.runDrain(handle.events)
      const [outcome] = yield* handle.await
      expect(resultText(outcome?.result.content)).toBe("progress token")
    }).pipe(Effect.scoped, Effect.provide(layer)), 30_000)

  it.live("a call with an audit log asks for progress, and the log records it", () => {
    const audit = AuditLog.layerMemory("s-progress")
    return Effect.gen(function*() {
      const runtime = yield* ToolRuntime
      const probe = yield* runtime.executeOne(use(PROBE, {}))
      expect(resultText(probe.result.content)).toBe("progress token")
      const long = yield* runtime.executeOne(use(LONG, { duration: 0.6, steps: 3 }))
      expect(long.status).toBe("success")
      const progress = (yield* audit.entries).filter((entry) => entry.event === "Progress").map((entry) => entry.audit)
      // The last notification may be lost over stdio (the result is the completion): at least the first two arrive.
      expect(progress.length).toBeGreaterThanOrEqual(2)
      expect(progress.slice(0, 2)).toEqual(["1/3", "2/3"])
    }).pipe(Effect.provide(layer), Effect.provide(audit.layer))
  }, 30_000)

  it.live(
    "a call nothing listens to (execute, executeOne, no audit log) asks for no progress",
    () =>
      Effect.gen(function*() {
        const [inTurn] = yield* ToolRuntime.execute([use(PROBE, {})])
        const alone = yield* (yield* ToolRuntime).executeOne(use(PROBE, {}))
        expect(resultText(inTurn?.result.content)).toBe("no progress token")
        expect(resultText(alone.result.content)).toBe("no progress token")
      }).pipe(Effect.provide(layer)),
    30_000
  )
})
