/**
 * What a consumer writes under strict + exactOptionalPropertyTypes + NodeNext: each public data type and option
 * object built without its optional fields, and with them given as maybe-undefined values (`T | undefined`, the way
 * a program passes what it read from the environment). Type-checked by `npm run typecheck` (this repository's
 * tsconfig has exactOptionalPropertyTypes) and, copied into a fresh project, against the published .d.ts by
 * test/package.test.ts. Imports only the package's entry points (no @effect/ai: that is `optional.ts`).
 */
import { Effect, Layer, Schema } from "effect"
import {
  ApprovalAnswer,
  Approver,
  Hooks,
  Permission,
  PermissionRule,
  PolicyVerdict,
  Presentation,
  ResultStore,
  Session,
  ToolErrors,
  ToolEvent,
  ToolRuntime
} from "effect-tool-runtime"
import type { ApprovalRequest, RunOptions } from "effect-tool-runtime"
import { arbitraryTurnOf, MessagesServer, runTurn } from "effect-tool-runtime/testing"
import type { TurnOfOptions } from "effect-tool-runtime/testing"
import { builtinLayer, builtinSessionLayer, PageReader, Workspace } from "effect-tool-runtime/tools"
import type { BuiltinOptions } from "effect-tool-runtime/tools"

const maybe = <A>(value: A): A | undefined => (process.env.CONSUMER_NONE === "1" ? undefined : value)

// Presentation
export const blocks = [
  Presentation.UiBlock.Code({ text: "ls" }),
  Presentation.UiBlock.Code({ text: "ls", language: maybe("sh") }),
  Presentation.UiBlock.Text({ text: "hello" }),
  Presentation.UiBlock.Notice({ level: "info", text: "ok" })
]

// Decisions and permission checks
export const reasons = [
  Permission.DecisionReason.User({ scope: "once" }),
  Permission.DecisionReason.User({ scope: "session", message: maybe("because") }),
  Permission.DecisionReason.Default({ message: "no rule" })
]
export const checks = [
  Permission.PermissionCheck.allow(),
  Permission.PermissionCheck.allow({ reason: maybe("fine"), updatedInput: maybe({ a: 1 }) }),
  Permission.PermissionCheck.ask("sure?"),
  Permission.PermissionCheck.ask("sure?", maybe(["Bash(ls)"]) ?? [], { overridable: maybe(true) }),
  Permission.PermissionCheck.passthrough()
]

// Approver answers
export const answers = [
  ApprovalAnswer.Deny({ cancelRun: false }),
  ApprovalAnswer.Deny({ message: maybe("no"), cancelRun: false }),
  ApprovalAnswer.AllowSession({ rules: [] })
]
export const approver = Layer.succeed(Approver, {
  ask: (request: ApprovalRequest) =>
    Effect.succeed(
      request.suggestions.length > 0 ? ApprovalAnswer.AllowSession({ rules: request.suggestions }) : answers[0]!
    )
})

// The scripted Messages API server's replies
export const replies: ReadonlyArray<MessagesServer.Reply> = [
  MessagesServer.Reply.Message({ content: [] }),
  MessagesServer.Reply.Message({ content: [MessagesServer.text("hi")], stopReason: maybe("end_turn" as const) }),
  MessagesServer.Reply.Truncated({ content: [], keep: maybe(2) }),
  MessagesServer.Reply.ToolUseWithoutId({ name: "Read", id: maybe("") })
]

// Options objects
export const runOptions: ReadonlyArray<RunOptions> = [{}, { mode: "batched", maxConcurrency: maybe(4) }]
export const builtin: ReadonlyArray<BuiltinOptions> = [{}, { bash: maybe({}), fileState: maybe({}) }]
export const turnOptions: ReadonlyArray<TurnOfOptions> = [{}, {
  maxLength: maybe(8),
  resources: maybe({ key: ["a", "b"] })
}]
export const layers = [
  Session.layer({ directory: ".session" }),
  Workspace.layer({ cwd: "." }),
  builtinLayer(),
  builtinLayer({ webFetch: maybe({}) }),
  builtinSessionLayer(),
  PageReader.layer(),
  PageReader.layer({ maxChars: maybe(1000) }),
  ResultStore.layerMemory
]
export const hooks = Hooks.layer({ cwd: "." })
export const hooksWithModel = Hooks.layer({
  cwd: ".",
  languageModel: maybe({ generateText: () => Effect.succeed({ text: "{\"ok\": true}" }) })
})

// Errors and events a consumer may build in a test double
export const errors = [new ToolErrors.UnknownTool({ name: "X", suggestions: [] })]
export const events = [ToolEvent, PolicyVerdict, PermissionRule, ToolRuntime]
export const turns = arbitraryTurnOf([], { resources: maybe({ key: ["a"] }) })
export const run = runTurn
export const schema = Schema.String
