/**
 * A property over interleavings of a background task's output, reads and stops, with a real process: the task is
 * `cat` of a named pipe the test writes into, so the test decides when each piece of output exists. Whatever the
 * order, every byte the task kept is returned by exactly one read or counted as skipped by exactly one (reads are
 * contiguous and cover the file), what the task kept is exactly what was written before it ended (cut at the cap),
 * and the final status is always reported. The oracle is written here, from the operations alone.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "effect/FastCheck"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { TaskRegistry } from "../../src/Tasks/TaskRegistry.js"
import type { TaskRead, TaskStatus } from "../../src/Tasks/TaskRegistry.js"
import { pollFor, tempDir } from "../support/index.js"

type Op =
  | { readonly _tag: "Write"; readonly text: string }
  | { readonly _tag: "Read" }
  | { readonly _tag: "Stop" }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.string({ unit: fc.constantFrom("a", "b", "c", "\n", "x"), minLength: 1, maxLength: 40 })
      .map((text) => ({ _tag: "Write" as const, text }))
  },
  { weight: 3, arbitrary: fc.constant({ _tag: "Read" as const }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "Stop" as const }) }
)

const scenario = fc.record({
  ops: fc.array(op, { maxLength: 10 }),
  capBytes: fc.constantFrom(24, 70, 100_000),
  readLimitBytes: fc.constantFrom(7, 30, 100_000)
})

/** What the oracle expects: the bytes written while the task ran (up to a stop), cut at the cap, and the status. */
const expected = (ops: ReadonlyArray<Op>, capBytes: number): { kept: string; status: TaskStatus["_tag"] } => {
  let written = ""
  let stopped = false
  for (const each of ops) {
    if (each._tag === "Stop") {
      stopped = true
      break
    }
    if (each._tag === "Write") written += each.text
  }
  const capped = written.length > capBytes
  return { kept: written.slice(0, capBytes), status: capped ? "StoppedAtCap" : stopped ? "Killed" : "Exited" }
}

const runScenario = (ops: ReadonlyArray<Op>, capBytes: number, readLimitBytes: number) =>
  Effect.gen(function*() {
    const dir = tempDir("tasks-prop")
    const fifo = path.join(dir, "in")
    execFileSync("mkfifo", [fifo])
    const registry = yield* TaskRegistry
    const task = yield* registry.start({ command: "cat in", argv: ["cat", fifo], cwd: dir, env: {} })
    // The only writer: opened (without blocking) once `cat` has opened its end; `cat` ends when it is closed.
    const fd = yield* pollFor(() => {
      try {
        return fs.openSync(fifo, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK)
      } catch {
        return undefined
      }
    }, 5_000)
    const reads: Array<TaskRead> = []
    let written = 0
    let closed = false
    const ended = Effect.map(
      Effect.zipRight(registry.refresh, registry.get(task.id)),
      (t) => t.status._tag !== "Running"
    )
    for (const each of ops) {
      if (each._tag === "Write") {
        if (yield* ended) continue
        try {
          fs.writeSync(fd, each.text)
        } catch {
          // EPIPE: `cat` was just stopped at the cap; nothing more is kept.
        }
        written += each.text.length
        // The output exists once it is in the file, or the task ended (the cap).
        yield* pollFor(() => (fs.statSync(task.outputPath).size >= written ? true : undefined), 5_000).pipe(
          Effect.orElse(() => Effect.flatMap(ended, (done) => (done ? Effect.void : Effect.die("no output"))))
        )
      } else if (each._tag === "Read") {
        reads.push(yield* registry.read(task.id))
      } else {
        yield* registry.stop(task.id)
      }
    }
    fs.closeSync(fd)
    closed = true
    // End of input: `cat` exits; the final read waits for the end and reports the final status.
    const last = yield* registry.read(task.id, { block: true, timeout: "10 seconds" })
    reads.push(last)
    const after = yield* registry.read(task.id)
    return { task, reads, last, after, file: fs.readFileSync(task.outputPath, "latin1"), closed }
  }).pipe(Effect.provide(TaskRegistry.layer({ directory: tempDir("tasks-prop-reg"), capBytes, readLimitBytes })))

describe("TaskRegistry reads", () => {
  it("every byte is read exactly once or reported skipped, whatever the interleaving; the final status is reported", {
    timeout: 120_000
  }, async () => {
    let reachedSkip = false
    let reachedCap = false
    let reachedStop = false
    await fc.assert(
      fc.asyncProperty(scenario, async ({ capBytes, ops, readLimitBytes }) => {
        const { after, file, last, reads } = await Effect.runPromise(runScenario(ops, capBytes, readLimitBytes))
        const oracle = expected(ops, capBytes)
        // What the task kept is what was written while it ran, cut at the cap.
        expect(file).toBe(oracle.kept)
        expect(last.task.status._tag).toBe(oracle.status)
        expect(last.waitTimedOut).toBe(false)
        // Reads are contiguous from 0 and cover the whole file; each byte is returned or skipped once.
        let at = 0
        for (const read of reads) {
          expect(read.from).toBe(at)
          expect(read.to - read.from).toBe(read.skippedBytes + Buffer.byteLength(read.output, "latin1"))
          expect(read.output).toBe(file.slice(read.from + read.skippedBytes, read.to))
          expect(read.output.length).toBeLessThanOrEqual(readLimitBytes)
          if (read.skippedBytes > 0) reachedSkip = true
          at = read.to
        }
        expect(at).toBe(file.length)
        expect([after.from, after.to, after.output, after.skippedBytes]).toEqual([file.length, file.length, "", 0])
        if (oracle.status === "StoppedAtCap") reachedCap = true
        if (oracle.status === "Killed") reachedStop = true
      }),
      {
        numRuns: 25,
        // Besides the random ones: a run past the cap, one stopped, one whose reads skip.
        examples: [
          [{ ops: [{ _tag: "Write", text: "a".repeat(30) }, { _tag: "Read" }], capBytes: 24, readLimitBytes: 100_000 }],
          [{
            ops: [{ _tag: "Write", text: "ab\n" }, { _tag: "Stop" }, { _tag: "Write", text: "c" }],
            capBytes: 70,
            readLimitBytes: 7
          }],
          [{
            ops: [{ _tag: "Write", text: "x".repeat(20) }, { _tag: "Read" }, { _tag: "Write", text: "b" }],
            capBytes: 70,
            readLimitBytes: 7
          }]
        ]
      }
    )
    // The generators reach every case the property speaks of.
    expect([reachedSkip, reachedCap, reachedStop]).toEqual([true, true, true])
  })
})
