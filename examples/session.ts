import { Effect } from "effect"
import { Session, ToolRuntime } from "effect-tool-runtime"
import type { Wire } from "effect-tool-runtime"
import { SessionRuntime } from "./readme.js" // the session's runtime, as in the loop example above

// The conversation: each model turn's tool_use blocks in, one Outcome per tool_use out (in model order), whose
// tool_result blocks go back in the next user message. Every turn runs on the same runtime, so the Edit of the
// second turn knows the file was Read in the first.
export const conversation = (cwd: string, turns: ReadonlyArray<ReadonlyArray<Wire.ToolUseBlock>>) =>
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
    [{
      type: "tool_use",
      id: "toolu_2",
      name: "Edit",
      input: { file_path: "notes.txt", old_string: "draft", new_string: "final" }
    }]
  ])
