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

/**
 * The Bash tool over `cwd`, its full outputs stored under `store`, with NodeContext. Without a `sandbox` option the sandbox is off: these helpers serve the tests of the
 * process lifecycle, which read host PIDs and write outside the workspace; `sandbox.test.ts` and the sandbox
 * property run it on.
 */
export const bashLayer = (cwd: string, options: BashOptions = {}, store = tempDir("bash-store")) =>
  BashTool.layer({ sandbox: "off", ...options }).pipe(
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

/** Why the sandbox cannot run here, or undefined when it can. */
export const sandboxUnavailable = ((): string | undefined => {
  const bwrap = childProcess.spawnSync("bwrap", ["--ro-bind", "/", "/", "--unshare-net", "true"], { encoding: "utf8" })
  if (bwrap.error !== undefined) return `bwrap is not installed (${bwrap.error.message})`
  if (bwrap.status !== 0) return `bwrap cannot create a sandbox here: ${bwrap.stderr.trim()}`
  const socat = childProcess.spawnSync("socat", ["-V"], { encoding: "utf8" })
  if (socat.error !== undefined) return `socat is not installed (${socat.error.message})`
  return undefined
})()
if (sandboxUnavailable !== undefined) console.warn(`The sandbox tests will be skipped: ${sandboxUnavailable}`)

/**
 * The sandbox the end-to-end corpora run with: the default (on where it can run, `sandbox.test.ts` says when not),
 * or off with `BASH_CORPUS_SANDBOX=off`, so each corpus runs both ways.
 */
export const corpusSandbox: "off" | undefined = process.env.BASH_CORPUS_SANDBOX === "off" ? "off" : undefined
