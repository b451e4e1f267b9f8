/**
 * What a start loads: `exec` of one Read loads none of WebFetch's HTTP stack (node:http, node:zlib, the BlockLists
 * of its address guard); a WebFetch call would load them. Read from Node's own list of the built-in modules it loaded
 * (`process.moduleLoadList`), written at exit by a module given to `--import`.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, it } from "vitest"
import { bin, cleanUp, ensureBuilt, output, tempDir, toolUse, workspace } from "./helpers.js"
import type { Finished } from "./helpers.js"

beforeAll(ensureBuilt, 300_000)
afterAll(cleanUp)

/** `exec` of `toolUses`, with the built-in modules the process loaded. */
const execListingModules = async (
  toolUses: (dir: string) => ReadonlyArray<unknown>
): Promise<{ readonly finished: Finished; readonly builtins: ReadonlyArray<string> }> => {
  const where = workspace()
  const scratch = tempDir("etr-startup")
  const listFile = path.join(scratch, "loaded.json")
  const preload = path.join(scratch, "list-modules.mjs")
  fs.writeFileSync(
    preload,
    `import * as fs from "node:fs"\n` +
      `process.on("exit", () => fs.writeFileSync(${
        JSON.stringify(listFile)
      }, JSON.stringify(process.moduleLoadList)))\n`
  )
  const child = spawn(process.execPath, ["--import", preload, bin, "exec", "--approve", "allow"], {
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
  const listed = JSON.parse(fs.readFileSync(listFile, "utf8")) as ReadonlyArray<string>
  const builtins = listed.filter((entry) => entry.startsWith("NativeModule ")).map((entry) => entry.slice(13))
  return { finished, builtins }
}

const httpStack = ["http", "zlib", "internal/blocklist"]

describe.concurrent("what a start loads", () => {
  it("exec of one Read loads none of WebFetch's HTTP stack", async ({ expect }) => {
    const { builtins, finished } = await execListingModules((dir) => [
      toolUse("toolu_read", "Read", { file_path: path.join(dir, "a.txt") })
    ])
    expect(output(finished).outcomes.map((outcome) => outcome.status)).toEqual(["success"])
    expect(builtins).toContain("fs")
    expect(httpStack.filter((name) => builtins.includes(name))).toEqual([])
  })

  it("a WebFetch call does load it (so the list above would show it)", async ({ expect }) => {
    // The address guard refuses 127.0.0.1 before anything connects.
    const { builtins, finished } = await execListingModules(() => [
      toolUse("toolu_fetch", "WebFetch", { url: "http://127.0.0.1:9/", prompt: "anything" })
    ])
    expect(output(finished).outcomes).toHaveLength(1)
    expect(builtins).toContain("internal/blocklist")
  })
})
