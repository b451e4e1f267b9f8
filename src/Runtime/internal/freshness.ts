/**
 * Whether a call's plan may be stale: planned before an earlier call of the turn may have written. A tool's plan
 * reads the file system (Bash resolves symlinks, `cd` targets and globs; Read binds a real path), so a plan made
 * when the call arrived can describe a world that a call before it has since changed (`ln -s /outside l` then
 * `cat l`). The pipeline plans such a call again right before its gate and again right before it executes, and
 * decides again when the new plan needs another decision (`pipeline.ts`).
 *
 * A call may write unless its traits say it is read-only (or its tool touches nothing): it moves the version when
 * it starts and when it ends, and counts as writing in between. A plan is fresh when the version has not moved since
 * it was made and nothing was writing then.
 *
 * @internal
 */
import type { AnyInvocation, Definition } from "../../Tool/Tool.js"

/** @internal */
export interface WriteLog {
  /** Records when an invocation was planned; returns it. */
  readonly planned: (invocation: AnyInvocation) => AnyInvocation
  /** Whether something may have written since the invocation was planned (an invocation never recorded is not). */
  readonly isStale: (invocation: AnyInvocation) => boolean
  /** A call starts executing: when it may write, returns what to call when it ends. */
  readonly begin: (definition: Definition.Any, invocation: AnyInvocation) => (() => void) | undefined
}

/** Stamped on a plan made while a call was writing: stale whatever happens next. */
const WHILE_WRITING = -1

/** @internal */
export const makeWriteLog = (): WriteLog => {
  let version = 0
  let writing = 0
  const stamps = new WeakMap<AnyInvocation, number>()
  return {
    planned: (invocation) => {
      stamps.set(invocation, writing > 0 ? WHILE_WRITING : version)
      return invocation
    },
    isStale: (invocation) => {
      const stamp = stamps.get(invocation)
      return stamp !== undefined && (stamp === WHILE_WRITING || stamp !== version)
    },
    begin: (definition, invocation) => {
      if (!definition.touchesEnvironment || invocation.traits.readOnly === true) return undefined
      version++
      writing++
      let ended = false
      return () => {
        if (ended) return
        ended = true
        version++
        writing--
      }
    }
  }
}
