/**
 * Honest prompts, end to end: Bash commands that hide what they do behind control, bidi and invisible characters go
 * through the runtime in a real git repository (full policy, default mode, an approver that records what it was
 * asked and denies). Nothing runs, and the prompt the terminal would print spells every hidden character out.
 * Benign commands with ordinary unicode and backslashes run without asking.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { renderRequest } from "../../src/Permission/TerminalApprover.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { BashTool } from "../../src/Tools/Bash.js"
import { gitRepo, tempDir } from "../Tools/Bash/helpers.js"

/** Code points no terminal shows as themselves (the test's own list: C0 but LF, DEL, C1, format, separators...). */
const hiddenCodePoint = (code: number): boolean =>
  (code <= 0x1f && code !== 0x0a) || (code >= 0x7f && code <= 0xa0) || code === 0xad ||
  (code >= 0x200b && code <= 0x200f) ||
  (code >= 0x2028 && code <= 0x202e) || (code >= 0x2060 && code <= 0x206f) || code === 0xfeff ||
  (code >= 0xe0000 && code <= 0xe007f)
const hiddenIn = (text: string) => Array.from(text).filter((char) => hiddenCodePoint(char.codePointAt(0)!))

/** [command, what the prompt must show of it] */
const hostile: ReadonlyArray<readonly [string, string]> = [
  ["touch PWNED; git status #\r\x1b[2Kgit status", "touch PWNED; git status #\\r\\x1b[2Kgit status"],
  ["touch PWNED #\x1b[1A\x1b[2K\rls", "touch PWNED #\\x1b[1A\\x1b[2K\\rls"],
  ["ls \u202e; touch PWNED \u202c", "ls <U+202E>; touch PWNED <U+202C>"],
  ["echo ok\u2066; touch PWNED\u2069", "echo ok<U+2066>; touch PWNED<U+2069>"],
  ["touch\u00a0PWNED", "touch<U+00A0>PWNED"],
  ["touch PWNED\u200b", "touch PWNED<U+200B>"],
  ["touch PWNED\ufeff", "touch PWNED<U+FEFF>"],
  [
    "touch PWNED #\b\b\b\b\b\b\b\b\b\b\b\bls   ",
    "touch PWNED #\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x08\\x08ls   "
  ],
  ["touch PWNED #\u009b2K", "touch PWNED #\\x9b2K"],
  ["touch PWNED\u2028echo fine", "touch PWNED<U+2028>echo fine"],
  ["touch PWNED\u{e0041}\u{e0042}", "touch PWNED<U+E0041><U+E0042>"],
  ["touch P\\rWNED", "touch P\\\\rWNED"]
]

const benign = [
  "echo 'héllo wörld'",
  "echo '日本語のテキスト'",
  "grep -c 'Demo' README.md",
  "echo 'a\\.b'",
  "printf 'x\\ny\\n'",
  "ls -la",
  "wc -l README.md",
  "git status --short",
  "git log --oneline -1",
  "head -1 README.md",
  "echo '😀 ❤ ✓'"
]

const runtimeIn = (cwd: string, asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>) => {
  const workspace = Workspace.layer({ cwd })
  const tools = BashTool.layer({ killGrace: "200 millis" }).pipe(
    Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(tempDir("honest-store"))))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), tools)),
    Layer.provide([
      RulePolicy.layer({ mode: "default" }).pipe(Layer.provide(workspace)),
      Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked),
      ToolHooks.none,
      ResultStore.layer(tempDir("honest-results"))
    ]),
    Layer.provide(NodeContext.layer)
  )
}

describe("honest prompts, end to end", () => {
  it.live(`${hostile.length} disguised commands: none runs, and each prompt spells out what it hides`, () => {
    const repo = gitRepo()
    return Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcomes = yield* ToolRuntime.execute(
        hostile.map(([command], i) => ({
          type: "tool_use" as const,
          id: `toolu_${i}`,
          name: "Bash",
          input: { command }
        }))
      ).pipe(Effect.provide(runtimeIn(repo, asked)))
      expect(outcomes.map((outcome) => outcome.status)).toEqual(hostile.map(() => "denied"))
      expect(fs.existsSync(path.join(repo, "PWNED"))).toBe(false)
      const requests = yield* Ref.get(asked)
      expect(requests).toHaveLength(hostile.length)
      for (const [i, [command, shown]] of hostile.entries()) {
        const request = requests.find((r) => (r.input as { command: string }).command === command)!
        const prompt = renderRequest(request)
        expect(hiddenIn(prompt), JSON.stringify(command)).toEqual([])
        expect(prompt, `case ${i}`).toContain(`  │ ${shown}`)
      }
    })
  }, 60_000)

  it.live(`${benign.length} ordinary commands with unicode and backslashes run without asking`, () => {
    const repo = gitRepo()
    return Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcomes = yield* ToolRuntime.execute(
        benign.map((command, i) => ({ type: "tool_use" as const, id: `toolu_${i}`, name: "Bash", input: { command } }))
      ).pipe(Effect.provide(runtimeIn(repo, asked)))
      expect(outcomes.map((outcome) => `${outcome.status} ${benign[outcomes.indexOf(outcome)]}`)).toEqual(
        benign.map((c) => `success ${c}`)
      )
      expect(yield* Ref.get(asked)).toEqual([])
    })
  }, 60_000)
})
