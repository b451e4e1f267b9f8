/**
 * Hooks from a project that is not trusted (issue 22, item 3) are not run, and not ignored either: a call one of them
 * matches (by matcher and `if`, whatever its event) asks, with a reason naming the hook and its file. Trusted, the
 * same hooks run. Real settings files in a temporary project, a real command hook, the full policy.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../src/Hooks/Hooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { loadClaudeSettings } from "../../src/Settings/Settings.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import * as Write from "../../src/Tools/Write.js"
import { tempDir } from "../support/index.js"

/** A project whose settings allow Write and hold hooks that leave a marker file when they run. */
const project = (matcher: string) => {
  const cwd = tempDir("untrusted-hooks")
  const home = tempDir("untrusted-hooks-home")
  const marker = path.join(home, "hook-ran")
  fs.mkdirSync(path.join(cwd, ".claude"))
  fs.writeFileSync(
    path.join(cwd, ".claude", "settings.json"),
    JSON.stringify({
      hooks: {
        PreToolUse: [{ matcher, hooks: [{ type: "command", command: `touch ${marker}` }] }],
        PostToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `touch ${marker}` }] }]
      }
    })
  )
  return { cwd, home, marker }
}

const run = (call: ToolUseBlock, trustProject: boolean, matcher = "Write") =>
  Effect.gen(function*() {
    const { cwd, home, marker } = project(matcher)
    const loaded = yield* loadClaudeSettings({ cwd, home, trustProject })
    const workspace = Workspace.layer({ cwd })
    const store = ResultStore.layer(tempDir("untrusted-hooks-store"))
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const tools = Write.layer.pipe(Layer.provide(Layer.mergeAll(workspace, store, FileState.layer())))
    const [outcome] = yield* ToolRuntime.execute([call]).pipe(
      Effect.provide(ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(ToolRegistry.layer([Write.Write]), tools)),
        Layer.provide([
          RulePolicy.layer({ mode: "acceptEdits" }).pipe(Layer.provide(workspace)),
          Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked),
          Hooks.layer({ cwd, home, ...Hooks.optionsFromSettings(loaded) }),
          store
        ])
      ))
    )
    return {
      outcome: outcome!,
      questions: (yield* Ref.get(asked)).map((request) => request.message),
      hookRan: fs.existsSync(marker),
      warnings: loaded.flatMap((file) => file.warnings.map((warning) => warning.message))
    }
  }).pipe(Effect.provide(NodeContext.layer))

const write: ToolUseBlock = {
  type: "tool_use",
  id: "toolu_write",
  name: "Write",
  input: { file_path: "notes.txt", content: "x\n" }
}

describe("hooks of a project that is not trusted", () => {
  it.effect("are not run, and a call they match asks, naming the hook and its file (acceptEdits would allow it)", () =>
    Effect.gen(function*() {
      const { hookRan, outcome, questions, warnings } = yield* run(write, false)
      expect(hookRan).toBe(false)
      expect(outcome.status).toBe("denied")
      expect(questions).toHaveLength(1)
      expect(questions[0]).toMatch(/^The hook touch .*hook-ran \(.*\.claude\/settings\.json: hooks\.PreToolUse\[0\]/)
      expect(questions[0]).toContain("the project is not trusted")
      expect(warnings.some((warning) => warning.includes("every call they match asks"))).toBe(true)
    }))

  it.effect("a call none of them matches runs as before, without asking", () =>
    Effect.gen(function*() {
      const { hookRan, outcome, questions } = yield* run(write, false, "Bash|Edit")
      expect(outcome.status).toBe("success")
      expect(questions).toEqual([])
      expect(hookRan).toBe(false)
    }))

  it.effect("trusted, the same hooks run and the call is allowed", () =>
    Effect.gen(function*() {
      const { hookRan, outcome, questions } = yield* run(write, true)
      expect(outcome.status).toBe("success")
      expect(questions).toEqual([])
      expect(hookRan).toBe(true)
    }))
})
