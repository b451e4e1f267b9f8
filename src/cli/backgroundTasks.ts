/**
 * Where `exec --session` finds the sandbox host (`Process/SandboxHost`) its sandboxed background tasks run under:
 * `dist/cli/sandboxHost.js`, the package's own, beside the unbundled CLI (`dist/cli/`) and one directory up from the
 * bundle (`dist/bin/cli.cjs`, whose `import.meta.url` is its own).
 *
 * @internal
 */
import * as nodeFs from "node:fs"
import { fileURLToPath } from "node:url"
import type { Argv } from "../Process/Subprocess.js"

/**
 * The program that runs the sandbox host, or undefined where there is none (the sources run without a build): a
 * sandboxed task then ends with the run that started it.
 */
export const sandboxHost = (): Argv | undefined => {
  const entry = fileURLToPath(new URL("../cli/sandboxHost.js", import.meta.url))
  return nodeFs.existsSync(entry) ? [process.execPath, entry] : undefined
}
