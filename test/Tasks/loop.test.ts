/**
 * The agent loop tells the model when a background task ends, over the scripted Messages server: a task started in
 * turn 1 ends during turn 2, and its `<task-notification>` reaches the request of turn 3, exactly once (and never an
 * earlier one). Real processes: the task waits for a file the command of turn 2 creates, and that command waits
 * for the task's exit-code file, so the task has ended before turn 2's results are sent.
 */
import { FetchHttpClient } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as path from "node:path"
import * as AgentLoop from "../../src/Agent/AgentLoop.js"
import * as AnthropicMessages from "../../src/Agent/AnthropicMessages.js"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { TaskRegistry } from "../../src/Tasks/TaskRegistry.js"
import * as MessagesServer from "../../src/testing/MessagesServer.js"
import { BashTool } from "../../src/Tools/Bash.js"
import { TaskOutputTool, TaskStopTool } from "../../src/Tools/Tasks.js"
import { tempDir } from "../support/index.js"

const runtime = (cwd: string) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(
      ToolRegistry.layer([BashTool, TaskOutputTool, TaskStopTool]).pipe(
        Layer.provide(Layer.mergeAll(BashTool.layer({ sandbox: "off" }), TaskOutputTool.layer, TaskStopTool.layer))
      )
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()]),
    Layer.provideMerge(TaskRegistry.layer({ directory: path.join(cwd, ".tasks") })),
    Layer.provide(Workspace.layer({ cwd })),
    Layer.provide(NodeContext.layer)
  )

const notices = (request: unknown): number => JSON.stringify(request).split("<task-notification>").length - 1

describe("AgentLoop and background tasks", () => {
  it.live("a task started in turn 1 ends during turn 2; its notification reaches the request of turn 3 once", () =>
    Effect.scoped(Effect.gen(function*() {
      const cwd = tempDir("tasks-loop")
      let taskId = ""
      const server = yield* MessagesServer.make((request, index) => {
        if (index === 0) {
          return MessagesServer.Reply.Message({
            content: [MessagesServer.toolUse("toolu_1", "Bash", {
              command: "until [ -e go ]; do sleep 0.02; done; echo finished",
              run_in_background: true
            })]
          })
        }
        if (index === 1) {
          const text = JSON.stringify(request.messages.at(-1))
          taskId = /ID: (task_[0-9a-f]+)/.exec(text)![1]!
          const exitFile = /written to: (\S+)\.log/.exec(text)![1]! + ".exit"
          return MessagesServer.Reply.Message({
            content: [MessagesServer.toolUse("toolu_2", "Bash", {
              command: `touch go; until [ -e '${exitFile}' ]; do sleep 0.02; done`
            })]
          })
        }
        return MessagesServer.Reply.Message({ content: [MessagesServer.text("The task finished.")] })
      })
      const model = AnthropicMessages.layer({ model: "scripted", baseUrl: server.url, apiKey: Redacted.make("x") })
        .pipe(
          Layer.provide(FetchHttpClient.layer)
        )
      const notified: Array<AgentLoop.LoopEvent> = []
      const result = yield* AgentLoop.run({
        messages: [{ role: "user", content: "Run it in the background." }],
        onEvent: (event) => Effect.sync(() => void (event._tag === "TaskNotified" && notified.push(event)))
      }).pipe(
        Effect.provide(Layer.merge(runtime(cwd), model))
      )
      // A UI is told too: one event, for the request of turn 3.
      expect(notified).toEqual([expect.objectContaining({
        _tag: "TaskNotified",
        turn: 3,
        taskId,
        kind: "ended",
        status: "Exited"
      })])
      expect([result.stopReason, result.turns]).toEqual(["end_turn", 3])
      const sent = yield* server.requests
      expect(sent.map(notices)).toEqual([0, 0, 1])
      const last = (sent[2] as { messages: ReadonlyArray<{ role: string; content: unknown }> }).messages.at(-1)!
      expect(last.role).toBe("user")
      const blocks = last.content as ReadonlyArray<{ type: string; text?: string; tool_use_id?: string }>
      expect(blocks.map((block) => block.type)).toEqual(["tool_result", "text"])
      expect(blocks[1]!.text).toContain(`<task-id>${taskId}</task-id>`)
      expect(blocks[1]!.text).toContain("<status>exited with code 0</status>")
      // The history keeps it: it was sent once, and is not added again.
      expect(notices({ messages: result.messages })).toBe(1)
    })))
})
