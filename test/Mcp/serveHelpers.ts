/**
 * The built CLI's `serve --mcp` (stdio) and `serve --mcp-http 0` (Streamable HTTP) with the SDK's own `Client`, in
 * a fresh workspace (home and TMPDIR of its own) with an audit log.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import type { ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import * as fs from "node:fs"
import * as path from "node:path"
import { bin, start, waitUntil, workspace } from "../cli/helpers.js"

export type Kind = "stdio" | "http"

export interface Served {
  readonly client: Client
  readonly dir: string
  readonly audit: string
  /** The audit log's entries so far. */
  readonly entries: () => ReadonlyArray<Record<string, unknown>>
  readonly close: () => Promise<void>
}

export interface ServeOptions {
  readonly args?: ReadonlyArray<string>
  /** Answers the approval forms; without it the client does not declare elicitation. */
  readonly elicit?: (message: string) => ElicitResult
  /** The workspace (default: a fresh one). */
  readonly where?: ReturnType<typeof workspace>
}

export const serve = async (kind: Kind, options: ServeOptions = {}): Promise<Served> => {
  const where = options.where ?? workspace()
  const audit = path.join(where.dir, "..", "audit.jsonl")
  const args = ["serve", "--cwd", where.dir, "--audit", audit, ...(options.args ?? [])]
  const client = new Client(
    { name: "test", version: "1.0.0" },
    { capabilities: options.elicit === undefined ? {} : { elicitation: { form: {} } } }
  )
  if (options.elicit !== undefined) {
    const answer = options.elicit
    client.setRequestHandler(ElicitRequestSchema, (request) => answer(request.params.message))
  }
  let stop: () => Promise<void>
  if (kind === "stdio") {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bin, ...args, "--mcp"],
      cwd: where.dir,
      env: { ...process.env, HOME: where.home, TMPDIR: where.tmp } as Record<string, string>,
      stderr: "pipe"
    })
    await client.connect(transport)
    stop = () => client.close()
  } else {
    const running = start(where, [...args, "--mcp-http", "0"])
    await waitUntil("the ready line", () => running.stdout().includes("\n"))
    const ready = JSON.parse(running.stdout().split("\n")[0]!) as { url: string }
    await client.connect(new StreamableHTTPClientTransport(new URL(ready.url)))
    stop = async () => {
      await client.close()
      running.child.kill("SIGTERM")
      await running.finished
    }
  }
  const entries = () =>
    fs.existsSync(audit)
      ? fs.readFileSync(audit, "utf8").split("\n").filter((line) => line !== "").map((line) =>
        JSON.parse(line) as Record<string, unknown>
      )
      : []
  return { client, dir: where.dir, audit, entries, close: () => stop() }
}

/** The text of a result's content. */
export const textOf = (result: unknown): string =>
  (((result as { readonly content?: unknown }).content ?? []) as ReadonlyArray<{ type: string; text?: string }>)
    .flatMap((block) => (block.type === "text" ? [block.text ?? ""] : []))
    .join("\n")
