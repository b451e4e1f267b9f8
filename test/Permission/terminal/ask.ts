/**
 * Runs one Edit through the real runtime, with the full permission policy (loading Claude Code's settings files
 * from the working directory) and the terminal approver on /dev/tty. Writes the outcome to the file named by the
 * first argument. Driven from a pseudo-terminal by `TerminalApprover.test.ts`.
 *
 * Usage: cd WORKSPACE && tsx ask.ts RESULT_FILE
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import * as TerminalApprover from "../../../src/Permission/TerminalApprover.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { loadSettings } from "../../../src/Settings/Settings.js"
import { describeReason } from "../../../src/Tool/Permission.js"
import { Edit, EditLive } from "../fixtures.js"

const [resultFile] = process.argv.slice(2)
const cwd = process.cwd()
const home = path.join(cwd, "home")

const program = Effect.gen(function*() {
  const outcome = yield* ToolRuntime.pipe(
    Effect.flatMap((runtime) =>
      runtime.executeOne({ type: "tool_use", id: "toolu_1", name: "Edit", input: { path: "src/a.ts" } })
    )
  )
  const reason = outcome.decision === undefined ? undefined : describeReason(outcome.decision.reason)
  fs.writeFileSync(resultFile!, JSON.stringify({ status: outcome.status, reason, result: outcome.result.content }))
})

const main = Effect.gen(function*() {
  // The person trusts this project: its local settings (where "always allow" saves rules) apply on the next run.
  const settings = yield* loadSettings({ claudeSettings: true, cwd, home, trustProject: true })
  const workspace = Workspace.layer({ cwd, home })
  const runtime = ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Edit]), Layer.succeed(Edit, EditLive))),
    Layer.provide([
      RulePolicy.layer({ settings }).pipe(Layer.provide(workspace)),
      TerminalApprover.layer(),
      ToolHooks.none,
      ResultStore.layerMemory()
    ])
  )
  yield* Effect.provide(program, runtime)
})

Effect.runPromise(main.pipe(Effect.provide(NodeContext.layer))).catch((error: unknown) => {
  fs.writeFileSync(resultFile!, JSON.stringify({ error: String(error) }))
  process.exitCode = 1
})
