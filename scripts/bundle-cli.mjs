/**
 * Builds the CLI as the package ships it, in `dist/bin/`:
 * - `cli.cjs`: the whole CLI in one file (hundreds of small modules, the `effect` barrel among them, cost most of
 *   a second to load; one file is a fraction of that);
 * - `cli.cache`: V8's code cache of it, made here, so a cold start does not compile it again;
 * - `effect-tool-runtime.js`: the launcher the package's `bin` names (`src/cli/launcher.ts`).
 * `@vscode/ripgrep` stays outside the bundle: it locates its binary relative to its own files.
 */
import { build } from "esbuild"
import * as fs from "node:fs"
import * as vm from "node:vm"

const common = { bundle: true, platform: "node", target: "node20", minify: true, legalComments: "none", logLevel: "warning" }

await build({
  ...common,
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/bin/cli.cjs",
  format: "cjs",
  external: ["@vscode/ripgrep"],
  // ESM dependencies that ask for their own URL (`createRequire(import.meta.url)`) get the bundle's.
  define: { "import.meta.url": "__etrImportMetaUrl" },
  banner: { js: "var __etrImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" }
})
await build({ ...common, entryPoints: ["src/cli/launcher.ts"], outfile: "dist/bin/effect-tool-runtime.js", format: "esm" })

// The same wrapper the launcher compiles, so V8 accepts the cache.
const source = fs.readFileSync("dist/bin/cli.cjs", "utf8")
const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, { filename: "cli.cjs" })
fs.writeFileSync("dist/bin/cli.cache", script.createCachedData())
fs.chmodSync("dist/bin/effect-tool-runtime.js", 0o755)
