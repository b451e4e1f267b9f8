/**
 * What a start loads: `exec` of one Read loads none of WebFetch's HTTP stack (node:http, node:zlib, the BlockLists
 * of its address guard); a WebFetch call would load them. Read from Node's own list of the built-in modules it loaded
 * (`process.moduleLoadList`), written at exit by a module given to `--import`. The package's modules are seen in the
 * unbundled build (`dist/cli/main.js`, one file per module; the bundle evaluates its modules inside one file): a
 * loader hook records every module resolved, and the CommonJS cache at exit holds what was `require`d (the bin's
 * `vendor.cjs`, the packages only some runs use, among them when it was loaded).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, it } from "vitest"
import { EVERYTHING } from "../Mcp/helpers.js"
import { bin, cleanUp, ensureBuilt, output, root, tempDir, toolUse, workspace } from "./helpers.js"
import type { Finished } from "./helpers.js"

beforeAll(ensureBuilt, 300_000)
afterAll(cleanUp)

/**
 * `exec` of `toolUses` (by the shipped bin, or the unbundled `dist/cli/main.js`), with the built-in modules the
 * process loaded and the files of the modules it resolved or required.
 */
const execListingModules = async (
  toolUses: (dir: string) => ReadonlyArray<unknown>,
  entry: string = bin,
  extraArgs: (dir: string) => ReadonlyArray<string> = () => []
): Promise<
  { readonly finished: Finished; readonly builtins: ReadonlyArray<string>; readonly files: ReadonlyArray<string> }
> => {
  const where = workspace()
  const scratch = tempDir("etr-startup")
  const listFile = path.join(scratch, "loaded.json")
  const resolvedFile = path.join(scratch, "resolved.txt")
  const preload = path.join(scratch, "list-modules.mjs")
  const hooks = path.join(scratch, "hooks.mjs")
  fs.writeFileSync(
    hooks,
    `import * as fs from "node:fs"\n` +
      `export const resolve = async (specifier, context, next) => {\n` +
      `  const resolved = await next(specifier, context)\n` +
      `  fs.appendFileSync(${JSON.stringify(resolvedFile)}, resolved.url + "\\n")\n` +
      `  return resolved\n` +
      `}\n`
  )
  fs.writeFileSync(
    preload,
    `import * as fs from "node:fs"\n` +
      `import { createRequire, register } from "node:module"\n` +
      `register(${JSON.stringify(pathToFileURL(hooks).href)})\n` +
      `process.on("exit", () => fs.writeFileSync(${JSON.stringify(listFile)}, JSON.stringify({\n` +
      `  builtins: process.moduleLoadList,\n` +
      `  required: Object.keys(createRequire(import.meta.url).cache)\n` +
      `})))\n`
  )
  const child = spawn(process.execPath, [
    "--import",
    preload,
    entry,
    "exec",
    "--approve",
    "allow",
    ...extraArgs(where.dir)
  ], {
    cwd: where.dir,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: where.home, TMPDIR: where.tmp }
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  child.stdin.end(JSON.stringify(toolUses(where.dir)))
  const finished = await new Promise<Finished>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  const listed = JSON.parse(fs.readFileSync(listFile, "utf8")) as {
    readonly builtins: ReadonlyArray<string>
    readonly required: ReadonlyArray<string>
  }
  const builtins = listed.builtins.filter((entry) => entry.startsWith("NativeModule ")).map((entry) => entry.slice(13))
  const resolved = fs.existsSync(resolvedFile) ? fs.readFileSync(resolvedFile, "utf8").split("\n") : []
  const files = [
    ...resolved.filter((url) => url.startsWith("file:")).map((url) => fileURLToPath(url)),
    ...listed.required
  ]
  return { finished, builtins, files }
}

const httpStack = ["http", "zlib", "internal/blocklist"]
/** The bundle of what only some runs use (the MCP SDK, WebFetch's HTTP client, ...): see `scripts/bundle-cli.mjs`. */
const vendor = path.join(root, "dist/bin/vendor.cjs")

describe.concurrent("what a start loads", () => {
  it("exec of one Read loads none of WebFetch's HTTP stack", async ({ expect }) => {
    const { builtins, finished } = await execListingModules((dir) => [
      toolUse("toolu_read", "Read", { file_path: path.join(dir, "a.txt") })
    ])
    expect(output(finished).outcomes.map((outcome) => outcome.status)).toEqual(["success"])
    expect(builtins).toContain("fs")
    expect(httpStack.filter((name) => builtins.includes(name))).toEqual([])
  })

  it("exec of one Read from the shipped bin does not load its vendored packages (vendor.cjs)", async ({ expect }) => {
    const { files, finished } = await execListingModules((dir) => [
      toolUse("toolu_read", "Read", { file_path: path.join(dir, "a.txt") })
    ])
    expect(output(finished).outcomes.map((outcome) => outcome.status)).toEqual(["success"])
    expect(files).not.toContain(vendor)
  })

  it("an MCP server configured does load them (so the list above would show it)", async ({ expect }) => {
    const { files, finished } = await execListingModules(
      (dir) => [toolUse("toolu_read", "Read", { file_path: path.join(dir, "a.txt") })],
      bin,
      (dir) => {
        const config = path.join(dir, "mcp.json")
        fs.writeFileSync(
          config,
          JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } })
        )
        return ["--mcp-config", config]
      }
    )
    expect(output(finished).outcomes.map((outcome) => outcome.status)).toEqual(["success"])
    expect(files).toContain(vendor)
  })

  it("a WebFetch call does load it (so the list above would show it)", async ({ expect }) => {
    // The address guard refuses 127.0.0.1 before anything connects.
    const { builtins, finished } = await execListingModules(() => [
      toolUse("toolu_fetch", "WebFetch", { url: "http://127.0.0.1:9/", prompt: "anything" })
    ])
    expect(output(finished).outcomes).toHaveLength(1)
    expect(builtins).toContain("internal/blocklist")
  })

  it("exec of one Read evaluates neither ajv nor the MCP SDK (no MCP server is configured)", async ({ expect }) => {
    const { files, finished } = await execListingModules((dir) => [
      toolUse("toolu_read", "Read", { file_path: path.join(dir, "a.txt") })
    ], path.join(root, "dist/cli/main.js"))
    expect(output(finished).outcomes.map((outcome) => outcome.status)).toEqual(["success"])
    // What the trace sees: the Read tool's module, and the module that checks MCP tools' inputs with ajv.
    expect(files).toContain(path.join(root, "dist/Tools/Read.js"))
    expect(files).toContain(path.join(root, "dist/Mcp/internal/inputSchema.js"))
    const packages = (name: string) =>
      files.filter((file) => file.includes(`${path.sep}node_modules${path.sep}${name}`))
    expect(packages(`ajv${path.sep}`)).toEqual([])
    expect(packages(`@modelcontextprotocol${path.sep}sdk${path.sep}`)).toEqual([])
    // Nor the other commands (`tools`, `serve`), nor what only they use (the platform's worker and terminal).
    expect(files).toContain(path.join(root, "dist/cli/exec.js"))
    expect(files).not.toContain(path.join(root, "dist/cli/tools.js"))
    expect(files).not.toContain(path.join(root, "dist/cli/serve.js"))
    expect(packages(`@effect${path.sep}platform-node${path.sep}dist${path.sep}esm${path.sep}NodeContext.js`)).toEqual(
      []
    )
    expect(packages(`@effect${path.sep}platform${path.sep}dist${path.sep}esm${path.sep}WorkerError.js`)).toEqual([])
  })
})
