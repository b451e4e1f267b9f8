/**
 * Symlinks against the workspace boundary (issue 22, item 3), end to end in a real git repository, through the
 * ToolRuntime with the full policy and a person who refuses everything:
 *
 * - a dangling symlink is not inside until its target is: `src/new -> /outside/created` is outside for Bash
 *   (`echo x > src/new`, `touch src/new` in acceptEdits) and for Write, and nothing is created outside; a dangling
 *   link to a place inside stays inside (acceptEdits writes through it without asking);
 * - allow rules match the real path: `Read(./src/**)` and `Edit(./src/**)` do not grant `src/link -> /outside/...`,
 *   and still grant the files really in `src`; deny rules still match the path as written;
 * - options that follow symlinks (`find -L`, `find -follow`, `grep -R`, `cp -L`...) out of the workspace ask.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../../src/Session/FileState.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { realPathSync, Workspace } from "../../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../../src/Tool/Wire.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import * as Edit from "../../../src/Tools/Edit.js"
import * as Read from "../../../src/Tools/Read.js"
import * as Write from "../../../src/Tools/Write.js"
import { gitRepo, tempDir } from "./helpers.js"

const SECRET = "LINKS-SECRET"

const fixture = () => {
  const repo = gitRepo()
  const outside = tempDir("links-outside")
  fs.writeFileSync(path.join(outside, "secret.txt"), `${SECRET}\n`)
  fs.mkdirSync(path.join(repo, "src"))
  fs.writeFileSync(path.join(repo, "src", "a.txt"), "inside a\n")
  // Dangling: its target does not exist yet.
  fs.symlinkSync(path.join(outside, "created"), path.join(repo, "src", "new"))
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(repo, "src", "link"))
  fs.symlinkSync(outside, path.join(repo, "out"))
  fs.symlinkSync(outside, path.join(repo, "src", "dir"))
  // Dangling, but into the workspace.
  fs.symlinkSync("made.txt", path.join(repo, "src", "later"))
  return { repo, outside }
}

const runtimeIn = (
  cwd: string,
  asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>,
  policy: RulePolicy.RulePolicyOptions
) => {
  const workspace = Workspace.layer({ cwd })
  const store = ResultStore.layer(tempDir("links-store"))
  const tools = Layer.mergeAll(BashTool.layer({ killGrace: "500 millis" }), Read.layer, Write.layer, Edit.layer).pipe(
    Layer.provide(Layer.mergeAll(workspace, store, FileState.layer()))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([BashTool, Read.Read, Write.Write, Edit.Edit]), tools)),
    Layer.provide([
      RulePolicy.layer(policy).pipe(Layer.provide(workspace)),
      Approver.scripted(() => Effect.succeed(ApprovalAnswer.Deny({ cancelRun: false })), asked),
      ToolHooks.none,
      store
    ]),
    Layer.provide(NodeContext.layer)
  )
}

let ids = 0
const use = (name: string, input: Record<string, unknown>): ToolUseBlock => ({
  type: "tool_use",
  id: `toolu_${ids++}`,
  name,
  input
})
const bash = (command: string) => use("Bash", { command, timeout: 20_000 })

/** One call: its status, whether the person was asked, and whether its result shows the outside secret. */
const one = (cwd: string, call: ToolUseBlock, policy: RulePolicy.RulePolicyOptions = { mode: "default" }) =>
  Effect.gen(function*() {
    const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
    const [outcome] = yield* ToolRuntime.execute([call]).pipe(Effect.provide(runtimeIn(cwd, asked, policy)))
    return {
      status: outcome!.status,
      asked: (yield* Ref.get(asked)).length > 0,
      leaked: JSON.stringify(outcome!.result).includes(SECRET)
    }
  })

const refused = { status: "denied", asked: true, leaked: false }
const ranFreely = { status: "success", asked: false, leaked: false }

describe("a dangling symlink is not inside until its target is", () => {
  it("resolves to its target: the workspace calls a dangling link to outside outside", () => {
    const { outside, repo } = fixture()
    expect(realPathSync(path.join(repo, "src", "new"))).toBe(path.join(outside, "created"))
    expect(realPathSync(path.join(repo, "src", "new", "deeper"))).toBe(path.join(outside, "created", "deeper"))
    expect(realPathSync(path.join(repo, "src", "later"))).toBe(path.join(repo, "src", "made.txt"))
    const looped = path.join(repo, "loop")
    fs.symlinkSync("loop", looped)
    expect(realPathSync(looped)).toBe(looped)
  })

  it.live(
    "Bash: a redirection, touch in acceptEdits, cp into it: each asks, and nothing appears outside",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        expect(yield* one(repo, bash("echo pwned > src/new"))).toEqual(refused)
        expect(yield* one(repo, bash("touch src/new"), { mode: "acceptEdits" })).toEqual(refused)
        expect(yield* one(repo, bash("cp src/a.txt src/new"), { mode: "acceptEdits" })).toEqual(refused)
        expect(yield* one(repo, bash("mkdir src/new"), { mode: "acceptEdits" })).toEqual(refused)
        expect(fs.existsSync(path.join(outside, "created"))).toBe(false)
      }),
    60_000
  )

  it.live(
    "Write: a dangling link to outside asks in acceptEdits; one to a place inside is written through",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        const write = (file: string) => use("Write", { file_path: path.join(repo, file), content: "x\n" })
        expect(yield* one(repo, write("src/new"), { mode: "acceptEdits" })).toEqual(refused)
        expect(fs.existsSync(path.join(outside, "created"))).toBe(false)
        expect(yield* one(repo, write("src/later"), { mode: "acceptEdits" })).toEqual(ranFreely)
        expect(fs.readFileSync(path.join(repo, "src", "made.txt"), "utf8")).toBe("x\n")
      }),
    60_000
  )
})

describe("allow rules match the real path", () => {
  const readRule: RulePolicy.RulePolicyOptions = { mode: "default", cliRules: { allow: ["Read(./src/**)"] } }
  const editRule: RulePolicy.RulePolicyOptions = { mode: "default", cliRules: { allow: ["Edit(./src/**)"] } }

  it.live(
    "Read(./src/**) does not grant src/link -> outside, and still grants src/a.txt",
    () =>
      Effect.gen(function*() {
        const { repo } = fixture()
        const read = (file: string) => use("Read", { file_path: path.join(repo, file) })
        expect(yield* one(repo, read("src/link"), readRule)).toEqual(refused)
        expect(yield* one(repo, read("src/a.txt"), readRule)).toEqual(ranFreely)
      }),
    60_000
  )

  it.live(
    "Edit(./src/**) does not grant writing through src/dir -> outside or the dangling src/new; src/b.txt it does",
    () =>
      Effect.gen(function*() {
        const { outside, repo } = fixture()
        const write = (file: string) => use("Write", { file_path: path.join(repo, file), content: "changed\n" })
        expect(yield* one(repo, write("src/dir/planted.txt"), editRule)).toEqual(refused)
        expect(yield* one(repo, write("src/new"), editRule)).toEqual(refused)
        expect(fs.readdirSync(outside)).toEqual(["secret.txt"])
        expect(yield* one(repo, write("src/b.txt"), editRule)).toEqual(ranFreely)
      }),
    60_000
  )

  it.live(
    "a deny rule still matches the path as written: Read(./src/link) denies reading it",
    () =>
      Effect.gen(function*() {
        const { repo } = fixture()
        const outcome = yield* one(repo, use("Read", { file_path: path.join(repo, "src", "link") }), {
          mode: "bypassPermissions",
          cliRules: { deny: ["Read(./src/link)"] }
        })
        expect(outcome).toEqual({ status: "denied", asked: false, leaked: false })
      }),
    60_000
  )
})

describe("options that follow symlinks out of the workspace ask", () => {
  const commands = [
    "find -L . -name secret.txt",
    "find . -follow -name secret.txt",
    "find -H out -name secret.txt",
    "grep -R LINKS .",
    "ls -L out",
    "du -L .",
    "tree -l ."
  ]
  it.live(`${commands.length} commands: each asks and none shows the secret`, () =>
    Effect.gen(function*() {
      const { repo } = fixture()
      const results = yield* Effect.forEach(commands, (command) =>
        Effect.map(one(repo, bash(command)), (result) => ({ command, ...result })))
      expect(results.filter((r) =>
        r.status !== "denied" || r.leaked
      )).toEqual([])
    }), 60_000)

  it.live("the same without following (`find . -name a.txt`) runs without asking", () =>
    Effect.gen(function*() {
      const { repo } = fixture()
      expect(yield* one(repo, bash("find . -name a.txt"))).toEqual(ranFreely)
    }), 60_000)
})
