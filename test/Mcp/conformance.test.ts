/**
 * The MCP conformance suite (@modelcontextprotocol/conformance 0.1.12) runs its client scenarios `initialize` and
 * `tools_call` against this library's client (test/Mcp/conformance/client.ts), over Streamable HTTP on localhost.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { tempDir } from "./helpers.js"

const require = createRequire(import.meta.url)
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`))
const SUITE = path.join(packageDir("@modelcontextprotocol/conformance"), "dist/index.js")
const TSX = path.join(packageDir("tsx"), "dist/cli.mjs")
const CLIENT = path.join(import.meta.dirname, "conformance/client.ts")

interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED"
}

const runScenario = (scenario: string) =>
  new Promise<{ code: number; output: string; checks: ReadonlyArray<Check> }>((resolve) => {
    const out = tempDir(`mcp-conformance-${scenario}`)
    const command = [process.execPath, TSX, CLIENT].join(" ")
    execFile(process.execPath, [SUITE, "client", "--command", command, "--scenario", scenario, "-o", out], {
      timeout: 90_000
    }, (error, stdout, stderr) => {
      const [run] = fs.readdirSync(out)
      const checks = run === undefined
        ? []
        : JSON.parse(fs.readFileSync(path.join(out, run, "checks.json"), "utf8")) as ReadonlyArray<Check>
      resolve({
        code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
        output: `${stdout}\n${stderr}`,
        checks
      })
    })
  })

describe("MCP conformance suite, client scenarios", () => {
  for (const scenario of ["initialize", "tools_call"]) {
    it(`${scenario} passes`, async () => {
      const { checks, code, output } = await runScenario(scenario)
      expect(output).toContain("OVERALL: PASSED")
      expect(code).toBe(0)
      expect(checks.filter((check) => check.status === "FAILURE")).toEqual([])
      expect(checks.filter((check) => check.status === "SUCCESS").length).toBeGreaterThan(0)
    }, 120_000)
  }
})
