/**
 * Shared fixtures of the Bash tests: a Bash layer over a real directory, a fresh git repository, and liveness
 * checks of real processes.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import type { CallContext, Progress } from "../../../src/Tool/Tool.js"
import { BashTool } from "../../../src/Tools/Bash.js"
import type { BashOptions } from "../../../src/Tools/Bash.js"
import { isAlive, pollFor, readPids, tempDir } from "../../support/index.js"

export { isAlive, pollFor, readPids, tempDir }

/** A fresh empty directory under the system's temporary directory. */

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
