/**
 * An MCP tool's definition: the server's JSON Schema in every provider shape, `_meta` mapped to loading and
 * searchHint, deferred by default, the description capped.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Definitions from "../../src/Catalog/Definitions.js"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { adapt, MAX_DESCRIPTION } from "../../src/Mcp/internal/adapt.js"
import { config, fixtureEntry, runtimeLayer } from "./helpers.js"

describe("MCP tool definitions", () => {
  it.live(
    "carry the server's schema in every provider shape, and _meta's alwaysLoad and searchHint",
    () =>
      Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const strict = registry.lookup("mcp__fixture__strict")
        const slow = registry.lookup("mcp__fixture__slow")
        if (strict._tag === "None" || slow._tag === "None") return yield* Effect.die("fixture tools missing")
        expect(strict.value.definition.loading).toBe("always")
        expect(strict.value.definition.searchHint).toBe("checking validation")
        expect(slow.value.definition.loading).toBe("deferred")
        const properties = {
          mode: { enum: ["fast", "slow"] },
          count: { type: "integer" },
          tags: { type: "array", items: { type: "string" } }
        }
        const anthropic = Definitions.anthropic(strict.value.definition)
        expect(anthropic).toMatchObject({
          name: "mcp__fixture__strict",
          description: "Checks its input strictly.",
          input_schema: { type: "object", properties, required: ["mode"] }
        })
        expect(JSON.stringify(anthropic)).not.toContain("$schema")
        for (const provider of Definitions.providers) {
          const shape = JSON.stringify(
            Definitions.forProvider(provider, [strict.value.definition, slow.value.definition], { strict: true })
          )
          expect(shape).toContain("\"fast\"")
          expect(shape).toContain("mcp__fixture__strict")
        }
      }).pipe(Effect.provide(runtimeLayer(config({ fixture: fixtureEntry() })))),
    30_000
  )

  it("a description over 2,048 characters is capped", () => {
    const server = config({ s: { command: "x" } }).servers[0]!
    const tool = adapt(
      server,
      { name: "t", description: "d".repeat(5_000), inputSchema: { type: "object" } },
      "mcp__s__t",
      () => Effect.die("not called")
    )
    expect(tool.definition.description).toHaveLength(MAX_DESCRIPTION)
  })
})
