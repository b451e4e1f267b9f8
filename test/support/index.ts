/**
 * What many test files need, written once: temporary directories (real paths, removed when the test process
 * ends, or with a Scope), and helpers for the real processes tests start (is a pid alive, wait for a file of pids,
 * poll until something appears, find processes by the marker in their environment, run a script as nobody).
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"
import * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

// -----------------------------------------------------------------------------
// temporary directories
// -----------------------------------------------------------------------------

const made: Array<string> = []
let registered = false

/** A fresh directory (its real path: macOS and some CI machines link /tmp), removed when the test process exits. */
export const tempDir = (prefix = "test"): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix.replace(/-$/, "")}-`)))
  made.push(dir)
  if (!registered) {
    registered = true
    process.once("exit", removeTempDirs)
  }
  return dir
}

/** Removes every directory {@link tempDir} made so far. */
export const removeTempDirs = (): void => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** A fresh directory for the Scope, removed when it closes. */
export const scopedTempDir = (prefix = "test") =>
  Effect.acquireRelease(
    Effect.sync(() => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix.replace(/-$/, "")}-`)))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

// -----------------------------------------------------------------------------
// processes
// -----------------------------------------------------------------------------

/**
 * Whether a process runs: it exists and is not a zombie. An orphan we killed is reparented to PID 1, and this
 * machine's PID 1 never reaps, so the dead can stay as zombies; `kill(pid, 0)` alone would count them alive.
 */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH"
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0]
    return state !== "Z" && state !== "X"
  } catch {
    return false
  }
}

/** Polls `read` every 20 ms until it returns a value, for at most `limitMs`. */
export const pollFor = <A>(read: () => A | undefined, limitMs: number): Effect.Effect<A, Error> =>
  Effect.gen(function*() {
    const deadline = Date.now() + limitMs
    for (;;) {
      const value = read()
      if (value !== undefined) return value
      if (Date.now() > deadline) return yield* Effect.fail(new Error(`nothing after ${limitMs} ms`))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
    }
  })

/** Pids written one per line to `file`, once there are `count` of them. */
export const readPids = (file: string, count: number): ReadonlyArray<number> | undefined => {
  try {
    const pids = fs.readFileSync(file, "utf8").split("\n").filter((line) => line.trim() !== "").map(Number)
    return pids.length >= count ? pids : undefined
  } catch {
    return undefined
  }
}

/**
 * Marks every process this test process starts from now on: `name=<a fresh id>` in their environment, which their
 * children inherit. Returns what lists the live marked processes (to check that none is left, or to kill them).
 */
export const markChildren = (name: string): () => ReadonlyArray<number> => {
  const mark = randomUUID()
  process.env[name] = mark
  return () => processesWithMarker(`${name}=${mark}`)
}

/** The live processes whose environment holds `NAME=value` (`marker`), read from /proc. */
export const processesWithMarker = (marker: string): ReadonlyArray<number> => {
  const found: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const pid = Number(entry)
    if (pid === process.pid) continue
    try {
      const environ = fs.readFileSync(`/proc/${entry}/environ`, "latin1")
      if (environ.split("\0").includes(marker) && isAlive(pid)) found.push(pid)
    } catch {
      // gone, or not ours to read
    }
  }
  return found
}

// -----------------------------------------------------------------------------
// spans
// -----------------------------------------------------------------------------

/** An in-memory tracer: Effect's own spans, each one recorded in `spans`. */
export const recordingTracer = (): { readonly tracer: Tracer.Tracer; readonly spans: Array<Tracer.Span> } => {
  const native = Context.get(DefaultServices.liveServices, Tracer.Tracer)
  const spans: Array<Tracer.Span> = []
  const tracer = Tracer.make({
    span: (...args) => {
      const span = native.span(...args)
      spans.push(span)
      return span
    },
    context: (f, fiber) => native.context(f, fiber)
  })
  return { tracer, spans }
}

/**
 * Runs a TypeScript module body (tsx) in a child process, as nobody when the tests run as root: root passes every
 * permission check, so a test of what happens without access needs another user.
 */
export const spawnAsNobody = (script: string): childProcess.SpawnSyncReturns<string> =>
  childProcess.spawnSync(process.execPath, ["--import", "tsx", "-e", script], {
    encoding: "utf8",
    ...(process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {})
  })
