import { FetchHttpClient } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import {
  AgentLoop,
  AnthropicMessages,
  Approver,
  renderEvent,
  Session,
  SessionPermissions,
  ToolHooks,
  ToolRegistry,
  ToolRuntime
} from "effect-tool-runtime"
import { builtinSessionLayer, builtinTools, Workspace } from "effect-tool-runtime/tools"

// 1. The model: Anthropic's Messages API, streamed (the key comes from ANTHROPIC_API_KEY). Options point it at a
//    gateway or at a scripted server (what `npm start` and the tests do); `EffectAiModel.layer` from
//    "effect-tool-runtime/ai" puts any @effect/ai LanguageModel here instead.
export const Claude = AnthropicMessages.layer({ model: "claude-sonnet-4-5" }).pipe(Layer.provide(FetchHttpClient.layer))

// 2. The runtime of one session, built once: the built-in tools (Read, Write, Edit, Glob, Grep, Bash, WebFetch),
//    the permission policy (acceptEdits: edits inside the workspace run without asking), an approver for the rest
//    (here: refuse), hooks, and the Session (what the model has read, rules allowed for the session, saved results).
export const SessionRuntime = (cwd: string) =>
  ToolRuntime.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      ToolRegistry.layer(builtinTools).pipe(Layer.provide(builtinSessionLayer())),
      SessionPermissions.policy({ mode: "acceptEdits" }),
      Approver.denyAll,
      ToolHooks.none
    )),
    Layer.provideMerge(Session.resultStore),
    Layer.provide(Workspace.layer({ cwd })),
    Layer.provideMerge(Session.layerTemp), // Session.layer({ directory }) keeps it between processes
    Layer.provide(NodeContext.layer)
  )

// 3. What a person sees: the model's text as it streams, and each call as the runtime governs it.
const show = (event: AgentLoop.LoopEvent): Effect.Effect<void> => {
  if (event._tag === "Text") return Effect.sync(() => void process.stdout.write(event.text))
  const line = event._tag === "Tool" ? renderEvent(event.event) : undefined
  return line === undefined ? Effect.void : Console.log(`\n${line}`)
}

// 4. The loop: the session's tool definitions go with each request; each tool_use runs through the runtime while
//    the model is still streaming; the tool_results go back in the next request; until the model is done.
export const program = (cwd: string, task: string) =>
  AgentLoop.run({
    system: "You are a careful coding agent. Read a file before you edit it.",
    messages: [{ role: "user", content: task }],
    maxTurns: 10,
    onEvent: show
  }).pipe(Effect.provide(SessionRuntime(cwd)))

// Effect.runPromise(program(process.cwd(), "Replace 'draft' with 'final' in notes.txt").pipe(Effect.provide(Claude)))
