import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import { bwrapArgs } from "../../../src/Tools/Shell/Sandbox.js"
import { bashLayer, isAlive, recordingContext, tempDir } from "./helpers.js"

const workspace = tempDir("bash-sandbox")

/** Why the sandbox cannot run here, or undefined when it can. */
const unavailable = ((): string | undefined => {
  const probe = childProcess.spawnSync("bwrap", [...bwrapArgs({ writable: [workspace], cwd: workspace }), "true"], {
    encoding: "utf8"
  })
  if (probe.error !== undefined) return `bwrap is not installed (${probe.error.message})`
  if (probe.status !== 0) return `bwrap cannot create a sandbox here: ${probe.stderr.trim()}`
  return undefined
})()
if (unavailable !== undefined) console.warn(`Skipping the bubblewrap sandbox tests: ${unavailable}`)

const run = (command: string) =>
  Effect.flatMap(BashTool, (bash) => Effect.exit(Effect.scoped(bash.plan({ command }).call(recordingContext()))))

describe("Bash in the bubblewrap sandbox", () => {
  it.live.skipIf(unavailable !== undefined)(
    "writes inside the workspace, not outside it",
    () =>
      Effect.gen(function*() {
        // Not under /tmp: the sandbox has a private /tmp, where the directory would not even exist.
        const outside = fs.mkdtempSync(
          path.join(fs.existsSync("/var/tmp") ? "/var/tmp" : process.cwd(), "bash-sandbox-outside-")
        )
        const exit = yield* run(`touch inside.txt && echo ok; touch ${outside}/escaped.txt 2>&1; echo "status $?"`)
        if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
        expect(exit.value.output).toMatch(
          /^ok\ntouch: cannot touch '.*escaped\.txt': Read-only file system\nstatus 1\n$/
        )
        expect(fs.existsSync(path.join(workspace, "inside.txt"))).toBe(true)
        expect(fs.existsSync(path.join(outside, "escaped.txt"))).toBe(false)
      }).pipe(Effect.provide(bashLayer(workspace, { sandbox: "bubblewrap" })))
  )

  it.live.skipIf(unavailable !== undefined)(
    "has no network: a server on the host's loopback is unreachable",
    () =>
      Effect.gen(function*() {
        const server = net.createServer((socket) => socket.end("hello\n"))
        yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
        const port = (server.address() as net.AddressInfo).port
        const reach = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`
        const outside = yield* run(reach).pipe(Effect.provide(bashLayer(workspace)))
        const inside = yield* run(reach)
        server.close()
        expect(Exit.isSuccess(outside) && outside.value.output).toBe("hello\n")
        expect(Exit.isFailure(inside)).toBe(true)
      }).pipe(Effect.provide(bashLayer(workspace, { sandbox: "bubblewrap" })))
  )

  it.live.skipIf(unavailable !== undefined)(
    "nothing survives the call, not even a setsid child",
    () =>
      Effect.gen(function*() {
        // A duration no other test uses (tests in other files run `sleep 1000` at the same time).
        const seconds = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`
        const exit = yield* run(`setsid sleep ${seconds} & echo started`)
        expect(Exit.isSuccess(exit)).toBe(true)
        // The sandbox has its own PID namespace: find the child by its command line on the host.
        const sleepers = childProcess.spawnSync("pgrep", ["-f", `^sleep ${seconds.replace(".", "\\.")}$`], {
          encoding: "utf8"
        }).stdout.split("\n").filter(Boolean).map(Number)
        expect(sleepers.filter(isAlive)).toEqual([])
      }).pipe(Effect.provide(bashLayer(workspace, { sandbox: "bubblewrap" })))
  )
})

describe("Bash sandbox configuration", () => {
  it.live("asking for the sandbox where bwrap is missing fails the layer, saying so", () =>
    Effect.gen(function*() {
      const savedPath = process.env.PATH
      process.env.PATH = tempDir("bash-empty-path")
      const exit = yield* Effect.exit(Layer.build(
        BashTool.layer({ sandbox: "bubblewrap" }).pipe(
          Layer.provide(Layer.mergeAll(Workspace.layer({ cwd: workspace }), ResultStore.layerMemory())),
          Layer.provide(NodeContext.layer)
        )
      )).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => (process.env.PATH = savedPath))))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return
      expect(exit.cause.error._tag).toBe("SandboxUnavailable")
      expect(exit.cause.error.message).toContain("`bwrap` is not installed")
    }))
})
