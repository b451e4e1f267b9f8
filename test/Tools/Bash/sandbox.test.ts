/**
 * Bash in the sandbox (`Process/Sandbox`, sandbox-runtime over bubblewrap), for real: commands run in temp
 * workspaces and the host checks what they could write, read and reach. Skipped, saying why, where the sandbox
 * cannot run (CI installs bubblewrap and socat).
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Logger } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { Decision, DecisionReason } from "../../../src/Tool/Permission.js"
import type { BashSandboxOptions } from "../../../src/Tools/Bash.js"
import { BashTool, sandboxEscapeRefusal } from "../../../src/Tools/Bash.js"
import { bashLayer, isAlive, recordingContext, sandboxUnavailable, tempDir } from "./helpers.js"

/** A directory outside /tmp (sandbox-runtime keeps /tmp/claude writable, nothing else there). */
const outsideDir = () =>
  fs.mkdtempSync(path.join(fs.existsSync("/var/tmp") ? "/var/tmp" : process.cwd(), "bash-sandbox-outside-"))

const asRule = Decision.Allow({
  reason: DecisionReason.Rule({ rule: "Bash", behavior: "allow", source: "session" })
})
const asReadOnly = Decision.Allow({ reason: DecisionReason.ReadOnly() })

const run = (command: string, decision: Decision = asRule, extra: Record<string, unknown> = {}) =>
  Effect.flatMap(
    BashTool,
    (bash) => Effect.exit(Effect.scoped(bash.plan({ command, ...extra }).call({ ...recordingContext(), decision })))
  )

const text = (exit: Exit.Exit<{ readonly output: string }, { readonly message: string }>): string =>
  Exit.isSuccess(exit)
    ? exit.value.output
    : exit.cause._tag === "Fail"
    ? exit.cause.error.message
    : String(exit.cause)

const sandboxed = (cwd: string, options: BashSandboxOptions = {}) =>
  bashLayer(cwd, { sandbox: { failIfUnavailable: true, ...options } })

// Each layer starts sandbox-runtime and probes it (a few hundred ms, seconds on a loaded machine); some tests build
// several.
describe.skipIf(sandboxUnavailable !== undefined)("Bash in the sandbox", { timeout: 30_000 }, () => {
  it.live("a command a rule allowed writes the workspace, not outside it, nor settings or .git internals", () => {
    const workspace = tempDir("bash-sandbox")
    const outside = outsideDir()
    fs.mkdirSync(path.join(workspace, ".git", "hooks"), { recursive: true })
    fs.writeFileSync(path.join(workspace, ".git", "config"), "[core]\n")
    fs.mkdirSync(path.join(workspace, ".claude"))
    fs.writeFileSync(path.join(workspace, ".claude", "settings.json"), "{}\n")
    return Effect.gen(function*() {
      const exit = yield* run(
        [
          "touch inside.txt && echo ok",
          `touch ${outside}/escaped.txt; echo "outside $?"`,
          `echo x >> .git/config; echo "config $?"`,
          `touch .git/hooks/pre-commit; echo "hook $?"`,
          `echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.json; echo "settings $?"`,
          `touch .claude/settings.local.json; echo "local $?"`
        ].join("\n")
      )
      const output = text(exit)
      expect(output).toMatch(/^ok$/m)
      for (const what of ["outside", "config", "hook", "settings", "local"]) expect(output).toMatch(`${what} 1`)
      expect(output).toContain("Read-only file system")
      expect(fs.existsSync(path.join(workspace, "inside.txt"))).toBe(true)
      expect(fs.existsSync(path.join(outside, "escaped.txt"))).toBe(false)
      expect(fs.readFileSync(path.join(workspace, ".git", "config"), "utf8")).toBe("[core]\n")
      expect(fs.readdirSync(path.join(workspace, ".git", "hooks"))).toEqual([])
      expect(fs.readFileSync(path.join(workspace, ".claude", "settings.json"), "utf8")).toBe("{}\n")
      // The mount point made for the missing settings.local.json is gone after the call.
      expect(fs.existsSync(path.join(workspace, ".claude", "settings.local.json"))).toBe(false)
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("a command allowed because it is read-only writes nothing, not even in the workspace", () => {
    const workspace = tempDir("bash-sandbox-ro")
    return Effect.gen(function*() {
      // What a misclassified "read-only" command would try.
      const exit = yield* run("touch made.txt; echo \"touch $?\"", asReadOnly)
      expect(text(exit)).toMatch(/Read-only file system[\s\S]*touch 1/)
      expect(fs.existsSync(path.join(workspace, "made.txt"))).toBe(false)
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("a refusal by the sandbox is explained to the model in words it can act on", () => {
    const workspace = tempDir("bash-sandbox-words")
    return Effect.gen(function*() {
      const exit = yield* run("touch made.txt", asReadOnly)
      expect(Exit.isFailure(exit)).toBe(true)
      expect(text(exit)).toContain(
        "(the command ran in the sandbox and may have been refused by it: it ran read-only (it was allowed as a read-only command), so it could not write anything. Do not retry it unchanged: if it needs this, change the command, or tell the user what it needs so they can allow it with a rule.)"
      )
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("Read deny rules hide what they name", () => {
    const workspace = tempDir("bash-sandbox-read")
    fs.writeFileSync(path.join(workspace, ".env"), "SECRET=1\n")
    fs.writeFileSync(path.join(workspace, "open.txt"), "open\n")
    return Effect.gen(function*() {
      const exit = yield* run("cat open.txt; cat .env; echo \"env $?\"")
      const output = text(exit)
      expect(output).toContain("open\n")
      expect(output).not.toContain("SECRET")
      expect(output).toContain("env 1")
    }).pipe(Effect.provide(sandboxed(workspace, { unreadable: [path.join(workspace, ".env")] })))
  })

  it.live("no network: a server on the host's loopback is never reached, allowed or read-only", () => {
    const workspace = tempDir("bash-sandbox-net")
    let connections = 0
    const server = net.createServer((socket) => {
      connections += 1
      socket.end("hello\n")
    })
    return Effect.gen(function*() {
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as net.AddressInfo).port
      const reach = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n 1 <&3`
      const outside = yield* run(reach).pipe(Effect.provide(bashLayer(workspace)))
      expect(text(outside)).toBe("hello\n")
      connections = 0
      yield* run(reach)
      yield* run(reach, asReadOnly)
      yield* run(`curl -s -m 5 http://127.0.0.1:${port}/`)
      expect(connections).toBe(0)
    }).pipe(
      Effect.provide(sandboxed(workspace)),
      Effect.ensuring(Effect.sync(() => server.close()))
    )
  })

  it.live("an allowed domain is reached through the proxy by a command a rule allowed, not by a read-only one", () => {
    const workspace = tempDir("bash-sandbox-domain")
    let connections = 0
    const server = net.createServer((socket) => {
      connections += 1
      socket.end("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
    })
    return Effect.gen(function*() {
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as net.AddressInfo).port
      // Through the proxy (its NO_PROXY lets loopback addresses go direct, where there is no network).
      const fetch = `curl -s -m 5 --noproxy '' http://127.0.0.1:${port}/`
      const readOnly = yield* run(fetch, asReadOnly).pipe(
        Effect.provide(sandboxed(workspace, { allowedDomains: [`127.0.0.1:${port}`] }))
      )
      expect(connections).toBe(0)
      expect(text(readOnly)).not.toContain("hello")
      const allowed = yield* run(fetch).pipe(
        Effect.provide(sandboxed(workspace, { allowedDomains: [`127.0.0.1:${port}`] }))
      )
      expect(text(allowed)).toBe("hello\n")
      expect(connections).toBe(1)
    }).pipe(Effect.ensuring(Effect.sync(() => server.close())))
  })

  it.live("a command's first connection goes through the proxy even when the sandbox's listener is slow to start", () => {
    // sandbox-runtime starts the sandbox's end of the proxy bridge (socat listening on a loopback port inside the
    // sandbox) in the background and runs the command at once; on a busy machine the command connected before it
    // listened and failed (curl exit 7). A socat that takes its time to listen stands in for the busy machine.
    const workspace = tempDir("bash-sandbox-slow-bridge")
    const shims = tempDir("bash-sandbox-socat")
    const socat = childProcess.execFileSync("sh", ["-c", "command -v socat"], { encoding: "utf8" }).trim()
    fs.writeFileSync(
      path.join(shims, "socat"),
      `#!/bin/sh\ncase "$1" in TCP-LISTEN:*) sleep 1 ;; esac\nexec ${socat} "$@"\n`,
      { mode: 0o755 }
    )
    const env = { ...process.env, PATH: `${shims}:${process.env.PATH ?? ""}` }
    let connections = 0
    const server = net.createServer((socket) => {
      connections += 1
      socket.end("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
    })
    return Effect.gen(function*() {
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as net.AddressInfo).port
      const allowed = yield* run(`curl -s -m 5 --noproxy '' http://127.0.0.1:${port}/; echo "curl $?"`).pipe(
        Effect.provide(
          bashLayer(workspace, { env, sandbox: { failIfUnavailable: true, allowedDomains: [`127.0.0.1:${port}`] } })
        )
      )
      expect(text(allowed)).toBe("hello\ncurl 0\n")
      expect(connections).toBe(1)
    }).pipe(Effect.ensuring(Effect.sync(() => server.close())))
  })

  it.live("nothing survives the call, not even a setsid child", () => {
    const workspace = tempDir("bash-sandbox-tree")
    return Effect.gen(function*() {
      // A duration no other test uses (tests in other files run `sleep 1000` at the same time).
      const seconds = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`
      const exit = yield* run(`setsid sleep ${seconds} & echo started`)
      expect(Exit.isSuccess(exit)).toBe(true)
      // The sandbox has its own PID namespace: find the child by its command line on the host.
      const sleepers = childProcess.spawnSync("pgrep", ["-f", `^sleep ${seconds.replace(".", "\\.")}$`], {
        encoding: "utf8"
      }).stdout.split("\n").filter(Boolean).map(Number)
      expect(sleepers.filter(isAlive)).toEqual([])
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("the timeout stops a sandboxed command", () => {
    const workspace = tempDir("bash-sandbox-timeout")
    return Effect.gen(function*() {
      const exit = yield* run("sleep 30", asRule, { timeout: 500 })
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error.reason).toBe("timeout")
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("excludedCommands run outside the sandbox", () => {
    const workspace = tempDir("bash-sandbox-excluded")
    const outside = outsideDir()
    return Effect.gen(function*() {
      const exit = yield* run(`touch ${outside}/made.txt`)
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(fs.existsSync(path.join(outside, "made.txt"))).toBe(true)
    }).pipe(Effect.provide(sandboxed(workspace, { excludedCommands: ["touch:*"] })))
  })

  it.live("dangerouslyDisableSandbox is refused unless allowUnsandboxedCommands is on; then it asks and runs outside", () => {
    const workspace = tempDir("bash-sandbox-escape")
    const outside = outsideDir()
    const command = `touch ${outside}/made.txt`
    return Effect.gen(function*() {
      const refused = yield* Effect.flatMap(
        BashTool,
        (bash) => Effect.exit(bash.plan({ command, dangerouslyDisableSandbox: true }).validate(recordingContext()))
      )
      expect(Exit.isFailure(refused) && String(refused.cause)).toContain(sandboxEscapeRefusal)
      const allowed = yield* Effect.flatMap(BashTool, (bash) =>
        Effect.gen(function*() {
          const invocation = bash.plan({ command, dangerouslyDisableSandbox: true })
          yield* invocation.validate(recordingContext())
          const check = yield* invocation.checkPermissions(recordingContext())
          expect(check._tag).toBe("Ask")
          return yield* Effect.exit(Effect.scoped(invocation.call({ ...recordingContext(), decision: asRule })))
        })).pipe(Effect.provide(sandboxed(workspace, { allowUnsandboxedCommands: true })))
      expect(Exit.isSuccess(allowed)).toBe(true)
      expect(fs.existsSync(path.join(outside, "made.txt"))).toBe(true)
    }).pipe(Effect.provide(sandboxed(workspace)))
  })

  it.live("autoAllowBashIfSandboxed lets a sandboxed command no rule decides run without asking", () => {
    const workspace = tempDir("bash-sandbox-auto")
    const check = (options: BashSandboxOptions) =>
      Effect.flatMap(BashTool, (bash) => bash.plan({ command: "touch a.txt" }).checkPermissions(recordingContext()))
        .pipe(Effect.provide(sandboxed(workspace, options)))
    return Effect.gen(function*() {
      expect((yield* check({}))._tag).toBe("Passthrough")
      expect((yield* check({ autoAllowBashIfSandboxed: true }))._tag).toBe("Allow")
      expect((yield* check({ autoAllowBashIfSandboxed: true, excludedCommands: ["touch:*"] }))._tag).toBe("Passthrough")
    })
  })
})

describe("Bash sandbox configuration", () => {
  const withPath = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.suspend(() => {
      const savedPath = process.env.PATH
      process.env.PATH = tempDir("bash-empty-path")
      return effect.pipe(Effect.ensuring(Effect.sync(() => (process.env.PATH = savedPath))))
    })
  const build = (sandbox: "bubblewrap" | BashSandboxOptions | undefined, cwd: string) =>
    Effect.exit(Layer.build(
      BashTool.layer(sandbox === undefined ? {} : { sandbox }).pipe(
        Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layerMemory())),
        Layer.provide(NodeContext.layer)
      )
    )).pipe(Effect.scoped)

  it.live("a required sandbox where bwrap is missing fails the layer, saying so", () =>
    Effect.gen(function*() {
      const cwd = tempDir("bash-sandbox-missing")
      for (const sandbox of ["bubblewrap", { failIfUnavailable: true }] as const) {
        const exit = yield* withPath(build(sandbox, cwd))
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return
        expect(exit.cause.error._tag).toBe("SandboxUnavailable")
        expect(exit.cause.error.message).toMatch(/bubblewrap|bwrap/)
      }
    }))

  it.live("the warning goes where the options say (the CLI's stderr), once, when the first command needs the sandbox", () =>
    Effect.gen(function*() {
      const lines: Array<string> = []
      const cwd = tempDir("bash-sandbox-warn")
      const env = { ...process.env }
      yield* withPath(
        Effect.gen(function*() {
          const context = yield* Layer.build(
            BashTool.layer({ env, sandbox: { warn: (line) => lines.push(line) } }).pipe(
              Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layerMemory())),
              Layer.provide(NodeContext.layer)
            )
          )
          // Nothing is checked before a command needs the sandbox (an exec of one Read never pays for it).
          expect(lines).toHaveLength(0)
          expect(text(yield* run("echo one").pipe(Effect.provide(context)))).toBe("one\n")
          expect(text(yield* run("echo two").pipe(Effect.provide(context)))).toBe("two\n")
        }).pipe(Effect.scoped)
      )
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(/^Bash: the sandbox cannot run here, so commands run with the permission analysis alone/)
    }))

  it.live("a first command interrupted while the sandbox starts leaves the sandbox to the next command", () =>
    Effect.gen(function*() {
      const cwd = tempDir("bash-sandbox-first-interrupted")
      const env = { ...process.env }
      const context = yield* Layer.build(
        BashTool.layer({ env, sandbox: { warn: () => {} } }).pipe(
          Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layerMemory())),
          Layer.provide(NodeContext.layer)
        )
      )
      // The first command starts the sandbox (a few processes, tens of ms): interrupted in the middle of that.
      const first = yield* Effect.fork(run("echo one").pipe(Effect.provide(context)))
      yield* Effect.sleep("5 millis")
      // Still starting then: the first command was interrupted, not finished.
      expect(Exit.isInterrupted(yield* Fiber.interrupt(first))).toBe(true)
      expect(text(yield* run("echo two").pipe(Effect.provide(context)))).toBe("two\n")
    }).pipe(Effect.scoped))

  it.live("by default, where the sandbox cannot run, one warning says so and commands still run", () =>
    Effect.gen(function*() {
      const cwd = tempDir("bash-sandbox-fallback")
      const warnings: Array<string> = []
      const logger = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ logLevel, message }) => {
          if (logLevel._tag === "Warning") warnings.push(String(message))
        })
      )
      const env = { ...process.env }
      const exit = yield* withPath(
        Effect.flatMap(
          Layer.build(
            BashTool.layer({ env }).pipe(
              Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layerMemory())),
              Layer.provide(NodeContext.layer)
            )
          ),
          (context) => run("echo fine").pipe(Effect.provide(context))
        ).pipe(Effect.provide(logger))
      )
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(
        /^Bash: the sandbox cannot run here, so commands run with the permission analysis alone: .*(bubblewrap|bwrap)/
      )
      expect(text(exit)).toBe("fine\n")
    }).pipe(Effect.scoped))
})
