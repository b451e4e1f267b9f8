/**
 * Bundles the CLI into one file, `dist/bin/effect-tool-runtime.js` (the package's `bin`): loading one file is what
 * makes a cold `exec` fast (hundreds of small modules, the `effect` barrel among them, cost most of a second).
 * `@vscode/ripgrep` stays outside: it locates its binary relative to its own files.
 */
import { build } from "esbuild"

await build({
  entryPoints: ["src/cli/main.ts"],
  outfile: "dist/bin/effect-tool-runtime.js",
  bundle: true,
  platform: "node",
  target: "node20",
  format: "esm",
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  external: ["@vscode/ripgrep"],
  // ESM output still meets CommonJS dependencies that call require() for Node built-ins.
  banner: { js: "import { createRequire as __etrCreateRequire } from 'node:module'; const require = __etrCreateRequire(import.meta.url);" },
  logLevel: "warning"
})
