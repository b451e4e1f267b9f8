/**
 * The sandbox's promise, as a property: a command run as read-only leaves the tree byte-for-byte unchanged and opens
 * no socket, whatever it tries. Commands are drawn from a pool of read-only ones (cat, ls, grep, head, wc, git log,
 * git status, ...) and of attempts that would write or connect (touch, redirections, sed -i, git commit, git config,
 * /dev/tcp, curl), joined with `;`, `&&`, `||` and `|`. Each runs two ways:
 * - through the runtime with the default policy and an approver that refuses: what is classified read-only is
 *   auto-allowed and runs read-only, the rest is never run;
 * - called with a read-only decision whatever it is (what a wrong "read-only" would get).
 * The oracle is the host's: every file's bytes, mode and link target under the repository (`.git` included) before
 * and after, and the connections a server on 127.0.0.1 counted.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fc from "effect/FastCheck"
import * as childProcess from "node:child_process"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { Approver } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { Decision, DecisionReason } from "../../../src/Tool/Permission.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import { gitRepo, recordingContext, sandboxUnavailable, tempDir } from "./helpers.js"

/** Every entry under `root`: its kind and, for files, a hash of its bytes and its mode; for links, the target. */
const snapshot = (root: string): Record<string, string> => {
  const entries: Record<string, string> = {}
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      const stat = fs.lstatSync(full)
      const key = path.relative(root, full)
      if (stat.isSymbolicLink()) entries[key] = `link ${fs.readlinkSync(full)}`
      else if (stat.isDirectory()) {
        entries[key] = `dir ${stat.mode.toString(8)}`
        walk(full)
      } else {
        const hash = crypto.createHash("sha256").update(fs.readFileSync(full)).digest("hex")
        entries[key] = `file ${stat.mode.toString(8)} ${hash}`
      }
    }
  }
  walk(root)
  return entries
}

let connections = 0
const server = net.createServer((socket) => {
  connections += 1
  socket.end("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nConnection: close\r\n\r\nhi\n")
})
let port = 0
beforeAll(() =>
  new Promise<void>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      port = (server.address() as net.AddressInfo).port
      resolve()
    })
  )
)
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

const repo = gitRepo()
const offRepo = gitRepo()
fs.mkdirSync(path.join(repo, "src"))
fs.writeFileSync(path.join(repo, "src", "a.txt"), "hello\nworld\n")
childProcess.execFileSync("git", ["add", "."], { cwd: repo })
childProcess.execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@t", "commit", "-qm", "src"], { cwd: repo })

const readOnly = [
  "cat README.md",
  "ls -la",
  "ls -R src",
  "grep -rn hello .",
  "head -n 2 src/a.txt",
  "wc -l README.md src/a.txt",
  "git log --oneline",
  "git status",
  "git diff",
  "find . -name '*.txt'",
  "sort src/a.txt",
  "tail -n 1 src/a.txt"
]
const attempts = [
  "touch new.txt",
  "echo x > README.md",
  "echo x >> src/a.txt",
  "rm -f README.md",
  "mkdir made",
  "sed -i s/hello/bye/ src/a.txt",
  "cp README.md copy.txt",
  "git commit --allow-empty -qm x",
  "git config user.name x",
  "git tag t",
  "chmod 600 README.md",
  "exec 3<>/dev/tcp/127.0.0.1/PORT",
  "curl -s -m 3 --noproxy '' http://127.0.0.1:PORT/"
]

const commands = fc.tuple(
  fc.array(fc.constantFrom(...readOnly, ...attempts), { minLength: 1, maxLength: 3 }),
  fc.constantFrom("; ", " && ", " || ", " | ")
).map(([parts, joint]) => parts.join(joint))

const withPort = (command: string) => command.replaceAll("PORT", String(port))

const workspace = Workspace.layer({ cwd: repo })
const tools = BashTool.layer({ killGrace: "200 millis", sandbox: { failIfUnavailable: true } }).pipe(
  Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(tempDir("bash-property-store"))))
)
const runtime = ToolRuntime.layer.pipe(
  Layer.provideMerge(ToolRegistry.layer([BashTool]).pipe(Layer.provideMerge(tools))),
  Layer.provide([
    RulePolicy.layer({}).pipe(Layer.provide(workspace)),
    Approver.denyAll,
    ToolHooks.none,
    ResultStore.layer(tempDir("bash-property-results"))
  ]),
  Layer.provide(NodeContext.layer)
)

let counter = 0
const ran = { readOnly: 0, refused: 0 }

describe.skipIf(sandboxUnavailable !== undefined)("the sandbox, as a property", () => {
  // One runtime for every run, as a session has one (starting sandbox-runtime per run was most of the file's time);
  // the live clock, as the runtime's timeouts need.
  layer(runtime, { excludeTestServices: true, timeout: "120 seconds" })((it) =>
    it.effect.prop(
      "a command run as read-only changes no byte of the tree and opens no socket",
      [commands],
      ([generated]) =>
        Effect.gen(function*() {
          const command = withPort(generated)
          const before = snapshot(repo)
          connections = 0
          // Through the runtime: read-only commands are auto-allowed and run read-only, the rest asks and is refused.
          const rt = yield* ToolRuntime
          const outcome = yield* rt.executeOne({
            type: "tool_use",
            id: `toolu_property_${++counter}`,
            name: "Bash",
            input: { command }
          })
          if (outcome.decision?._tag === "Allow") ran.readOnly += 1
          else ran.refused += 1
          // Called as read-only, whatever it is: what a wrong classification would get.
          const bash = yield* BashTool
          yield* Effect.exit(Effect.scoped(
            bash.plan({ command }).call({
              ...recordingContext(),
              decision: Decision.Allow({ reason: DecisionReason.ReadOnly() })
            })
          ))
          expect(snapshot(repo), command).toEqual(before)
          expect(connections, command).toBe(0)
        }),
      { timeout: 240_000, fastCheck: { numRuns: 30 } }
    )
  )

  it("the generator reached both classes: commands the runtime ran as read-only and commands it refused", () => {
    expect(ran.readOnly).toBeGreaterThan(0)
    expect(ran.refused).toBeGreaterThan(0)
  })

  it.live("the oracle sees a write and a connection when the sandbox is off", () =>
    Effect.gen(function*() {
      const before = snapshot(offRepo)
      connections = 0
      const bash = yield* BashTool
      const exit = yield* Effect.exit(Effect.scoped(
        bash.plan({ command: withPort("git tag t; exec 3<>/dev/tcp/127.0.0.1/PORT && head -n 1 <&3") }).call(
          recordingContext()
        )
      ))
      expect(Exit.isSuccess(exit)).toBe(true)
      expect(snapshot(offRepo)).not.toEqual(before)
      expect(connections).toBe(1)
    }).pipe(
      Effect.provide(
        BashTool.layer({ sandbox: "off" }).pipe(
          Layer.provide(Layer.mergeAll(
            Workspace.layer({ cwd: offRepo }),
            ResultStore.layer(tempDir("bash-property-off"))
          )),
          Layer.provide(NodeContext.layer)
        )
      )
    ))
})
