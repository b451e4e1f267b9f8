/**
 * Fixture programs (TypeScript files a test starts as child processes) as plain JavaScript, built once per test
 * process. Run under `node --import tsx`, every child would load tsx's loader and transform the repository's sources
 * again (about two seconds of CPU a child, against a quarter of one for the bundle); tests that start dozens of
 * children spend most of their time there.
 */
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"

const root = path.resolve(__dirname, "../..")
/**
 * A cache of the repository's node_modules (where tools keep theirs; git and eslint ignore it), so the bundle's
 * package imports resolve from there.
 */
const directory = path.join(root, "node_modules", ".cache", "effect-tool-runtime-tests", "programs")

const built = new Map<string, Promise<string>>()

/**
 * The fixture program `entry` bundled with esbuild into one ES module: the repository's sources it imports are
 * inlined, packages stay imports from node_modules (as under tsx). Start it with `node <file> ...args`.
 *
 * The file is named by its content and written atomically (a temporary file renamed), so test processes running at
 * once (of this checkout or another sharing its node_modules) share it safely, and none is ever removed from under
 * a process that runs it.
 */
export const bundledProgram = (entry: string): Promise<string> => {
  const cached = built.get(entry)
  if (cached !== undefined) return cached
  const build = import("esbuild").then(async (esbuild) => {
    const result = await esbuild.build({
      entryPoints: [entry],
      write: false,
      outfile: "program.mjs",
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "silent"
    })
    const code = result.outputFiles[0]!.contents
    const name = path.basename(entry, ".ts")
    const file = `${name}-${createHash("sha256").update(code).digest("hex").slice(0, 16)}.mjs`
    const outfile = path.join(directory, file)
    fs.mkdirSync(directory, { recursive: true })
    if (!fs.existsSync(outfile)) {
      const temporary = `${outfile}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
      fs.writeFileSync(temporary, code)
      fs.renameSync(temporary, outfile)
    }
    return outfile
  })
  built.set(entry, build)
  return build
}
