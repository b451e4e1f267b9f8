#!/usr/bin/env node
/**
 * The package's `bin`: as small as a script can be, so it runs as soon as Node has started. It catches SIGINT and
 * SIGTERM at once (the CLI, loaded next, takes over what arrived meanwhile; see `signals.ts`), then runs the CLI
 * bundle (`cli.cjs`, one file) with the V8 code cache made at build time (`cli.cache`): compiling the bundle is
 * most of a cold start, and the cache makes it a few milliseconds. A cache from another Node version is rejected
 * by V8 and the bundle is compiled as usual.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
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
let cachedData: Buffer | undefined
try {
  cachedData = fs.readFileSync(path.join(here, "cli.cache"))
} catch {
  cachedData = undefined
}
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle,
  ...(cachedData === undefined ? {} : { cachedData })
})
const module = { exports: {} }
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeRequire,
  module: unknown,
  filename: string,
  dirname: string
) => void
run(module.exports, createRequire(bundle), module, bundle, here)
