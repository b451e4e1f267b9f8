/**
 * `--durable` is taken only where it does something: `exec`, `serve` and `serve --mcp` (stdio, SQLite) with
 * `--session`. Elsewhere it is a usage error that says why, never a flag parsed and ignored.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { parseCommandLine } from "../../src/cli/args.js"

const session = () => fs.mkdtempSync(path.join(os.tmpdir(), "args-durable-"))
const usageOf = (argv: ReadonlyArray<string>) => {
  const parsed = parseCommandLine(argv)
  return Either.isLeft(parsed) ? parsed.left.message : undefined
}

describe("--durable", () => {
  it("exec with --session takes it, sqlite by default", () => {
    const parsed = parseCommandLine(["exec", "--session", session(), "--durable"])
    expect(Either.isRight(parsed) && parsed.right._tag === "Exec" && parsed.right.options.durable).toBe("sqlite")
  })
  it("serve and serve --mcp with --session take it; over HTTP or on Postgres, serve --mcp refuses it", () => {
    const parsed = parseCommandLine(["serve", "--session", session(), "--durable"])
    expect(Either.isRight(parsed) && parsed.right._tag === "Serve" && parsed.right.options.durable).toBe("sqlite")
    const mcp = parseCommandLine(["serve", "--mcp", "--session", session(), "--durable"])
    expect(Either.isRight(mcp) && mcp.right._tag === "ServeMcp" && mcp.right.options.durable).toBe("sqlite")
    expect(usageOf(["serve", "--mcp-http", "0", "--session", session(), "--durable"])).toContain(
      "--durable is for exec, serve and serve --mcp (stdio): an MCP session over HTTP does not survive its server"
    )
    expect(usageOf(["serve", "--mcp", "--session", session(), "--durable", "postgres://db.internal/agents"]))
      .toContain("serve --mcp --durable runs one runner on SQLite in the session directory, not on postgres://")
  })
  it("exec without --session refuses it", () => {
    expect(usageOf(["exec", "--durable"])).toContain("--durable needs --session DIR: the durable turns are kept there")
  })
  it("an unknown store is refused by name, without its password", () => {
    expect(usageOf(["exec", "--session", session(), "--durable=mysql://app:secret@db/x"])).toContain(
      "--durable takes sqlite (the default) or a postgres:// URL, got mysql://app:***@db/x"
    )
  })
  it("a postgres:// URL makes this exec a runner on 127.0.0.1 at a port the system picks, or at --runner-address", () => {
    const url = "postgres://app:secret@db.internal:5432/agents"
    const plain = parseCommandLine(["exec", "--session", session(), "--durable", url])
    expect(Either.isRight(plain) && plain.right._tag === "Exec" && plain.right.options.durable).toEqual({
      url,
      host: "127.0.0.1",
      port: undefined
    })
    const placed = parseCommandLine([
      "exec",
      "--session",
      session(),
      "--durable",
      url,
      "--runner-address",
      "[::1]:4100"
    ])
    expect(Either.isRight(placed) && placed.right._tag === "Exec" && placed.right.options.durable).toEqual({
      url,
      host: "::1",
      port: 4100
    })
  })
  it("--runner-address is refused without postgres, or without a port", () => {
    expect(usageOf(["exec", "--session", session(), "--runner-address", "h:1"])).toContain(
      "--runner-address needs --durable postgres://..."
    )
    expect(usageOf(["exec", "--session", session(), "--durable", "--runner-address", "h:1"])).toContain(
      "--runner-address is for --durable postgres://..."
    )
    expect(usageOf(["exec", "--session", session(), "--durable", "postgres://db/x", "--runner-address", "h"]))
      .toContain(
        "--runner-address must be HOST:PORT (a port from 1 to 65535), got h"
      )
    expect(usageOf(["exec", "--session", session(), "--durable", "postgres://db/x", "--runner-address", "h:70000"]))
      .toContain("--runner-address must be HOST:PORT (a port from 1 to 65535), got h:70000")
  })
})
