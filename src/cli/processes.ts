/**
 * What a second signal kills before the CLI exits, when there is no time to ask the runtime: every process of every
 * subprocess run still going (Bash's shells, command hooks, ripgrep; escapees and the ones that ignore SIGTERM
 * included, see `Subprocess.killAllNow`), and any other direct child of this process (an MCP server over stdio).
 *
 * @internal
 */
import { childrenOf, killAllNow } from "../Process/Subprocess.js"

/** SIGKILL to every process tree this process started; synchronous, for a signal handler. */
export const killKnownTrees = (): void => {
  killAllNow()
  for (const child of childrenOf(process.pid)) {
    try {
      process.kill(child, "SIGKILL")
    } catch {
      // Gone meanwhile.
    }
  }
}
