/**
 * `session.lock`: one process at a time on a session directory.
 *
 * - **Taken atomically, owner included**: the owner record (pid, the process's start time, a nonce) is written to a
 *   private temporary file first, then hard-linked to `session.lock`, which fails when the name exists. A lock is
 *   never seen half-written.
 * - **Stale only when its owner is provably dead**: its pid runs no process, or runs one that started at another
 *   time (a reused pid). A lock that cannot be read is never taken over.
 * - **Taking over a stale lock** happens under `session.lock.break` (taken the same way), after checking that the
 *   lock is still the one judged stale: two processes that both find it stale never both take it.
 * - **Released only by its owner**: the file is removed only while it still holds this owner's record.
 * - **Waiting**: a held lock is polled (real time) up to a bound, then the failure names the holder.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as nodeFs from "node:fs"
import * as nodePath from "node:path"
import { isRunning, startTimeOf } from "../../Process/Subprocess.js"
import { realSleep } from "../../Shared/realTime.js"

/** What a lock file holds. */
export interface Owner {
  readonly pid: number
  /** The owner's start time (clock ticks since boot), when known. */
  readonly start: number | null
  readonly nonce: string
  /** When it took the lock (epoch ms, wall clock), for the message. */
  readonly since: number
  /** What the owner runs (for the message). */
  readonly command: string
}

const describeCommand = (): string =>
  process.argv.slice(1, 3).map((part, index) => (index === 0 ? nodePath.basename(part) : part)).join(" ")

/** The record of this process. */
const ownRecord = (): Owner => ({
  pid: process.pid,
  start: startTimeOf(process.pid) ?? null,
  nonce: randomBytes(8).toString("hex"),
  since: Date.now(),
  command: describeCommand()
})

/** The lock's owner as the file says (a 0.2 lock holds just a pid), or undefined when it cannot be read as one. */
export const parseOwner = (text: string): Owner | undefined => {
  const legacy = /^\s*(\d+)\s*$/.exec(text)
  if (legacy !== null) {
    return { pid: Number(legacy[1]), start: null, nonce: "", since: Number.NaN, command: "" }
  }
  try {
    const json = JSON.parse(text) as Partial<Owner>
    if (typeof json.pid !== "number" || !Number.isInteger(json.pid) || json.pid <= 0) return undefined
    return {
      pid: json.pid,
      start: typeof json.start === "number" ? json.start : null,
      nonce: typeof json.nonce === "string" ? json.nonce : "",
      since: typeof json.since === "number" ? json.since : Number.NaN,
      command: typeof json.command === "string" ? json.command : ""
    }
  } catch {
    return undefined
  }
}

/** Whether the owner is provably dead: no such process, or a process of that pid that started at another time. */
export const isDead = (owner: Owner): boolean => {
  if (!isRunning(owner.pid)) return true
  if (owner.start === null) return false
  const now = startTimeOf(owner.pid)
  return now !== undefined && now !== owner.start
}

/** Creates `file` holding `text`, atomically and exclusively: false when it exists. */
const createExclusive = (file: string, text: string): boolean => {
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
  nodeFs.writeFileSync(temporary, text, { mode: 0o600, flag: "wx" })
  try {
    nodeFs.linkSync(temporary, file)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
    throw error
  } finally {
    nodeFs.rmSync(temporary, { force: true })
  }
}

const readText = (file: string): string | undefined => {
  try {
    return nodeFs.readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

/** Removes `file` when it still holds `text` (only its owner's record is ever removed). */
const removeIf = (file: string, text: string): void => {
  if (readText(file) === text) nodeFs.rmSync(file, { force: true })
}

/**
 * Removes a stale lock whose text was `seen`, under the break lock; does nothing when another process is breaking
 * it (or when it changed meanwhile).
 */
const breakStale = (file: string, seen: string): void => {
  const breakFile = `${file}.break`
  const record = `${JSON.stringify(ownRecord())}\n`
  if (!createExclusive(breakFile, record)) {
    // A breaker that died while breaking (a window of microseconds) would block every later one.
    const text = readText(breakFile)
    const breaker = text === undefined ? undefined : parseOwner(text)
    if (text !== undefined && breaker !== undefined && isDead(breaker)) removeIf(breakFile, text)
    return
  }
  try {
    removeIf(file, seen)
  } finally {
    removeIf(breakFile, record)
  }
}

const clockTime = (epochMs: number): string => Number.isNaN(epochMs) ? "" : `, since ${new Date(epochMs).toISOString()}`

/** One line naming who holds the lock. */
export const describeHolder = (owner: Owner | undefined, file: string): string =>
  owner === undefined
    ? `is locked by ${file}, which this program cannot read; remove it if no other process uses the session`
    : `is in use by process ${owner.pid}${owner.command === "" ? "" : ` (${owner.command}${clockTime(owner.since)})`}`

/** One attempt: taken (the record written), gone or stale (try again at once), or held by someone. */
type Attempt =
  | { readonly _tag: "Taken"; readonly record: string }
  | { readonly _tag: "Again" }
  | { readonly _tag: "Held"; readonly holder: Owner | undefined }

const attempt = (file: string): Attempt => {
  const record = `${JSON.stringify(ownRecord())}\n`
  if (createExclusive(file, record)) return { _tag: "Taken", record }
  const text = readText(file)
  // Released meanwhile: try again at once.
  if (text === undefined) return { _tag: "Again" }
  const holder = parseOwner(text)
  if (holder !== undefined && isDead(holder)) {
    breakStale(file, text)
    return { _tag: "Again" }
  }
  return { _tag: "Held", holder }
}

/**
 * Takes `<directory>/session.lock` for the scope, waiting up to `wait` (real time) while a live process holds it.
 * Fails with the reason, one line naming the holder.
 */
export const acquire = (
  directory: string,
  wait: Duration.Duration
): Effect.Effect<void, Error, Scope.Scope> => {
  const file = nodePath.join(directory, "session.lock")
  const take = Effect.gen(function*() {
    const deadline = Date.now() + Duration.toMillis(wait)
    for (let round = 0;; round++) {
      const tried = yield* Effect.try({ try: () => attempt(file), catch: (cause) => cause as Error })
      if (tried._tag === "Taken") return tried.record
      if (tried._tag === "Again" && round < 1_000) continue
      if (Date.now() >= deadline) {
        const waited = Duration.toMillis(wait) > 0 ? `; gave up after waiting ${Duration.format(wait)}` : ""
        const holder = tried._tag === "Held" ? tried.holder : undefined
        return yield* Effect.fail(new Error(`${describeHolder(holder, file)}${waited}`))
      }
      yield* realSleep(Math.min(round < 10 ? 20 : 100, Math.max(1, deadline - Date.now())))
    }
  })
  return Effect.asVoid(
    Effect.acquireRelease(take, (record) => Effect.sync(() => removeIf(file, record)))
  )
}
