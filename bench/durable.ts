/**
 * Durable turns: a turn of trivial calls through `DurableTurns` (one runner, SQLite in a temporary session
 * directory: every call an activity, its start and end in the session's record) beside the same turn through the
 * plain runtime. Wall time per call, median of several turns (each a new turn: nothing is attached to).
 */
import { Effect, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { DurableTurns } from "../dist/Durable/DurableTurns.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import { PermissionPolicy } from "../dist/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import * as Tool from "../dist/Tool/Tool.js"
import type { ToolUseBlock } from "../dist/Tool/Wire.js"
import { median, report } from "./stats.js"

const Echo = Tool.make("Echo", {
  description: "Repeats the text back.",
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})
const EchoLive = Echo.implement({
  traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
  call: ({ text }) => Effect.succeed(text)
})
const services = Layer.mergeAll(
  ToolRegistry.layer([Echo]).pipe(Layer.provide(EchoLive)),
  PermissionPolicy.toolOnly,
  Approver.allowAll,
  ToolHooks.none,
  ResultStore.layerMemory()
)

const CALLS = Number(process.env["DURABLE_BENCH_CALLS"] ?? 50)
const TURNS = 7
const turn = (n: number): ReadonlyArray<ToolUseBlock> =>
  Array.from(
    { length: CALLS },
    (_, i) => ({ type: "tool_use", id: `t${n}_${i}`, name: "Echo", input: { text: `${i}` } })
  )

const timeTurns = <R>(run: (toolUses: ReadonlyArray<ToolUseBlock>) => Effect.Effect<unknown, never, R>) =>
  Effect.gen(function*() {
    yield* run(turn(-1))
    const perCall: Array<number> = []
    for (let n = 0; n < TURNS; n++) {
      const started = performance.now()
      yield* run(turn(n))
      perCall.push((performance.now() - started) / CALLS)
    }
    return median(perCall)
  })

export const run = async (): Promise<void> => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "etr-bench-durable-"))
  try {
    const plain = await Effect.runPromise(
      timeTurns((toolUses) => ToolRuntime.execute(toolUses)).pipe(
        Effect.provide(ToolRuntime.layer.pipe(Layer.provide(services)))
      )
    )
    const durable = await Effect.runPromise(
      timeTurns((toolUses) => DurableTurns.execute({ session: "bench", toolUses })).pipe(
        Effect.provide(DurableTurns.layerSqlite({ directory }).pipe(Layer.provide(services))),
        Effect.scoped
      )
    )
    report(`durable: a turn of ${CALLS} trivial calls (wall time per call, median of ${TURNS} turns)`, [
      ["plain runtime", `${(plain * 1000).toFixed(1)} us`, "ToolRuntime.execute"],
      ["durable, SQLite", `${(durable * 1000).toFixed(1)} us`, "DurableTurns.execute: workflow + activity per call"],
      ["cost per call", `${((durable - plain) * 1000).toFixed(1)} us`, "what durability adds"]
    ])
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
}
