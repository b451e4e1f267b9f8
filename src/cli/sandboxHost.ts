/**
 * The sandbox host's program (`Process/SandboxHost`): `node dist/cli/sandboxHost.js <request JSON> <program>
 * [args...]` runs one command in the OS sandbox and holds the sandbox while it runs. `exec --session` starts a
 * sandboxed background task under it, so the task outlives the run. This file does nothing else.
 *
 * @internal
 */
import { main } from "../Process/SandboxHost.js"

main(process.argv.slice(2))
