/**
 * Runs one compatibility case end to end: its settings files written into a fresh git repository (and a home
 * directory of its own), loaded with the real loader, the trust decision and the mode resolution, then its calls
 * through the real runtime with the built-in tools, real command hooks, a real HTTP hook server on 127.0.0.1, and an
 * approver that records every question and answers no. A call's decision is what a person saw: `allow` (ran without
 * a question), `ask` (the approver was asked) or `deny` (refused without a question).
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Layer, Schema } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../../src/Hooks/Hooks.js"
import { ApprovalAnswer, Approver } from "../../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { formatSettingsWarning, loadSettings, resolveMode } from "../../../src/Settings/Settings.js"
import type { PermissionModeSetting } from "../../../src/Settings/Settings.js"
import { PermissionCheck } from "../../../src/Tool/Permission.js"
import * as Tool from "../../../src/Tool/Tool.js"
import { builtinLayer, builtinTools } from "../../../src/Tools/index.js"

// -----------------------------------------------------------------------------
// the case format
// -----------------------------------------------------------------------------

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const Call = Schema.Struct({
  tool: Schema.String,
  input: Json,
  expect: Schema.Literal("allow", "ask", "deny"),
  /** A part of the decision's reason (or, for an ask, of the question). */
  reason: Schema.optional(Schema.String)
})

/** One case: a settings file as people write it, and what Claude Code's documentation says it means. */
export const Case = Schema.Struct({
  about: Schema.String,
  /** What Claude Code's documentation says, in a sentence or two. */
  docs: Schema.String,
  /** Where this runtime deliberately decides otherwise, and why. */
  differs: Schema.optional(Schema.String),
  files: Schema.Struct({
    user: Schema.optional(Json),
    project: Schema.optional(Json),
    local: Schema.optional(Json)
  }),
  trustProject: Schema.optional(Schema.Boolean),
  mode: Schema.optional(Schema.String),
  expect: Schema.Struct({
    /** The load fails with one line containing this (and the file and field). */
    error: Schema.optional(Schema.String),
    warnings: Schema.optional(Schema.Array(Schema.String)),
    noWarnings: Schema.optional(Schema.Boolean),
    mode: Schema.optional(Schema.String),
    calls: Schema.optional(Schema.Array(Call))
  })
})
export type Case = typeof Case.Type

// -----------------------------------------------------------------------------
// the places
// -----------------------------------------------------------------------------

export interface Places {
  readonly base: string
  readonly project: string
  readonly home: string
  readonly outside: string
  readonly hooks: string
  readonly http: string
}

/** `$PROJECT`, `$HOME`, `$OUTSIDE`, `$HOOKS`, `$HTTP` replaced everywhere in a JSON value. */
export const substitute = (value: unknown, places: Places): unknown => {
  if (typeof value === "string") {
    return value
      .replaceAll("$PROJECT", places.project)
      .replaceAll("$HOME", places.home)
      .replaceAll("$OUTSIDE", places.outside)
      .replaceAll("$HOOKS", places.hooks)
      .replaceAll("$HTTP", places.http)
  }
  if (Array.isArray(value)) return value.map((item) => substitute(item, places))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, places)]))
  }
  return value
}

const write = (file: string, content: string, mode?: number) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content, mode === undefined ? {} : { mode })
}

/** A git repository with a few files, a home, a directory outside both, hook scripts. */
export const makePlaces = (http: string): Places => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-compat-")))
  const places: Places = {
    base,
    project: path.join(base, "project"),
    home: path.join(base, "home"),
    outside: path.join(base, "outside"),
    hooks: path.join(base, "hooks"),
    http
  }
  write(path.join(places.project, "src", "a.ts"), "export const a = 1\n")
  write(path.join(places.project, ".env"), "TOKEN=secret\n")
  write(path.join(places.project, "secrets", "key.txt"), "secret\n")
  write(path.join(places.project, "README.md"), "# project\n")
  write(path.join(places.home, ".zshrc"), "export PATH\n")
  write(path.join(places.home, ".bashrc"), "export PATH\n")
  write(path.join(places.home, "shared", "doc.md"), "shared\n")
  write(path.join(places.outside, "notes.txt"), "notes\n")
  write(path.join(places.outside, "other", "x.txt"), "x\n")
  write(
    path.join(places.hooks, "block.sh"),
    "#!/bin/sh\ncat > /dev/null\necho \"blocked by hook\" >&2\nexit 2\n",
    0o755
  )
  write(path.join(places.hooks, "quiet.sh"), "#!/bin/sh\ncat > /dev/null\nexit 0\n", 0o755)
  write(
    path.join(places.hooks, "allow.sh"),
    `#!/bin/sh\ncat > /dev/null\nprintf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"the hook allows it"}}'\n`,
    0o755
  )
  write(
    path.join(places.hooks, "deny.cjs"),
    `let s = ""; process.stdin.on("data", (c) => s += c).on("end", () => process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "node says no to " + JSON.parse(s).tool_name } })))\n`
  )
  execFileSync("git", ["init", "-q"], { cwd: places.project })
  return places
}

/** An HTTP hook endpoint on 127.0.0.1: denies Bash commands that mention "deploy", has no opinion otherwise. */
export const startHookServer = (): Promise<{ readonly url: string; readonly close: () => Promise<void> }> =>
  new Promise((resolve) => {
    const server = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => body += chunk).on("end", () => {
        const input = JSON.parse(body) as { tool_input?: { command?: string } }
        response.setHeader("content-type", "application/json")
        response.end(
          input.tool_input?.command?.includes("deploy") === true
            ? JSON.stringify({
              hookSpecificOutput: {
                hookEventName: "PreToolUse",
                permissionDecision: "deny",
                permissionDecisionReason: "the release server refuses deploys"
              }
            })
            : ""
        )
      })
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/pre-tool-use`,
        close: () =>
          new Promise((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      }))
  })

// -----------------------------------------------------------------------------
// tools besides the built-in ones
// -----------------------------------------------------------------------------

/** A custom tool that asks with the rule it suggests: `Deploy(<target>)`. */
const Deploy = Tool.make("Deploy", { description: "Deploys.", input: Schema.Struct({ target: Schema.String }) })
const DeployLive = Deploy.service({
  checkPermissions: ({ target }) =>
    Effect.succeed(PermissionCheck.ask(`deploying to ${target} needs approval`, [`Deploy(${target})`])),
  matchesRule: (content, { target }) => content === target,
  call: ({ target }) => Effect.succeed(`deployed ${target}`)
})

/** Stands in for an MCP server's tool. */
const Serena = Tool.make("mcp__serena__find_symbol", {
  description: "Finds a symbol.",
  input: Schema.Struct({ name: Schema.String })
})
const SerenaLive = Serena.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  call: ({ name }) => Effect.succeed(`found ${name}`)
})

const tools = [...builtinTools, Deploy, Serena] as const

// -----------------------------------------------------------------------------
// running a case
// -----------------------------------------------------------------------------

export interface CallResult {
  readonly decision: "allow" | "ask" | "deny"
  readonly reason: string
}

export type CaseResult =
  | { readonly _tag: "LoadFailed"; readonly message: string }
  | {
    readonly _tag: "Loaded"
    readonly warnings: ReadonlyArray<string>
    readonly mode: string
    readonly calls: ReadonlyArray<CallResult>
  }

export const runCase = (test: Case, places: Places): Promise<CaseResult> => {
  const files: Array<[string, unknown]> = [
    [path.join(places.home, ".claude", "settings.json"), test.files.user],
    [path.join(places.project, ".claude", "settings.json"), test.files.project],
    [path.join(places.project, ".claude", "settings.local.json"), test.files.local]
  ]
  for (const [file, content] of files) {
    if (content !== undefined) write(file, JSON.stringify(substitute(content, places), null, 2))
  }
  const program = Effect.gen(function*() {
    const loaded = yield* Effect.either(loadSettings({
      claudeSettings: true,
      cwd: places.project,
      home: places.home,
      trustProject: test.trustProject === true,
      knownTools: tools.map((tool) => tool.definition.name),
      mcpServers: ["serena"]
    }))
    if (Either.isLeft(loaded)) return { _tag: "LoadFailed", message: loaded.left.message } as const
    const settings = loaded.right
    const resolved = resolveMode(
      settings,
      test.mode === undefined ? {} : { requested: test.mode as PermissionModeSetting }
    )
    const hookOptions = Hooks.optionsFromSettings(settings)
    const warnings = [
      ...settings.flatMap((file) => file.warnings.map(formatSettingsWarning)),
      ...resolved.warnings,
      ...Hooks.hookWarnings(hookOptions)
    ]

    const asked: Array<ApprovalRequest> = []
    const approver = Layer.succeed(Approver, {
      ask: (request) =>
        Effect.sync(() => {
          asked.push(request)
          return ApprovalAnswer.Deny({ cancelRun: false })
        })
    })
    const workspace = Workspace.layer({
      cwd: places.project,
      home: places.home,
      additionalDirectories: settings.flatMap((file) => file.settings.permissions?.additionalDirectories ?? [])
    })
    const registry = ToolRegistry.layer(tools).pipe(
      Layer.provide(
        Layer.mergeAll(builtinLayer(), Layer.succeed(Deploy, DeployLive), Layer.succeed(Serena, SerenaLive))
      )
    )
    const runtime = ToolRuntime.layer.pipe(
      Layer.provide(Layer.mergeAll(
        registry,
        RulePolicy.layer({ settings, mode: resolved.mode }),
        Hooks.layer({ ...hookOptions, cwd: places.project, home: places.home }).pipe(Layer.provide(registry)),
        approver
      )),
      Layer.provideMerge(ResultStore.layerMemory()),
      Layer.provide(workspace)
    )
    const calls = yield* Effect.forEach(test.expect.calls ?? [], (call, i) =>
      Effect.gen(function*() {
        const before = asked.length
        const runtimeService = yield* ToolRuntime
        const outcome = yield* runtimeService.executeOne({
          type: "tool_use",
          id: `toolu_${i}`,
          name: call.tool,
          input: substitute(call.input, places) as Record<string, unknown>
        })
        if (asked.length > before) return { decision: "ask", reason: asked[asked.length - 1]!.message } as CallResult
        const reason = outcome.decision === undefined
          ? outcome.status
          : `${outcome.decision._tag}: ${JSON.stringify(outcome.decision.reason)}`
        return { decision: outcome.status === "denied" ? "deny" : "allow", reason } as CallResult
      }).pipe(Effect.provide(runtime)))
    return { _tag: "Loaded", warnings, mode: resolved.mode, calls } as const
  })
  return Effect.runPromise(program.pipe(Effect.provide(NodeContext.layer)) as Effect.Effect<CaseResult, unknown>)
}

/** The cases, by file name. */
export const loadCases = (): ReadonlyArray<readonly [string, Case]> => {
  const dir = path.join(import.meta.dirname, "cases")
  return fs.readdirSync(dir).filter((file) => file.endsWith(".json")).sort().map((file) =>
    [
      file,
      Schema.decodeUnknownSync(Case, { onExcessProperty: "error" })(
        JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
      )
    ] as const
  )
}
