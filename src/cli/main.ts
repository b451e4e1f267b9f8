/**
 * The command line: `effect-tool-runtime exec` runs one turn of tool_use blocks from standard input and prints the
 * results as one JSON object; `effect-tool-runtime serve` speaks JSON lines for a whole conversation. See `args.ts`
 * for the options and exit codes.
 *
 * The signal handlers come first (`./signals.js` is imported before anything else and imports nothing), then the
 * program runs on `NodeRuntime.runMain`. The work runs in a fiber of its own that an interruption of the main
 * fiber does not stop: a signal cancels the run instead, so every tool_use still gets its outcome before the
 * process exits 130 or 143. Logs never reach standard output.
 */
// The signal handlers must exist before any other module is evaluated: this import stays first.
import * as NodeCommandExecutor from "@effect/platform-node/NodeCommandExecutor"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { parseCommandLine, USAGE } from "./args.js"
import { exec } from "./exec.js"
import * as McpCli from "./mcp.js"
import { loggerLayer, oneLine, writeText } from "./output.js"
import { killKnownTrees } from "./processes.js"
import { setKiller, signalExitCode } from "./signals.js"

setKiller(killKnownTrees)

/**
 * The platform the commands use: `NodeContext.layer` without its terminal and worker manager, which nothing here
 * asks for (each Layer costs a cold start its own construction).
 */
const platformLayer = Layer.mergeAll(NodePath.layer, NodeCommandExecutor.layer).pipe(
  Layer.provideMerge(NodeFileSystem.layer)
)

/** What {@link platformLayer} provides. */
type Platform = CommandExecutor.CommandExecutor | FileSystem.FileSystem | Path.Path

const complain = (message: string) =>
  Effect.sync(() => void process.stderr.write(`effect-tool-runtime: ${oneLine(message)}\n`))

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/** `tools`: prints the definitions the settings would send; its value is the exit code. */
/** `tools`: loaded only when asked for (it needs the platform's whole context; `exec` does not). */
const toolsCommand = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { parseToolsArgs, render: renderTools, TOOLS_USAGE, toolsRequest } = yield* Effect.promise(() =>
      import("./tools.js")
    )
    let options
    try {
      options = parseToolsArgs(argv)
    } catch (error) {
      yield* complain(`${messageOf(error)} (see tools --help)`)
      return 2
    }
    if (options === "help") {
      yield* writeText(`${TOOLS_USAGE}\n`)
      return 0
    }
    const definitions = yield* Effect.either(toolsRequest(options).pipe(Effect.provide(platformLayer)))
    if (Either.isLeft(definitions)) {
      yield* complain(messageOf(definitions.left))
      return 2
    }
    yield* writeText(`${renderTools(options, definitions.right)}\n`)
    return 0
  })

/** The program; its value is the exit code when no signal came. */
const program: Effect.Effect<number> = Effect.gen(function*() {
  if (process.argv[2] === "tools") return yield* toolsCommand(process.argv.slice(3))
  const command = parseCommandLine(process.argv.slice(2))
  if (Either.isLeft(command)) {
    yield* complain(command.left.message)
    return 2
  }
  if (command.right._tag === "Help") {
    yield* writeText(`${USAGE}\n`)
    return 0
  }
  if (command.right._tag === "McpList") {
    const text = yield* McpCli.list(command.right.options).pipe(
      Effect.provide(loggerLayer(false)),
      Effect.provide(platformLayer)
    )
    yield* writeText(`${text}\n`)
    return 0
  }
  const chosen = command.right
  const { options } = chosen
  type Run = Effect.Effect<number | void, { readonly message: string }, Platform>
  const run: Run = chosen._tag === "Exec"
    ? exec(options)
    : chosen._tag === "ServeMcp"
    // The MCP server side (and its SDK) is loaded only by `serve --mcp`.
    ? Effect.flatMap(
      Effect.promise(() => import("./serveMcp.js")),
      ({ serveMcp }): Run => serveMcp(options, chosen.mcp)
    )
    // `serve` and what only it uses are loaded only by `serve`.
    : Effect.flatMap(Effect.promise(() => import("./serve.js")), ({ serve }): Run => serve(options))
  return yield* run.pipe(
    Effect.map((code) => code ?? 0),
    // Every typed failure is something the person can fix: a flag, a rule, a settings file, the session, stdin.
    Effect.catchAll((error) => Effect.as(complain(messageOf(error)), 2)),
    Effect.provide(loggerLayer(options.verbose)),
    Effect.provide(platformLayer)
  )
}).pipe(
  Effect.catchAllCause((cause) =>
    Effect.as(complain(`internal error: ${Cause.isDie(cause) ? messageOf(Cause.squash(cause)) : "interrupted"}`), 1)
  )
)

const main = Effect.gen(function*() {
  const work = yield* Effect.forkDaemon(program)
  // runMain interrupts this fiber on a signal; the work is cancelled by the signal handlers and ends by itself.
  return yield* Fiber.join(work).pipe(Effect.onInterrupt(() => Fiber.await(work)))
})

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) =>
    onExit(signalExitCode() ?? (Exit.isSuccess(exit) && typeof exit.value === "number" ? exit.value : 1))
})
