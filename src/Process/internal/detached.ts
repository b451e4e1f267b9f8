/**
 * The machinery of `Subprocess.spawnDetached`: a marked program in a process group of its own, with no pipes to
 * this process, so it may outlive it (a background task kept between CLI runs), and the means to find and end its
 * tree later from its identity alone (group, marker, start time), in this process or another.
 *
 * @internal
 */
import * as Deferred from "effect/Deferred"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberId from "effect/FiberId"
import type * as childProcess from "node:child_process"
import { randomUUID } from "node:crypto"
import type * as Subprocess from "../Subprocess.js"
import type { SubprocessError } from "../Subprocess.js"
import * as processTree from "./processTree.js"
import { register, spawnFailure, spawnMarked, unregister } from "./subprocess.js"

const treeOf = (identity: Subprocess.TreeIdentity): processTree.ProcessTree => ({
  pgid: identity.pid,
  marker: identity.marker,
  startTicks: identity.startTicks
})

/** The trees registered for `killAllNow`, by pid, so the one registered can be taken out again. */
const registered = new Map<number, processTree.ProcessTree>()

export const spawnDetached = (
  options: Subprocess.DetachedOptions
): Effect.Effect<Subprocess.Detached, SubprocessError> =>
  Effect.async<Subprocess.Detached, SubprocessError>((resume) => {
    const marker = randomUUID()
    const startTicks = processTree.startTicksFloor()
    let child: childProcess.ChildProcess
    try {
      child = spawnMarked(options.argv, options.cwd, options.env, marker, "ignore")
    } catch (error) {
      return resume(Effect.fail(spawnFailure(options.argv, options.cwd, error)))
    }
    const exited = Deferred.unsafeMake<void>(FiberId.none)
    let started = false
    let abandoned = false
    child.once("exit", () => Deferred.unsafeDone(exited, Effect.void))
    child.on("error", (error) => {
      if (!started && !abandoned) resume(Effect.fail(spawnFailure(options.argv, options.cwd, error)))
      started = true
    })
    child.once("spawn", () => {
      if (abandoned) return
      started = true
      // Nothing is read from it: the program writes where its argv says, and this process may exit before it.
      child.stdout?.destroy()
      child.stderr?.destroy()
      child.unref()
      const identity: Subprocess.TreeIdentity = { pid: child.pid!, marker, startTicks }
      const tree = treeOf(identity)
      registered.set(identity.pid, tree)
      register(tree)
      resume(Effect.succeed({ identity, exited: Deferred.await(exited) }))
    })
    // Interrupted before the spawn was confirmed: the process exists already (spawn forks at once), and nothing
    // would know it. Its group goes (what it started is in it), or itself when it has not made the group yet.
    return Effect.sync(() => {
      if (started) return
      abandoned = true
      const pid = child.pid
      if (pid === undefined) return
      try {
        process.kill(-pid, "SIGKILL")
      } catch {
        child.kill("SIGKILL")
      }
    })
  })

/** Whether any process of the tree is there (one caught mid-exec counts: it is still there). */
export const treeRuns = (identity: Subprocess.TreeIdentity): boolean => {
  const seen = processTree.scan(treeOf(identity))
  return seen.found.length > 0 || seen.pending.length > 0
}

export const terminateTree = (
  identity: Subprocess.TreeIdentity,
  grace: Duration.DurationInput
): Effect.Effect<Subprocess.TreeTermination> =>
  Effect.tap(processTree.terminate(treeOf(identity), grace), (termination) =>
    Effect.sync(() => {
      if (termination.survivors.length > 0) return
      const tree = registered.get(identity.pid)
      if (tree !== undefined) {
        registered.delete(identity.pid)
        unregister(tree)
      }
    }))
