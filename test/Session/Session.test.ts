/**
 * The Session: state that lasts across turns and processes (FileState, session rules, approvals, named pieces),
 * the private result store in its directory, saved output the model may read back, and the persisted path of
 * output Bash streamed to the store. Real files in temporary directories, the real built-in tools and policy.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, Ref, Schema, Scope } from "effect"
import * as fc from "effect/FastCheck"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as SessionPermissions from "../../src/Permission/SessionPermissions.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ensurePrivateDirectory, ResultStore } from "../../src/Session/ResultStore.js"
import { Session, SessionError } from "../../src/Session/Session.js"
import * as SessionFileState from "../../src/Session/SessionFileState.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { contentText } from "../../src/Tool/Wire.js"
import { BashTool } from "../../src/Tools/Bash.js"
import * as FileTools from "../../src/Tools/FileTools.js"
import { tempDir } from "../support/index.js"

const use = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input
})

/** The built-in tools and the full policy over `cwd`, with everything that lasts kept in `session`. */
const sessionRuntime = (cwd: string, approver: Layer.Layer<Approver> = Approver.denyAll) => {
  const workspace = Workspace.layer({ cwd, home: cwd })
  const tools = Layer.mergeAll(
    FileTools.layer.pipe(Layer.provide(SessionFileState.layer())),
    BashTool.layer({ sandbox: "off" })
  ).pipe(Layer.provide(Session.resultStore), Layer.provide(workspace))
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      ToolRegistry.layer([...FileTools.tools, BashTool]).pipe(Layer.provide(tools)),
      SessionPermissions.policy({}).pipe(Layer.provide(workspace)),
      SessionPermissions.approvals(approver),
      ToolHooks.none
    )),
    Layer.provideMerge(Session.resultStore),
    Layer.provide(NodeContext.layer)
  )
}

/** One process's worth: build the session and the runtime, run turns, checkpoint, tear down. */
const inProcess = <A, E>(
  directory: string,
  cwd: string,
  body: Effect.Effect<A, E, ToolRuntime | Session | ResultStore>,
  approver?: Layer.Layer<Approver>
) =>
  Effect.scoped(
    Effect.gen(function*() {
      const result = yield* body
      yield* Session.checkpoint
      return result
    }).pipe(Effect.provide(sessionRuntime(cwd, approver).pipe(Layer.provideMerge(Session.layer({ directory })))))
  )

describe("Session", () => {
  it.effect("Read in one process and Edit in the next: the FileState lasts", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      fs.writeFileSync(path.join(cwd, "a.txt"), "hello\n")
      const read = yield* inProcess(directory, cwd, ToolRuntime.execute([use("t1", "Read", { file_path: "a.txt" })]))
      expect(read[0]!.status).toBe("success")
      const edit = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })]),
        Approver.allowAll
      )
      expect(edit[0]!.status).toBe("success")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("bye\n")
      expect(fs.statSync(path.join(directory, "session.json")).mode & 0o777).toBe(0o600)
      expect(fs.readdirSync(directory).filter((name) => name.endsWith(".tmp"))).toEqual([])
    }))

  it.effect("without the session, the Edit in the second process is refused as unread", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      fs.writeFileSync(path.join(cwd, "a.txt"), "hello\n")
      yield* inProcess(
        path.join(tempDir("etr-session"), "one"),
        cwd,
        ToolRuntime.execute([use("t1", "Read", { file_path: "a.txt" })])
      )
      const edit = yield* inProcess(
        path.join(tempDir("etr-session"), "other"),
        cwd,
        ToolRuntime.execute([use("t2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })]),
        Approver.allowAll
      )
      expect(edit[0]!.status).toBe("error")
      expect(contentText(edit[0]!.result.content)).toMatch(/not been read yet/)
    }))

  it.effect("a file changed after the Read of an earlier process is still caught", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      fs.writeFileSync(path.join(cwd, "a.txt"), "hello\n")
      yield* inProcess(directory, cwd, ToolRuntime.execute([use("t1", "Read", { file_path: "a.txt" })]))
      fs.writeFileSync(path.join(cwd, "a.txt"), "hello, changed by someone else\n")
      fs.utimesSync(path.join(cwd, "a.txt"), new Date(), new Date(Date.now() + 5_000))
      const edit = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t2", "Edit", { file_path: "a.txt", old_string: "hello", new_string: "bye" })]),
        Approver.allowAll
      )
      expect(edit[0]!.status).toBe("error")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("hello, changed by someone else\n")
    }))

  it.effect("'allow for this session' lasts into the next process; the approvals are remembered", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const first = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t1", "Bash", { command: "touch one" })]),
        Approver.scripted([ApprovalAnswer.AllowSession({ rules: ["Bash(touch:*)"] })], asked)
      )
      expect(first[0]!.status).toBe("success")
      expect((yield* Ref.get(asked)).map((request) => request.toolUseId)).toEqual(["t1"])
      // The next process has nobody to ask: the remembered rule allows it.
      const second = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t2", "Bash", { command: "touch two" })])
      )
      expect(second[0]!.status).toBe("success")
      expect(fs.existsSync(path.join(cwd, "two"))).toBe(true)
      const state = JSON.parse(fs.readFileSync(path.join(directory, "session.json"), "utf8")) as {
        state: Record<string, unknown>
      }
      expect(state.state.sessionRules).toEqual(["Bash(touch:*)"])
      expect(state.state.approvals).toMatchObject([{
        toolUseId: "t1",
        toolName: "Bash",
        answer: "AllowSession",
        rules: ["Bash(touch:*)"]
      }])
    }))

  it.effect("one process at a time: a second session on the same directory fails naming the holder; a stale lock is taken over", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-session")
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(Session.layer({ directory }), scope)
      const lockText = fs.readFileSync(path.join(directory, "session.lock"), "utf8")
      expect(JSON.parse(lockText)).toMatchObject({ pid: process.pid })
      // The holder's pid is ours here, so make it someone else's that runs: the parent of this process.
      fs.writeFileSync(path.join(directory, "session.lock"), `${process.ppid}\n`)
      const busy = yield* Effect.flip(Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "0 millis" }))))
      expect(busy.message).toContain(`in use by process ${process.ppid}`)
      yield* Scope.close(scope, Exit.void)
      // The lock is someone else's now: our release leaves it alone.
      expect(fs.existsSync(path.join(directory, "session.lock"))).toBe(true)
      // A lock whose process is gone (no process has pid 2^22 + 1 on Linux's default pid_max) is taken over.
      fs.writeFileSync(path.join(directory, "session.lock"), "4194305\n")
      yield* Effect.scoped(Layer.build(Session.layer({ directory })))
      expect(fs.existsSync(path.join(directory, "session.lock"))).toBe(false)
    }))

  it.effect("a damaged state file is an error naming it, and it is left as it was", () =>
    Effect.gen(function*() {
      for (
        const damaged of [
          "{not json",
          JSON.stringify({ version: 1, state: [] }),
          JSON.stringify({ version: 99, state: {} })
        ]
      ) {
        const directory = tempDir("etr-session")
        const file = path.join(directory, "session.json")
        fs.writeFileSync(file, damaged)
        const exit = yield* Effect.exit(Effect.scoped(Layer.build(Session.layer({ directory }))))
        expect(Exit.isFailure(exit)).toBe(true)
        const error = Exit.isFailure(exit)
          ? Option.getOrUndefined(
            Exit.causeOption(exit).pipe(
              Option.flatMap((c) => Option.fromNullable(c._tag === "Fail" ? c.error : undefined))
            )
          )
          : undefined
        expect(error).toBeInstanceOf(SessionError)
        expect((error as SessionError).message).toContain(file)
        expect(fs.readFileSync(file, "utf8")).toBe(damaged)
      }
    }))

  it.effect("a piece that no longer decodes is an error naming the file and the piece", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-session")
      const file = path.join(directory, "session.json")
      fs.writeFileSync(file, JSON.stringify({ version: 1, state: { counter: "three" } }))
      const error = yield* Effect.flip(
        Session.ref("counter", Schema.Number, () => 0).pipe(Effect.provide(Session.layer({ directory })))
      )
      expect(error.message).toContain(file)
      expect(error.message).toContain("counter")
    }))

  it.effect.prop(
    "a named piece saved at a checkpoint is restored by the next session, and pieces nobody tracks are kept",
    [
      fc.array(fc.record({ name: fc.string(), weight: fc.integer(), tags: fc.array(fc.string(), { maxLength: 3 }) }), {
        maxLength: 8
      }),
      fc.jsonValue()
    ],
    ([value, foreign]) =>
      Effect.gen(function*() {
        const directory = tempDir("etr-session")
        const Piece = Schema.Array(
          Schema.Struct({ name: Schema.String, weight: Schema.Number, tags: Schema.Array(Schema.String) })
        )
        fs.writeFileSync(path.join(directory, "session.json"), JSON.stringify({ version: 1, state: { foreign } }))
        yield* Effect.gen(function*() {
          const ref = yield* Session.ref("discovered", Piece, () => [])
          yield* Ref.set(ref, value)
          yield* Session.checkpoint
        }).pipe(Effect.provide(Session.layer({ directory })))
        const restored = yield* Effect.flatMap(Session.ref("discovered", Piece, () => []), Ref.get).pipe(
          Effect.provide(Session.layer({ directory }))
        )
        expect(restored).toEqual(value)
        const saved = JSON.parse(fs.readFileSync(path.join(directory, "session.json"), "utf8")) as {
          state: Record<string, unknown>
        }
        expect(saved.state.foreign).toEqual(JSON.parse(JSON.stringify(foreign)))
        fs.rmSync(directory, { recursive: true, force: true })
      }),
    { fastCheck: { numRuns: 30 }, timeout: 60_000 }
  )

  it.effect("a temporary session's directory, with what the store saved in it, is removed when its scope closes", () =>
    Effect.gen(function*() {
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        Session.resultStore.pipe(Layer.provideMerge(Session.layerTemp), Layer.provide(NodeContext.layer)),
        scope
      )
      const session = Layer.succeedContext(context)
      const { directory, saved } = yield* Effect.gen(function*() {
        const s = yield* Session
        const store = yield* ResultStore
        return { directory: s.directory, saved: yield* store.persist("toolu_1", "x".repeat(10)) }
      }).pipe(Effect.provide(session))
      expect(fs.existsSync(saved)).toBe(true)
      expect(saved.startsWith(`${directory}/results/`)).toBe(true)
      expect(fs.statSync(directory).mode & 0o777).toBe(0o700)
      yield* Scope.close(scope, Exit.void)
      expect(fs.existsSync(directory)).toBe(false)
    }))
})

describe("ResultStore privacy", () => {
  it.effect("the store's directory is 0700 and its files 0600", () =>
    Effect.gen(function*() {
      const directory = path.join(tempDir("etr-store"), "results")
      const store = yield* Effect.provide(
        ResultStore,
        ResultStore.layer(directory).pipe(Layer.provide(NodeContext.layer))
      )
      const file = yield* store.persist("toolu_1", "secret output")
      expect(fs.statSync(directory).mode & 0o777).toBe(0o700)
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    }))

  it.effect("a planted symlink in place of the directory, or a directory open to others, receives nothing", () =>
    Effect.gen(function*() {
      const parent = tempDir("etr-store")
      const elsewhere = tempDir("etr-attacker")
      const planted = path.join(parent, "results")
      fs.symlinkSync(elsewhere, planted)
      const open = path.join(parent, "open")
      fs.mkdirSync(open, { mode: 0o777 })
      fs.chmodSync(open, 0o777)
      for (const directory of [planted, open]) {
        const store = yield* Effect.provide(
          ResultStore,
          ResultStore.layer(directory).pipe(Layer.provide(NodeContext.layer))
        )
        const error = yield* Effect.flip(store.persist("toolu_1", "secret output"))
        expect(error.message).toContain(directory)
      }
      expect(fs.readdirSync(elsewhere)).toEqual([])
      expect(fs.readdirSync(open)).toEqual([])
      const exit = yield* Effect.exit(ensurePrivateDirectory(planted))
      expect(Exit.isFailure(exit)).toBe(true)
    }))

  it.effect("a planted symlink at a result's file name is never followed", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-store")
      const target = path.join(tempDir("etr-attacker"), "victim")
      fs.symlinkSync(target, path.join(directory, "toolu_1.txt"))
      const store = yield* Effect.provide(
        ResultStore,
        ResultStore.layer(directory).pipe(Layer.provide(NodeContext.layer))
      )
      const file = yield* store.persist("toolu_1", "secret output")
      expect(file).toBe(path.join(directory, "toolu_1-1.txt"))
      expect(fs.existsSync(target)).toBe(false)
    }))
})

describe("saved output", () => {
  const bigCommand = "seq 1 40000"
  const full = `${Array.from({ length: 40_000 }, (_, i) => i + 1).join("\n")}\n`

  it.effect("Bash output streamed to the store sets the Outcome's persisted path, in the session's results directory", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      const [outcome] = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t1", "Bash", { command: bigCommand })])
      )
      expect(outcome!.status).toBe("success")
      expect(outcome!.persistedPath).toBeDefined()
      expect(path.dirname(outcome!.persistedPath!)).toBe(path.join(directory, "results"))
      expect(fs.readFileSync(outcome!.persistedPath!, "utf8")).toBe(full)
      expect(contentText(outcome!.result.content)).toContain(outcome!.persistedPath!)
    }))

  it.effect("a failing command's streamed output also sets the persisted path", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      const [outcome] = yield* inProcess(
        directory,
        cwd,
        ToolRuntime.execute([use("t1", "Bash", { command: `${bigCommand}; exit 3` })]),
        Approver.allowAll
      )
      expect(outcome!.status).toBe("error")
      expect(outcome!.persistedPath).toBeDefined()
      expect(fs.readFileSync(outcome!.persistedPath!, "utf8")).toBe(full)
    }))

  it.effect("a short output sets no persisted path, and a later call with the same id does not inherit one", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      const outcomes = yield* inProcess(
        directory,
        cwd,
        Effect.gen(function*() {
          const big = yield* ToolRuntime.execute([use("same", "Bash", { command: bigCommand })])
          const small = yield* ToolRuntime.execute([use("same", "Bash", { command: "echo hi" })])
          return [...big, ...small]
        })
      )
      expect(outcomes[0]!.persistedPath).toBeDefined()
      expect(outcomes[1]!.persistedPath).toBeUndefined()
    }))

  it.effect("the model may Read (offset/limit) what the store saved for this session without asking; another session's store asks", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const root = tempDir("etr-session")
      const other = yield* inProcess(
        path.join(root, "other"),
        cwd,
        ToolRuntime.execute([use("t0", "Bash", { command: bigCommand })])
      )
      const otherSaved = other[0]!.persistedPath!
      const asked = yield* Ref.make<ReadonlyArray<{ readonly toolName: string }>>([])
      const outcomes = yield* inProcess(
        path.join(root, "mine"),
        cwd,
        Effect.gen(function*() {
          const [bash] = yield* ToolRuntime.execute([use("t1", "Bash", { command: bigCommand })])
          return yield* ToolRuntime.execute([
            use("t2", "Read", { file_path: bash!.persistedPath!, offset: 39_998, limit: 2 }),
            use("t3", "Read", { file_path: otherSaved, offset: 1, limit: 1 })
          ])
        }),
        Approver.scripted((request) =>
          Effect.as(Ref.update(asked, (all) => [...all, request]), ApprovalAnswer.Deny({ cancelRun: false }))
        )
      )
      const [mine, theirs] = outcomes
      expect(mine!.status).toBe("success")
      expect(contentText(mine!.result.content)).toMatch(/39998\t39998\n\s*39999\t39999/)
      expect(mine!.decision?._tag).toBe("Allow")
      expect(theirs!.status).toBe("denied")
      expect((yield* Ref.get(asked)).map((request) => request.toolName)).toEqual(["Read"])
    }))

  it.effect("a Read deny rule still beats reading saved output", () =>
    Effect.gen(function*() {
      const cwd = tempDir("etr-session-ws")
      const directory = path.join(tempDir("etr-session"), "s")
      const outcomes = yield* Effect.scoped(
        Effect.gen(function*() {
          const [bash] = yield* ToolRuntime.execute([use("t1", "Bash", { command: bigCommand })])
          return yield* ToolRuntime.execute([use("t2", "Read", { file_path: bash!.persistedPath! })])
        }).pipe(
          Effect.provide(
            denyingRuntime(cwd, path.join(directory, "results")).pipe(Layer.provideMerge(Session.layer({ directory })))
          )
        )
      )
      expect(outcomes[0]!.status).toBe("denied")
      expect(outcomes[0]!.decision?.reason._tag).toBe("Rule")
    }))
})

/** Like {@link sessionRuntime}, with a `Read(//results/**)` deny rule on the command line. */
const denyingRuntime = (cwd: string, results: string) => {
  const workspace = Workspace.layer({ cwd, home: cwd })
  const tools = Layer.mergeAll(
    FileTools.layer.pipe(Layer.provide(SessionFileState.layer())),
    BashTool.layer({ sandbox: "off" })
  ).pipe(
    Layer.provide(Session.resultStore),
    Layer.provide(workspace)
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      ToolRegistry.layer([...FileTools.tools, BashTool]).pipe(Layer.provide(tools)),
      SessionPermissions.policy({ cliRules: { deny: [`Read(/${results}/**)`] } }).pipe(Layer.provide(workspace)),
      Approver.allowAll,
      ToolHooks.none
    )),
    Layer.provideMerge(Session.resultStore),
    Layer.provide(NodeContext.layer)
  )
}
