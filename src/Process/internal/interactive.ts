/**
 * The machinery of `Subprocess.spawn`: a long-lived program whose pipes the caller drives (a language server over
 * stdio), with the same teardown as `run` (the group and every marked process: SIGTERM, a grace period, SIGKILL).
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"
import type * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import * as os from "node:os"
import type * as Subprocess from "../Subprocess.js"
import type { SubprocessError } from "../Subprocess.js"
import { Exit } from "../Subprocess.js"
import * as processTree from "./processTree.js"
import { register, spawnFailure, spawnMarked, unregister } from "./subprocess.js"

const DEFAULT_GRACE = Duration.seconds(2)

const signalNumber = (name: string): number => (os.constants.signals as Record<string, number | undefined>)[name] ?? 0

export const spawn = (
  options: Subprocess.SpawnOptions
): Effect.Effect<Subprocess.Running, SubprocessError, Scope.Scope> =>
  Effect.gen(function*() {
    const grace = options.killGrace ?? DEFAULT_GRACE
    const marker = randomUUID()
    const startTicks = processTree.startTicksFloor()
    const spawnedAt = performance.now()
    const state = { settled: false }
    const { child, exited, tree } = yield* Effect.acquireRelease(
      Effect.async<
        { child: childProcess.ChildProcess; exited: Deferred.Deferred<Subprocess.Exit>; tree: processTree.ProcessTree },
        SubprocessError
      >((resume) => {
        const fail = (error: unknown) => spawnFailure(options.argv, options.cwd, error)
        let child: childProcess.ChildProcess
        try {
          child = spawnMarked(options.argv, options.cwd, options.env, marker, "pipe")
        } catch (error) {
          return resume(Effect.fail(fail(error)))
        }
        const exited = Deferred.unsafeMake<Subprocess.Exit>(FiberId.none)
        let started = false
        child.once("exit", (code, signal) =>
          Deferred.unsafeDone(
            exited,
            Effect.succeed(
              signal !== null || code === null
                ? Exit.Signaled({ signal: signal ?? "SIGKILL", code: 128 + signalNumber(signal ?? "SIGKILL") })
                : Exit.Exited({ code })
            )
          ))
        child.on("error", (error) => {
          if (!started) resume(Effect.fail(fail(error)))
          started = true
        })
        // A program that dies takes its pipes with it: a late write must not crash this process.
        child.stdin!.on("error", () => {})
        child.once("spawn", () => {
          started = true
          const tree: processTree.ProcessTree = { pgid: child.pid!, marker, startTicks, spawnedAt }
          register(tree)
          resume(Effect.succeed({ child, exited, tree }))
        })
      }),
      ({ tree }) =>
        state.settled ? Effect.void : Effect.tap(processTree.terminate(tree, grace), (termination) =>
          Effect.sync(() => {
            if (termination.survivors.length === 0) {
              state.settled = true
              unregister(tree)
            }
          }))
    )
    return {
      pid: tree.pgid,
      marker,
      stdin: child.stdin!,
      stdout: child.stdout!,
      stderr: child.stderr!,
      exit: Deferred.await(exited)
    }
  })
