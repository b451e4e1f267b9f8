/**
 * Sandboxed background tasks from the command line, end to end with the built CLI and the real OS sandbox (bwrap and
 * socat; `sandbox.failIfUnavailable`, so the commands really are sandboxed): `exec --session DIR` starts a task under
 * a sandbox host of its own (`SandboxHost.program()`) and exits; the task keeps its sandbox (the file system outside
 * the workspace read-only, an allowed host reached through the proxy after the run ended); later runs read it
 * (TaskOutput) and stop it (TaskStop), and a signal to a run stops it with the run. Tasks carry a marker in their
 * environment, so nothing left running (host, bridges, sandbox) goes unseen, nor the sandbox's mount points.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanUp, ensureBuilt, output, root, run, start, toolUse, waitUntil, workspace } from "../cli/helpers.js"
import type { WithTasks } from "../cli/helpers.js"
import { markChildren } from "../support/index.js"
import { sandboxUnavailable } from "../Tools/Bash/helpers.js"

const marked = markChildren("SANDBOXED_TASKS_MARK")

beforeAll(ensureBuilt, 120_000)
afterAll(() => {
  for (const pid of marked()) process.kill(pid, "SIGKILL")
  cleanUp()
})

type Where = ReturnType<typeof workspace>

/** The sandbox required (a run fails rather than run commands unsandboxed), with the hosts commands may reach. */
const sandboxRequired = (where: Where, allowedDomains: ReadonlyArray<string> = []): string => {
  const file = path.join(where.home, "sandbox.json")
  fs.writeFileSync(
    file,
    JSON.stringify({ sandbox: { enabled: true, failIfUnavailable: true, network: { allowedDomains } } })
  )
  return file
}

const args = (where: Where, settings: string) => [
  "exec",
  "--session",
  path.join(where.dir, ".session"),
  "--approve",
  "allow",
  "--settings",
  settings,
  "--no-claude-settings"
]

const exec = async (where: Where, settings: string, uses: ReadonlyArray<unknown>) =>
  output(await run(where, args(where, settings), uses)) as unknown as WithTasks

const taskId = (result: WithTasks): string => /ID: (task_[0-9a-f]+)/.exec(result.results[0]!.content)![1]!
const log = (where: Where, id: string) =>
  fs.readFileSync(path.join(where.dir, ".session", "tasks", `${id}.log`), "utf8")

/** What the workspace holds besides the session: the sandbox's mount points would show here while they exist. */
const workspaceFiles = (where: Where) => fs.readdirSync(where.dir).filter((name) => name !== ".session").sort()

describe.skipIf(sandboxUnavailable !== undefined)("exec --session and sandboxed background tasks", () => {
  it("a sandboxed task outlives its run with its sandbox; later runs read it and stop it, leaving nothing", {
    timeout: 30_000
  }, async () => {
    const where = workspace()
    const outside = path.join(where.home, "escaped")
    let connections = 0
    const server = net.createServer((socket) => {
      connections += 1
      socket.end("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n")
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    try {
      const port = (server.address() as net.AddressInfo).port
      const settings = sandboxRequired(where, [`127.0.0.1:${port}`])
      const first = await exec(where, settings, [
        toolUse("t1", "Bash", {
          command: [
            `touch ${outside}; echo "outside $?"`,
            "until [ -e go ]; do sleep 0.02; done",
            // Through the proxy (its NO_PROXY lets loopback go direct, where the sandbox has no network).
            `curl -s -m 5 --noproxy '' http://127.0.0.1:${port}/`,
            "(setsid sleep 300 &); sleep 300"
          ].join("\n"),
          run_in_background: true
        })
      ])
      const id = taskId(first)
      expect(first.task_notifications).toBeUndefined()
      // The run is over; its task still runs, in its sandbox.
      await waitUntil("the write outside the workspace", () => log(where, id).includes("outside"))
      expect(log(where, id)).toContain("Read-only file system")
      expect(fs.existsSync(outside)).toBe(false)
      // The network it was allowed is there after the run that started it has ended.
      fs.writeFileSync(path.join(where.dir, "go"), "")
      await waitUntil("the fetch through the proxy", () => log(where, id).includes("hello"))
      expect(connections).toBe(1)

      const second = await exec(where, settings, [toolUse("t2", "TaskOutput", { task_id: id, block: false })])
      expect(second.results[0]!.content).toMatch(
        new RegExp(`^<task_id>${id}</task_id>\\n<status>running</status>\\n<output>\\n[^]*outside 1\\nhello\\n`)
      )
      expect(marked().length).toBeGreaterThanOrEqual(3)

      const third = await exec(where, settings, [toolUse("t3", "TaskStop", { task_id: id })])
      expect(third.results[0]!.content).toMatch(
        new RegExp(`^Stopped task ${id} .*: killed \\(stopped with TaskStop\\)\\.$`, "s")
      )
      expect(marked()).toEqual([])
      // The host released the sandbox: no mount point of a protected path is left in the workspace.
      expect(workspaceFiles(where)).toEqual(["a.txt", "b.txt", "go"])
    } finally {
      server.close()
    }
  })

  it("a sandboxed task that ends by itself takes its sandbox with it; the next run reports it once", {
    timeout: 30_000
  }, async () => {
    const where = workspace()
    const settings = sandboxRequired(where)
    const first = await exec(where, settings, [
      toolUse("t1", "Bash", {
        command: "until [ -e go ]; do sleep 0.02; done; echo finished; exit 4",
        run_in_background: true
      })
    ])
    const id = taskId(first)
    fs.writeFileSync(path.join(where.dir, "go"), "")
    await waitUntil("the task's end", () => fs.existsSync(path.join(where.dir, ".session", "tasks", `${id}.exit`)))
    await waitUntil("the host, its bridges and its sandbox gone", () => marked().length === 0)
    expect(workspaceFiles(where)).toEqual(["a.txt", "b.txt", "go"])
    const second = await exec(where, settings, [toolUse("t2", "TaskOutput", { task_id: id, block: false })])
    expect(second.results[0]!.content).toBe(
      `<task_id>${id}</task_id>\n<status>exited with code 4</status>\n<output>\nfinished\n\n</output>`
    )
    expect(second.task_notifications).toBeUndefined()
  })

  it(
    "exec --end-session stops the session's sandboxed task and releases its sandbox",
    { timeout: 30_000 },
    async () => {
      const where = workspace()
      const settings = sandboxRequired(where)
      const first = await exec(where, settings, [
        toolUse("t1", "Bash", { command: "(setsid sleep 300 &); sleep 300", run_in_background: true })
      ])
      const id = taskId(first)
      await waitUntil("the task in its sandbox", () => marked().length >= 3)
      const ended = output(await run(where, [...args(where, settings), "--end-session"], "")) as unknown as WithTasks
      expect(ended.task_notifications?.map((n) => [n.task_id, n.status])).toEqual([[id, "Killed"]])
      expect(marked()).toEqual([])
      expect(workspaceFiles(where)).toEqual(["a.txt", "b.txt"])
    }
  )

  it("SIGTERM to a later run stops the session's sandboxed task with that run", { timeout: 30_000 }, async () => {
    const where = workspace()
    const settings = sandboxRequired(where)
    const first = await exec(where, settings, [
      toolUse("t1", "Bash", { command: "(setsid sleep 300 &); sleep 300", run_in_background: true })
    ])
    taskId(first)
    await waitUntil("the task in its sandbox", () => marked().length >= 3)
    const running = start(
      where,
      args(where, settings),
      JSON.stringify([toolUse("t2", "Bash", { command: "touch later && sleep 300" })])
    )
    await waitUntil("the later run's command", () => fs.existsSync(path.join(where.dir, "later")), 15_000)
    running.child.kill("SIGTERM")
    const finished = await running.finished
    output(finished, 143)
    // sandbox-runtime's mount point for the absent `.mcp.json` (a protected path) is an empty file on the host until
    // the task ends, and the later run reads it: an empty configuration file configures nothing, and says nothing.
    const unexpected = finished.stderr.split("\n").filter((line) => line !== "")
    expect({ left: marked(), stderr: unexpected }).toEqual({ left: [], stderr: [] })
    expect(workspaceFiles(where)).toEqual(["a.txt", "b.txt", "later"])
  })
})

describe.skipIf(sandboxUnavailable !== undefined)("the sandbox host (the built program, SandboxHost.program())", () => {
  const host = path.join(root, "dist", "Process", "internal", "sandboxHostMain.js")
  const request = (writable: ReadonlyArray<string>) =>
    JSON.stringify({ id: "host-test", policy: { writable, protectedPaths: [], unreadable: [], domains: [] } })
  const runHost = (cwd: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) =>
    spawnSync(process.execPath, [host, ...args], { cwd, env, encoding: "utf8", timeout: 20_000 })

  it("is where the built module says it is", async () => {
    const built = (await import(path.join(root, "dist", "Process", "SandboxHost.js"))) as {
      readonly program: () => ReadonlyArray<string> | undefined
    }
    expect(built.program()).toEqual([process.execPath, host])
  })

  it("runs the command in the sandbox with the host's output and exits with its code", () => {
    const where = workspace()
    const ran = runHost(where.dir, [request([where.dir]), "bash", "-c", `touch made ${where.home}/out; exit 3`])
    expect(ran.status).toBe(3)
    expect(ran.stdout + ran.stderr).toContain("Read-only file system")
    expect(fs.existsSync(path.join(where.dir, "made"))).toBe(true)
    expect(fs.existsSync(path.join(where.home, "out"))).toBe(false)
  })

  it("refuses, saying why, where the sandbox cannot start: the command never runs unsandboxed", () => {
    const where = workspace()
    // A PATH with bash and nothing of the sandbox's (no bwrap, no socat).
    const bin = path.join(where.home, "bin")
    fs.mkdirSync(bin)
    fs.symlinkSync(spawnSync("which", ["bash"], { encoding: "utf8" }).stdout.trim(), path.join(bin, "bash"))
    const ran = runHost(where.dir, [request([where.dir]), "bash", "-c", "touch made"], { ...process.env, PATH: bin })
    expect(ran.status).toBe(126)
    expect(ran.stderr).toMatch(/^effect-tool-runtime sandbox host: .*bubblewrap \(bwrap\) not installed/)
    expect(fs.existsSync(path.join(where.dir, "made"))).toBe(false)
  })

  it("told to stop (SIGTERM), it stops the command, releases the sandbox and exits 143", async () => {
    const where = workspace()
    const out = path.join(where.home, "out")
    const hostProcess = spawn(process.execPath, [host, request([where.dir]), "bash", "-c", "echo in; sleep 300"], {
      cwd: where.dir,
      stdio: ["ignore", fs.openSync(out, "w"), "inherit"]
    })
    const exited = new Promise<number | null>((resolve) => hostProcess.once("exit", (code) => resolve(code)))
    await waitUntil("the command in its sandbox", () => fs.readFileSync(out, "utf8") === "in\n")
    // The sandbox's mount points for the protected paths the workspace lacks are there while it runs.
    expect(workspaceFiles(where)).toContain(".mcp.json")
    hostProcess.kill("SIGTERM")
    expect(await exited).toBe(143)
    expect(marked()).toEqual([])
    expect(workspaceFiles(where)).toEqual(["a.txt", "b.txt"])
  })

  it("an invalid request is refused before anything runs", () => {
    const where = workspace()
    const ran = runHost(where.dir, ["{}", "bash", "-c", "touch made"])
    expect(ran.status).toBe(2)
    expect(ran.stderr).toMatch(/^effect-tool-runtime sandbox host: the request is not valid: /)
    expect(fs.existsSync(path.join(where.dir, "made"))).toBe(false)
  })
})
