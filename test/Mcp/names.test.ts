/**
 * Model-facing MCP tool names: valid for every provider, unique, stable whatever order the server lists its tools.
 */
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { assignNames } from "../../src/Mcp/internal/names.js"

const toolName = FastCheck.string({
  unit: FastCheck.constantFrom("a", "b", ".", "-", "_", " ", "é", "/"),
  minLength: 1,
  maxLength: 80
})
const serverName = FastCheck.string({ unit: FastCheck.constantFrom("s", "v", ".", "-"), minLength: 1, maxLength: 60 })

describe("MCP tool names", () => {
  it.prop(
    "are valid provider names, unique, the plain mcp__server__tool when that fits, and independent of listing order",
    [
      serverName,
      FastCheck.uniqueArray(toolName, { maxLength: 12 }),
      FastCheck.integer({ min: 0, max: 1000 })
    ],
    ([server, tools, seed]) => {
      const { names } = assignNames(server, tools)
      const all = tools.map((tool) => names.get(tool)!)
      for (const name of all) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/)
      expect(new Set(all).size).toBe(tools.length)
      // Plain-words oracle: the first (by sorted original name) holder of a sanitised name that fits keeps it.
      const seen = new Set<string>()
      for (const tool of [...tools].sort()) {
        const plain = `mcp__${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, "_")
        if (plain.length <= 64 && !seen.has(plain)) expect(names.get(tool)).toBe(plain)
        seen.add(plain)
      }
      const shuffled = [...tools].sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7))
      const again = assignNames(server, shuffled).names
      for (const tool of tools) expect(again.get(tool)).toBe(names.get(tool))
    }
  )

  it("reports what it had to rename, and why", () => {
    const { names, renamed } = assignNames("srv", ["a.b", "a_b", "x".repeat(70)])
    expect(names.get("a.b")).toBe("mcp__srv__a_b")
    expect(names.get("a_b")).toMatch(/^mcp__srv__a_b_[0-9a-f]{8}$/)
    expect(names.get("x".repeat(70))).toMatch(/^mcp__srv__x+_[0-9a-f]{8}$/)
    expect(names.get("x".repeat(70))).toHaveLength(64)
    expect(renamed.map((r) => [r.tool.slice(0, 3), r.reason])).toEqual([["a_b", "collision"], ["xxx", "too long"]])
  })
})
