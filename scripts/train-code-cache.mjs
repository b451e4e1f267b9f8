/**
 * Makes `dist/bin/cli.cache` from a real run: loads the bundle exactly as the launcher does, runs the arguments
 * given (`exec` of one Read, from `bundle-cli.mjs`), and at exit writes V8's code cache, which then holds the
 * functions that run at start-up as well as the top level (a cold start spends less time compiling).
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import process from "node:process"
import * as vm from "node:vm"

const [bundle, cacheFile, ...args] = process.argv.slice(2)
process.argv = [process.argv[0], bundle, ...args]
const source = fs.readFileSync(bundle, "utf8")
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
  filename: bundle
})
process.on("exit", () => fs.writeFileSync(cacheFile, script.createCachedData()))
const module = { exports: {} }
script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, path.dirname(bundle))
