import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { program } from "../examples/readme.js"

describe("README", () => {
  it("shows examples/readme.ts verbatim, so the example it shows type-checks", () => {
    const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")
    const example = fs.readFileSync(path.join(__dirname, "..", "examples", "readme.ts"), "utf8")
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(example)
  })

  it.effect("the two-turn session loop runs: Read in the first turn, Edit in the second, with the results the README shows", () =>
    Effect.gen(function*() {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "etr-readme-"))
      fs.writeFileSync(path.join(cwd, "notes.txt"), "a draft\n")
      const [[read], [edit]] = (yield* program(cwd)) as unknown as [[{ content: string }], [{ content: string; is_error?: true }]]
      const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")
      expect(read.content).toBe("     1\ta draft")
      expect(edit.is_error).toBeUndefined()
      expect(readme).toContain(JSON.stringify(edit.content))
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("a final\n")
      fs.rmSync(cwd, { recursive: true, force: true })
    }))
})
