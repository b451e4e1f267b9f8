import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { program } from "../examples/readme.js"

describe("README", () => {
  it("shows examples/readme.ts verbatim, so the example it shows type-checks", () => {
    const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")
    const example = fs.readFileSync(path.join(__dirname, "..", "examples", "readme.ts"), "utf8")
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(example)
  })

  it.effect("the example runs and the second call gets the error text the README shows", () =>
    Effect.gen(function*() {
      const [first, second] = yield* program
      expect(first).toEqual({ type: "tool_result", tool_use_id: "toolu_1", content: "-3" })
      expect(second?.is_error).toBe(true)
      const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")
      expect(readme).toContain(second?.content as string)
    }))
})
