/**
 * A long session stays bounded: thousands of turns over several processes on one session directory, each turn a
 * call whose output is saved to the result store (sizes vary), an approval answered "allow for this session" with a
 * new rule, and a file read recorded, the session saved after every turn, on the TestClock (minutes between turns,
 * and now and then a night). The oracles, written here from the limits alone:
 * - the results directory never holds more than `maxFiles` files nor more than `maxTotalBytes` bytes, no file older
 *   than `maxAge` survives a save, and the turn's own file is always kept;
 * - what the next process loads is bounded by the caps, not by the turns: the session rules, approvals and file
 *   records restored are at most the caps (the newest ones), `session.json` stops growing once the caps are reached,
 *   and the result store's first save indexes at most `maxFiles` files;
 * - a temporary state file left by a kill is gone after the next save.
 * The load's work is counted (bytes of state read, records decoded, files indexed), never timed.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Layer, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import * as SessionPermissions from "../../src/Permission/SessionPermissions.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { Session } from "../../src/Session/Session.js"
import * as SessionFileState from "../../src/Session/SessionFileState.js"
import { Workspace } from "../../src/Session/Workspace.js"
import * as Tool from "../../src/Tool/Tool.js"
import { tempDir } from "../support/index.js"

const limits = {
  results: { maxAge: Duration.hours(6), maxTotalBytes: 1_500_000, maxFiles: 120 },
  maxSessionRules: 40,
  maxApprovals: 60
}
const FILE_RECORDS = 100 // SessionFileState's default memory

/** Prints `size` characters: over its 5,000-character limit, so the output is saved to the store. */
const Big = Tool.make("Big", {
  description: "Prints size characters.",
  input: Schema.Struct({ size: Schema.Int }),
  output: Schema.String,
  maxResultChars: 5_000,
  touchesEnvironment: true
})
const BigLive = Big.implement({
  // No opinion: the policy asks (no rule allows it yet).
  checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
  call: ({ size }) => Effect.succeed("x".repeat(size))
})

/** Every question answered "allow for this session" with a rule of its own. */
const approver = Layer.succeed(Approver, {
  ask: (request) => Effect.succeed(ApprovalAnswer.AllowSession({ rules: [`Big(${request.toolUseId})`] }))
})

const processLayer = (directory: string, cwd: string) => {
  const workspace = Workspace.layer({ cwd, home: cwd })
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.mergeAll(
      ToolRegistry.layer([Big]).pipe(Layer.provide(BigLive)),
      SessionPermissions.policy({}).pipe(Layer.provide(workspace)),
      SessionPermissions.approvals(approver),
      ToolHooks.none
    )),
    Layer.provideMerge(Session.resultStore),
    Layer.provideMerge(SessionFileState.layer()),
    Layer.provideMerge(Session.layer({ directory, ...limits })),
    Layer.provide(NodeContext.layer)
  )
}

const resultFiles = (directory: string) => {
  const dir = path.join(directory, "results")
  if (!fs.existsSync(dir)) return []
  return fs.readdirSync(dir).map((name) => {
    const stat = fs.statSync(path.join(dir, name))
    return { name, size: stat.size, mtimeMs: stat.mtimeMs }
  })
}

/** What loading the session reads: the state's bytes and the records it decodes. */
const loadWork = (directory: string) => {
  const file = path.join(directory, "session.json")
  if (!fs.existsSync(file)) return { bytes: 0, rules: 0, approvals: 0, files: 0, results: 0 }
  const text = fs.readFileSync(file, "utf8")
  const state = (JSON.parse(text) as { state: Record<string, ReadonlyArray<unknown>> }).state
  return {
    bytes: Buffer.byteLength(text),
    rules: state.sessionRules?.length ?? 0,
    approvals: state.approvals?.length ?? 0,
    files: state.fileState?.length ?? 0,
    // The result store indexes its directory once, at its first save.
    results: resultFiles(directory).length
  }
}

const PROCESSES = 4
const TURNS = 500

describe("a long session", () => {
  it.effect(
    `${PROCESSES * TURNS} turns with saved output: the directory bounded, the load bounded by the caps`,
    () =>
      Effect.gen(function*() {
        const cwd = tempDir("etr-long-ws")
        const directory = path.join(tempDir("etr-long"), "s")
        const loads: Array<ReturnType<typeof loadWork>> = []
        let turn = 0
        const reached = new Set<string>()
        for (let p = 0; p < PROCESSES; p++) {
          loads.push(loadWork(directory))
          // A process killed while saving left its temporary file.
          if (p > 0) fs.writeFileSync(path.join(directory, `session.json.99999.${p}.tmp`), "{")
          yield* Effect.scoped(
            Effect.gen(function*() {
              const runtime = yield* ToolRuntime
              const session = yield* Session
              const files = yield* FileState
              for (let t = 0; t < TURNS; t++, turn++) {
                // Minutes between turns (moved 20 turns at a time: a TestClock step waits for every fiber to settle),
                // and a night now and then.
                if (turn % 400 === 399) yield* TestClock.adjust(Duration.hours(9))
                else if (turn % 20 === 0) yield* TestClock.adjust(Duration.minutes(40))
                // Large outputs in the first half of a process (the byte bound binds), small ones after (the count does).
                const size = t < TURNS / 2 ? 5_001 + ((turn * 7_919) % 30_000) : 5_001 + ((turn * 7_919) % 1_000)
                const [outcome] = yield* runtime.execute([{
                  type: "tool_use",
                  id: `toolu_${turn}`,
                  name: "Big",
                  input: { size }
                }])
                expect(outcome!.status).toBe("success")
                expect(outcome!.persistedPath).toBeDefined()
                yield* files.record(path.join(cwd, `file-${turn}.txt`), {
                  contentHash: "0".repeat(64),
                  mtimeMs: turn,
                  size: turn,
                  partial: false
                })
                yield* session.checkpoint
                if (t === 0) {
                  expect(fs.readdirSync(directory).filter((name) => name.endsWith(".tmp"))).toEqual([])
                }
                // The directory after this save (every 20th turn and the turn after a night: the scan costs more than a turn).
                if (turn % 20 !== 0 && turn % 400 !== 399) continue
                const saved = resultFiles(directory)
                const now = yield* TestClock.currentTimeMillis
                expect(saved.length).toBeLessThanOrEqual(limits.results.maxFiles)
                expect(saved.reduce((sum, file) => sum + file.size, 0)).toBeLessThanOrEqual(
                  Math.max(limits.results.maxTotalBytes, size)
                )
                // mtimes have a resolution of a millisecond at best; the Clock's are whole milliseconds.
                expect(Math.min(...saved.map((file) => file.mtimeMs))).toBeGreaterThanOrEqual(
                  now - Duration.toMillis(limits.results.maxAge) - 1
                )
                expect(saved.map((file) => file.name)).toContain(path.basename(outcome!.persistedPath!))
                // Which bound held the directory (each must be reached, or the test proves nothing).
                const bytes = saved.reduce((sum, file) => sum + file.size, 0)
                if (saved.length === limits.results.maxFiles) reached.add("files")
                if (bytes > limits.results.maxTotalBytes - 40_000 && saved.length < limits.results.maxFiles) {
                  reached.add("bytes")
                }
                if (turn % 400 === 399) {
                  // After a night everything saved before it is older than maxAge: only this turn's file is left.
                  expect(saved.length).toBe(1)
                  reached.add("age")
                }
              }
            }).pipe(Effect.provide(processLayer(directory, cwd)))
          )
        }
        loads.push(loadWork(directory))
        expect([...reached].sort()).toEqual(["age", "bytes", "files"])
        const last = loads.at(-1)!
        // What a later process loads is the caps' worth, the newest kept.
        expect(last).toMatchObject({
          rules: limits.maxSessionRules,
          approvals: limits.maxApprovals,
          files: FILE_RECORDS
        })
        const state = JSON.parse(fs.readFileSync(path.join(directory, "session.json"), "utf8")) as {
          state: { sessionRules: ReadonlyArray<string>; approvals: ReadonlyArray<{ toolUseId: string }> }
        }
        expect(state.state.sessionRules.at(-1)).toBe(`Big(toolu_${turn - 1})`)
        expect(state.state.approvals.at(-1)!.toolUseId).toBe(`toolu_${turn - 1}`)
        for (const load of loads) {
          expect(load.results).toBeLessThanOrEqual(limits.results.maxFiles)
          expect(load.rules).toBeLessThanOrEqual(limits.maxSessionRules)
          expect(load.approvals).toBeLessThanOrEqual(limits.maxApprovals)
          expect(load.files).toBeLessThanOrEqual(FILE_RECORDS)
        }
        // Flat: once the caps are reached (after the first process), the state read at a load stops growing with turns.
        const saturated = loads.slice(2).map((load) => load.bytes)
        expect(Math.max(...saturated)).toBeLessThanOrEqual(Math.min(...saturated) * 1.05)
        expect(last.bytes).toBeLessThan(64 * 1024)
      }),
    240_000
  )
})
