/**
 * The language servers from the command line, through the built binary: `exec --lsp-config FILE` answers an LSP
 * tool_use from the real typescript-language-server, and in `--diagnostics inline` an Edit that introduces a type
 * error carries the diagnostic in its own tool_result. A project's own `.lsp.json` starts nothing untrusted.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { positionOf, serverEntries } from "../Lsp/support.js"
import type { ExecOutput } from "./helpers.js"
import { cleanUp, ensureBuilt, root, run, tempDir } from "./helpers.js"

beforeAll(ensureBuilt, 300_000)
afterAll(cleanUp)

const project = () => {
  const base = tempDir("etr-lsp")
  const dir = path.join(base, "ws")
  const home = path.join(base, "home")
  const tmp = path.join(base, "tmp")
  for (const d of [home, tmp]) fs.mkdirSync(d)
  fs.cpSync(path.join(root, "test/fixtures/lsp-ts"), dir, { recursive: true })
  const config = path.join(base, "lsp.json")
  fs.writeFileSync(config, JSON.stringify({ typescript: serverEntries("LSP_TEST_MARKER=cli").typescript }))
  return { where: { dir, home, tmp }, config }
}

const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })

describe("exec with language servers", () => {
  it("--lsp-config: an LSP goToDefinition answers with the declaration's place", async () => {
    const { config, where } = project()
    const at = positionOf(where.dir, "src/main.ts", "totalArea([")
    const result = await run(where, ["exec", "--no-claude-settings", "--tool-search", "off", "--lsp-config", config], [
      use("toolu_1", "LSP", {
        operation: "goToDefinition",
        filePath: "src/main.ts",
        line: at.line,
        character: at.character
      })
    ])
    expect(result.code).toBe(0)
    const output = JSON.parse(result.stdout) as ExecOutput
    expect(output.results[0]!.content).toContain(`  ${positionOf(where.dir, "src/shapes.ts", "totalArea(shapes").at}:`)
  }, 120_000)

  it("--diagnostics inline: the Edit that breaks the types gets the error in its tool_result", async () => {
    const { config, where } = project()
    const file = path.join(where.dir, "src/main.ts")
    const result = await run(where, [
      "exec",
      "--no-claude-settings",
      "--approve",
      "allow",
      "--lsp-config",
      config,
      "--diagnostics",
      "inline",
      "--tool-search",
      "off"
    ], [
      use("toolu_1", "LSP", { operation: "documentSymbol", filePath: file, line: 1, character: 1 }),
      use("toolu_2", "Read", { file_path: file }),
      use("toolu_3", "Edit", { file_path: file, old_string: "const total: number", new_string: "const total: string" })
    ])
    expect(result.code).toBe(0)
    const output = JSON.parse(result.stdout) as ExecOutput
    const edit = output.results[2]!
    expect(edit.is_error).toBeUndefined()
    const at = positionOf(where.dir, "src/main.ts", "total: string")
    expect(edit.content).toContain("<new-diagnostics>")
    expect(edit.content).toContain(
      `[Line ${at.line}:${at.character}] Type 'number' is not assignable to type 'string'.`
    )
  }, 120_000)

  it("the project's own .lsp.json starts nothing until the project is trusted, and the tool says why", async () => {
    const { config, where } = project()
    fs.copyFileSync(config, path.join(where.dir, ".lsp.json"))
    const result = await run(where, ["exec", "--no-claude-settings", "--tool-search", "off"], [
      use("toolu_1", "LSP", { operation: "hover", filePath: "src/main.ts", line: 1, character: 10 })
    ])
    const output = JSON.parse(result.stdout) as ExecOutput
    expect(output.results[0]!.is_error).toBe(true)
    expect(output.results[0]!.content).toContain("is configured by the repository")
    expect(output.results[0]!.content).toContain("--trust-project")
  }, 120_000)
})
