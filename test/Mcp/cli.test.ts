/**
 * MCP on the command line, end to end (the CLI's source through tsx, as a child process): `mcp list`, the project's
 * `.mcp.json` only when trusted, `--mcp-config` files, and an MCP call through `exec`.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { EVERYTHING, tempDir } from "./helpers.js"

const require = createRequire(import.meta.url)
const TSX = path.join(path.dirname(require.resolve("tsx/package.json")), "dist/cli.mjs")
const MAIN = path.join(import.meta.dirname, "../../src/cli/main.ts")

const cli = (cwd: string, args: ReadonlyArray<string>, stdin?: string) =>
  new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [TSX, MAIN, ...args],
      { cwd, timeout: 60_000 },
      (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(new Error(`${error.message}\n${stderr}`))
    )
    if (stdin !== undefined) child.stdin!.end(stdin)
  })

const project = () => {
  const dir = tempDir("mcp-cli")
  const entry = { command: process.execPath, args: [EVERYTHING, "stdio"] }
  fs.writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { repo: entry } }))
  fs.writeFileSync(
    path.join(dir, "mine.json"),
    JSON.stringify({ mcpServers: { mine: entry, broken: { type: "http" } } })
  )
  return dir
}

describe("CLI", () => {
  it("mcp list: the project's servers wait for trust, named files start, bad entries are reported", async () => {
    const dir = project()
    const { stdout } = await cli(dir, ["mcp", "list", "--mcp-config", "mine.json"])
    const lines = stdout.split("\n")
    expect(lines.find((l) => l.startsWith("repo "))).toMatch(/not started: .*\.mcp\.json is not trusted/)
    expect(lines.find((l) => l.startsWith("mine "))).toMatch(/^mine {2}stdio {2}connected \(pid \d+\)/)
    expect(lines).toContain("  mcp__mine__echo")
    expect(lines.find((l) => l.startsWith("error: "))).toMatch(/mine\.json: server "broken", field url: is missing/)

    const trusted = await cli(dir, ["mcp", "list", "--trust-project"])
    expect(trusted.stdout.split("\n").find((l) => l.startsWith("repo "))).toMatch(/connected/)
  }, 60_000)

  it("exec runs an MCP call from a --mcp-config server under the usual rules", async () => {
    const dir = project()
    const input = JSON.stringify([{
      type: "tool_use",
      id: "toolu_cli",
      name: "mcp__mine__echo",
      input: { message: "from the cli" }
    }])
    // Without a search first (see cliToolSearch.test.ts): every tool is sent.
    const { stdout } = await cli(
      dir,
      ["exec", "--mcp-config", "mine.json", "--allow", "mcp__mine__echo", "--tool-search", "off"],
      input
    )
    const out = JSON.parse(stdout) as { results: Array<{ content: unknown }>; outcomes: Array<{ status: string }> }
    expect(out.outcomes[0]?.status).toBe("success")
    expect(out.results[0]?.content).toBe("Echo: from the cli")
  }, 60_000)

  it("a --mcp-config file that does not exist is a usage error", async () => {
    await expect(cli(tempDir("mcp-cli"), ["mcp", "list", "--mcp-config", "nope.json"])).rejects.toThrow(
      /--mcp-config file not found: nope\.json/
    )
  }, 60_000)
})
