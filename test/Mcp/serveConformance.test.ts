/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.12) runs every server scenario (suite "all")
 * against a fixture server built on `McpServe` (test/Mcp/conformance/server.ts), over Streamable HTTP on 127.0.0.1.
 * The scenarios it must fail, each with the reason, are in test/Mcp/conformance/expected-failures.yml: the suite
 * exits non-zero for a failure not listed there and for a listed one that passes.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { cleanUp, tempDir } from "../cli/helpers.js"

const require = createRequire(import.meta.url)
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`))
const SUITE = path.join(packageDir("@modelcontextprotocol/conformance"), "dist/index.js")
const SERVER = path.join(import.meta.dirname, "conformance/server.ts")
const EXPECTED = path.join(import.meta.dirname, "conformance/expected-failures.yml")

afterAll(cleanUp)

interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED"
}

const run = (command: string, args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, output }))
  })

describe("MCP conformance suite, server scenarios", () => {
  it("passes every scenario but the expected failures", async () => {
    const server = spawn(process.execPath, ["--import", "tsx", SERVER], { stdio: ["ignore", "pipe", "inherit"] })
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = ""
        server.stdout.on("data", (chunk: Buffer) => {
          out += chunk.toString()
          if (out.includes("\n")) resolve(out.split("\n")[0]!)
        })
        server.on("close", () => reject(new Error("the fixture server exited")))
      })
      const out = tempDir("mcp-conformance-server")
      const { code, output } = await run(process.execPath, [
        SUITE,
        "server",
        "--url",
        url,
        "--suite",
        "all",
        "--expected-failures",
        EXPECTED,
        "-o",
        out
      ])
      expect(output).toContain("Baseline check passed")
      expect(code).toBe(0)
      const checks = (scenario: string): ReadonlyArray<Check> => {
        const [dir] = fs.readdirSync(out).filter((name) => name.startsWith(`server-${scenario}-`))
        return JSON.parse(fs.readFileSync(path.join(out, dir!, "checks.json"), "utf8")) as ReadonlyArray<Check>
      }
      // The scenarios that pass did check something.
      for (
        const scenario of [
          "server-initialize",
          "tools-list",
          "tools-call-simple-text",
          "tools-call-image",
          "tools-call-error",
          "tools-call-with-progress",
          "tools-call-with-logging",
          "dns-rebinding-protection"
        ]
      ) {
        const found = checks(scenario)
        expect(found.filter((check) => check.status === "SUCCESS").length, scenario).toBeGreaterThan(0)
        expect(found.filter((check) => check.status === "FAILURE"), scenario).toEqual([])
      }
    } finally {
      server.kill("SIGTERM")
    }
  }, 120_000)
})
