/**
 * The machinery of `Subprocess.run`: spawn, readers, the race between exit, timeout and output caps, and the
 * teardown through `processTree`.
 *
 * @internal
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import type { Readable } from "node:stream"
import { realSleep } from "../../Shared/realTime.js"
import type * as Subprocess from "../Subprocess.js"
import { Exit, SubprocessError } from "../Subprocess.js"
import * as processTree from "./processTree.js"

const DEFAULT_GRACE = Duration.seconds(2)
const DEFAULT_CAPTURE_BYTES = 1024 * 1024
/** How long output may keep arriving after every process we know of is gone. */
const DRAIN_LIMIT_MS = 2_000

/** The runs whose processes may still be running, for {@link killAllNow}. */
const live = new Set<processTree.ProcessTree>()

export const killAllNow = (): void => {
  for (const tree of live) processTree.killNow(tree)
}

/**
 * Spawns a long-lived program with its three pipes, carrying a marker, and registered for {@link killAllNow}; `stop`
 * ends its whole tree (what it forked included) and unregisters it.
 *
 * Where processes can be scanned (Linux), the program stays in our process group and session, its tree found by
 * marker and parentage: a session of its own is a scheduler autogroup of its own, and a program we talk to in round
 * trips (an MCP server) then answers measurably later on a busy machine (bench/mcp: ~1.3x the wall time back to
 * back). Elsewhere it leads a process group of its own, the only way to find what it forked.
 */
export const spawnService = (options: Subprocess.ServiceOptions): Subprocess.Service => {
  const marker = randomUUID()
  const startTicks = processTree.startTicksFloor()
  const spawnedAt = performance.now()
  const sharesGroup = processTree.scansProcesses
  // Every stream piped: the child has all three.
  const child = spawnMarked(
    options.argv,
    options.cwd,
    options.env,
    marker,
    "pipe",
    !sharesGroup
  ) as childProcess.ChildProcessWithoutNullStreams
  let tree: processTree.ProcessTree | undefined
  const register = () => {
    if (tree !== undefined || child.pid === undefined) return
    tree = { pgid: child.pid, marker, startTicks, spawnedAt, sharesGroup }
    live.add(tree)
  }
  register()
  child.once("spawn", register)
  const grace = options.killGrace ?? DEFAULT_GRACE
  return {
    child,
    stop: Effect.suspend(() => {
      const known = tree
      if (known === undefined) return Effect.void
      return Effect.tap(processTree.terminate(known, grace), (termination) =>
        Effect.sync(() => {
          if (termination.survivors.length === 0) live.delete(known)
        }))
    })
  }
}

/** Registers a tree of a run started elsewhere (`Subprocess.spawn`), for {@link killAllNow}. */
export const register = (tree: processTree.ProcessTree): void => void live.add(tree)

/** Forgets a tree once nothing of it runs. */
export const unregister = (tree: processTree.ProcessTree): void => void live.delete(tree)

/**
 * Starts a program as `run` and `Subprocess.spawn` do: leading a process group of its own (detached, unless told
 * otherwise), carrying the marker in its environment, its output piped. Throws what `child_process.spawn` throws.
 */
export const spawnMarked = (
  argv: ReadonlyArray<string>,
  cwd: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  marker: string,
  stdin: "ignore" | "pipe",
  detached = true
): childProcess.ChildProcess => {
  const [program, ...args] = argv
  return childProcess.spawn(program!, args, {
    cwd,
    env: { ...env, [processTree.markerVariable]: marker },
    stdio: [stdin, "pipe", "pipe"],
    detached
  })
}

/** The error for a program that could not be started. */
export const spawnFailure = (argv: ReadonlyArray<string>, cwd: string | undefined, error: unknown) =>
  new SubprocessError({
    reason: "spawn",
    message: `cannot start ${argv[0]} in ${cwd}: ${error instanceof Error ? error.message : String(error)}`,
    cause: error
  })

/** How long processes of a tree whose program exited get to end by themselves before they count as leftovers. */
const SETTLE_MS = 200

/**
 * Waits (bounded, in real time) while the tree still has processes, and answers what it last found: none is the
 * common case and costs one look.
 */
const settle = (tree: processTree.ProcessTree): Effect.Effect<ReadonlyArray<number>> =>
  Effect.suspend(() => {
    const until = Date.now() + SETTLE_MS
    const poll: Effect.Effect<ReadonlyArray<number>> = Effect.flatMap(
      processTree.members(tree),
      (found) =>
        found.length === 0 || Date.now() >= until ? Effect.succeed(found) : Effect.zipRight(realSleep(20), poll)
    )
    return poll
  })

const signalNumber = (name: string): number => (os.constants.signals as Record<string, number | undefined>)[name] ?? 0

type Ended = { readonly code: number | null; readonly signal: NodeJS.Signals | null }

/** Spawns detached; succeeds once the process runs, fails when it cannot start (no such program, no such cwd). */
const spawn = (options: Subprocess.Options, marker: string) =>
  Effect.async<
    { readonly child: childProcess.ChildProcess; readonly ended: Deferred.Deferred<Ended> },
    SubprocessError
  >((resume) => {
    const fail = (error: unknown) => spawnFailure(options.argv, options.cwd, error)
    let child: childProcess.ChildProcess
    try {
      child = spawnMarked(
        options.argv,
        options.cwd,
        options.env,
        marker,
        options.stdin === undefined ? "ignore" : "pipe"
      )
    } catch (error) {
      return resume(Effect.fail(fail(error)))
    }
    const ended = Deferred.unsafeMake<Ended>(FiberId.none)
    let started = false
    child.once("exit", (code, signal) => Deferred.unsafeDone(ended, Effect.succeed({ code, signal })))
    // Stays registered: an 'error' nobody listens to would crash the process.
    child.on("error", (error) => {
      if (!started) resume(Effect.fail(fail(error)))
      started = true
    })
    child.once("spawn", () => {
      started = true
      resume(Effect.succeed({ child, ended }))
    })
  })

/** One destination of output: a sink or a capture buffer, with its cap. */
interface Channel {
  readonly deliver: (chunk: Uint8Array) => Effect.Effect<void>
  readonly captured: () => Uint8Array
  readonly truncated: () => boolean
}

const channel = (
  handling: Subprocess.OutputHandling | undefined,
  stream: "stdout" | "stderr",
  stop: (exit: Subprocess.Exit) => Effect.Effect<void>
): Channel => {
  const chunks: Array<Uint8Array> = []
  const sink = handling?.onChunk
  // A sink that has had enough gets nothing more (what is still in the pipe is read and dropped).
  let enough = false
  const take = sink === undefined
    ? (chunk: Uint8Array): Effect.Effect<void> => Effect.sync(() => void chunks.push(chunk))
    : (chunk: Uint8Array): Effect.Effect<void> =>
      enough ? Effect.void : Effect.flatMap(sink(chunk), (answer) => {
        if (answer !== "enough") return Effect.void
        enough = true
        return stop(Exit.Stopped())
      })
  const limit = Math.max(0, handling?.maxBytes ?? (sink === undefined ? DEFAULT_CAPTURE_BYTES : Infinity))
  const stopsAtLimit = (handling?.overflow ?? "stop") === "stop"
  let delivered = 0
  let truncated = false
  return {
    deliver: (chunk) => {
      const room = limit - delivered
      if (chunk.length <= room) {
        delivered += chunk.length
        return take(chunk)
      }
      // Output past the cap is never delivered (memory and disk stay bounded).
      delivered = limit
      truncated = true
      const kept = room > 0 ? take(chunk.subarray(0, room)) : Effect.void
      return stopsAtLimit ? Effect.zipRight(kept, stop(Exit.OutputLimit({ stream, limitBytes: limit }))) : kept
    },
    captured: () => (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)),
    truncated: () => truncated
  }
}

export const run = (options: Subprocess.Options): Effect.Effect<Subprocess.Result, SubprocessError, Scope.Scope> =>
  Effect.gen(function*() {
    const grace = options.killGrace ?? DEFAULT_GRACE
    const keep = options.afterExit === "keep"
    const marker = randomUUID()
    const startTicks = processTree.startTicksFloor()
    const spawnedAt = performance.now()
    const state = { settled: false }
    const terminate = (tree: processTree.ProcessTree) =>
      Effect.tap(processTree.terminate(tree, grace), (termination) =>
        Effect.sync(() => {
          // Nothing of the run runs any more, so nothing can start anything: nothing is left to do at the end.
          if (termination.survivors.length === 0) {
            state.settled = true
            live.delete(tree)
          }
        }))
    // Spawned and registered without a gap an interruption could fall into.
    const { child, ended, tree } = yield* Effect.acquireRelease(
      Effect.map(spawn(options, marker), (spawned) => {
        const tree: processTree.ProcessTree = { pgid: spawned.child.pid!, marker, startTicks, spawnedAt }
        live.add(tree)
        return { ...spawned, tree }
      }),
      ({ tree }) => (state.settled ? Effect.void : terminate(tree))
    )
    const pid = tree.pgid

    if (options.stdin !== undefined) {
      // A program that never reads its input may exit before it is written: EPIPE is not the run's error.
      child.stdin!.on("error", () => {})
      child.stdin!.end(options.stdin)
    }

    // The first reason to stop wins; later ones (the rest of an overflowing chunk) change nothing.
    const stopped = yield* Deferred.make<Subprocess.Exit>()
    const stop = (exit: Subprocess.Exit) => Effect.asVoid(Deferred.succeed(stopped, exit))
    const out = channel(options.stdout, "stdout", stop)
    const err = options.stderr === "stdout" ? out : channel(options.stderr, "stderr", stop)
    // Two readers share one lock, so chunks reach a sink one at a time; `Stream.merge` would do the same at twice
    // the cost per chunk.
    const lock = yield* Effect.makeSemaphore(1)
    const readAll = (readable: Readable, into: Channel) =>
      Stream.runForEachChunk(
        NodeStream.fromReadable<SubprocessError>(
          () => readable,
          (cause) =>
            new SubprocessError({
              reason: "read",
              message: `cannot read the output of ${options.argv[0]}: ${String(cause)}`,
              cause
            })
        ),
        (chunk) => lock.withPermits(1)(Effect.forEach(chunk, into.deliver, { discard: true }))
      )
    const reader = yield* Effect.all([readAll(child.stdout!, out), readAll(child.stderr!, err)], {
      concurrency: 2,
      discard: true
    }).pipe(
      Effect.forkScoped
    )

    const exited = Effect.map(
      Deferred.await(ended),
      ({ code, signal }): Subprocess.Exit =>
        signal !== null || code === null
          ? Exit.Signaled({ signal: signal ?? "SIGKILL", code: 128 + signalNumber(signal ?? "SIGKILL") })
          : Exit.Exited({ code })
    )
    // Keeping what the program left running, the run is over once its output ends too (a background job holding
    // the pipe keeps it going, up to the timeout). A read error ends it as well, and surfaces below.
    const finished = keep ? Effect.zipLeft(exited, Effect.either(Fiber.join(reader))) : exited
    const timeout = options.timeout === undefined ? undefined : Duration.decode(options.timeout)
    const exit = yield* Effect.raceAll([
      finished,
      Deferred.await(stopped),
      ...(timeout === undefined
        ? []
        : [Effect.as(realSleep(Duration.toMillis(timeout)), Exit.TimedOut({ after: timeout }))])
    ])
    const byItself = exit._tag === "Exited" || exit._tag === "Signaled"
    let leftovers = 0
    // After an exit by itself, what is still going down by itself (a sandbox's helpers, a pipeline's last
    // process) gets a moment before it counts as left behind; when nothing is left, there is nothing to end.
    if (keep && byItself || byItself && (yield* settle(tree)).length === 0) {
      state.settled = true
      live.delete(tree)
    } else {
      const termination = yield* terminate(tree)
      if (byItself) leftovers = termination.found
    }

    // Every writer is gone, so the pipes reach their end; unless a process we could not find holds one open.
    const drained = yield* Fiber.join(reader).pipe(
      Effect.as(true),
      Effect.raceFirst(Effect.as(realSleep(DRAIN_LIMIT_MS), false))
    )
    if (!drained) yield* Fiber.interrupt(reader)
    return {
      exit,
      pid,
      stdout: out.captured(),
      stderr: options.stderr === "stdout" ? new Uint8Array(0) : err.captured(),
      stdoutTruncated: out.truncated(),
      stderrTruncated: err.truncated(),
      leftovers,
      outputIncomplete: !drained
    }
  })
