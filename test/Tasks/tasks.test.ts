/**
 * Background tasks with real processes: Bash `run_in_background` through the runtime, TaskOutput and TaskStop (and
 * their old names), the registry's statuses (exit code, killed, stopped at the cap), notifications (once), the stall
 * watchdog on the TestClock, and no process left behind when the owner goes away (scope close, runtime shutdown,
 * session end). Every task carries a marker in its environment, so what it left running can be found.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, TestClock } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Session } from "../../src/Session/Session.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { TaskRegistry } from "../../src/Tasks/TaskRegistry.js"
import type { TaskRegistryOptions } from "../../src/Tasks/TaskRegistry.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { BashTool } from "../../src/Tools/Bash.js"
import { builtinSessionLayer, builtinTools } from "../../src/Tools/index.js"
import { TaskOutputTool, TaskStopTool } from "../../src/Tools/Tasks.js"
import { isAlive, pollFor, processesWithMarker, readPids, tempDir } from "../support/index.js"

const marked = () => {
  const value = randomUUID()
  return { name: "TASKS_TEST_MARK", value, entry: `TASKS_TEST_MARK=${value}` }
}

const tools = [BashTool, TaskOutputTool, TaskStopTool] as const

/** A runtime with Bash (no sandbox, the marker in its environment), TaskOutput, TaskStop and a registry. */
const runtimeLayer = (cwd: string, mark: string, registry: Partial<TaskRegistryOptions> = {}) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(
      ToolRegistry.layer(tools).pipe(
        Layer.provide(Layer.mergeAll(
          BashTool.layer({ sandbox: "off", killGrace: "300 millis", env: { ...process.env, TASKS_TEST_MARK: mark } }),
          TaskOutputTool.layer,
          TaskStopTool.layer
        ))
      )
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()]),
    Layer.provideMerge(
      TaskRegistry.layer({ directory: path.join(cwd, ".tasks"), killGrace: "300 millis", ...registry })
    ),
    Layer.provide(Workspace.layer({ cwd })),
    Layer.provide(NodeContext.layer)
  )

const call = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input
})

const one = (block: ToolUseBlock) =>
  Effect.map(ToolRuntime.execute([block]), ([outcome]) => {
    const result = outcome!.result
    return { status: outcome!.status, text: typeof result.content === "string" ? result.content : "", outcome }
  })

const taskIdOf = (text: string): string => /ID: (task_[0-9a-f]+)/.exec(text)![1]!

describe("Bash run_in_background, TaskOutput, TaskStop", () => {
  it.live("a background sleep with a forked grandchild is listed, read and stopped; nothing marked is left", () => {
    const cwd = tempDir("tasks")
    const mark = marked()
    return Effect.gen(function*() {
      const started = yield* one(call("t1", "Bash", {
        command: "(setsid sleep 300 & echo $! > gc.pid); echo started; sleep 300",
        run_in_background: true,
        description: "sleeps"
      }))
      expect(started.status).toBe("success")
      expect(started.text).toMatch(/^Command running in background with ID: task_[0-9a-f]{8}\. Output is being written/)
      const id = taskIdOf(started.text)
      const [grandchild] = yield* pollFor(() => readPids(path.join(cwd, "gc.pid"), 1), 5_000)
      expect(isAlive(grandchild!)).toBe(true)
      expect(processesWithMarker(mark.entry).length).toBeGreaterThanOrEqual(2)

      const registry = yield* TaskRegistry
      const listed = yield* registry.list
      expect(listed.map((task) => [task.id, task.status._tag, task.command])).toEqual([
        [id, "Running", "(setsid sleep 300 & echo $! > gc.pid); echo started; sleep 300"]
      ])

      yield* pollFor(
        () => (fs.readFileSync(listed[0]!.outputPath, "utf8").includes("started") ? true : undefined),
        5000
      )
      const read = yield* one(call("t2", "TaskOutput", { task_id: id, block: false }))
      expect(read.text).toBe(`<task_id>${id}</task_id>\n<status>running</status>\n<output>\nstarted\n\n</output>`)
      // Read once: the next read has nothing new.
      const again = yield* one(call("t3", "BashOutput", { bash_id: id }))
      expect(again.text).toContain("<output>(no new output)</output>")

      const stopped = yield* one(call("t4", "KillShell", { shell_id: id }))
      expect(stopped.text).toBe(`Stopped task ${id} (${listed[0]!.command}): killed (stopped with TaskStop).`)
      expect(isAlive(grandchild!)).toBe(false)
      expect(processesWithMarker(mark.entry)).toEqual([])
      // The end was reported by TaskStop; a second stop says it had ended.
      const twice = yield* one(call("t5", "TaskStop", { task_id: id }))
      expect(twice.text).toBe(`Task ${id} had already ended: killed (stopped with TaskStop).`)
    }).pipe(Effect.provide(runtimeLayer(cwd, mark.value)))
  })

  it.live("a background command cancelled while its task starts leaves no process, whenever the cancel lands", () => {
    const cwd = tempDir("tasks")
    const mark = marked()
    return Effect.gen(function*() {
      const runtime = yield* ToolRuntime
      const cut = { mid: 0 }
      // Cancelled after 0, 1, 2, ... steps of the scheduler: before the spawn, during it, and after the task started.
      for (let steps = 0; steps < 16; steps++) {
        const [outcome] = yield* Effect.scoped(Effect.gen(function*() {
          const handle = yield* runtime.start([
            call(`t${steps}`, "Bash", { command: "sleep 300", run_in_background: true })
          ])
          for (let i = 0; i < steps; i++) yield* Effect.yieldNow()
          yield* handle.cancel
          return yield* handle.await
        }))
        if (outcome!.status === "interrupted" && String(outcome!.result.content).includes("while running")) cut.mid++
        // A task whose command was cancelled is stopped: nothing marked runs, and the registry runs nothing.
        yield* pollFor(() => (processesWithMarker(mark.entry).length === 0 ? true : undefined), 5_000)
        const running = (yield* (yield* TaskRegistry).list).filter((task) => task.status._tag === "Running")
        expect(running, `cancelled after ${steps} steps`).toEqual([])
      }
      // The sweep reached the case: cancels that landed once the call was running.
      expect(cut.mid).toBeGreaterThan(0)
    }).pipe(Effect.provide(runtimeLayer(cwd, mark.value)))
  })

  it.live("an unknown task id and a missing id are input errors naming what is known", () => {
    const cwd = tempDir("tasks")
    return Effect.gen(function*() {
      const unknown = yield* one(call("t1", "TaskOutput", { task_id: "task_nope" }))
      expect(unknown.status).toBe("error")
      expect(unknown.text).toContain("No background task with id \"task_nope\" in this session (none was started).")
      const missing = yield* one(call("t2", "TaskStop", {}))
      expect(missing.text).toContain("The required parameter `task_id` is missing.")
    }).pipe(Effect.provide(runtimeLayer(cwd, marked().value)))
  })

  it.live("a task that exits: its code, its output, its leftovers ended, one notification", () => {
    const cwd = tempDir("tasks")
    const mark = marked()
    return Effect.gen(function*() {
      const started = yield* one(call("t1", "Bash", {
        command: "sleep 300 & printf 'one\\ntwo\\n'; exit 3",
        run_in_background: true
      }))
      const id = taskIdOf(started.text)
      const registry = yield* TaskRegistry
      const notifications = yield* registry.awaitNotifications
      expect(notifications.map((n) => [n.kind, n.task.id, n.task.status])).toEqual([
        ["ended", id, { _tag: "Exited", code: 3 }]
      ])
      expect(notifications[0]!.text).toContain("<status>exited with code 3</status>")
      expect(processesWithMarker(mark.entry)).toEqual([])
      expect(yield* registry.takeNotifications).toEqual([])
      const read = yield* one(call("t2", "TaskOutput", { task_id: id }))
      expect(read.text).toBe(
        `<task_id>${id}</task_id>\n<status>exited with code 3</status>\n<output>\none\ntwo\n\n</output>`
      )
    }).pipe(Effect.provide(runtimeLayer(cwd, mark.value)))
  })

  it.live("a read that reports the final status takes the place of the notification", () =>
    Effect.gen(function*() {
      const registry = yield* TaskRegistry
      const task = yield* registry.start({
        command: "echo hi",
        argv: ["bash", "-c", "echo hi"],
        cwd: tempDir(),
        env: {}
      })
      const read = yield* registry.read(task.id, { block: true, timeout: "5 seconds" })
      expect([read.output, read.task.status]).toEqual(["hi\n", { _tag: "Exited", code: 0 }])
      expect(yield* registry.takeNotifications).toEqual([])
    }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks") }))))

  it.live("past the cap the task is stopped, its file cut to the cap, and its status says so", () => {
    const mark = marked()
    return Effect.gen(function*() {
      const registry = yield* TaskRegistry
      const task = yield* registry.start({
        command: "yes",
        argv: ["bash", "-c", "yes"],
        cwd: tempDir(),
        env: { PATH: process.env["PATH"]!, TASKS_TEST_MARK: mark.value }
      })
      const read = yield* registry.read(task.id, { block: true, timeout: "10 seconds" })
      expect(read.task.status).toEqual({ _tag: "StoppedAtCap", capBytes: 100 })
      expect(read.output).toBe("y\n".repeat(50))
      expect(fs.statSync(task.outputPath).size).toBe(100)
      expect(processesWithMarker(mark.entry)).toEqual([])
    }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks"), capBytes: 100 })))
  })

  it.live("without a registry, run_in_background is refused and the task tools are disabled", () => {
    const cwd = tempDir("tasks")
    const layer = ToolRuntime.layer.pipe(
      Layer.provideMerge(
        ToolRegistry.layer(tools).pipe(
          Layer.provide(Layer.mergeAll(BashTool.layer({ sandbox: "off" }), TaskOutputTool.layer, TaskStopTool.layer))
        )
      ),
      Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()]),
      Layer.provide(Workspace.layer({ cwd })),
      Layer.provide(NodeContext.layer)
    )
    return Effect.gen(function*() {
      const refused = yield* one(call("t1", "Bash", { command: "touch made", run_in_background: true }))
      expect(refused.text).toContain("run_in_background is not available in this runtime (it has no task registry)")
      expect(fs.existsSync(path.join(cwd, "made"))).toBe(false)
      const disabled = yield* one(call("t2", "TaskOutput", { task_id: "x" }))
      expect(disabled.status).toBe("error")
      expect(disabled.text).toContain("Background tasks are not available in this runtime")
    }).pipe(Effect.provide(layer))
  })
})

describe("every task dies with its owner", () => {
  const sleeper = (mark: string) => ({
    command: "setsid sleep 300 & sleep 300",
    argv: ["bash", "-c", "setsid sleep 300 & sleep 300"] as const,
    cwd: tempDir(),
    env: { PATH: process.env["PATH"]!, TASKS_TEST_MARK: mark }
  })
  const running = (mark: string) => pollFor(() => (processesWithMarker(mark).length >= 2 ? true : undefined), 5000)

  it.live("the scope that started it closes", () => {
    const mark = marked()
    return Effect.gen(function*() {
      yield* Effect.scoped(
        Effect.gen(function*() {
          const registry = yield* TaskRegistry
          yield* registry.start(sleeper(mark.value))
          yield* running(mark.entry)
        }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks"), killGrace: "300 millis" })))
      )
      expect(processesWithMarker(mark.entry)).toEqual([])
    })
  })

  it.live("the runtime shuts down", () => {
    const mark = marked()
    return Effect.gen(function*() {
      const runtime = ManagedRuntime.make(TaskRegistry.layer({ directory: tempDir("tasks"), killGrace: "300 millis" }))
      yield* Effect.promise(() =>
        runtime.runPromise(Effect.flatMap(TaskRegistry, (registry) => registry.start(sleeper(mark.value))))
      )
      yield* running(mark.entry)
      yield* Effect.promise(() => runtime.dispose())
      expect(processesWithMarker(mark.entry)).toEqual([])
    })
  })

  it.live("the session ends (the built-in tools' own registry in a temporary session)", () => {
    const cwd = tempDir("tasks")
    const mark = marked()
    const layer = ToolRuntime.layer.pipe(
      Layer.provideMerge(
        ToolRegistry.layer(builtinTools).pipe(
          Layer.provide(
            builtinSessionLayer({ bash: { sandbox: "off", env: { ...process.env, TASKS_TEST_MARK: mark.value } } })
          )
        )
      ),
      Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none]),
      Layer.provideMerge(Session.resultStore),
      Layer.provide(Workspace.layer({ cwd })),
      Layer.provideMerge(Session.layerTemp),
      Layer.provide(NodeContext.layer)
    )
    return Effect.gen(function*() {
      yield* Effect.scoped(
        Effect.gen(function*() {
          const started = yield* one(
            call("t1", "Bash", { command: "setsid sleep 300 & sleep 300", run_in_background: true })
          )
          expect(started.status).toBe("success")
          yield* running(mark.entry)
        }).pipe(Effect.provide(layer))
      )
      expect(processesWithMarker(mark.entry)).toEqual([])
    })
  })
})

describe("the stall watchdog", () => {
  const start = (script: string) =>
    Effect.gen(function*() {
      const registry = yield* TaskRegistry
      const task = yield* registry.start({ command: script, argv: ["bash", "-c", script], cwd: tempDir(), env: {} })
      yield* pollFor(() => (fs.statSync(task.outputPath).size > 0 ? true : undefined), 5000)
      return { registry, task }
    })
  const tick = Effect.gen(function*() {
    yield* TestClock.adjust("10 seconds")
    for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
  })

  it.effect("tells once when the output stopped at a line that looks like a prompt", () =>
    Effect.gen(function*() {
      const { registry, task } = yield* start("printf 'Overwrite config? [y/N] '; exec sleep 300")
      yield* tick
      expect(yield* registry.takeNotifications).toEqual([])
      yield* tick
      const told = yield* registry.takeNotifications
      expect(told.map((n) => [n.kind, n.task.id])).toEqual([["stalled", task.id]])
      expect(told[0]!.text).toContain(
        "has printed nothing for 10s and its last line looks like a prompt for input: \"Overwrite config? [y/N] \""
      )
      yield* tick
      expect(yield* registry.takeNotifications).toEqual([])
      yield* registry.stop(task.id)
    }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks"), stallAfter: "10 seconds" }))))

  it.effect("says nothing for output that stopped at a finished line", () =>
    Effect.gen(function*() {
      const { registry, task } = yield* start("echo 'compiling...'; exec sleep 300")
      yield* tick
      yield* tick
      yield* tick
      expect(yield* registry.takeNotifications).toEqual([])
      yield* registry.stop(task.id)
    }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks"), stallAfter: "10 seconds" }))))
})
