/**
 * The machinery of `Subprocess.run`: spawn, one reader of both outputs, the first of exit, timeout and output caps
 * (one Deferred each completes, no race of fibers), and the teardown through `processTree`.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as EffectExit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import type { Readable } from "node:stream"
import { MAX_TIMER_MILLIS, realSleep } from "../../Shared/realTime.js"
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

/**
 * Spawns detached; succeeds once the process runs, fails when it cannot start (no such program, no such cwd).
 * `onExit` hears the exit, listened to from the spawn on, so no exit is missed however soon it comes.
 */
const spawn = (options: Subprocess.Options, marker: string, onExit: (ended: Ended) => void) =>
  Effect.async<childProcess.ChildProcess, SubprocessError>((resume) => {
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
    let started = false
    child.once("exit", (code, signal) => onExit({ code, signal }))
    // Stays registered: an 'error' nobody listens to would crash the process.
    child.on("error", (error) => {
      if (!started) resume(Effect.fail(fail(error)))
      started = true
    })
    child.once("spawn", () => {
      started = true
      resume(Effect.succeed(child))
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

/** Chunks waiting for the reader beyond which a stream is paused (its pipe then fills, and the writer waits). */
const QUEUED_CHUNKS = 4

/**
 * Reads streams to their ends as pulls: each pull gives a stream's index and its next chunk, in the order the chunks
 * arrived, or `null` once every stream has ended. A stream is paused while {@link QUEUED_CHUNKS} chunks wait, and
 * resumed as they are taken: a slow sink holds the program back instead of filling memory. (`read()` in paused mode
 * would copy what is buffered into one new Buffer at each pull.) `close` removes the listeners and destroys the
 * streams: a reader that stops early (interrupted, failed, past the drain limit) must not leave a pipe open, which
 * would keep the descriptor, keep Node alive, and keep a writer blocked on a full pipe where it would otherwise get
 * SIGPIPE.
 */
const pullEach = (
  readables: ReadonlyArray<Readable>
): {
  readonly pull: Effect.Effect<readonly [index: number, chunk: Buffer] | null, unknown>
  readonly close: () => void
} => {
  const ended = readables.map(() => false)
  const queue: Array<readonly [number, Buffer]> = []
  let failure: { readonly error: unknown } | undefined
  let waiting: ((next: Effect.Effect<readonly [number, Buffer] | null, unknown>) => void) | undefined
  const pull = (): Effect.Effect<readonly [number, Buffer] | null, unknown> | undefined => {
    if (failure !== undefined) return Effect.fail(failure.error)
    const next = queue.shift()
    if (next !== undefined) {
      if (queue.length < QUEUED_CHUNKS) {
        for (const readable of readables) if (readable.isPaused() && !readable.destroyed) readable.resume()
      }
      return Effect.succeed(next)
    }
    return ended.every(Boolean) ? Effect.succeed(null) : undefined
  }
  const wake = () => {
    const resume = waiting
    if (resume === undefined) return
    const next = pull()
    if (next === undefined) return
    waiting = undefined
    resume(next)
  }
  const listeners = readables.map((readable, index) => {
    const data = (chunk: Buffer) => {
      queue.push([index, chunk])
      if (queue.length >= QUEUED_CHUNKS) readable.pause()
      wake()
    }
    // A stream destroyed without reaching its end ('close' with no 'end') has nothing more either.
    const end = () => {
      ended[index] = true
      wake()
    }
    const error = (error: unknown) => {
      failure ??= { error }
      wake()
    }
    readable.on("data", data)
    readable.once("end", end)
    readable.once("close", end)
    readable.on("error", error)
    // What happened before the listeners were there: a stream destroyed (or failed) by then says so no more.
    if (readable.errored !== null) failure ??= { error: readable.errored }
    if (readable.readableEnded || readable.destroyed) ended[index] = true
    return { data, end, error }
  })
  return {
    pull: Effect.async((resume) => {
      const next = pull()
      if (next !== undefined) return resume(next)
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    }),
    close: () => {
      waiting = undefined
      queue.length = 0
      readables.forEach((readable, index) => {
        const { data, end, error } = listeners[index]!
        readable.off("data", data)
        readable.off("end", end)
        readable.off("close", end)
        readable.off("error", error)
        // An error after this (the destroy's own) must not go unheard: unheard, it would crash the process.
        readable.on("error", () => {})
        readable.destroy()
      })
    }
  }
}

/**
 * Completes `deferred` with `value` after `millis` of real time, unless it is completed first; gives the clearing.
 * Past 2^31 - 1 ms (some 24 days) there is no timer: `setTimeout` would fire at once.
 */
const completeAfter = <A>(deferred: Deferred.Deferred<A>, millis: number, value: A): () => void => {
  if (!(millis <= MAX_TIMER_MILLIS)) return () => {}
  const timer = setTimeout(() => Deferred.unsafeDone(deferred, Effect.succeed(value)), Math.max(0, millis))
  return () => clearTimeout(timer)
}

const exitOf = ({ code, signal }: Ended): Subprocess.Exit =>
  signal !== null || code === null
    ? Exit.Signaled({ signal: signal ?? "SIGKILL", code: 128 + signalNumber(signal ?? "SIGKILL") })
    : Exit.Exited({ code })

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

    // How the run ends: the first of the program's exit (with afterExit "keep", its exit and the end of its
    // output: a background job holding the pipe keeps the run going, up to the timeout), a reason to stop (an
    // output cap, a sink's "enough") and the timeout; later ones change nothing. Each completes one Deferred,
    // where racing them would fork a fiber for each.
    const decided = Deferred.unsafeMake<Subprocess.Exit>(FiberId.none)
    const decide = (exit: Subprocess.Exit) => void Deferred.unsafeDone(decided, Effect.succeed(exit))
    let exited: Ended | undefined
    // How reading the output ended, once it has (a read error ends the run too, and surfaces below).
    let read: EffectExit.Exit<void, SubprocessError> | undefined
    const readEnded = Deferred.unsafeMake<boolean>(FiberId.none)
    const onExit = (ended: Ended) => {
      exited = ended
      if (!keep || read !== undefined) decide(exitOf(ended))
    }

    // Spawned and registered without a gap an interruption could fall into.
    const { child, tree } = yield* Effect.acquireRelease(
      Effect.map(spawn(options, marker, onExit), (child) => {
        const tree: processTree.ProcessTree = { pgid: child.pid!, marker, startTicks, spawnedAt }
        live.add(tree)
        return { child, tree }
      }),
      ({ tree }) => (state.settled ? Effect.void : terminate(tree))
    )
    const pid = tree.pgid

    if (options.stdin !== undefined) {
      // A program that never reads its input may exit before it is written: EPIPE is not the run's error.
      child.stdin!.on("error", () => {})
      child.stdin!.end(options.stdin)
    }

    const stop = (exit: Subprocess.Exit) => Effect.sync(() => decide(exit))
    const out = channel(options.stdout, "stdout", stop)
    const err = options.stderr === "stdout" ? out : channel(options.stderr, "stderr", stop)
    // One reader for both streams: chunks reach a sink one at a time, in the order they arrived.
    const into = [out, err]
    const outputs = pullEach([child.stdout!, child.stderr!])
    const next = Effect.mapError(
      outputs.pull,
      (cause) =>
        new SubprocessError({
          reason: "read",
          message: `cannot read the output of ${options.argv[0]}: ${String(cause)}`,
          cause
        })
    )
    const readAll: Effect.Effect<void, SubprocessError> = Effect.flatMap(
      next,
      (pulled) => pulled === null ? Effect.void : Effect.zipRight(into[pulled[0]]!.deliver(pulled[1]), readAll)
    )
    const reader = yield* Effect.forkScoped(Effect.onExit(readAll, (exit) =>
      Effect.sync(() => {
        // However it ended, the pipes are done with: a failure or an interruption leaves them open otherwise.
        outputs.close()
        read = exit
        Deferred.unsafeDone(readEnded, Effect.succeed(true))
        if (keep && exited !== undefined) decide(exitOf(exited))
      })))

    const clearTimer = options.timeout === undefined ? undefined : (() => {
      const after = Duration.decode(options.timeout)
      return completeAfter(decided, Duration.toMillis(after), Exit.TimedOut({ after }))
    })()
    const exit = yield* clearTimer === undefined
      ? Deferred.await(decided)
      : Effect.ensuring(Deferred.await(decided), Effect.sync(clearTimer))
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
    const drained = read !== undefined || (yield* Effect.suspend(() => {
      const clearDrain = completeAfter(readEnded, DRAIN_LIMIT_MS, false)
      return Effect.ensuring(Deferred.await(readEnded), Effect.sync(clearDrain))
    }))
    if (!drained) yield* Fiber.interrupt(reader)
    else if (read !== undefined && EffectExit.isFailure(read)) return yield* Effect.failCause(read.cause)
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
