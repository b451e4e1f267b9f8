import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { program } from "../examples/toolsearch.js"

describe("README: tool definitions and ToolSearch", () => {
  const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")

  it("shows examples/toolsearch.ts verbatim, so the example it shows type-checks", () => {
    const example = fs.readFileSync(path.join(__dirname, "..", "examples", "toolsearch.ts"), "utf8")
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])
    expect(blocks).toContain(example)
  })

  it.effect("the example runs: the tool is announced, found, sent and called", () =>
    Effect.gen(function*() {
      const result = yield* program
      expect(result.first).toEqual(["ToolSearch"])
      expect(result.announced).toEqual(["mcp__weather__get_forecast"])
      expect(result.search).toEqual({
        type: "tool_result",
        tool_use_id: "toolu_1",
        content: [{ type: "tool_reference", tool_name: "mcp__weather__get_forecast" }]
      })
      expect(result.next).toEqual(["mcp__weather__get_forecast", "ToolSearch"])
      expect(result.forecast).toEqual({ type: "tool_result", tool_use_id: "toolu_2", content: "Oslo: sunny" })
      // The README shows the result it gets.
      expect(readme).toContain(JSON.stringify(result.search.content))
    }))
})
