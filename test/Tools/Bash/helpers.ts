/**
 * Shared fixtures of the Bash tests: a Bash layer over a real directory, a fresh git repository, and liveness
 * checks of real processes.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import type { CallContext, Progress } from "../../../src/Tool/Tool.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import type { BashOptions } from "../../../src/Tools/Bash.js"

/** A fresh empty directory under the system's temporary directory. */
export const tempDir = (prefix: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`))

/** A git repository with one commit holding README.md; identity passed on the command line, not to commands. */
export const gitRepo = (): string => {
  const dir = tempDir("bash-repo")
  fs.writeFileSync(path.join(dir, "README.md"), "# Demo\n\nA repository for the Bash tool tests.\n")
  const git = (...args: Array<string>) =>
    childProcess.execFileSync("git", [
      "-c",
      "user.name=Test",
      "-c",
      "user.email=test@example.com",
      "-c",
      "init.defaultBranch=main",
      ...args
    ], {
      cwd: dir,
      stdio: "ignore"
    })
  git("init", "-q")
  git("add", "README.md")
  git("commit", "-q", "-m", "initial")
  return dir
}

/** The Bash tool over `cwd`, its full outputs stored under `store`, with NodeContext. */
export const bashLayer = (cwd: string, options: BashOptions = {}, store = tempDir("bash-store")) =>
  BashTool.layer(options).pipe(
    Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layer(store))),
    Layer.provide(NodeContext.layer)
  )

/** A call context recording progress reports. */
export const recordingContext = (toolUseId = "toolu_test"): CallContext & { readonly reports: Array<Progress> } => {
  const reports: Array<Progress> = []
  return {
    toolUseId,
    toolName: "Bash",
    reports,
    progress: (update) => Effect.sync(() => void reports.push(update)),
    isReadDenied: () => false
  }
}

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
 * A script that starts a tree: a child ignoring SIGTERM, a `setsid` child (new session, out of the process
 * group), a `nohup` child, then waits; every pid is written to `pids`.
 */
export const treeScript = (pidFile: string, tail = "sleep 1000"): string =>
  [
    `echo $$ > ${pidFile}`,
    `(trap '' TERM; exec sleep 1000) & echo $! >> ${pidFile}`,
    `setsid sleep 1000 & echo $! >> ${pidFile}`,
    `nohup sleep 1000 >/dev/null 2>&1 & echo $! >> ${pidFile}`,
    `echo started`,
    tail
  ].join("\n")
