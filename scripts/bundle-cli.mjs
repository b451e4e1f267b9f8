/**
 * Builds the CLI as the package ships it, in `dist/bin/`:
 * - `cli.cjs`: the whole CLI in one file (hundreds of small modules, the `effect` barrel among them, cost most of
 *   a second to load; one file is a fraction of that);
 * - `vendor.cjs`: the packages only some runs use (the MCP SDK, WebFetch's HTTP client, ...; see `toVendor`), one
 *   file `cli.cjs` requires at their first use;
 * - `cli.cache`: V8's code cache of it, made here by a training run (`train-code-cache.mjs`), so a cold start does
 *   not compile it again;
 * - `effect-tool-runtime.js`: the launcher the package's `bin` names (`src/cli/launcher.ts`, CommonJS), which knows
 *   the bundle's hash (for the code cache it keeps itself when V8 rejects `cli.cache`).
 * `@vscode/ripgrep` stays outside the bundle: it locates its binary relative to its own files; so does `pdfjs-dist`
 * (loaded only when Read meets a PDF, with `require` of its ES module: bundled, its worker set-up fails).
 * `@anthropic-ai/sandbox-runtime` is bundled, but looks for its `apply-seccomp` binaries next to its own module: given
 * the bundle's URL it finds none and asks `npm root -g` (a whole Node process, synchronously, at every start of
 * Bash's sandbox), so its module gets its installed file's URL (`sandboxRuntimeUrl`).
 */
import { build } from "esbuild"
import { spawnSync } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { isBuiltin } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import process from "node:process"
import * as vm from "node:vm"

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
}

/** The one sandbox-runtime module that asks for its own URL gets the installed module's (the bundle's if absent). */
const sandboxRuntimeUrl = {
  name: "sandbox-runtime-url",
  setup(build) {
    const module = "@anthropic-ai/sandbox-runtime/dist/sandbox/generate-seccomp-filter.js"
    build.onLoad({ filter: /sandbox-runtime[\\/]dist[\\/]sandbox[\\/]generate-seccomp-filter\.js$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const url = `(() => { try { return require("node:url").pathToFileURL(require.resolve(${
        JSON.stringify(module)
      })).href } catch { return __etrImportMetaUrl } })()`
      return { contents: source.replaceAll("import.meta.url", url), loader: "js" }
    })
  }
}

/**
 * `Mcp/internal/inputSchema.ts` loads ajv at its first validation with `createRequire` (the package's ES modules have
 * no `require`), which esbuild cannot follow; in the bundle it is a plain `require`, so ajv is bundled (in
 * `vendor.cjs`) and still evaluated only when an MCP tool's input is checked.
 */
const bundledAjv = {
  name: "bundled-ajv",
  setup(build) {
    build.onLoad({ filter: /src[\\/]Mcp[\\/]internal[\\/]inputSchema\.ts$/ }, async (args) => {
      const source = await fs.promises.readFile(args.path, "utf8")
      const contents = source.replaceAll("requireHere(\"", "require(\"")
      if (contents === source) throw new Error(`${args.path}: no requireHere("...") to bundle`)
      return { contents, loader: "ts" }
    })
  }
}

/**
 * Packages only some runs use (WebFetch's HTTP client, the MCP SDK and zod, turndown and domino, ajv, the LSP
 * connection, the sandbox's CA) go to `vendor.cjs`, loaded at their first `require`: in `cli.cjs` they were half of
 * what every start reads, compiles and maps (a Read never evaluates them). They are one file, so modules they share
 * (zod, the SDK's types) exist once. The plugin records every specifier asked for; `vendor.cjs` is built from them.
 */
const vendored =
  /^(undici|@modelcontextprotocol\/sdk|zod|turndown|@mixmark-io\/domino|ajv|vscode-jsonrpc|vscode-languageserver-protocol|node-forge|ws)(\/.*)?$/
const vendorSpecifiers = new Set()
const toVendor = {
  name: "to-vendor",
  setup(build) {
    build.onResolve({ filter: vendored }, (args) => {
      vendorSpecifiers.add(args.path)
      return { path: args.path, namespace: "vendor" }
    })
    build.onResolve({ filter: /^\.\/vendor\.cjs$/ }, () => ({ path: "./vendor.cjs", external: true }))
    build.onLoad({ filter: /.*/, namespace: "vendor" }, (args) => ({
      contents: `module.exports = require("./vendor.cjs")(${JSON.stringify(args.path)})`,
      loader: "js"
    }))
  }
}

/**
 * Each of Node's built-in modules is imported through one module of the bundle: esbuild gives every ES module that
 * imports `node:fs` a namespace object of its own, copied from `fs` (`__toESM`, a getter defined per export, a hundred
 * for `fs`), and a hundred modules doing so cost every start a few thousand of them. Only `import`s go through it: a
 * `require` gets the module itself (`require("events")` is a class, not a namespace).
 */
const sharedBuiltins = {
  name: "shared-builtins",
  setup(build) {
    build.onResolve({ filter: /^[a-z_:/]+$/ }, (args) => {
      if (!isBuiltin(args.path)) return undefined
      const name = args.path.startsWith("node:") ? args.path : `node:${args.path}`
      if (args.namespace === "builtin" || args.kind !== "import-statement") return { path: name, external: true }
      return { path: name, namespace: "builtin" }
    })
    build.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
      // The default export is the module itself, as Node gives it (no second copy).
      contents: `export * from ${JSON.stringify(args.path)}\nexport default require(${JSON.stringify(args.path)})\n`,
      loader: "js"
    }))
  }
}

await build({
  ...common,
  entryPoints: ["src/cli/main.ts"],
  plugins: [sharedBuiltins, toVendor, sandboxRuntimeUrl, bundledAjv],
  outfile: "dist/bin/cli.cjs",
  format: "cjs",
  // better-sqlite3 (`--durable`) is a native addon, found through its own package.
  external: ["@vscode/ripgrep", "pdfjs-dist", "better-sqlite3"],
  // An `import()` of what stays outside (loaded on first use) becomes a `require`: the launcher runs the bundle as a
  // vm.Script, which has no loader for `import()` ("A dynamic import callback was not specified").
  supported: { "dynamic-import": false },
  // ESM dependencies that ask for their own URL (`createRequire(import.meta.url)`) get the bundle's.
  define: { "import.meta.url": "__etrImportMetaUrl" },
  banner: { js: "var __etrImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" }
})
// Each vendored module by its specifier, evaluated at its first `require`.
await build({
  ...common,
  stdin: {
    contents: `const modules = {\n${
      [...vendorSpecifiers].sort().map((specifier) =>
        `  ${JSON.stringify(specifier)}: () => require(${JSON.stringify(specifier)})`
      ).join(",\n")
    }\n}\nmodule.exports = (specifier) => modules[specifier]()\n`,
    resolveDir: process.cwd(),
    sourcefile: "vendor.cjs",
    loader: "js"
  },
  outfile: "dist/bin/vendor.cjs",
  format: "cjs",
  define: { "import.meta.url": "__etrImportMetaUrl" },
  banner: { js: "var __etrImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" }
})
// The launcher names its own code cache (made when V8 rejects the shipped one) for the bundle's content.
const bundleId = createHash("sha256").update(fs.readFileSync("dist/bin/cli.cjs")).digest("hex")
// The launcher is CommonJS (`dist/bin/package.json` says so for its `.js` name): Node starts an ES module entry through
// its ESM loader, a few milliseconds of every start that a CommonJS one does not pay.
fs.writeFileSync("dist/bin/package.json", `${JSON.stringify({ type: "commonjs" })}\n`)
await build({
  ...common,
  entryPoints: ["src/cli/launcher.ts"],
  outfile: "dist/bin/effect-tool-runtime.js",
  format: "cjs",
  define: { __ETR_BUNDLE_ID__: JSON.stringify(bundleId), "import.meta.url": "__etrLauncherUrl" },
  banner: { js: "var __etrLauncherUrl = require('node:url').pathToFileURL(__filename).href;" }
})

// The code cache, from a training run: one `exec` of a Read in a scratch directory, compiled with the same wrapper
// as the launcher's, so V8 accepts it. Should the run fail, a cache of the top level alone does.
const bundle = path.resolve("dist/bin/cli.cjs")
const cache = path.resolve("dist/bin/cli.cache")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "etr-train-"))
fs.writeFileSync(path.join(scratch, "a.txt"), "hello\n")
const trained = spawnSync(process.execPath, [
  path.resolve("scripts/train-code-cache.mjs"),
  bundle,
  cache,
  "exec",
  "--no-claude-settings"
], {
  cwd: scratch,
  input: JSON.stringify([{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.txt" } }]),
  env: { ...process.env, HOME: scratch, TMPDIR: scratch }
})
fs.rmSync(scratch, { recursive: true, force: true })
if (trained.status !== 0 || !fs.existsSync(cache)) {
  const source = fs.readFileSync(bundle, "utf8")
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle
  })
  fs.writeFileSync(cache, script.createCachedData())
}
fs.chmodSync("dist/bin/effect-tool-runtime.js", 0o755)
