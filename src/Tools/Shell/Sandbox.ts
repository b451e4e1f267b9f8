/**
 * The opt-in bubblewrap sandbox for shell commands: the workspace writable, everything else read-only, a private
 * `/tmp`, no network, a new PID namespace (when its first process ends, the kernel kills every process left in
 * it, so nothing survives the call), and death with the parent.
 *
 * It needs `bwrap` on the PATH and permission to create namespaces (root, or unprivileged user namespaces).
 * {@link probe} checks both once, and fails with the reason, so a user who asked for the sandbox never silently
 * runs without it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/platform/Command"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { Argv } from "./Process.js"

/**
 * Which sandbox runs commands: none, or bubblewrap.
 *
 * @since 0.1.0
 * @category models
 */
export type SandboxMode = "off" | "bubblewrap"

/**
 * The sandbox was requested but cannot run here.
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxUnavailable extends Data.TaggedError("SandboxUnavailable")<{
  readonly message: string
}> {}

/**
 * What the sandbox lets a command write.
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxOptions {
  /** Directories mounted writable (the workspace roots). */
  readonly writable: ReadonlyArray<string>
  /** The working directory inside the sandbox. */
  readonly cwd: string
}

/**
 * The bwrap arguments before the command. Order matters: later mounts go on top of earlier ones, so the
 * workspace is bound writable after the private `/tmp` (a workspace under `/tmp` stays visible and writable).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bwrapArgs = (options: SandboxOptions): ReadonlyArray<string> => [
  "--ro-bind",
  "/",
  "/",
  "--dev",
  "/dev",
  "--proc",
  "/proc",
  "--tmpfs",
  "/tmp",
  ...options.writable.flatMap((dir) => ["--bind", dir, dir]),
  "--unshare-net",
  "--unshare-pid",
  "--unshare-ipc",
  "--die-with-parent",
  "--chdir",
  options.cwd,
  "--"
]

/**
 * Wraps a shell's argv in bwrap.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (options: SandboxOptions) => (argv: Argv): Argv => ["bwrap", ...bwrapArgs(options), ...argv]

/**
 * Checks that bwrap is installed and can create the sandbox here, by running `true` in it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const probe = (
  options: SandboxOptions
): Effect.Effect<void, SandboxUnavailable, CommandExecutor.CommandExecutor> =>
  Effect.scoped(
    Effect.gen(function*() {
      const process = yield* Command.start(Command.make("bwrap", ...bwrapArgs(options), "true"))
      const [output, code] = yield* Effect.all(
        [
          Stream.merge(process.stdout, process.stderr).pipe(Stream.decodeText(), Stream.mkString),
          process.exitCode
        ],
        { concurrency: "unbounded" }
      )
      if (code !== 0) {
        return yield* new SandboxUnavailable({
          message: `the bubblewrap sandbox does not work here (bwrap exited with ${code}): ${
            output.trim() || "no message"
          }`
        })
      }
    })
  ).pipe(
    Effect.catchTag("SystemError", (error) =>
      new SandboxUnavailable({
        message: error.reason === "NotFound"
          ? "the bubblewrap sandbox was requested but `bwrap` is not installed (apt-get install bubblewrap)"
          : `the bubblewrap sandbox cannot start: ${error.message}`
      })),
    Effect.catchTag("BadArgument", (error) =>
      new SandboxUnavailable({ message: `the bubblewrap sandbox cannot start: ${error.message}` }))
  )
