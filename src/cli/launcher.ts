#!/usr/bin/env node
/**
 * The package's `bin`: as small as a script can be, so it runs as soon as Node has started. It catches SIGINT and
 * SIGTERM at once (the CLI, loaded next, takes over what arrived meanwhile; see `signals.ts`), then runs the CLI
 * bundle (`cli.cjs`, one file) with the V8 code cache made at build time (`cli.cache`): compiling the bundle is
 * most of a cold start, and the cache makes it a few milliseconds.
 *
 * V8 rejects a cache made by another V8 version or with other V8 flags (a Node other than the build's, a
 * `NODE_OPTIONS`), and the bundle is then compiled at every start. Then the launcher keeps a cache of its own, made
 * at exit, in the user's cache directory (`$XDG_CACHE_HOME`, else `~/.cache`, `~/Library/Caches`, `%LOCALAPPDATA%`,
 * under `effect-tool-runtime/`), named for this bundle (its hash, from the build), V8 version, architecture and
 * flags. It is read only when it is a regular file of this user's that no one else may write (code from a cache is
 * run as is); anything amiss (no home, a read-only directory, a file of someone else's) means no cache, silently.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as vm from "node:vm"

interface EarlySignals {
  readonly received: Array<"SIGINT" | "SIGTERM">
  readonly stop: () => void
}

const received: Array<"SIGINT" | "SIGTERM"> = []
const onSignal = (signal: "SIGINT" | "SIGTERM") => void received.push(signal)
process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)
const early: EarlySignals = {
  received,
  stop: () => {
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
  }
}
;(globalThis as Record<symbol, unknown>)[Symbol.for("effect-tool-runtime/early-signals")] = early
// What `ps` shows; also tells an observer (the tests) that the handlers are in place.
process.title = "effect-tool-runtime"

const here = path.dirname(fileURLToPath(import.meta.url))
const bundle = path.join(here, "cli.cjs")
const source = fs.readFileSync(bundle, "utf8")

// ---------------------------------------------------------------------------------------------------------------
// the user's code cache, for when V8 rejects the shipped one
// ---------------------------------------------------------------------------------------------------------------

/** The bundle's SHA-256, put here by `scripts/bundle-cli.mjs` (absent when this file runs unbundled). */
declare const __ETR_BUNDLE_ID__: string | undefined
const bundleId = typeof __ETR_BUNDLE_ID__ === "string" ? __ETR_BUNDLE_ID__ : undefined

/** FNV-1a, enough to tell flag sets apart in a file name (V8 checks the flags itself). */
const shortHash = (text: string): string => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash >>> 0).toString(16)
}

const cacheDirectory = (): string | undefined => {
  const xdg = process.env.XDG_CACHE_HOME
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, "effect-tool-runtime")
  const home = os.homedir()
  if (home === "") return undefined
  if (process.platform === "win32") {
    const local = process.env.LOCALAPPDATA
    return local === undefined ? undefined : path.join(local, "effect-tool-runtime")
  }
  return process.platform === "darwin"
    ? path.join(home, "Library", "Caches", "effect-tool-runtime")
    : path.join(home, ".cache", "effect-tool-runtime")
}

/** Where this bundle's cache for this V8, architecture and flags is kept, if anywhere. */
const userCacheFile = (): string | undefined => {
  if (bundleId === undefined) return undefined
  const directory = cacheDirectory()
  if (directory === undefined) return undefined
  const flags = shortHash(`${process.execArgv.join(" ")}|${process.env.NODE_OPTIONS ?? ""}`)
  return path.join(directory, `cli-${bundleId.slice(0, 16)}-${process.versions.v8}-${process.arch}-${flags}.cache`)
}

/** A regular file of this user's that no one else may write: the only kind of cache that is run. */
const ownedByUs = (stats: fs.Stats): boolean =>
  stats.isFile() &&
  (process.getuid === undefined || (stats.uid === process.getuid() && (stats.mode & 0o022) === 0))

const readUserCache = (file: string): Buffer | undefined => {
  let fd: number | undefined
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0))
    return ownedByUs(fs.fstatSync(fd)) ? fs.readFileSync(fd) : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}

/** Writes the cache (a temporary file, then a rename) and removes this bundle's caches for other versions or flags. */
const writeUserCache = (file: string, data: Buffer): void => {
  const directory = path.dirname(file)
  const temporary = `${file}.${process.pid}.tmp`
  try {
    fs.mkdirSync(directory, { recursive: true, mode: 0o700 })
    fs.writeFileSync(temporary, data, { flag: "wx", mode: 0o600 })
    fs.renameSync(temporary, file)
    const prefix = `cli-${bundleId!.slice(0, 16)}-`
    for (const name of fs.readdirSync(directory)) {
      if (name.startsWith("cli-") && name.endsWith(".cache") && !name.startsWith(prefix)) {
        fs.rmSync(path.join(directory, name), { force: true })
      }
    }
  } catch {
    try {
      fs.rmSync(temporary, { force: true })
    } catch {
      // Nothing more to do: the next start compiles the bundle again.
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the run
// ---------------------------------------------------------------------------------------------------------------

const readOptional = (file: string): Buffer | undefined => {
  try {
    return fs.readFileSync(file)
  } catch {
    return undefined
  }
}

// The user's cache exists only where the shipped one was rejected before: it comes first.
const userCache = userCacheFile()
const cachedData = (userCache === undefined ? undefined : readUserCache(userCache)) ??
  readOptional(path.join(here, "cli.cache"))
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  ...(cachedData === undefined ? {} : { cachedData })
})
if (userCache !== undefined && (cachedData === undefined || script.cachedDataRejected === true)) {
  // At exit the cache holds what the run compiled too, not only the top level.
  process.once("exit", () => writeUserCache(userCache, script.createCachedData()))
}
const module = { exports: {} }
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeRequire,
  module: unknown,
  filename: string,
  dirname: string
) => void
run(module.exports, createRequire(bundle), module, bundle, here)
