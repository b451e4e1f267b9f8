/**
 * Running a command hook: `sh -c command` (or the program with `args`) through `Subprocess.run`, with the hook JSON
 * on stdin, a time limit and an output cap, its whole process tree torn down when it does not complete; and what a
 * run came to (`HookRun`), which HTTP and prompt hooks answer in the same terms.
 *
 * @internal
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import * as Subprocess from "../../Process/Subprocess.js"
import type { PromptModel } from "../Hooks.js"

// -----------------------------------------------------------------------------
// running hooks
// -----------------------------------------------------------------------------

/** What running an external hook (command, HTTP, model) came to, in a command's terms. */
export type HookRun =
  | { readonly _tag: "Exited"; readonly code: number; readonly stdout: string; readonly stderr: string }
  | { readonly _tag: "TimedOut"; readonly after: Duration.Duration }
  | { readonly _tag: "Crashed"; readonly message: string }

export const formatBytes = (bytes: number): string =>
  bytes % (1024 * 1024) === 0
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes % 1024 === 0
    ? `${bytes / 1024} KiB`
    : `${bytes} bytes`

export const expandHome = (path: string, home: string): string =>
  path === "~" ? home : path.startsWith("~/") ? nodePath.join(home, path.slice(2)) : path

export interface RunSettings {
  readonly cwd: string
  readonly home: string
  readonly sessionId: string
  readonly defaultTimeout: Duration.Duration
  readonly grace: Duration.Duration
  readonly maxOutput: number
  readonly languageModel: PromptModel | undefined
  readonly env: Readonly<Record<string, string | undefined>>
  readonly allowedHttpHookUrls: ReadonlyArray<string> | undefined
  readonly httpHookAllowedEnvVars: ReadonlyArray<string> | undefined
}

/**
 * Runs a command hook with `stdin`, within `timeout`: `sh -c command`, or `command ...args` with no shell, through
 * {@link Subprocess.run}. When the run does not complete (timeout, interruption, too much output), the hook's
 * process group and every process it started (`setsid` ones too) get SIGTERM, then SIGKILL after `grace`:
 * background children die with the hook. After a normal exit, what it left running is left alone.
 */
export const runCommand = (
  hook: { readonly command: string; readonly args?: ReadonlyArray<string> | undefined },
  stdin: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> =>
  Effect.scoped(
    Subprocess.run({
      argv: hook.args === undefined
        ? ["sh", "-c", hook.command]
        : [expandHome(hook.command, settings.home), ...hook.args],
      cwd: settings.cwd,
      env: { ...process.env, CLAUDE_PROJECT_DIR: settings.cwd },
      stdin,
      timeout,
      killGrace: settings.grace,
      stdout: { maxBytes: settings.maxOutput },
      stderr: { maxBytes: settings.maxOutput },
      afterExit: "keep"
    })
  ).pipe(
    Effect.map((result): HookRun => {
      switch (result.exit._tag) {
        case "Exited":
          return { _tag: "Exited", code: result.exit.code, stdout: utf8(result.stdout), stderr: utf8(result.stderr) }
        case "TimedOut":
          return { _tag: "TimedOut", after: timeout }
        case "OutputLimit":
          return {
            _tag: "Crashed",
            message: `printed more than ${formatBytes(result.exit.limitBytes)} on ${result.exit.stream}`
          }
        case "Signaled":
          return { _tag: "Crashed", message: `killed by ${result.exit.signal}` }
        case "Stopped":
          // No sink here answers "enough": unreachable, said plainly all the same.
          return { _tag: "Crashed", message: "stopped" }
      }
    }),
    Effect.catchAll((error) => Effect.succeed<HookRun>({ _tag: "Crashed", message: error.message }))
  )

export const utf8 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")

export const crashedExit = (code: number): boolean => code === 126 || code === 127 || code > 128

export const describeFailure = (result: Exclude<HookRun, { readonly _tag: "Exited"; readonly code: 0 }>): string => {
  switch (result._tag) {
    case "TimedOut":
      return `timed out after ${Duration.format(result.after)}`
    case "Crashed":
      return `crashed: ${result.message}`
    case "Exited":
      return `${crashedExit(result.code) ? "crashed" : "failed"} with exit code ${result.code}${
        result.stderr.trim() === "" ? "" : `: ${result.stderr.trim()}`
      }`
  }
}
