/**
 * A sandboxed background task in a registry without a sandbox host: its command is wrapped in this process's sandbox
 * (the real one, bwrap and socat), so it cannot outlive this process; a detaching registry stops it when it closes,
 * and the sandbox's mount points go with it. (With a host, `sandboxed.cli.e2e.test.ts` runs it end to end.)
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { TaskRegistry } from "../../src/Tasks/TaskRegistry.js"
import { BashTool } from "../../src/Tools/Bash.js"
import { TaskOutputTool } from "../../src/Tools/Tasks.js"
import { pollFor, processesWithMarker, tempDir } from "../support/index.js"
import { sandboxUnavailable } from "../Tools/Bash/helpers.js"

describe.skipIf(sandboxUnavailable !== undefined)("a sandboxed task without a sandbox host", () => {
  it.live("is stopped when a detaching registry closes, its sandbox with it; nothing marked is left", () => {
    const cwd = tempDir("tasks-sandboxed")
    const directory = path.join(cwd, ".tasks")
    const mark = randomUUID()
    const marked = () => processesWithMarker(`SANDBOXED_TASK_MARK=${mark}`)
    const layer = ToolRuntime.layer.pipe(
      Layer.provideMerge(
        ToolRegistry.layer([BashTool, TaskOutputTool]).pipe(
          Layer.provide(Layer.mergeAll(
            BashTool.layer({
              sandbox: { failIfUnavailable: true },
              killGrace: "300 millis",
              env: { ...process.env, SANDBOXED_TASK_MARK: mark }
            }),
            TaskOutputTool.layer
          ))
        )
      ),
      Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()]),
      Layer.provideMerge(TaskRegistry.layer({ directory, killGrace: "300 millis", onClose: "detach" })),
      Layer.provide(Workspace.layer({ cwd })),
      Layer.provide(NodeContext.layer)
    )
    return Effect.gen(function*() {
      const id = yield* Effect.gen(function*() {
        const [started] = yield* ToolRuntime.execute([{
          type: "tool_use",
          id: "t1",
          name: "Bash",
          input: {
            command: `touch ${path.dirname(cwd)}/outside-${mark}; echo "outside $?"; sleep 300`,
            run_in_background: true
          }
        }])
        const text = String(started?.result.content)
        const id = /ID: (task_[0-9a-f]+)/.exec(text)![1]!
        const log = path.join(directory, `${id}.log`)
        yield* pollFor(() => (fs.readFileSync(log, "utf8").includes("outside") ? true : undefined), 10_000)
        // Sandboxed: nothing outside the workspace could be written.
        expect(fs.readFileSync(log, "utf8")).toContain("Read-only file system")
        expect(marked().length).toBeGreaterThan(0)
        return id
      }).pipe(Effect.provide(layer))
      const record = JSON.parse(fs.readFileSync(path.join(directory, `${id}.json`), "utf8")) as {
        readonly status: { readonly _tag: string; readonly by?: string }
      }
      expect(record.status).toEqual({ _tag: "Killed", by: "owner" })
      expect(marked()).toEqual([])
      // The mount points of the protected paths the workspace lacks are gone too.
      expect(fs.readdirSync(cwd)).toEqual([".tasks"])
    })
  }, 20_000)
})
