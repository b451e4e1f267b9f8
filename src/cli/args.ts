/**
 * The command line: `exec` and `serve`, their options, and the usage text. Anything unusable is a UsageError with
 * a one-line reason (the CLI exits 2 with it).
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as path from "node:path"
import { parseArgs } from "node:util"
import type { ParseArgsConfig } from "node:util"
import { parseSearchMode } from "../Catalog/ToolCatalog.js"
import type { SearchMode } from "../Catalog/ToolCatalog.js"
import { PermissionModeSetting } from "../Settings/Settings.js"
import { withoutPassword } from "../Shared/url.js"
import { UsageError } from "./input.js"
import type { DurableStore, RuntimeOptions } from "./layer.js"
import type { McpCliOptions } from "./mcp.js"

/** The usage text (`--help`). */
export const USAGE = `Usage: effect-tool-runtime exec  [options] < tool_uses.json
       effect-tool-runtime serve [options]
       effect-tool-runtime mcp list [--cwd DIR] [--mcp-config FILE] [--trust-project] [--mcp-trust SERVER]

exec   reads a JSON array of tool_use blocks, or an assistant message {"role":"assistant","content":[...]}, on
       standard input; prints {"results":[tool_result...],"outcomes":[...]} on standard output.
serve  speaks JSON lines on standard input and output: one request per line ({"type":"turn",...} or
       {"type":"approval",...}); events, approval requests and results as lines; the session stays in memory.
serve --mcp             serves the tools over MCP on standard input and output (one session: the process)
serve --mcp-http PORT   serves them over MCP Streamable HTTP at http://127.0.0.1:PORT/mcp (0: a free port; one
                        session per MCP session, in DIR/<session id> with --session DIR); prints
                        {"type":"ready","url":...} on standard output. --mcp-host ADDR listens elsewhere and then
                        requires a bearer token in EFFECT_TOOL_RUNTIME_MCP_TOKEN (also honoured on 127.0.0.1).
                        An approval is asked through the client's elicitation form, else answered by --approve,
                        else denied.

Options:
  --cwd DIR              working directory (default: the current directory)
  --add-dir DIR          an additional workspace directory (repeatable)
  --session DIR          keep the session (files read, session rules, approvals, saved output) in DIR between
                         runs; default: a temporary session, removed at the end
  --durable [sqlite | postgres://...]
                         (exec and serve, with --session) each turn survives its process: each call is recorded (in
                         DIR/durable.sqlite, or in the Postgres database, shared by every runner on it); the same
                         turn run again resumes it (completed calls are not run again; a call that was running when
                         the process died runs again if it is idempotent, else reports "unknown"); with serve --mcp
                         (SQLite only) each call is a durable turn named by the client's _meta id
                         (claudecode/toolUseId or effect-tool-runtime/toolUseId): the same call sent again attaches
  --runner-address HOST:PORT
                         (with --durable postgres://) where the other runners reach this one (default 127.0.0.1 at a
                         port the system picks)
  --session-wait SECS    how long to wait while another process uses the session (default 10; then exit 2)
  --settings FILE        a settings file in Claude Code's format (repeatable)
  --no-claude-settings   do not load ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json
  --trust-project        trust the project's own .claude/settings*.json: their allow rules, hooks, additional
                         directories and mode apply (without it only their deny and ask rules do, unless the
                         project is listed in trustedProjects of ~/.claude/settings.json)
  --mode MODE            default | manual | acceptEdits | plan | auto | bypassPermissions | dontAsk
  --allow RULE           an allow rule, e.g. 'Bash(npm test:*)' (repeatable)
  --deny RULE            a deny rule (repeatable)
  --ask RULE             an ask rule (repeatable)
  --approve allow|deny   answer every permission question this way (default: exec asks on the terminal, denying
                         without one; serve asks over the channel)
  --scheduling MODE      conflict-aware (default) | batched
  --tool-search MODE     on (default, or $ENABLE_TOOL_SEARCH) | off | auto | auto:N: deferred tools (MCP tools,
                         by default) are announced by name and loaded with ToolSearch before they are called;
                         what was loaded stays in the --session
  --context-window N     tokens, for auto (default 200000)
  --mcp-config FILE      MCP servers in .mcp.json format (repeatable; the project's .mcp.json needs --trust-project)
  --mcp-trust SERVER     let this MCP server's annotations (readOnlyHint...) inform scheduling (repeatable)
  --lsp-config FILE      language servers in .lsp.json format (repeatable; the project's .lsp.json needs
                         --trust-project); the LSP tool and diagnostics after edits use them
  --diagnostics MODE     after an Edit or Write of a file a running language server handles: inline (appended
                         to its result, waiting at most 3 s), next-turn (with the next result; default), off
  --audit FILE           append every event and outcome to FILE as JSON lines (rotated at 10 MiB)
  --max-line-bytes N     serve: a request line longer than N bytes is answered with one error line and skipped
                         (default 16777216, 16 MiB)
  --end-session          (exec, with --session) end the session after the turn: its background tasks still running
                         are stopped (SIGTERM, SIGKILL after a grace) and reported under task_notifications;
                         standard input may then be empty (no turn)
  --verbose              write what a person would see, and logs, to standard error
  --help                 this text

Also: effect-tool-runtime tools --format anthropic|openai-chat|openai-responses|gemini (see tools --help)

Exit status: 0 when the run completed (whatever the tools did); 2 for an unusable command line, input, rule,
settings file or session (one line on standard error, nothing run); 130 after SIGINT and 143 after SIGTERM, once
every outcome is printed (a second signal kills the running processes and exits at once); 141 when serve's client
closed standard output (EPIPE): its turns are cancelled, their processes stopped and audited, as after a signal.`

const isMode = Schema.is(PermissionModeSetting)

/** What the command line asks for. */
export type Command =
  | { readonly _tag: "Help" }
  | { readonly _tag: "McpList"; readonly options: McpCliOptions }
  | { readonly _tag: "Exec"; readonly options: RuntimeOptions }
  | { readonly _tag: "Serve"; readonly options: RuntimeOptions }
  | { readonly _tag: "ServeMcp"; readonly options: RuntimeOptions; readonly mcp: McpServeCli }

/** How `serve --mcp` / `--mcp-http` serves. */
export type McpServeCli =
  | { readonly transport: "stdio" }
  | { readonly transport: "http"; readonly port: number; readonly host: string; readonly token: string | undefined }

const usage = (message: string) => Either.left(new UsageError({ message: `${message} (see --help)` }))

/**
 * The options of a command line (node's `parseArgs`: strict, no positionals); an unknown or malformed one is a usage
 * error.
 */
const parseOptions = <const O extends NonNullable<ParseArgsConfig["options"]>>(
  args: ReadonlyArray<string>,
  options: O
) =>
  Either.try({
    try: () => parseArgs({ args: [...args], strict: true, allowPositionals: false, options }).values,
    catch: (error) =>
      new UsageError({ message: `${error instanceof Error ? error.message : String(error)} (see --help)` })
  })

/** `--durable` takes an optional value: alone (or before another flag) it means `--durable=sqlite`. */
const withDurableValue = (args: ReadonlyArray<string>): ReadonlyArray<string> =>
  args.map((arg, index) =>
    arg === "--durable" && (args[index + 1] === undefined || args[index + 1]!.startsWith("-"))
      ? "--durable=sqlite"
      : arg
  )

/**
 * `--durable [sqlite | postgres://...]` and `--runner-address HOST:PORT` (where the other runners reach this one;
 * default 127.0.0.1 at a port the system picks).
 */
const parseDurable = (
  value: string | undefined,
  address: string | undefined
): Either.Either<DurableStore | undefined, UsageError> => {
  if (value === undefined) {
    return address === undefined ? Either.right(undefined) : usage("--runner-address needs --durable postgres://...")
  }
  if (value === "sqlite") {
    return address === undefined
      ? Either.right("sqlite")
      : usage("--runner-address is for --durable postgres://... (one SQLite runner needs no address)")
  }
  if (!/^postgres(ql)?:\/\//i.test(value)) {
    return usage(`--durable takes sqlite (the default) or a postgres:// URL, got ${withoutPassword(value)}`)
  }
  try {
    new URL(value)
  } catch {
    return usage(`--durable: not a valid URL: ${withoutPassword(value)}`)
  }
  if (address === undefined) return Either.right({ url: value, host: "127.0.0.1", port: undefined })
  const match = /^(.+):(\d{1,5})$/.exec(address)
  const port = match === null ? NaN : Number(match[2])
  if (match === null || !(port >= 1 && port <= 65535)) {
    return usage(`--runner-address must be HOST:PORT (a port from 1 to 65535), got ${address}`)
  }
  return Either.right({ url: value, host: match[1]!.replace(/^\[(.*)\]$/, "$1"), port })
}

/** Parses the command line. */
export const parseCommandLine = (argv: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [command, ...rest] = argv
  if (command === "--help" || command === "-h" || command === "help") return Either.right({ _tag: "Help" })
  if (command === "mcp") return parseMcpList(rest)
  if (command !== "exec" && command !== "serve") {
    return usage(command === undefined ? "missing command (exec or serve)" : `unknown command: ${command}`)
  }
  const parsed = parseOptions(withDurableValue(rest), {
    cwd: { type: "string" },
    durable: { type: "string" },
    "runner-address": { type: "string" },
    "add-dir": { type: "string", multiple: true },
    session: { type: "string" },
    "session-dir": { type: "string" },
    "session-wait": { type: "string" },
    settings: { type: "string", multiple: true },
    "claude-settings": { type: "boolean" },
    "no-claude-settings": { type: "boolean" },
    "trust-project": { type: "boolean" },
    "mcp-config": { type: "string", multiple: true },
    "mcp-trust": { type: "string", multiple: true },
    "lsp-config": { type: "string", multiple: true },
    diagnostics: { type: "string" },
    audit: { type: "string" },
    "max-line-bytes": { type: "string" },
    mode: { type: "string" },
    allow: { type: "string", multiple: true },
    deny: { type: "string", multiple: true },
    ask: { type: "string", multiple: true },
    approve: { type: "string" },
    scheduling: { type: "string" },
    "tool-search": { type: "string" },
    "context-window": { type: "string" },
    verbose: { type: "boolean" },
    help: { type: "boolean" },
    ...(command === "serve" ? mcpServeFlags : { "end-session": { type: "boolean" } })
  })
  if (Either.isLeft(parsed)) return Either.left(parsed.left)
  const values = parsed.right
  if (values.help === true) return Either.right({ _tag: "Help" })
  const mcp = parseMcpServe(values as McpServeValues)
  if (Either.isLeft(mcp)) return Either.left(mcp.left)
  const mode = values.mode
  if (mode !== undefined && !isMode(mode)) {
    return usage(`--mode must be one of ${PermissionModeSetting.literals.join(", ")}, got ${mode}`)
  }
  if (values.approve !== undefined && values.approve !== "allow" && values.approve !== "deny") {
    return usage(`--approve must be allow or deny, got ${values.approve}`)
  }
  if (values.scheduling !== undefined && values.scheduling !== "conflict-aware" && values.scheduling !== "batched") {
    return usage(`--scheduling must be conflict-aware or batched, got ${values.scheduling}`)
  }
  if (values["claude-settings"] === true && values["no-claude-settings"] === true) {
    return usage("--claude-settings and --no-claude-settings contradict each other")
  }
  const sessionWait = values["session-wait"] === undefined ? undefined : Number(values["session-wait"])
  if (sessionWait !== undefined && !(Number.isFinite(sessionWait) && sessionWait >= 0)) {
    return usage(`--session-wait must be a number of seconds, got ${values["session-wait"]}`)
  }
  const diagnostics = values.diagnostics
  if (diagnostics !== undefined && diagnostics !== "inline" && diagnostics !== "next-turn" && diagnostics !== "off") {
    return usage(`--diagnostics must be inline, next-turn or off, got ${diagnostics}`)
  }
  const maxLineBytes = values["max-line-bytes"] === undefined ? undefined : Number(values["max-line-bytes"])
  if (maxLineBytes !== undefined && (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1)) {
    return usage(`--max-line-bytes must be a positive whole number of bytes, got ${values["max-line-bytes"]}`)
  }
  const search = parseToolSearch(values["tool-search"], values["context-window"])
  if (Either.isLeft(search)) return Either.left(search.left)
  const sessionDir = values.session ?? values["session-dir"]
  const durable = parseDurable(values.durable, values["runner-address"])
  if (Either.isLeft(durable)) return Either.left(durable.left)
  if (durable.right !== undefined && sessionDir === undefined) {
    return usage("--durable needs --session DIR: the durable turns are kept there")
  }
  if (durable.right !== undefined && mcp.right?.transport === "http") {
    // A restarted server does not know the client's MCP session: the client starts a new one, in a new directory.
    return usage(
      "--durable is for exec, serve and serve --mcp (stdio): an MCP session over HTTP does not survive its server"
    )
  }
  if (durable.right !== undefined && durable.right !== "sqlite" && mcp.right !== undefined) {
    // A call's turn may land on another runner, whose approver is another client's elicitation.
    return usage("serve --mcp --durable runs one runner on SQLite in the session directory, not on postgres://")
  }
  const endSession = (values as { readonly "end-session"?: boolean })["end-session"] === true
  if (endSession && sessionDir === undefined) {
    return usage("--end-session needs --session DIR (without it the session, and its tasks, end with the run)")
  }
  const unsafeSession = sessionDir === undefined ? undefined : worldWritable(sessionDir)
  if (unsafeSession !== undefined) {
    return Either.left(
      new UsageError({
        message: `--session directory ${unsafeSession} is world-writable: anyone on this machine could change the ` +
          "session's approvals and rules (chmod o-w it, or choose another directory)"
      })
    )
  }
  const cwd = values.cwd ?? process.cwd()
  if (!isDirectory(cwd)) return Either.left(new UsageError({ message: `--cwd is not a directory: ${cwd}` }))
  const options: RuntimeOptions = {
    cwd,
    additionalDirectories: values["add-dir"] ?? [],
    settingsFiles: values.settings ?? [],
    claudeSettings: values["no-claude-settings"] !== true,
    mode,
    trustProject: values["trust-project"] === true,
    // Configuration warnings go to standard error, one line each (standard output carries the results).
    warn: (line) => void process.stderr.write(`effect-tool-runtime: warning: ${line.replace(/\s*\n\s*/g, " ")}\n`),
    rules: { allow: values.allow ?? [], deny: values.deny ?? [], ask: values.ask ?? [] },
    approve: values.approve as RuntimeOptions["approve"],
    scheduling: (values.scheduling ?? "conflict-aware") as RuntimeOptions["scheduling"],
    // `--session-dir` is the 0.1 name.
    sessionDir,
    ...(sessionWait === undefined ? {} : { sessionWaitSeconds: sessionWait }),
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
    verbose: values.verbose === true,
    mcpConfigFiles: values["mcp-config"] ?? [],
    mcpTrust: values["mcp-trust"] ?? [],
    auditFile: values.audit,
    toolSearch: search.right.mode,
    contextWindow: search.right.contextWindow,
    lspConfigFiles: values["lsp-config"] ?? [],
    ...(diagnostics === undefined ? {} : { diagnostics }),
    ...(durable.right === undefined ? {} : { durable: durable.right }),
    ...(endSession ? { endSession } : {})
  }
  const missing = missingFile(cwd, options.mcpConfigFiles)
  if (missing !== undefined) return Either.left(new UsageError({ message: `--mcp-config file not found: ${missing}` }))
  const missingLsp = missingFile(cwd, options.lspConfigFiles ?? [])
  if (missingLsp !== undefined) {
    return Either.left(new UsageError({ message: `--lsp-config file not found: ${missingLsp}` }))
  }
  if (command === "exec") return Either.right({ _tag: "Exec", options })
  return Either.right(
    mcp.right === undefined ? { _tag: "Serve", options } : { _tag: "ServeMcp", options, mcp: mcp.right }
  )
}

/**
 * `--tool-search MODE` (else Claude Code's `ENABLE_TOOL_SEARCH`, else on) and `--context-window N` (for `auto`,
 * default 200,000 tokens), as `exec`, `serve` and `tools` read them.
 */
export const parseToolSearch = (
  flag: string | undefined,
  contextWindowFlag: string | undefined
): Either.Either<{ readonly mode: SearchMode; readonly contextWindow: number }, UsageError> => {
  const fromFlag = flag !== undefined
  const mode = parseSearchMode(flag ?? process.env["ENABLE_TOOL_SEARCH"] ?? "on")
  if (Either.isLeft(mode)) {
    return usage(fromFlag ? `--tool-search: ${mode.left}` : `ENABLE_TOOL_SEARCH: ${mode.left}`)
  }
  const contextWindow = Number(contextWindowFlag ?? 200_000)
  if (!Number.isSafeInteger(contextWindow) || contextWindow <= 0) {
    return usage(`--context-window must be a positive whole number of tokens, got ${contextWindowFlag}`)
  }
  return Either.right({ mode: mode.right, contextWindow })
}

const mcpServeFlags = {
  mcp: { type: "boolean" },
  "mcp-http": { type: "string" },
  "mcp-host": { type: "string" }
} as const

interface McpServeValues {
  readonly mcp?: boolean
  readonly "mcp-http"?: string
  readonly "mcp-host"?: string
}

/** `--mcp`, `--mcp-http PORT`, `--mcp-host ADDR` (with the token from the environment). */
const parseMcpServe = (values: McpServeValues): Either.Either<McpServeCli | undefined, UsageError> => {
  const port = values["mcp-http"]
  if (values.mcp === true && port !== undefined) return usage("--mcp and --mcp-http exclude each other")
  if (port === undefined) {
    if (values["mcp-host"] !== undefined) return usage("--mcp-host needs --mcp-http PORT")
    return Either.right(values.mcp === true ? { transport: "stdio" } : undefined)
  }
  const number = Number(port)
  if (!/^\d+$/.test(port) || number > 65535) return usage(`--mcp-http must be a port number (0-65535), got ${port}`)
  const host = values["mcp-host"] ?? "127.0.0.1"
  const token = process.env["EFFECT_TOOL_RUNTIME_MCP_TOKEN"]
  const loopback = host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host)
  if (!loopback && (token === undefined || token === "")) {
    return usage(`--mcp-host ${host} is not a loopback address: set a bearer token in EFFECT_TOOL_RUNTIME_MCP_TOKEN`)
  }
  return Either.right({ transport: "http", port: number, host, token: token === "" ? undefined : token })
}

/**
 * The session directory, or the nearest existing ancestor it would be created in, when others may write there (mode
 * o+w): the session holds approvals and session rules, which must be the person's. `undefined` when it is not.
 */
const worldWritable = (directory: string): string | undefined => {
  let current = path.resolve(directory)
  for (;;) {
    try {
      const stat = fs.statSync(current)
      // A sticky, world-writable parent (`/tmp`) is where a new private directory is made, which is fine.
      if (current !== path.resolve(directory) && (stat.mode & 0o1000) !== 0) return undefined
      return (stat.mode & 0o002) !== 0 ? current : undefined
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return undefined
      current = parent
    }
  }
}

const missingFile = (cwd: string, files: ReadonlyArray<string>): string | undefined =>
  files.find((file) => !fs.existsSync(path.resolve(cwd, file)))

/** `mcp list`: the configured servers, their state and tools. */
const parseMcpList = (argv: ReadonlyArray<string>): Either.Either<Command, UsageError> => {
  const [sub, ...rest] = argv
  if (sub !== "list") return usage(sub === undefined ? "missing mcp command (list)" : `unknown mcp command: ${sub}`)
  const parsed = parseOptions(rest, {
    cwd: { type: "string" },
    "mcp-config": { type: "string", multiple: true },
    "trust-project": { type: "boolean" },
    "mcp-trust": { type: "string", multiple: true }
  })
  if (Either.isLeft(parsed)) return Either.left(parsed.left)
  const values = parsed.right
  const cwd = values.cwd ?? process.cwd()
  if (!isDirectory(cwd)) return Either.left(new UsageError({ message: `--cwd is not a directory: ${cwd}` }))
  const options: McpCliOptions = {
    cwd,
    mcpConfigFiles: values["mcp-config"] ?? [],
    trustProject: values["trust-project"] === true,
    mcpTrust: values["mcp-trust"] ?? []
  }
  const missing = missingFile(cwd, options.mcpConfigFiles)
  if (missing !== undefined) return Either.left(new UsageError({ message: `--mcp-config file not found: ${missing}` }))
  return Either.right({ _tag: "McpList", options })
}

const isDirectory = (path: string): boolean => {
  try {
    return fs.statSync(path).isDirectory()
  } catch {
    return false
  }
}
