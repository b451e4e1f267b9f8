/**
 * Configuration in Claude Code's `.mcp.json` format: variable expansion, errors that name file, server and field,
 * and the trust of repository-defined servers.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, FastCheck } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as McpConfig from "../../src/Mcp/Config.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { tempDir } from "./helpers.js"

/** The plain-words expansion: each `${NAME}` or `${NAME:-fallback}` in turn. */
const oracle = (parts: ReadonlyArray<Part>, env: Record<string, string>): string | undefined => {
  let out = ""
  for (const part of parts) {
    if (part._tag === "text") out += part.text
    else if (env[part.name] !== undefined) out += env[part.name]
    else if (part.fallback !== undefined) out += part.fallback
    else return undefined
  }
  return out
}

type Part = { readonly _tag: "text"; readonly text: string } | {
  readonly _tag: "var"
  readonly name: string
  readonly fallback: string | undefined
}

const names = FastCheck.constantFrom("HOME_DIR", "TOKEN", "API_KEY", "X")
const part: FastCheck.Arbitrary<Part> = FastCheck.oneof(
  FastCheck.string({ unit: FastCheck.constantFrom("a", "b", "/", "-", " ", "$", "{", ":"), maxLength: 5 }).map((
    text
  ) => ({ _tag: "text" as const, text })),
  FastCheck.record({
    name: names,
    fallback: FastCheck.option(FastCheck.string({ unit: FastCheck.constantFrom("d", "e", "/", "-"), maxLength: 4 }), {
      nil: undefined
    })
  })
    .map(({ fallback, name }) => ({ _tag: "var" as const, name, fallback }))
)
const render = (parts: ReadonlyArray<Part>) =>
  parts.map((
    p
  ) => (p._tag === "text" ? p.text : p.fallback === undefined ? `\${${p.name}}` : `\${${p.name}:-${p.fallback}}`)).join(
    ""
  )

describe("variable expansion", () => {
  it.prop("expands ${VAR} and ${VAR:-default} as written, and fails exactly when a variable is unset without default", [
    FastCheck.array(part, { maxLength: 6 }).filter((parts) => {
      // A text part must not accidentally form a variable with its neighbours.
      const text = render(parts)
      return (text.match(/\$\{/g)?.length ?? 0) === parts.filter((p) => p._tag === "var").length
    }),
    FastCheck.dictionary(names, FastCheck.string({ unit: FastCheck.constantFrom("v", "w", "1"), maxLength: 3 }))
  ], ([parts, env]) => {
    const expected = oracle(parts, env)
    const actual = McpConfig.expandVariables(render(parts), env)
    expect(Either.isRight(actual) ? actual.right : undefined).toBe(expected)
  })

  it("a missing variable is an error naming file, server and field; the other servers are kept", () => {
    const loaded = McpConfig.fromJson(".mcp.json", {
      mcpServers: {
        github: {
          type: "http",
          url: "https://api.example.com/mcp",
          headers: { Authorization: "Bearer ${GITHUB_TOKEN}" }
        },
        local: { command: "${BIN:-node}", args: ["server.js", "--root=${ROOT}"], env: { KEY: "${KEY:-none}" } }
      }
    }, { trusted: true, env: { ROOT: "/srv" } })
    expect(loaded.errors.map((e) => e.message)).toEqual([
      ".mcp.json: server \"github\", field headers.Authorization: environment variable ${GITHUB_TOKEN} is not set and has no default"
    ])
    expect(loaded.servers).toHaveLength(1)
    expect(loaded.servers[0]?.transport).toEqual({
      _tag: "stdio",
      command: "node",
      args: ["server.js", "--root=/srv"],
      env: { KEY: "none" },
      cwd: undefined
    })
  })
})

describe("entries", () => {
  it("a bad entry names its field; type http needs a url, stdio a command", () => {
    const loaded = McpConfig.fromJson("/p/.mcp.json", {
      mcpServers: {
        remote: { type: "http" },
        local: { args: ["x"] },
        odd: { type: "websocket", url: "ws://x" },
        ok: { type: "sse", url: "http://127.0.0.1:1/sse", timeout: 5000, toolTimeouts: { slow: 100 } }
      }
    }, { trusted: true })
    expect(loaded.errors.map((e) => [e.server, e.field])).toEqual([["remote", "url"], ["local", "command"], [
      "odd",
      "type"
    ]])
    expect(loaded.errors[0]?.message).toContain("/p/.mcp.json: server \"remote\", field url:")
    const ok = loaded.servers[0]!
    expect(ok.transport).toEqual({ _tag: "sse", url: "http://127.0.0.1:1/sse", headers: {} })
    expect(Duration.toMillis(ok.timeout!)).toBe(5000)
    expect(Duration.toMillis(ok.toolTimeouts.slow!)).toBe(100)
  })

  it.effect("a file that is not JSON is one error naming the file; a missing or empty file is no servers", () =>
    Effect.gen(function*() {
      const dir = tempDir("mcp-config")
      fs.writeFileSync(path.join(dir, "bad.json"), "{ nope")
      const bad = yield* McpConfig.loadFile(path.join(dir, "bad.json"), { trusted: true })
      expect(bad.errors).toHaveLength(1)
      expect(bad.errors[0]?.message).toMatch(/bad\.json: is not valid JSON/)
      const missing = yield* McpConfig.loadFile(path.join(dir, "absent.json"), { trusted: true })
      expect(missing).toEqual({ servers: [], errors: [] })
      // An empty file (the Bash sandbox's placeholder of a protected .mcp.json) configures nothing, like a missing one.
      fs.writeFileSync(path.join(dir, "empty.json"), " \n")
      expect(yield* McpConfig.loadFile(path.join(dir, "empty.json"), { trusted: true })).toEqual({
        servers: [],
        errors: []
      })
    }).pipe(Effect.provide(NodeContext.layer)))

  it.live("a repository's server in an untrusted folder is listed but never started", () =>
    Effect.gen(function*() {
      const dir = tempDir("mcp-untrusted")
      const marker = path.join(dir, "started")
      fs.writeFileSync(
        path.join(dir, ".mcp.json"),
        JSON.stringify({
          mcpServers: {
            repo: {
              command: process.execPath,
              args: ["-e", `require("fs").writeFileSync(${JSON.stringify(marker)}, "x")`]
            }
          }
        })
      )
      const loaded = yield* McpConfig.loadFile(path.join(dir, ".mcp.json"), { trusted: false })
      const status = yield* Effect.scoped(
        Effect.flatMap(McpServers, (servers) => servers.status).pipe(Effect.provide(McpServers.layer(loaded)))
      )
      expect(status[0]?.state._tag).toBe("Disabled")
      expect(status[0]?.state._tag === "Disabled" ? status[0].state.reason : "").toContain("is not trusted")
      expect(fs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(NodeContext.layer)))

  it("a later configuration replaces a server of the same name", () => {
    const project = McpConfig.fromJson("project", { mcpServers: { a: { command: "one" }, b: { command: "two" } } }, {
      trusted: false
    })
    const user = McpConfig.fromJson("user", { mcpServers: { a: { command: "three" } } }, { trusted: true })
    const merged = McpConfig.merge([project, user])
    expect(merged.servers.map((s) => [s.name, s.source, s.enabled])).toEqual([["a", "user", true], [
      "b",
      "project",
      false
    ]])
  })
})
