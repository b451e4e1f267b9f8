#!/usr/bin/env node
/**
 * The command line: `effect-tool-runtime exec` reads tool_use blocks (or an assistant message) as JSON on standard
 * input, runs them through the runtime with the built-in tools, and prints the tool_result blocks and a summary of
 * each outcome as one JSON object on standard output.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Logger from "effect/Logger"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import { describeReason } from "../Tool/Permission.js"
import type { Outcome } from "../Tool/Outcome.js"
import { ToolRuntime } from "../Runtime/ToolRuntime.js"
import { renderEvent } from "./render.js"
import { decodeStdin, UsageError } from "./input.js"
import { execLayer, type ExecOptions } from "./layer.js"
import * as McpCli from "./mcp.js"
import type { McpCliOptions } from "./mcp.js"
import { parseToolsArgs, render as renderTools, TOOLS_USAGE, toolsRequest } from "./tools.js"

const USAGE = `Usage: effect-tool-runtime exec [options] < tool_uses.json
       effect-tool-runtime mcp list [--cwd DIR] [--mcp-config FILE] [--trust-project] [--mcp-trust SERVER]

Reads a JSON array of tool_use blocks, or an assistant message {"role":"assistant","content":[...]}, on standard
input; prints {"results":[tool_result...],"outcomes":[...]} on standard output.

Options:
  --cwd DIR              working directory (default: the current directory)
  --add-dir DIR          an additional workspace directory (repeatable)
  --settings FILE        a settings file in Claude Code's format (repeatable)
  --claude-settings      also load ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json
  --mode MODE            default | acceptEdits | plan | bypassPermissions | dontAsk
  --allow RULE           an allow rule, e.g. 'Bash(npm test:*)' (repeatable)
  --deny RULE            a deny rule (repeatable)
  --ask RULE             an ask rule (repeatable)
  --approve allow|deny   answer every permission question this way (default: ask on the terminal; deny without one)
  --scheduling MODE      conflict-aware (default) | batched
  --session-dir DIR      where large results are stored (default: a new temporary directory)
  --mcp-config FILE      MCP servers in .mcp.json format (repeatable; the project's .mcp.json needs --trust-project)
  --trust-project        trust the working directory: start the servers of its .mcp.json
  --mcp-trust SERVER     let this MCP server's annotations (readOnlyHint...) inform scheduling (repeatable)
  --verbose              write what a person would see to standard error
  --help                 this text

Also: effect-tool-runtime tools --format anthropic|openai-chat|openai-responses|gemini (see tools --help)`

const MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const

/** Parses the command line; a UsageError for anything unusable. */
const parseCommandLine = (argv: ReadonlyArray<string>): ExecOptions | McpListCommand | "help" => {
  const [command, ...rest] = argv
  if (command === "--help" || command === "-h" || command === "help") return "help"
  if (command === "mcp") return parseMcpCommand(rest)
  if (command !== "exec") throw new UsageError(command === undefined ? "missing command (exec)" : `unknown command: ${command}`)
  const { values } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: false,
    options: {
      cwd: { type: "string" },
      "add-dir": { type: "string", multiple: true },
      settings: { type: "string", multiple: true },
      "claude-settings": { type: "boolean" },
      mode: { type: "string" },
      allow: { type: "string", multiple: true },
      deny: { type: "string", multiple: true },
      ask: { type: "string", multiple: true },
      approve: { type: "string" },
      scheduling: { type: "string" },
      "session-dir": { type: "string" },
      "mcp-config": { type: "string", multiple: true },
      "trust-project": { type: "boolean" },
      "mcp-trust": { type: "string", multiple: true },
      verbose: { type: "boolean" },
      help: { type: "boolean" }
    }
  })
  if (values.help === true) return "help"
  const mode = values.mode
  if (mode !== undefined && !(MODES as ReadonlyArray<string>).includes(mode)) {
    throw new UsageError(`--mode must be one of ${MODES.join(", ")}, got ${mode}`)
  }
  if (values.approve !== undefined && values.approve !== "allow" && values.approve !== "deny") {
    throw new UsageError(`--approve must be allow or deny, got ${values.approve}`)
  }
  if (values.scheduling !== undefined && values.scheduling !== "conflict-aware" && values.scheduling !== "batched") {
    throw new UsageError(`--scheduling must be conflict-aware or batched, got ${values.scheduling}`)
  }
  return {
    cwd: values.cwd ?? process.cwd(),
    additionalDirectories: values["add-dir"] ?? [],
    settingsFiles: values.settings ?? [],
    claudeSettings: values["claude-settings"] === true,
    mode: mode as ExecOptions["mode"],
    rules: { allow: values.allow ?? [], deny: values.deny ?? [], ask: values.ask ?? [] },
    approve: values.approve as ExecOptions["approve"],
    scheduling: (values.scheduling ?? "conflict-aware") as ExecOptions["scheduling"],
    sessionDir: values["session-dir"],
    verbose: values.verbose === true,
    mcpConfigFiles: values["mcp-config"] ?? [],
    trustProject: values["trust-project"] === true,
    mcpTrust: values["mcp-trust"] ?? []
  }
}

interface McpListCommand extends McpCliOptions {
  readonly _tag: "McpList"
}

const parseMcpCommand = (argv: ReadonlyArray<string>): McpListCommand => {
  const [sub, ...rest] = argv
  if (sub !== "list") throw new UsageError(sub === undefined ? "missing mcp command (list)" : `unknown mcp command: ${sub}`)
  const { values } = parseArgs({
    args: rest,
    strict: true,
    allowPositionals: false,
    options: { cwd: { type: "string" }, "mcp-config": { type: "string", multiple: true }, "trust-project": { type: "boolean" }, "mcp-trust": { type: "string", multiple: true } }
  })
  return { _tag: "McpList", cwd: values.cwd ?? process.cwd(), mcpConfigFiles: values["mcp-config"] ?? [], trustProject: values["trust-project"] === true, mcpTrust: values["mcp-trust"] ?? [] }
}

/** Logs (an MCP server reported down, a bad configuration entry) go to stderr: stdout carries the result. */
const stderrLogger = Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/** The summary of one outcome in the CLI's output. */
const summary = (outcome: Outcome) => ({
  tool_use_id: outcome.toolUseId,
  name: outcome.toolName ?? outcome.requestedName,
  status: outcome.status,
  decision: outcome.decision === undefined
    ? null
    : { behavior: outcome.decision._tag === "Allow" ? "allow" : "deny", reason: describeReason(outcome.decision.reason), kind: outcome.decision.reason._tag },
  duration_ms: outcome.timings.durationMs,
  persisted_path: outcome.persistedPath ?? null
})

const fail = (message: string): never => {
  // One line, whatever the message holds (JSON.parse quotes the input, newlines included).
  process.stderr.write(`effect-tool-runtime: ${message.replace(/\s*\n\s*/g, " ")}\n`)
  process.exit(2)
}

/** `tools`: prints the definitions the settings would send. */
const mainTools = async (argv: ReadonlyArray<string>): Promise<void> => {
  let options
  try {
    options = parseToolsArgs(argv)
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)} (see tools --help)`)
  }
  if (options === "help") return void process.stdout.write(`${TOOLS_USAGE}\n`)
  const exit = await Effect.runPromiseExit(toolsRequest(options))
  if (Exit.isFailure(exit)) {
    const error = exit.cause._tag === "Fail" ? exit.cause.error : undefined
    return fail(error !== undefined && typeof error === "object" && "message" in error ? String(error.message) : `internal error: ${String(exit.cause)}`)
  }
  process.stdout.write(`${renderTools(options, exit.value)}\n`, () => process.exit(0))
}

const main = async (): Promise<void> => {
  if (process.argv[2] === "tools") return mainTools(process.argv.slice(3))
  let options: ExecOptions | McpListCommand | "help"
  try {
    options = parseCommandLine(process.argv.slice(2))
  } catch (error) {
    return fail(`${error instanceof Error ? error.message : String(error)} (see --help)`)
  }
  if (options === "help") {
    process.stdout.write(`${USAGE}\n`)
    return
  }
  if (!fs.existsSync(options.cwd) || !fs.statSync(options.cwd).isDirectory()) return fail(`--cwd is not a directory: ${options.cwd}`)
  const missingConfig = options.mcpConfigFiles.find((file) => !fs.existsSync(path.resolve(options.cwd, file)))
  if (missingConfig !== undefined) return fail(`--mcp-config file not found: ${missingConfig}`)
  if ("_tag" in options) {
    const text = await Effect.runPromise(McpCli.list(options).pipe(Effect.provide(NodeContext.layer), Effect.provide(stderrLogger)))
    process.stdout.write(`${text}\n`, () => process.exit(0))
    return
  }
  const raw = await readStdin()
  let toolUses
  try {
    toolUses = decodeStdin(raw)
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error))
  }
  const exec = options
  const program = Effect.gen(function*() {
    const runtime = yield* Effect.runtime<ToolRuntime>()
    const toolRuntime = yield* ToolRuntime
    const handle = yield* toolRuntime.start(toolUses, { mode: exec.scheduling })
    // SIGINT/SIGTERM cancel the run; every tool_use still gets its outcome, printed below. A second signal does not
    // wait: it exits at once (130), as a person pressing Ctrl-C twice expects.
    let signalled = false
    const cancel = () => {
      if (signalled) process.exit(130)
      signalled = true
      Runtime.runFork(runtime)(handle.cancel)
    }
    process.on("SIGINT", cancel)
    process.on("SIGTERM", cancel)
    const printer = yield* Effect.forkScoped(
      exec.verbose
        ? Stream.runForEach(handle.events, (event) =>
          Effect.sync(() => {
            const text = renderEvent(event)
            if (text !== undefined) process.stderr.write(`${text}\n`)
          }))
        : Effect.void
    )
    const outcomes = yield* handle.await
    // The events stream ends with the run: wait for the last lines to be printed.
    yield* Fiber.join(printer)
    return { results: outcomes.map((o) => o.result), outcomes: outcomes.map(summary) }
  }).pipe(Effect.scoped, Effect.provide(execLayer(exec)), Effect.provide(NodeContext.layer), Effect.provide(stderrLogger))

  const exit = await Effect.runPromiseExit(program)
  if (Exit.isSuccess(exit)) {
    // Exit only once the output is written: a pipe takes large output asynchronously.
    process.stdout.write(`${JSON.stringify(exit.value)}\n`, () => process.exit(0))
    return
  }
  const failure = exit.cause
  const error = failure._tag === "Fail" ? failure.error : undefined
  return fail(error !== undefined && typeof error === "object" && "message" in error ? String(error.message) : `internal error: ${String(failure)}`)
}

main().catch((error: unknown) => fail(`internal error: ${error instanceof Error ? error.stack ?? error.message : String(error)}`))
