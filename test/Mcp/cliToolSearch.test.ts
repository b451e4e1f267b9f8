/**
 * Tool search from the command line, end to end (the CLI's source through tsx, as child processes): an MCP server of
 * many tools is deferred behind ToolSearch in `tools`, `exec` and `serve`; a call before loading is refused with the
 * library's message; ToolSearch loads the tool; a later `exec` on the same `--session` calls it.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { notLoadedMessage } from "../../src/Catalog/ToolCatalog.js"
import { tempDir } from "./helpers.js"

const require = createRequire(import.meta.url)
const TSX = path.join(path.dirname(require.resolve("tsx/package.json")), "dist/cli.mjs")
const MAIN = path.join(import.meta.dirname, "../../src/cli/main.ts")
const MANY = path.join(import.meta.dirname, "fixtures/many.mjs")

const cli = (cwd: string, args: ReadonlyArray<string>, stdin?: string, env: NodeJS.ProcessEnv = {}) =>
  new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [TSX, MAIN, ...args],
      { cwd, timeout: 60_000, env: { ...process.env, ENABLE_TOOL_SEARCH: "", ...env } },
      (error, stdout, stderr) =>
        error === null ? resolve({ stdout, stderr }) : reject(new Error(`${error.message}\n${stderr}`))
    )
    if (stdin !== undefined) child.stdin!.end(stdin)
  })

const project = () => {
  const dir = tempDir("cli-search")
  fs.writeFileSync(
    path.join(dir, "many.json"),
    JSON.stringify({ mcpServers: { many: { command: process.execPath, args: [MANY] } } })
  )
  return dir
}

interface ExecOut {
  readonly results: ReadonlyArray<{ readonly content: unknown; readonly is_error?: boolean }>
  readonly outcomes: ReadonlyArray<{ readonly status: string }>
}

const use = (id: string, name: string, input: unknown) => ({ type: "tool_use", id, name, input })

describe("tool search from the CLI", () => {
  it("tools: the MCP server's tools are announced by name, ToolSearch is sent, the built-ins in full", async () => {
    const dir = project()
    const { stdout } = await cli(dir, ["tools", "--mcp-config", "many.json", "--with-announcement"])
    const out = JSON.parse(stdout) as {
      tools: ReadonlyArray<{ name: string }>
      announcement: string | null
    }
    const names = out.tools.map((tool) => tool.name)
    expect(names).toContain("ToolSearch")
    expect(names).toContain("Read")
    expect(names.filter((name) => name.startsWith("mcp__"))).toEqual([])
    expect(out.announcement).toContain("mcp__many__: ")
    expect(out.announcement).toContain("get_forecast")
    expect(out.announcement).toContain("number_59")

    // Without MCP servers nothing is deferred, so no ToolSearch; with --tool-search off every tool is sent.
    const plain = JSON.parse((await cli(dir, ["tools"])).stdout) as ReadonlyArray<{ name: string }>
    expect(plain.map((tool) => tool.name)).not.toContain("ToolSearch")
    const off = JSON.parse(
      (await cli(dir, ["tools", "--mcp-config", "many.json", "--tool-search", "off"])).stdout
    ) as ReadonlyArray<{ name: string }>
    expect(off.map((tool) => tool.name)).toContain("mcp__many__get_forecast")
    expect(off.map((tool) => tool.name)).not.toContain("ToolSearch")
  }, 120_000)

  it("exec: refused before loading, found by ToolSearch, then run by a later exec on the same --session", async () => {
    const dir = project()
    const session = path.join(tempDir("cli-search-session"), "s")
    const args = ["exec", "--mcp-config", "many.json", "--session", session, "--allow", "mcp__many"]
    const call = JSON.stringify([use("toolu_1", "mcp__many__get_forecast", { city: "Oslo" })])

    const before = JSON.parse((await cli(dir, args, call)).stdout) as ExecOut
    expect(before.outcomes[0]?.status).toBe("error")
    expect(before.results[0]?.content).toBe(
      `<tool_use_error>${notLoadedMessage("mcp__many__get_forecast")}</tool_use_error>`
    )

    const search = JSON.stringify([use("toolu_2", "ToolSearch", { query: "weather forecast" })])
    const found = JSON.parse((await cli(dir, args, search)).stdout) as ExecOut
    expect(found.outcomes[0]?.status).toBe("success")
    expect(found.results[0]?.content).toEqual([{ type: "tool_reference", tool_name: "mcp__many__get_forecast" }])

    const after = JSON.parse((await cli(dir, args, call)).stdout) as ExecOut
    expect(after.outcomes[0]?.status).toBe("success")
    expect(after.results[0]?.content).toBe("Oslo: sunny all week")

    // A fresh session has not loaded it.
    const fresh = JSON.parse(
      (await cli(dir, ["exec", "--mcp-config", "many.json", "--allow", "mcp__many"], call)).stdout
    ) as ExecOut
    expect(fresh.outcomes[0]?.status).toBe("error")
    // And with --tool-search off nothing waits behind a search.
    const off = JSON.parse(
      (await cli(dir, ["exec", "--mcp-config", "many.json", "--allow", "mcp__many", "--tool-search", "off"], call))
        .stdout
    ) as ExecOut
    expect(off.results[0]?.content).toBe("Oslo: sunny all week")
  }, 180_000)

  it(
    "serve: a tools line after ready and after a turn that loaded a tool; the loaded tool runs in the next turn",
    async () => {
      const dir = project()
      const child = spawn(
        process.execPath,
        [TSX, MAIN, "serve", "--mcp-config", "many.json", "--allow", "mcp__many", "--no-claude-settings"],
        { cwd: dir, env: { ...process.env, ENABLE_TOOL_SEARCH: "" }, stdio: ["pipe", "pipe", "pipe"] }
      )
      let buffer = ""
      const lines: Array<Record<string, unknown>> = []
      const waiters: Array<() => void> = []
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
        buffer += chunk
        let end: number
        while ((end = buffer.indexOf("\n")) !== -1) {
          lines.push(JSON.parse(buffer.slice(0, end)) as Record<string, unknown>)
          buffer = buffer.slice(end + 1)
          for (const wake of waiters.splice(0)) wake()
        }
      })
      const next = (test: (line: Record<string, unknown>) => boolean, from = 0) =>
        new Promise<Record<string, unknown>>((resolve) => {
          const look = () => {
            const found = lines.slice(from).find(test)
            if (found !== undefined) resolve(found)
            else waiters.push(look)
          }
          look()
        })
      const closed = new Promise<number | null>((resolve) => child.on("close", resolve))
      try {
        const first = await next((line) => line.type === "tools")
        expect(first.included).toContain("ToolSearch")
        expect(first.deferred).toContain("mcp__many__get_forecast")
        expect(first.announcement).toContain("mcp__many__: ")

        child.stdin.write(
          `${
            JSON.stringify({
              type: "turn",
              id: "t1",
              tool_uses: [use("s1", "ToolSearch", { query: "select:mcp__many__get_forecast" })]
            })
          }\n`
        )
        await next((line) => line.type === "result" && line.turn === "t1")
        const mark = lines.length
        const second = await next(
          (line) => line.type === "tools",
          lines.findIndex((line) => line.turn === "t1" && line.type === "result")
        )
        expect(second.included).toContain("mcp__many__get_forecast")
        expect(second.deferred).not.toContain("mcp__many__get_forecast")

        child.stdin.write(
          `${
            JSON.stringify({
              type: "turn",
              id: "t2",
              tool_uses: [use("c1", "mcp__many__get_forecast", { city: "Rome" })]
            })
          }\n`
        )
        const result = await next((line) => line.type === "result" && line.turn === "t2", mark)
        expect((result.results as ReadonlyArray<{ content: unknown }>)[0]?.content).toBe("Rome: sunny all week")
        // Nothing changed in t2: no third tools line.
        child.stdin.end()
        expect(await closed).toBe(0)
        expect(lines.filter((line) => line.type === "tools")).toHaveLength(2)
      } finally {
        child.kill("SIGKILL")
      }
    },
    120_000
  )
})
