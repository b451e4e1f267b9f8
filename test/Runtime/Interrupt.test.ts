/**
 * Soft interrupts (`RunHandle.interrupt`, a person typing mid-turn), distinct from `cancel`: running calls whose
 * tool's `interruptBehavior` is "cancel" stop, those with "block" finish, calls that have not started never do, and
 * every tool_use still gets its Outcome. The property's oracle is the tools' own log of when each call ran.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Layer, Ref, Schema, Stream, TestClock } from "effect"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { Outcome } from "../../src/Tool/Outcome.js"
import * as Tool from "../../src/Tool/Tool.js"
import { BashTool } from "../../src/Tools/Bash.js"
import * as Edit from "../../src/Tools/Edit.js"
import * as Glob from "../../src/Tools/Glob.js"
import * as Grep from "../../src/Tools/Grep.js"
import * as Read from "../../src/Tools/Read.js"
import * as Write from "../../src/Tools/Write.js"
import { bashLayer, tempDir } from "../Tools/Bash/helpers.js"

const Input = Schema.Struct({ label: Schema.String, ms: Schema.Number, resource: Schema.String })
type Input = typeof Input.Type

/** Runs `ms` on the clock; may be interrupted. */
const Reader = Tool.make("Reader", {
  description: "test",
  input: Input,
  output: Schema.String,
  touchesEnvironment: false
})
/** Runs `ms` on the clock; finishes under a soft interrupt. */
const Writer = Tool.make("Writer", {
  description: "test",
  input: Input,
  output: Schema.String,
  touchesEnvironment: false
})

type Log = Ref.Ref<ReadonlyArray<{ readonly label: string; readonly event: "start" | "end"; readonly at: number }>>

const newLog: Effect.Effect<Log> = Ref.make<
  ReadonlyArray<{ readonly label: string; readonly event: "start" | "end"; readonly at: number }>
>([])

const body = (log: Log) => (input: Input) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    yield* Ref.update(log, (all) => [...all, { label: input.label, event: "start" as const, at: started }])
    yield* Effect.sleep(input.ms)
    const ended = yield* Clock.currentTimeMillis
    yield* Ref.update(log, (all) => [...all, { label: input.label, event: "end" as const, at: ended }])
    return input.label
  })

const runtime = (log: Log) =>
  ToolRuntime.layer.pipe(
    Layer.provide(
      Layer.provide(
        ToolRegistry.layer([Reader, Writer]),
        Layer.mergeAll(
          Reader.implement({
            interruptBehavior: "cancel",
            claims: (i) => [Tool.Claim.write(i.resource)],
            call: body(log)
          }),
          Writer.implement({ claims: (i) => [Tool.Claim.write(i.resource)], call: body(log) })
        )
      )
    ),
    Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
  )

const use = (name: "Reader" | "Writer", label: string, ms: number, resource: string) => ({
  type: "tool_use" as const,
  id: label,
  name,
  input: { label, ms, resource }
})

const summary = (outcome: Outcome) =>
  outcome.status === "interrupted" && outcome.error?._tag === "Interrupted"
    ? `interrupted ${outcome.error.started ? "while running" : "before starting"}`
    : outcome.status

describe("soft interrupts", () => {
  it.scoped("a blocking call finishes, an interruptible one stops, a queued one never starts", () =>
    Effect.gen(function*() {
      const log = yield* newLog
      const turn = [
        use("Writer", "w", 100, "file:/a"),
        use("Reader", "r", 100, "file:/b"),
        use("Writer", "queued", 10, "file:/a") // waits for w
      ]
      const outcomes = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start(turn)
        yield* TestClock.adjust(10)
        yield* handle.interrupt
        yield* TestClock.adjust(200)
        return yield* handle.await
      }).pipe(Effect.provide(runtime(log)))
      expect(outcomes.map((o) => [o.toolUseId, summary(o)])).toEqual([
        ["w", "success"],
        ["r", "interrupted while running"],
        ["queued", "interrupted before starting"]
      ])
      expect(outcomes[0]!.timings.endedAt).toBe(100)
      expect((yield* Ref.get(log)).filter((e) => e.label === "queued")).toEqual([])
      expect(outcomes[2]!.result.content).toBe(
        "<tool_use_error>Writer was cancelled before it started. It never ran.</tool_use_error>"
      )
    }))

  it.scoped("cancel, unlike interrupt, stops blocking calls too", () =>
    Effect.gen(function*() {
      const log = yield* newLog
      const outcomes = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start([use("Writer", "w", 100, "file:/a")])
        yield* TestClock.adjust(10)
        yield* handle.cancel
        return yield* handle.await
      }).pipe(Effect.provide(runtime(log)))
      expect(outcomes.map(summary)).toEqual(["interrupted while running"])
    }))

  it.scoped("tool_uses that arrive after the interrupt are not run, and still get their Outcome", () =>
    Effect.gen(function*() {
      const log = yield* newLog
      const late = yield* Deferred.make<void>()
      const uses = Stream.concat(
        Stream.make(use("Writer", "w", 50, "file:/a")),
        Stream.fromEffect(Effect.as(Deferred.await(late), use("Reader", "late", 10, "file:/z")))
      )
      const outcomes = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start(uses)
        yield* TestClock.adjust(10)
        yield* handle.interrupt
        yield* Deferred.succeed(late, undefined)
        yield* TestClock.adjust(100)
        return yield* handle.await
      }).pipe(Effect.provide(runtime(log)))
      expect(outcomes.map((o) => [o.toolUseId, summary(o)])).toEqual([["w", "success"], [
        "late",
        "interrupted before starting"
      ]])
      expect((yield* Ref.get(log)).map((e) => `${e.label} ${e.event}`)).toEqual(["w start", "w end"])
    }))

  it.scoped("a call waiting for a person's answer never starts: the question is withdrawn", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make(false)
      const Asking = Tool.make("Asking", { description: "test", input: Schema.Struct({}) })
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(
          ToolRegistry.layer([Asking]),
          Asking.implement({
            checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
            call: () => Ref.set(ran, true)
          })
        )),
        Layer.provide([
          PermissionPolicy.toolOnly,
          Approver.scripted(() => Effect.never),
          ToolHooks.none,
          ResultStore.layerMemory()
        ])
      )
      const outcomes = yield* Effect.gen(function*() {
        const handle = yield* ToolRuntime.start([{ type: "tool_use", id: "ask", name: "Asking", input: {} }])
        yield* Stream.runDrain(Stream.takeUntil(handle.events, (e) => e._tag === "PermissionRequested"))
        yield* handle.interrupt
        return yield* handle.await
      }).pipe(Effect.provide(layer))
      expect(outcomes.map(summary)).toEqual(["interrupted before starting"])
      expect(yield* Ref.get(ran)).toBe(false)
    }))

  it.effect.prop(
    "every call ends as its tool's behaviour and the moment of the interrupt say (oracle: the tools' own log)",
    {
      calls: fc.array(
        fc.record({
          blocks: fc.boolean(),
          ms: fc.integer({ min: 1, max: 6 }).map((n) => n * 10),
          resource: fc.constantFrom("file:/a", "file:/b", "file:/c")
        }),
        { minLength: 1, maxLength: 6 }
      ),
      // Between two multiples of 10: never at the same instant as a start or an end.
      at: fc.integer({ min: 0, max: 20 }).map((n) => n * 10 + 5)
    },
    ({ at, calls }) =>
      Effect.gen(function*() {
        const log = yield* newLog
        const turn = calls.map((c, i) => use(c.blocks ? "Writer" : "Reader", `c${i}`, c.ms, c.resource))
        const outcomes = yield* Effect.gen(function*() {
          const handle = yield* ToolRuntime.start(turn, { maxConcurrency: 2 })
          yield* TestClock.adjust(at)
          yield* handle.interrupt
          yield* TestClock.adjust(1_000)
          return yield* handle.await
        }).pipe(Effect.provide(runtime(log)), Effect.scoped)
        const entries = yield* Ref.get(log)
        expect(outcomes.map((o) => o.toolUseId)).toEqual(turn.map((t) => t.id))
        outcomes.forEach((outcome, i) => {
          const start = entries.find((e) => e.label === `c${i}` && e.event === "start")
          const end = entries.find((e) => e.label === `c${i}` && e.event === "end")
          // The oracle, in plain words: finished before the interrupt -> success; running at the interrupt -> a
          // blocking tool finishes, an interruptible one stops; not started by then -> never starts.
          const expected = start === undefined || start.at > at ?
            "interrupted before starting"
            : end !== undefined && end.at < at ?
            "success"
            : calls[i]!.blocks ?
            "success"
            : "interrupted while running"
          expect(summary(outcome)).toBe(expected)
          if (start !== undefined) expect(start.at).toBeLessThan(at)
        })
      }),
    { fastCheck: { numRuns: 60 }, timeout: 60_000 }
  )
})

describe("built-in tools' interrupt behaviour (Claude Code's defaults)", () => {
  it.scoped("Bash, Edit and Write finish; Read, Glob and Grep may be interrupted", () =>
    Effect.gen(function*() {
      const cwd = tempDir("interrupt-builtins")
      const files = Layer.mergeAll(Read.layer, Edit.layer, Write.layer, Glob.layer, Grep.layer).pipe(
        Layer.provide(
          Layer.mergeAll(Workspace.layer({ cwd }), FileState.layer(), ResultStore.layerMemory()).pipe(
            Layer.provideMerge(NodeContext.layer)
          )
        )
      )
      const behaviours = yield* Effect.gen(function*() {
        const of = <T extends Tool.Any>(tool: T) =>
          Effect.map(tool as unknown as Effect.Effect<Tool.AnyService>, (service) =>
            [tool.definition.name, service.interruptBehavior] as const)
        return Object.fromEntries(
          yield* Effect.all([of(BashTool), of(Edit.Edit), of(Write.Write), of(Read.Read), of(Glob.Glob), of(Grep.Grep)])
        )
      }).pipe(Effect.provide(Layer.merge(files, bashLayer(cwd))))
      expect(behaviours).toEqual({
        Bash: "block",
        Edit: "block",
        Write: "block",
        Read: "cancel",
        Glob: "cancel",
        Grep: "cancel"
      })
    }))

  it.live("a real Bash command finishes under a soft interrupt; the call queued behind it never starts", () =>
    Effect.gen(function*() {
      const cwd = tempDir("interrupt-bash")
      const ran = yield* Ref.make(false)
      const Waiter = Tool.make("Waiter", { description: "test", input: Schema.Struct({}), touchesEnvironment: false })
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(
          ToolRegistry.layer([BashTool, Waiter]),
          Layer.merge(bashLayer(cwd), Waiter.implement({ interruptBehavior: "cancel", call: () => Ref.set(ran, true) }))
        )),
        Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
      )
      const outcomes = yield* Effect.gen(function*() {
        // `sleep` claims the world: the Waiter is queued behind the command.
        const handle = yield* ToolRuntime.start([
          {
            type: "tool_use",
            id: "bash",
            name: "Bash",
            input: { command: "sleep 0.3 && echo finished > done.txt && echo finished" }
          },
          { type: "tool_use", id: "wait", name: "Waiter", input: {} }
        ])
        yield* Stream.runDrain(Stream.takeUntil(handle.events, (e) => e._tag === "Started" && e.toolName === "Bash"))
        yield* handle.interrupt
        return yield* handle.await
      }).pipe(Effect.provide(layer), Effect.scoped)
      expect(outcomes.map(summary)).toEqual(["success", "interrupted before starting"])
      expect(String(outcomes[0]!.result.content)).toContain("finished")
      expect(fs.readFileSync(path.join(cwd, "done.txt"), "utf8")).toBe("finished\n")
      expect(yield* Ref.get(ran)).toBe(false)
    }))
})
