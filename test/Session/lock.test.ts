/**
 * The session lock in one process: the lock holds its owner from the start, a live holder is waited for then named,
 * release is the owner's, and a lock is stale only when its owner is provably dead. The real-process property
 * (N processes x M turns) is in `lock.e2e.test.ts`.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as SessionLock from "../../src/Session/internal/lock.js"
import { Session } from "../../src/Session/Session.js"
import { tempDir } from "../support/index.js"

describe("session lock, one process", () => {
  it.effect("the lock holds its owner from the start; a live holder is waited for, then named; release is the owner's", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-lock1")
      const file = path.join(directory, "session.lock")
      const scope = yield* Scope.make()
      yield* Layer.buildWithScope(Session.layer({ directory }), scope)
      const owner = SessionLock.parseOwner(fs.readFileSync(file, "utf8"))
      expect(owner).toMatchObject({ pid: process.pid })
      expect(owner!.start).toBeTypeOf("number")
      // A second take in this process waits for the (live) holder, then fails naming it.
      const busy = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "50 millis" })))
      )
      expect(busy.message).toMatch(new RegExp(`in use by process ${process.pid} \\(.*\\); gave up after waiting`))
      expect(busy.message).not.toContain("\n")
      // Someone else's lock (the parent of this process runs) is never removed by our release.
      const other = JSON.stringify({ pid: process.ppid, start: null, nonce: "x", since: 0, command: "other" })
      fs.writeFileSync(file, other)
      yield* Scope.close(scope, Exit.void)
      expect(fs.readFileSync(file, "utf8")).toBe(other)
      const stillBusy = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "0 millis" })))
      )
      expect(stillBusy.message).toContain(`in use by process ${process.ppid} (other`)
      fs.rmSync(directory, { recursive: true, force: true })
    }))

  it.effect("stale only when provably dead: a dead pid, or a live pid that started at another time; unreadable is never stale", () =>
    Effect.gen(function*() {
      const directory = tempDir("etr-lock2")
      const file = path.join(directory, "session.lock")
      // No process has pid 2^22 + 1 on Linux's default pid_max: dead (the 0.2 format: just a pid).
      fs.writeFileSync(file, "4194305\n")
      yield* Effect.scoped(Layer.build(Session.layer({ directory })))
      expect(fs.existsSync(file)).toBe(false)
      // Our own pid with another start time: a reused pid, so the owner is dead.
      fs.writeFileSync(file, JSON.stringify({ pid: process.pid, start: 1, nonce: "old", since: 0, command: "" }))
      expect(SessionLock.isDead(SessionLock.parseOwner(fs.readFileSync(file, "utf8"))!)).toBe(true)
      yield* Effect.scoped(Layer.build(Session.layer({ directory })))
      expect(fs.existsSync(file)).toBe(false)
      // A live pid with its true start time is alive.
      const parent = { pid: process.ppid, start: null, nonce: "", since: Number.NaN, command: "" }
      expect(SessionLock.isDead(parent)).toBe(false)
      // A lock that cannot be read (empty: what 0.2 left when killed between create and write) is not taken over.
      fs.writeFileSync(file, "")
      const unreadable = yield* Effect.flip(
        Effect.scoped(Layer.build(Session.layer({ directory, lockWait: "0 millis" })))
      )
      expect(unreadable.message).toContain("cannot read; remove it if no other process uses the session")
      expect(fs.readFileSync(file, "utf8")).toBe("")
      fs.rmSync(directory, { recursive: true, force: true })
    }))
})
