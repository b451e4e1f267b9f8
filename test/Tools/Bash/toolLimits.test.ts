/**
 * The stored output of one call is capped: `seq 1 inf` (read-only, so auto-allowed) cannot fill the disk. Past the
 * cap the process tree is killed, exactly the first `maxOutputBytes` are kept and stored, and the model is told how
 * much was kept.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { Approver } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { BashTool, DEFAULT_MAX_OUTPUT_BYTES } from "../../../src/Tools/Bash.js"
import { bashLayer, gitRepo, isAlive, pollFor, readPids, recordingContext, tempDir } from "./helpers.js"

const run = (command: string) =>
  Effect.flatMap(
    BashTool,
    (bash) => Effect.exit(Effect.scoped(bash.plan({ command, timeout: 60_000 }).call(recordingContext())))
  )

const storedBytes = (store: string): number =>
  fs.readdirSync(store, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + fs.statSync(path.join(entry.parentPath, entry.name)).size, 0)

describe("the output cap of one call", () => {
  it.live("`seq 1 inf` is stopped at the cap: the tree is killed, exactly the cap is stored, the model is told", () => {
    const cwd = tempDir("bash-cap")
    const store = tempDir("bash-cap-store")
    const pids = path.join(cwd, "pids")
    const cap = 2 * 1024 * 1024
    return Effect.gen(function*() {
      const exit = yield* run(`echo $$ > ${pids}; seq 1 inf & echo $! >> ${pids}; wait`)
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a failure")
      const failure = exit.cause.error
      expect(failure.reason).toBe("outputLimit")
      expect(failure.message).toContain(
        "Command produced more than 2.0 MB of output, the limit for one call, and was stopped; the first 2.0 MB were kept."
      )
      expect(failure.message).toContain(`saved to: ${failure.fullOutputPath}`)
      expect(fs.statSync(failure.fullOutputPath!).size).toBe(cap)
      expect(storedBytes(store)).toBe(cap)
      // The stored bytes are the start of seq's output, cut at the cap.
      const head = fs.readFileSync(failure.fullOutputPath!, "utf8").slice(0, 18)
      expect(head).toBe("1\n2\n3\n4\n5\n6\n7\n8\n9\n")
      // The shell and seq (a background job) are gone.
      const [shell, seq] = readPids(pids, 2)!
      yield* pollFor(() => (isAlive(shell!) || isAlive(seq!) ? undefined : true), 5_000)
    }).pipe(Effect.provide(bashLayer(cwd, { maxOutputBytes: cap, killGrace: "200 millis" }, store)))
  }, 30_000)

  it.live("output of exactly the cap is not stopped", () => {
    const cwd = tempDir("bash-cap")
    return Effect.gen(function*() {
      const exit = yield* run("head -c 1048576 /dev/zero | tr '\\0' a")
      if (Exit.isFailure(exit)) throw new Error(`expected success: ${String(exit.cause)}`)
      expect(exit.value.totalBytes).toBe(1024 * 1024)
      expect(exit.value.exitCode).toBe(0)
    }).pipe(Effect.provide(bashLayer(cwd, { maxOutputBytes: 1024 * 1024 })))
  }, 30_000)

  it.live("one byte over the cap is", () => {
    const cwd = tempDir("bash-cap")
    return Effect.gen(function*() {
      const exit = yield* run("head -c 1048577 /dev/zero | tr '\\0' a; sleep 30")
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a failure")
      expect(exit.cause.error.reason).toBe("outputLimit")
      expect(exit.cause.error.message).toContain("the first 1.0 MB were kept")
    }).pipe(Effect.provide(bashLayer(cwd, { maxOutputBytes: 1024 * 1024, killGrace: "200 millis" })))
  }, 30_000)

  it("the default cap is 64 MiB", () => {
    expect(DEFAULT_MAX_OUTPUT_BYTES).toBe(64 * 1024 * 1024)
  })

  it.live(
    "end to end: 12 read-only runaways are auto-allowed in a git repository, each stops at the cap; small outputs run",
    () => {
      const repo = gitRepo()
      const store = tempDir("bash-cap-e2e-store")
      const cap = 1024 * 1024
      const workspace = Workspace.layer({ cwd: repo })
      const tools = BashTool.layer({ maxOutputBytes: cap, killGrace: "200 millis" }).pipe(
        Layer.provide(Layer.mergeAll(workspace, ResultStore.layer(store)))
      )
      const runtime = ToolRuntime.layer.pipe(
        Layer.provide(Layer.provide(ToolRegistry.layer([BashTool]), tools)),
        Layer.provide([
          RulePolicy.layer({ mode: "default" }).pipe(Layer.provide(workspace)),
          Approver.denyAll,
          ToolHooks.none,
          ResultStore.layer(tempDir("bash-cap-e2e-results"))
        ]),
        Layer.provide(NodeContext.layer)
      )
      const runaways = [
        "seq 1 inf",
        "seq 1 inf | cat",
        "seq -w 1 100000000",
        "git log --all; seq 0.5 inf",
        "seq 1 inf | rev",
        "seq 1 inf | tr 1 2",
        "seq 1 inf | cut -c1",
        "seq 1 inf | nl",
        "seq 1 inf | fold -w1",
        "for i in 1 2; do seq 1 inf; done",
        "seq 1 inf | base64",
        "seq 1 inf | od"
      ]
      const benign = [
        "seq 1 10",
        "seq 1 100000 | tail -1",
        "seq 1 1000 | od | head -3",
        "git log --oneline",
        "seq 1 inf | head -5"
      ]
      return Effect.gen(function*() {
        const all = [...runaways, ...benign]
        const outcomes = yield* ToolRuntime.execute(
          all.map((command, i) => ({ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command } }))
        )
        for (const [i, outcome] of outcomes.entries()) {
          if (i < runaways.length) {
            expect(outcome.status, all[i]).toBe("error")
            expect(JSON.stringify(outcome.result.content), all[i]).toContain(
              "of output, the limit for one call, and was stopped"
            )
          } else {
            // Small outputs, and a runaway whose reader stops early, are ordinary results, allowed without asking.
            expect(outcome.status, all[i]).toBe("success")
          }
        }
        // Every call stored exactly the cap; the disk holds nothing more.
        expect(storedBytes(store)).toBe(runaways.length * cap)
      }).pipe(Effect.provide(runtime))
    },
    60_000
  )
})
