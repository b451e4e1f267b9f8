import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { program } from "../examples/mcp.js"

describe("README: MCP servers", () => {
  const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")

  it("shows examples/mcp.ts verbatim, so the example it shows type-checks", () => {
    const example = fs.readFileSync(path.join(__dirname, "..", "examples", "mcp.ts"), "utf8")
    const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])
    expect(blocks).toContain(example)
  })

  it.live(
    "the example runs: echo is allowed by its rule, a bad input gets the built-in wording",
    () =>
      Effect.gen(function*() {
        const result = yield* program
        expect(result.state).toBe("Connected")
        expect(result.echo).toEqual({ type: "tool_result", tool_use_id: "toolu_1", content: "Echo: hi" })
        expect(result.sum.is_error).toBe(true)
        // The README shows the results it gets.
        expect(readme).toContain(JSON.stringify(result.echo.content))
        expect(readme).toContain(String(result.sum.content).split("\n")[1]!.replace("</tool_use_error>", ""))
      }),
    30_000
  )
})
