/**
 * "Allow for this session" on a compound command. Claude Code offers rules for the parts of a compound command; ours
 * suggested nothing for one. Now each part gets its rule, offered only when together they allow the command, which
 * the next call proves; when no set of rules can allow it, none is offered and the prompt says so.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { BashTool } from "../../src/Tools/Bash.js"
import { analyze } from "../../src/Tools/Shell/Analysis.js"
import { decideBashRules } from "../../src/Tools/Shell/BashRule.js"
import { suggestRules } from "../../src/Tools/Shell/Suggestions.js"
import { bashLayer } from "../Tools/Bash/helpers.js"

const use = (id: string, command: string) => ({ type: "tool_use" as const, id, name: "Bash", input: { command } })

/** A runtime over the real Bash and the full rule policy; the approver answers "allow for this session" once. */
const runtimeWith = (asked: Array<ApprovalRequest>) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "cc-compound-")))
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "cc-compound-home-"))
  const approver = Approver.scripted((request) =>
    Effect.sync(() => {
      asked.push(request)
      return asked.length === 1 && request.suggestions.length > 0
        ? ApprovalAnswer.AllowSession({ rules: request.suggestions })
        : ApprovalAnswer.Deny({ cancelRun: false })
    })
  )
  const workspace = Workspace.layer({ cwd: dir, home })
  const policy = RulePolicy.layer({ grantsPath: path.join(home, "grants.json") }).pipe(
    Layer.provide(Layer.merge(workspace, NodeContext.layer))
  )
  return {
    dir,
    layer: ToolRuntime.layer.pipe(
      Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), bashLayer(dir))),
      Layer.provide([policy, approver, ToolHooks.none, ResultStore.layerMemory()]),
      Layer.provide(NodeContext.layer)
    )
  }
}

describe("allow for this session, compound commands", () => {
  it.effect("Claude Code suggests rules for the parts of `mkdir a && touch a/b`; so do we, and they allow it next time", () => {
    const asked: Array<ApprovalRequest> = []
    const { dir, layer } = runtimeWith(asked)
    return Effect.gen(function*() {
      const runtime = yield* ToolRuntime
      const first = yield* runtime.executeOne(use("u1", "mkdir a && touch a/b"))
      expect(first.status, JSON.stringify(first.result)).toBe("success")
      expect(asked[0]!.suggestions).toEqual(["Bash(mkdir:*)", "Bash(touch:*)"])
      fs.rmSync(path.join(dir, "a"), { recursive: true })
      // The same command again: the session's rules allow it without asking.
      const second = yield* runtime.executeOne(use("u2", "mkdir a && touch a/b"))
      expect(second.status).toBe("success")
      expect(second.decision).toMatchObject({ _tag: "Allow", reason: { _tag: "Rule" } })
      expect(asked).toHaveLength(1)
      expect(fs.existsSync(path.join(dir, "a", "b"))).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("a compound command no rule can allow gets no suggestion (the prompt says none can)", () => {
    const asked: Array<ApprovalRequest> = []
    const { layer } = runtimeWith(asked)
    return Effect.gen(function*() {
      const runtime = yield* ToolRuntime
      const outcome = yield* runtime.executeOne(use("u1", "touch x && f() { rm -rf /; }; f"))
      expect(outcome.status).toBe("denied")
      expect(asked[0]!.suggestions).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  const parts = ["npm test", "npm run build", "git status", "mkdir out", "touch out/x", "rm out/x", "make", "ls -la"]
  it.prop(
    "suggested rules, when offered, allow the very command they were suggested for",
    [fc.array(fc.constantFrom(...parts), { minLength: 2, maxLength: 4 }), fc.constantFrom(" && ", "; ", " || ")],
    ([commands, joiner]) => {
      const command = commands.join(joiner)
      const suggested = suggestRules(analyze(command))
      // Oracle, in plain words: every part is named by a rule, exactly or as a word prefix (`npm run build:*`).
      const names = (rule: string, part: string) =>
        rule === part ||
        (rule.endsWith(":*") && (part === rule.slice(0, -2) || part.startsWith(`${rule.slice(0, -2)} `)))
      for (const part of commands) {
        expect(suggested.some((rule) => names(rule, part)), `${part} in ${suggested}`).toBe(true)
      }
      // And the policy's own rule decision agrees that they allow the whole command.
      const verdict = decideBashRules(command, { deny: [], ask: [], allow: suggested.map((content) => ({ content })) })
      expect(verdict._tag).toBe("Allow")
    }
  )

  it("a single command keeps its one rule", () => {
    expect(suggestRules(analyze("npm run build"))).toEqual(["npm run build:*"])
    expect(suggestRules(analyze("eval \"$x\" && ls"))).toEqual([])
  })
})
