/**
 * The launcher's code caches: the one shipped in `dist/bin/cli.cache` (made at build time), and the one it keeps in
 * the user's cache directory when V8 rejects the shipped one (another Node, other V8 flags). A rejected cache is
 * simulated by a copy of `dist/bin` whose `cli.cache` is damaged; only what exit codes, output and files show is
 * asserted (a cache that was used is not written again: the file keeps its inode).
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import * as vm from "node:vm"
import { afterAll, beforeAll, describe, it } from "vitest"
import { cleanUp, ensureBuilt, output, root, tempDir, toolUse, workspace } from "./helpers.js"
import type { Finished } from "./helpers.js"

beforeAll(ensureBuilt, 300_000)
afterAll(cleanUp)

const read = (file: string) => [toolUse("toolu_read", "Read", { file_path: file })]

/** `exec` of one Read with the launcher in `binDir`, the user's cache directory under `cacheHome`. */
const execWith = (binDir: string, cacheHome: string): Promise<Finished> => {
  const where = workspace()
  const child = spawn(process.execPath, [path.join(binDir, "effect-tool-runtime.js"), "exec"], {
    cwd: where.dir,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: where.home, TMPDIR: where.tmp, XDG_CACHE_HOME: cacheHome }
  })
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  child.stdin.end(JSON.stringify(read(path.join(where.dir, "a.txt"))))
  return new Promise((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
}

const readSucceeded = (finished: Finished) => {
  const out = output(finished)
  return out.outcomes.length === 1 && out.outcomes[0]!.status === "success" && out.results[0]!.content.includes("hello")
}

/** A copy of `dist/bin` whose shipped cache V8 rejects. */
const binWithRejectedCache = (): string => {
  const dir = tempDir("etr-bin")
  for (const name of ["cli.cjs", "cli.cache", "effect-tool-runtime.js"]) {
    fs.copyFileSync(path.join(root, "dist/bin", name), path.join(dir, name))
  }
  const cache = fs.readFileSync(path.join(dir, "cli.cache"))
  for (let i = 0; i < 16; i++) cache[i] = cache[i]! ^ 0xff
  fs.writeFileSync(path.join(dir, "cli.cache"), cache)
  return dir
}

const userCaches = (cacheHome: string): ReadonlyArray<string> => {
  const dir = path.join(cacheHome, "effect-tool-runtime")
  return fs.existsSync(dir) ? fs.readdirSync(dir).map((name) => path.join(dir, name)) : []
}

/** Whether this Node accepts the shipped cache (it does when it built `dist`). */
const shippedCacheAccepted = (): boolean => {
  const bundle = path.join(root, "dist/bin/cli.cjs")
  const script = new vm.Script(
    `(function (exports, require, module, __filename, __dirname) {${fs.readFileSync(bundle, "utf8")}\n})`,
    { filename: bundle, cachedData: fs.readFileSync(path.join(root, "dist/bin/cli.cache")) }
  )
  return script.cachedDataRejected !== true
}

describe.concurrent("the launcher's code cache", () => {
  it("with the shipped cache accepted, keeps no cache of its own", async ({ expect, skip }) => {
    if (!shippedCacheAccepted()) skip()
    const cacheHome = tempDir("etr-cache")
    expect(readSucceeded(await execWith(path.join(root, "dist/bin"), cacheHome))).toBe(true)
    expect(userCaches(cacheHome)).toEqual([])
  })

  it("with the shipped cache rejected, writes one private cache at exit and runs from it the next time", async ({ expect }) => {
    const binDir = binWithRejectedCache()
    const cacheHome = tempDir("etr-cache")
    expect(readSucceeded(await execWith(binDir, cacheHome))).toBe(true)
    const [file, ...others] = userCaches(cacheHome)
    expect(others).toEqual([])
    expect(path.basename(file!)).toMatch(/^cli-[0-9a-f]{16}-.+\.cache$/)
    if (process.platform !== "win32") {
      expect(fs.statSync(file!).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.dirname(file!)).mode & 0o777).toBe(0o700)
    }
    const written = fs.statSync(file!)
    expect(readSucceeded(await execWith(binDir, cacheHome))).toBe(true)
    // Accepted, so not made again: the same file.
    expect(fs.statSync(file!).ino).toBe(written.ino)
  })

  it.skipIf(process.platform === "win32")(
    "never runs a cache others may write, nor one behind a symbolic link: it is replaced by a private one",
    async ({ expect }) => {
      const binDir = binWithRejectedCache()
      const cacheHome = tempDir("etr-cache")
      expect(readSucceeded(await execWith(binDir, cacheHome))).toBe(true)
      const [file] = userCaches(cacheHome)
      fs.chmodSync(file!, 0o666)
      const writable = fs.statSync(file!)
      expect(readSucceeded(await execWith(binDir, cacheHome))).toBe(true)
      expect(fs.statSync(file!).ino).not.toBe(writable.ino)
      expect(fs.statSync(file!).mode & 0o777).toBe(0o600)

      const elsewhere = path.join(tempDir("etr-elsewhere"), "cache")
      fs.copyFileSync(file!, elsewhere)
      const target = fs.readFileSync(elsewhere)
      fs.rmSync(file!)
      fs.symlinkSync(elsewhere, file!)
      expect(readSucceeded(await execWith(binDir, cacheHome))).toBe(true)
      expect(fs.lstatSync(file!).isFile()).toBe(true)
      expect(fs.readFileSync(elsewhere).equals(target)).toBe(true)
    }
  )
})
