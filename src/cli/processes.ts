/**
 * The process trees this CLI started, found from the outside when there is no time to ask the runtime: every direct
 * child of this process leads a process group of its own (Bash spawns its shell detached) and carries the call's
 * marker variable, which its descendants inherit even when they leave the group. SIGKILL to each group and to each
 * marked process ends them all, the ones that ignore SIGTERM included (Linux `/proc`; elsewhere the groups only).
 *
 * @internal
 */
import * as fs from "node:fs"
import { markerVariable, members } from "../Tools/Shell/ProcessTree.js"

const childrenOf = (parent: number): ReadonlyArray<number> => {
  let entries: ReadonlyArray<string>
  try {
    entries = fs.readdirSync("/proc")
  } catch {
    return []
  }
  const children: Array<number> = []
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "latin1")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[1]) === parent) children.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return children
}

const markerOf = (pid: number): string | undefined => {
  try {
    const environ = fs.readFileSync(`/proc/${pid}/environ`, "latin1").split("\0")
    const prefix = `${markerVariable}=`
    return environ.find((entry) => entry.startsWith(prefix))?.slice(prefix.length)
  } catch {
    return undefined
  }
}

const kill = (pid: number): void => {
  try {
    process.kill(pid, "SIGKILL")
  } catch {
    // already gone
  }
}

/** SIGKILL to every process tree this process started; synchronous, for a signal handler. */
export const killKnownTrees = (): void => {
  for (const child of childrenOf(process.pid)) {
    const marker = markerOf(child)
    kill(-child)
    if (marker === undefined) {
      kill(child)
      continue
    }
    for (const pid of members({ pgid: child, marker })) kill(pid)
    kill(child)
  }
}
