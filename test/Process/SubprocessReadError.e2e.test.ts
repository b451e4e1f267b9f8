/**
 * Subprocess.run when reading a child's output fails: the pipe is made to fail (a stand-in for an I/O error the
 * kernel would give, which no real program can provoke on demand). The run fails with the read error, and does not
 * wait on a program that still writes to the other pipe: reading stopped, both pipes are let go of, and the program
 * gets SIGPIPE.
 *
 * An e2e file (`*.e2e.test.ts`) because of the `vi.mock`: the unit project shares one module graph among its files,
 * where `node:child_process` may already be loaded unmocked.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type * as ChildProcess from "node:child_process"
import { vi } from "vitest"
import * as Subprocess from "../../src/Process/Subprocess.js"
import { tempDir } from "../support/index.js"

const injected = vi.hoisted(() => ({ count: 0 }))

vi.mock("node:child_process", async (importOriginal) => {
  const actual = await importOriginal<typeof ChildProcess>()
  const spawn = (...args: Parameters<typeof actual.spawn>) => {
    const child = actual.spawn(...args)
    const options = args[2] as ChildProcess.SpawnOptions | undefined
    if (options?.env?.FAIL_STDOUT === "1") {
      injected.count++
      setImmediate(() => child.stdout?.destroy(new Error("injected read error")))
    }
    return child
  }
  return { ...actual, spawn, default: { ...actual, spawn } }
})

describe("Subprocess, a failing pipe", () => {
  it.live("a read error ends the run with it, though the program goes on writing to its other pipe", () =>
    Effect.gen(function*() {
      const failure = yield* Effect.flip(Effect.scoped(Subprocess.run({
        argv: ["sh", "-c", "echo start; exec yes >&2"],
        cwd: tempDir("subprocess-read-error"),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", FAIL_STDOUT: "1" },
        stderr: { onChunk: () => Effect.void }
      })))
      expect(injected.count).toBe(1)
      expect(failure).toMatchObject({ _tag: "SubprocessError", reason: "read" })
      expect(failure.message).toContain("injected read error")
    }).pipe(
      // Without a timeout of its own the run would wait on `yes` for good if it kept the other pipe open.
      Effect.timeoutFail({ duration: "4 seconds", onTimeout: () => new Error("the run did not end") })
    ))
})
