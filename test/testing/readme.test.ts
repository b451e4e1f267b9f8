import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"

describe("README: testing your own tools", () => {
  it("shows test/testing/kit.test.ts verbatim, so the snippet it shows is the one the suite runs", () => {
    const readme = fs.readFileSync(path.join(__dirname, "..", "..", "README.md"), "utf8")
    const snippet = fs.readFileSync(path.join(__dirname, "kit.test.ts"), "utf8")
    expect(readme).toContain("```ts\n" + snippet + "```")
    expect(snippet.trimEnd().split("\n").length).toBeLessThan(20)
  })
})
