import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Approver, Session, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"
import type { ToolUseBlock } from "effect-tool-runtime"
import { builtinSessionLayer, builtinTools, Workspace } from "effect-tool-runtime/tools"

// 1. The runtime of one session, built once: the built-in tools (Read, Write, Edit, Glob, Grep, Bash), the
//    permission policy (acceptEdits: edits inside the workspace run without asking), an approver for the rest,
//    hooks, and the Session, which keeps what lasts across turns (what the model has read, the rules a person
//    allowed for the session, the directory where large results are saved).
const SessionRuntime = (cwd: string) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      ToolRegistry.layer(builtinTools).pipe(Layer.provide(builtinSessionLayer())),
      Session.permissions({ mode: "acceptEdits" }),
      Approver.denyAll,
      ToolHooks.none
    )),
    Layer.provideMerge(Session.resultStore),
    Layer.provide(Workspace.layer({ cwd })),
    Layer.provideMerge(Session.layerTemp), // Session.layer({ directory }) keeps it between processes
    Layer.provide(NodeContext.layer)
  )

// 2. The conversation: each model turn's tool_use blocks in, one Outcome per tool_use out (in model order), whose
//    tool_result blocks go back in the next user message. Every turn runs on the same runtime, so the Edit of the
//    second turn knows the file was Read in the first.
export const conversation = (cwd: string, turns: ReadonlyArray<ReadonlyArray<ToolUseBlock>>) =>
  Effect.gen(function*() {
    const replies = []
    for (const toolUses of turns) {
      const outcomes = yield* ToolRuntime.execute(toolUses)
      replies.push(outcomes.map((outcome) => outcome.result))
      yield* Session.checkpoint // saves the session (a no-op for a temporary one)
    }
    return replies
  }).pipe(Effect.provide(SessionRuntime(cwd)))

export const program = (cwd: string) =>
  conversation(cwd, [
    [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "notes.txt" } }],
    [{ type: "tool_use", id: "toolu_2", name: "Edit", input: { file_path: "notes.txt", old_string: "draft", new_string: "final" } }]
  ])
