/**
 * Fixture programs (TypeScript files a test starts as child processes) as plain JavaScript, built once per test
 * process. Run under `node --import tsx`, every child would load tsx's loader and transform the repository's sources
 * again (about two seconds of CPU a child, against a quarter of one for the bundle); tests that start dozens of
 * children spend most of their time there.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(__dirname, "../..")
/** Under the repository (git ignores `.tmp/`), so the bundle's package imports resolve from its node_modules. */
const directory = path.join(root, ".tmp", "programs")

const built = new Map<string, Promise<string>>()
const made: Array<string> = []

const removeMade = (): void => {
  for (const file of made.splice(0)) fs.rmSync(file, { force: true })
}

/**
 * The fixture program `entry` bundled with esbuild into one ES module: the repository's sources it imports are
 * inlined, packages stay imports from node_modules (as under tsx). Start it with `node <file> ...args`. Built once per
 * test process (a name of its own, so parallel test processes never share one), removed when the process exits.
 */
export const bundledProgram = (entry: string): Promise<string> => {
  const cached = built.get(entry)
  if (cached !== undefined) return cached
  const build = import("esbuild").then(async (esbuild) => {
    fs.mkdirSync(directory, { recursive: true })
    const outfile = path.join(
      directory,
      `${path.basename(entry, ".ts")}-${process.pid}-${randomBytes(4).toString("hex")}.mjs`
    )
    if (made.length === 0) process.once("exit", removeMade)
    made.push(outfile)
    await esbuild.build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent"
    })
    return outfile
  })
  built.set(entry, build)
  return build
}
