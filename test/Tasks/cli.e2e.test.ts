/**
 * Background tasks from the command line, end to end with the built CLI: `exec --session DIR` starts a task with
 * `run_in_background` and exits while the task goes on (detached, recorded in the session); later runs read it
 * (TaskOutput), stop it (TaskStop), and report a task that ended between runs once (`task_notifications`). A signal
 * to `exec` stops its tasks with the run, and so does `exec --end-session`. Tasks carry a marker in their
 * environment, so nothing is left unseen.
 */
import { randomInt } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cleanUp, ensureBuilt, output, run, start, toolUse, waitUntil, workspace } from "../cli/helpers.js"
import type { WithTasks } from "../cli/helpers.js"
import { markChildren } from "../support/index.js"

const marked = markChildren("TASKS_CLI_MARK")

beforeAll(ensureBuilt, 120_000)
afterAll(() => {
  for (const pid of marked()) process.kill(pid, "SIGKILL")
  cleanUp()
})

/** Without the OS sandbox (sandboxed tasks, under their sandbox host, are `sandboxed.cli.e2e.test.ts`'s). */
const unsandboxed = (where: ReturnType<typeof workspace>): string => {
  const file = path.join(where.home, "no-sandbox.json")
  fs.writeFileSync(file, JSON.stringify({ sandbox: { enabled: false } }))
  return file
}

const exec = async (where: ReturnType<typeof workspace>, session: string, uses: ReadonlyArray<unknown>) =>
  output(
    await run(where, ["exec", "--session", session, "--approve", "allow", "--settings", unsandboxed(where)], uses)
  ) as unknown as WithTasks

describe("exec --session and background tasks", () => {
  it("a task outlives the run that started it; later runs read it and stop it, leaving nothing", {
    timeout: 30_000
  }, async () => {
    const where = workspace()
    const session = path.join(where.dir, ".session")
    const first = await exec(where, session, [
      toolUse("t1", "Bash", {
        command: "(setsid sleep 300 &); echo started; sleep 300",
        run_in_background: true
      })
    ])
    const id = /ID: (task_[0-9a-f]+)/.exec(first.results[0]!.content)![1]!
    expect(first.task_notifications).toBeUndefined()
    // The run is over; its task and the grandchild that left the group run on.
    await waitUntil("the task's processes", () => marked().length >= 2)

    await waitUntil("its output", () => fs.readFileSync(path.join(session, "tasks", `${id}.log`), "utf8") !== "")
    const second = await exec(where, session, [toolUse("t2", "TaskOutput", { task_id: id, block: false })])
    expect(second.results[0]!.content).toBe(
      `<task_id>${id}</task_id>\n<status>running</status>\n<output>\nstarted\n\n</output>`
    )
    expect(marked().length).toBeGreaterThanOrEqual(2)

    const third = await exec(where, session, [toolUse("t3", "TaskStop", { task_id: id })])
    expect(third.results[0]!.content).toMatch(
      new RegExp(`^Stopped task ${id} .*: killed \\(stopped with TaskStop\\)\\.$`)
    )
    expect(third.task_notifications).toBeUndefined()
    expect(marked()).toEqual([])

    const fourth = await exec(where, session, [toolUse("t4", "TaskOutput", { task_id: id })])
    expect(fourth.results[0]!.content).toContain("<status>killed (stopped with TaskStop)</status>")
  })

  it("a task that ends between runs is reported by the next run, once", { timeout: 30_000 }, async () => {
    const where = workspace()
    const session = path.join(where.dir, ".session")
    const first = await exec(where, session, [
      toolUse("t1", "Bash", {
        command: "until [ -e go ]; do sleep 0.02; done; echo finished; exit 4",
        run_in_background: true
      })
    ])
    const id = /ID: (task_[0-9a-f]+)/.exec(first.results[0]!.content)![1]!
    fs.writeFileSync(path.join(where.dir, "go"), "")
    await waitUntil("the task's end", () => fs.existsSync(path.join(session, "tasks", `${id}.exit`)))
    const second = await exec(where, session, [])
    expect(second.task_notifications?.map((n) => [n.task_id, n.kind, n.status, n.exit_code])).toEqual([
      [id, "ended", "Exited", 4]
    ])
    const third = await exec(where, session, [])
    expect(third.task_notifications).toBeUndefined()
    expect(marked()).toEqual([])
  })

  it("exec --end-session ends the session: its running tasks are stopped, reported once, nothing left", {
    timeout: 30_000
  }, async () => {
    const where = workspace()
    const session = path.join(where.dir, ".session")
    const first = await exec(where, session, [
      toolUse("t1", "Bash", { command: "(setsid sleep 300 &); sleep 300", run_in_background: true }),
      toolUse("t2", "Bash", { command: "until [ -e go ]; do sleep 0.02; done; exit 3", run_in_background: true })
    ])
    const [running, quick] = first.results.map((result) => /ID: (task_[0-9a-f]+)/.exec(result.content)![1]!)
    expect(first.task_notifications).toBeUndefined()
    await waitUntil("the task's processes", () => marked().length >= 2)
    // One ends between the runs, the other is still running when the session ends.
    fs.writeFileSync(path.join(where.dir, "go"), "")
    await waitUntil("the quick task's end", () => fs.existsSync(path.join(session, "tasks", `${quick}.exit`)))
    // No turn: the input is empty.
    const args = ["exec", "--session", session, "--end-session", "--settings", unsandboxed(where)]
    const ended = output(await run(where, args, "")) as unknown as WithTasks
    expect(ended.results).toEqual([])
    expect(
      ended.task_notifications?.map((n) => [n.task_id, n.kind, n.status, n.exit_code]).sort()
    ).toEqual([[quick, "ended", "Exited", 3], [running, "ended", "Killed", undefined]].sort())
    expect(ended.task_notifications?.find((n) => n.task_id === running)?.text).toContain(
      "killed (its session or runtime ended)"
    )
    expect(marked()).toEqual([])
    // Reported once; the record keeps the final status.
    const after = await exec(where, session, [toolUse("t3", "TaskOutput", { task_id: running })])
    expect(after.task_notifications).toBeUndefined()
    expect(after.results[0]!.content).toContain("<status>killed (its session or runtime ended)</status>")
  })

  it("--end-session without --session is refused: the session already ends with the run", async () => {
    const where = workspace()
    const refused = await run(where, ["exec", "--end-session"], "")
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("--end-session needs --session DIR")
    expect(refused.stdout).toBe("")
  })

  it.for(["SIGINT", "SIGTERM"] as const)("%s to exec stops its background tasks with the run", {
    timeout: 30_000
  }, async (signal) => {
    const where = workspace()
    const seconds = `20.${randomInt(100_000, 1_000_000)}`
    const running = start(
      where,
      ["exec", "--session", path.join(where.dir, ".session"), "--approve", "allow", "--settings", unsandboxed(where)],
      JSON.stringify([
        toolUse("t1", "Bash", { command: "(setsid sleep 300 &); sleep 300", run_in_background: true }),
        toolUse("t2", "Bash", { command: `sleep ${seconds}` })
      ])
    )
    await waitUntil("the task and the foreground command", () => marked().length >= 3, 15_000)
    running.child.kill(signal)
    const finished = await running.finished
    output(finished, signal === "SIGINT" ? 130 : 143)
    expect({ left: marked(), stderr: finished.stderr }).toEqual({ left: [], stderr: "" })
  })
})
