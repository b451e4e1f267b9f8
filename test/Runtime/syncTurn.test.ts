/**
 * A turn whose calls are all synchronous (a trivial tool: every stage an Exit) completes where its calls are launched:
 * no fiber per call, whichever result store the runtime has. Asking the store what it saved for a call is one of
 * those stages; when it was an Effect to run, every call of a scheduled turn took a fiber of its own (~13 us of the
 * scheduler's overhead per call, `bench/scheduler`). A long such turn still lets the event loop turn: a caller's
 * timeout stops it, whatever the input (an array, a Mailbox).
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Mailbox, Option, Schema, Supervisor } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import * as Tool from "../../src/Tool/Tool.js"
import { tempDir } from "../support/index.js"

const Echo = Tool.make("Echo", {
  description: "Answers its text.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

const EchoLive = Echo.implement({
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  call: ({ text }) => Effect.succeed(text)
})

/** Counts the fibers started under it. */
class Started extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onStart() {
    this.count++
  }
}

const runtimeWith = (store: Layer.Layer<ResultStore>) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Echo]), EchoLive)),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, store])
  )

const turn = Array.from({ length: 50 }, (_, i) => ({
  type: "tool_use" as const,
  id: `e${i}`,
  name: "Echo",
  input: { text: `t${i}` }
}))

describe("a turn of synchronous calls", () => {
  const stores = {
    memory: ResultStore.layerMemory(),
    files: ResultStore.layer(tempDir("sync-turn-store")).pipe(Layer.provide(NodeContext.layer), Layer.orDie)
  }
  for (const [name, store] of Object.entries(stores)) {
    it.effect(`completes without a fiber per call (${name} store)`, () =>
      Effect.gen(function*() {
        const runtime = yield* ToolRuntime
        const started = new Started()
        const outcomes = yield* Effect.supervised(runtime.execute(turn), started)
        expect(outcomes.map((outcome) => [outcome.status, outcome.result.content])).toEqual(
          turn.map(({ input }) => ["success", input.text])
        )
        expect(started.count).toBe(0)
      }).pipe(Effect.provide(runtimeWith(store))))
  }

  const long = Array.from({ length: 100_000 }, (_, i) => ({
    type: "tool_use" as const,
    id: `l${i}`,
    name: "Echo",
    input: { text: "x" }
  }))
  it.live("a long turn of them lets timers run: a caller's timeout stops it (an array, a Mailbox)", () =>
    Effect.gen(function*() {
      const runtime = yield* ToolRuntime
      const fromArray = yield* Effect.timeoutOption(runtime.execute(long), "50 millis")
      const mailbox = yield* Mailbox.make<(typeof long)[number]>()
      mailbox.unsafeOfferAll(long)
      mailbox.unsafeDone(Exit.void)
      const fromMailbox = yield* Effect.timeoutOption(runtime.execute(mailbox), "50 millis")
      // Stopped by the timeout, not run to the end (100,000 calls take a second and more).
      expect([Option.isNone(fromArray), Option.isNone(fromMailbox)]).toEqual([true, true])
    }).pipe(Effect.provide(runtimeWith(ResultStore.layerMemory()))))

  it.effect("a store's saved path is taken once: a second ask answers nothing", () =>
    Effect.gen(function*() {
      const store = yield* ResultStore
      const path = yield* store.persist("call-1", "text")
      const first = store.saved("call-1")
      expect(Exit.isExit(first)).toBe(true)
      expect(yield* first).toBe(path)
      expect(yield* store.saved("call-1")).toBeUndefined()
    }).pipe(Effect.provide(ResultStore.layerMemory())))
})
