/**
 * Nothing is printed over a pending terminal question: the terminal approver holds its lock from the first line of
 * the question to the answer, and a printer that takes the lock for each write (as `exec --verbose` does) waits and
 * prints after the answer. The approver reads and writes real streams here (PassThrough pairs).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { PassThrough } from "node:stream"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as TerminalApprover from "../../src/Permission/TerminalApprover.js"

const request: ApprovalRequest = {
  toolUseId: "toolu_1",
  toolName: "Bash",
  input: { command: "touch x" },
  ui: [],
  message: "Bash needs approval: no rule allows this call.",
  suggestions: ["Bash(touch:*)"]
}

describe("TerminalApprover lock", () => {
  it.scopedLive("a line printed while the question is pending comes after the answer, not over the prompt", () =>
    Effect.gen(function*() {
      const input = new PassThrough()
      const output = new PassThrough()
      let screen = ""
      output.setEncoding("utf8").on("data", (chunk: string) => (screen += chunk))
      const lock = TerminalApprover.makeTerminalLock()
      const approver = yield* TerminalApprover.make(input, output, lock)
      const asking = yield* Effect.fork(approver.ask(request))
      yield* Effect.promise(() =>
        new Promise<void>((resolve) => {
          const poll = () => (screen.includes("Choice [1-5, e]: ") ? resolve() : setTimeout(poll, 5))
          poll()
        })
      )
      // An event printed now waits for the answer.
      const printer = yield* Effect.fork(
        lock.withPermits(1)(Effect.sync(() => void output.write("● something else happened\n")))
      )
      yield* Effect.sleep("50 millis")
      expect(screen).not.toContain("something else happened")
      input.write("1\n")
      const answer = yield* Fiber.join(asking)
      yield* Fiber.join(printer)
      expect(answer._tag).toBe("AllowOnce")
      expect(screen.indexOf("something else happened")).toBeGreaterThan(screen.indexOf("Choice [1-5, e]: "))
      expect(screen.trimEnd().endsWith("● something else happened")).toBe(true)
    }))
})
