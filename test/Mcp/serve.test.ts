/**
 * `effect-tool-runtime serve --mcp` (stdio) and `serve --mcp-http 0` (Streamable HTTP), end to end through the built
 * bundle, with the SDK's own `Client`: the tools are listed with schemas and annotations; Read and Grep work; a call
 * a `--deny` rule refuses never runs and the audit log says so; an ask answered through the elicitation form runs,
 * one denied there does not; a long Bash reports progress; a cancelled `sleep` is stopped and leaves no process;
 * two parallel writes to one file never overlap.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanUp, ensureBuilt, processes, run, start, waitUntil, workspace } from "../cli/helpers.js"
import { serve, textOf } from "./serveHelpers.js"
import type { Kind } from "./serveHelpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

const completed = (entries: ReadonlyArray<Record<string, unknown>>, tool: string) =>
  entries.filter((entry) => entry.event === "Completed" && entry.tool === tool)

describe.each<Kind>(["stdio", "http"])("serve over MCP (%s)", (kind) => {
  it("lists the tools with their JSON Schema and static hints", async () => {
    const served = await serve(kind)
    try {
      const { tools } = await served.client.listTools()
      const names = tools.map((tool) => tool.name)
      for (const name of ["Read", "Write", "Edit", "Glob", "Grep", "Bash", "WebFetch"]) expect(names).toContain(name)
      const read = tools.find((tool) => tool.name === "Read")!
      expect(read.inputSchema.type).toBe("object")
      expect(read.inputSchema.required).toEqual(["file_path"])
      expect(read.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false })
      const bash = tools.find((tool) => tool.name === "Bash")!
      expect(bash.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: true })
      expect(tools.find((tool) => tool.name === "Edit")!.annotations).toMatchObject({
        readOnlyHint: false,
        destructiveHint: true
      })
    } finally {
      await served.close()
    }
  }, 30_000)

  it("runs Read and Grep; an unknown tool is a protocol error", async () => {
    const served = await serve(kind)
    try {
      const read = await served.client.callTool({ name: "Read", arguments: { file_path: "a.txt" } })
      expect(read.isError).toBeUndefined()
      expect(textOf(read)).toBe("     1\thello\n     2\tworld")
      const grep = await served.client.callTool({
        name: "Grep",
        arguments: { pattern: "hello", output_mode: "content" }
      })
      expect(textOf(grep)).toContain("b.txt")
      expect(textOf(grep)).toContain("a.txt")
      const invalid = await served.client.callTool({ name: "Read", arguments: { path: "a.txt" } })
      expect(invalid.isError).toBe(true)
      expect(textOf(invalid)).toContain("The required parameter `file_path` is missing")
      await expect(served.client.callTool({ name: "Nope", arguments: {} })).rejects.toThrow(
        "No such tool available: Nope"
      )
    } finally {
      await served.close()
    }
  }, 30_000)

  it("a call a --deny rule refuses never runs, and the audit log shows it", async () => {
    const served = await serve(kind, { args: ["--deny", "Bash(touch *)", "--approve", "allow"] })
    try {
      const result = await served.client.callTool({ name: "Bash", arguments: { command: "touch made.txt" } })
      expect(result.isError).toBe(true)
      expect(result._meta?.["effect-tool-runtime/status"]).toBe("denied")
      expect(fs.existsSync(path.join(served.dir, "made.txt"))).toBe(false)
      await waitUntil("the audit entry", () => completed(served.entries(), "Bash").length === 1)
      expect(completed(served.entries(), "Bash")[0]).toMatchObject({ status: "denied", decision: "Deny" })
      expect(served.entries().some((entry) => entry.event === "Started")).toBe(false)
    } finally {
      await served.close()
    }
  }, 30_000)

  it("an ask answered 'allow once' through elicitation runs; one denied there does not", async () => {
    const asked: Array<string> = []
    let answer = "allow_once"
    const served = await serve(kind, {
      elicit: (message) => {
        asked.push(message)
        return { action: "accept", content: { decision: answer } }
      }
    })
    try {
      const allowed = await served.client.callTool({
        name: "Write",
        arguments: { file_path: "new.txt", content: "made\n" }
      })
      expect(textOf(allowed)).toContain("new.txt")
      expect(fs.readFileSync(path.join(served.dir, "new.txt"), "utf8")).toBe("made\n")
      expect(asked[0]).toContain("Write needs your approval")
      answer = "deny"
      const refused = await served.client.callTool({
        name: "Write",
        arguments: { file_path: "other.txt", content: "no\n" }
      })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain("The user denied Write.")
      expect(fs.existsSync(path.join(served.dir, "other.txt"))).toBe(false)
      expect(asked).toHaveLength(2)
    } finally {
      await served.close()
    }
  }, 30_000)

  it("without elicitation and without --approve, an ask is denied with the reason", async () => {
    const served = await serve(kind)
    try {
      const refused = await served.client.callTool({
        name: "Write",
        arguments: { file_path: "new.txt", content: "x" }
      })
      expect(refused.isError).toBe(true)
      expect(textOf(refused)).toContain("did not declare the elicitation capability")
      expect(fs.existsSync(path.join(served.dir, "new.txt"))).toBe(false)
    } finally {
      await served.close()
    }
  }, 30_000)

  it("a long Bash reports progress to a client that sent a progress token", async () => {
    const served = await serve(kind, { args: ["--allow", "Bash"] })
    try {
      const progress: Array<{ progress: number; message?: string | undefined }> = []
      const result = await served.client.callTool(
        { name: "Bash", arguments: { command: "for i in 1 2 3; do echo line$i; sleep 0.8; done" } },
        CallToolResultSchema,
        { onprogress: (update) => void progress.push(update) }
      )
      expect(textOf(result)).toBe("line1\nline2\nline3")
      expect(progress.length, JSON.stringify(progress)).toBeGreaterThan(0)
      expect(progress.some((update) => update.message?.startsWith("Running for") === true)).toBe(true)
      for (let i = 1; i < progress.length; i++) expect(progress[i]!.progress).toBeGreaterThan(progress[i - 1]!.progress)
    } finally {
      await served.close()
    }
  }, 30_000)

  it("a cancelled sleep is stopped and leaves no process", async () => {
    const served = await serve(kind, { args: ["--allow", "Bash"] })
    const seconds = `${randomInt(100, 999)}.${randomInt(100, 999)}`
    try {
      const controller = new AbortController()
      const call = served.client.callTool(
        { name: "Bash", arguments: { command: `sleep ${seconds}` } },
        CallToolResultSchema,
        { signal: controller.signal }
      )
      await waitUntil("the sleep to start", async () => (await processes(`sleep ${seconds}`)).length > 0)
      controller.abort("changed my mind")
      await expect(call).rejects.toThrow()
      // The outcome is recorded once the call's scope has closed (its process tree killed).
      await waitUntil("the interrupted outcome", () => completed(served.entries(), "Bash").length === 1)
      expect(completed(served.entries(), "Bash")[0]).toMatchObject({ status: "interrupted" })
      expect(await processes(`sleep ${seconds}`)).toEqual([])
      // The connection still serves.
      const read = await served.client.callTool({ name: "Read", arguments: { file_path: "a.txt" } })
      expect(textOf(read)).toContain("hello")
    } finally {
      await served.close()
    }
  }, 30_000)

  it("two parallel writes to one file never overlap; reads beside them still answer", async () => {
    const served = await serve(kind, { args: ["--allow", "Bash"] })
    try {
      const writer = (name: string) =>
        served.client.callTool({
          name: "Bash",
          arguments: { command: `echo ${name}-start >> log.txt; sleep 0.4; echo ${name}-end >> log.txt` }
        })
      const [a, b] = await Promise.all([writer("a"), writer("b")])
      expect(a.isError).toBeUndefined()
      expect(b.isError).toBeUndefined()
      const lines = fs.readFileSync(path.join(served.dir, "log.txt"), "utf8").trim().split("\n")
      // The oracle: each writer's two lines are adjacent (nothing of the other between them).
      expect(lines).toHaveLength(4)
      const first = lines[0]!.split("-")[0]!
      const second = first === "a" ? "b" : "a"
      expect(lines).toEqual([`${first}-start`, `${first}-end`, `${second}-start`, `${second}-end`])
    } finally {
      await served.close()
    }
  }, 30_000)
})

describe("serve over MCP: the command line and the HTTP guard", () => {
  it("--session DIR keeps the stdio session between processes (Read in one, Edit in the next)", async () => {
    const where = workspace()
    const session = path.join(where.dir, "..", "session")
    const first = await serve("stdio", { where, args: ["--session", session] })
    try {
      expect(textOf(await first.client.callTool({ name: "Read", arguments: { file_path: "a.txt" } }))).toContain(
        "hello"
      )
    } finally {
      await first.close()
    }
    const second = await serve("stdio", { where, args: ["--session", session, "--mode", "acceptEdits"] })
    try {
      const edit = await second.client.callTool({
        name: "Edit",
        arguments: { file_path: "a.txt", old_string: "hello", new_string: "bye" }
      })
      expect(edit.isError).toBeUndefined()
      expect(fs.readFileSync(path.join(where.dir, "a.txt"), "utf8")).toBe("bye\nworld\n")
    } finally {
      await second.close()
    }
  }, 30_000)

  it("refuses contradicting flags and a non-loopback address without a token (exit 2, nothing served)", async () => {
    const where = workspace()
    const both = await run(where, ["serve", "--mcp", "--mcp-http", "0"], "")
    expect(both.code).toBe(2)
    expect(both.stderr).toContain("--mcp and --mcp-http exclude each other")
    const open = await run(where, ["serve", "--mcp-http", "0", "--mcp-host", "0.0.0.0"], "")
    expect(open.code).toBe(2)
    expect(open.stderr).toContain("set a bearer token in EFFECT_TOOL_RUNTIME_MCP_TOKEN")
    const port = await run(where, ["serve", "--mcp-http", "http"], "")
    expect(port.code).toBe(2)
    expect(port.stderr).toContain("--mcp-http must be a port number")
  }, 30_000)

  it("with a token, a request without it is refused (401) and one with it is served", async () => {
    const where = workspace()
    process.env["EFFECT_TOOL_RUNTIME_MCP_TOKEN"] = "s3cret-token"
    const running = start(where, ["serve", "--mcp-http", "0"])
    delete process.env["EFFECT_TOOL_RUNTIME_MCP_TOKEN"]
    try {
      await waitUntil("the ready line", () => running.stdout().includes("\n"))
      const { url } = JSON.parse(running.stdout().split("\n")[0]!) as { url: string }
      const refused = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" })
      })
      expect(refused.status).toBe(401)
      // DNS rebinding: a page of another site reaching 127.0.0.1 carries its own Host.
      const rebinding = await new Promise<number | undefined>((resolve, reject) => {
        const request = http.request(url, { method: "POST", headers: { host: "evil.example.com" } }, (response) => {
          response.resume()
          resolve(response.statusCode)
        })
        request.on("error", reject)
        request.end("{}")
      })
      expect(rebinding).toBe(403)
      const client = new Client({ name: "test", version: "1.0.0" })
      await client.connect(
        new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { authorization: "Bearer s3cret-token" } }
        })
      )
      const read = await client.callTool({ name: "Read", arguments: { file_path: "a.txt" } })
      expect(textOf(read)).toContain("hello")
      await client.close()
    } finally {
      running.child.kill("SIGTERM")
      const finished = await running.finished
      expect(finished.code).toBe(143)
    }
  }, 30_000)
})
