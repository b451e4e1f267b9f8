/**
 * `npm start` runs examples/demo.ts: the agent loop against the scripted Messages server, with the built-in tools and
 * an MCP server. This runs it as `npm start` does (a real child process) and checks the whole loop happened.
 */
import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import * as path from "node:path"

describe("npm start", () => {
  it("plays the whole loop: three requests, every call governed, the results sent back, the model's answer", () => {
    const root = path.join(__dirname, "..")
    const output = execFileSync(process.execPath, [
      path.join(root, "node_modules", "tsx", "dist", "cli.mjs"),
      "examples/demo.ts"
    ], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, ANTHROPIC_API_KEY: "" }
    })
    expect(output).toContain("━━ request 1 to the model")
    expect(output).toContain("━━ request 3 to the model")
    expect(output).toContain("⊘ Read denied — deny: the user: Not now, please.")
    expect(output).toContain("✓ mcp__everything__echo success")
    expect(output).toContain("[toolu_06] The file src/greet.ts has been updated (1 replacement, line 2).")
    expect(output).toContain("━━ the model ended its turn (end_turn) after 3 requests")
    expect(output).toContain("export const welcome = (name: string): string => {\n  return `Hello, ${name}!`\n}")
  }, 90_000)
})
