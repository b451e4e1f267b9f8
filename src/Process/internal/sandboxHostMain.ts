/**
 * The sandbox host's program (see `Process/SandboxHost`): `node dist/Process/internal/sandboxHostMain.js <request
 * JSON> <program> [args...]` runs one command in the OS sandbox and holds the sandbox while it runs. Nothing imports
 * this file; `SandboxHost.program` says where it is.
 *
 * @internal
 */
import { main } from "../SandboxHost.js"

main(process.argv.slice(2))
