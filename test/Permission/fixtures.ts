/**
 * Fake tools for permission tests: file tools with and without their own rule matchers, a shell tool whose
 * `matchRules` uses the real Bash rule semantics, a web fetcher and an MCP tool without any matcher, and a pure tool.
 * Each takes a `check` field steering its own `checkPermissions`.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Either, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { compilePathPattern } from "../../src/Permission/PathPattern.js"
import type { PolicyRequest } from "../../src/Permission/PermissionPolicy.js"
import { isWithin, Workspace } from "../../src/Session/Workspace.js"
import { decodeSettingsJson } from "../../src/Settings/Settings.js"
import type { LoadedSettings, SettingsFileKind } from "../../src/Settings/Settings.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import { decideBashRules } from "../../src/Tools/Shell/BashRule.js"

export const Check = Schema.optional(Schema.Literal("allow", "deny", "ask", "askStrict", "passthrough"))
type CheckValue = "allow" | "deny" | "ask" | "askStrict" | "passthrough" | undefined

const toolCheck = (check: CheckValue, updated?: unknown): PermissionCheck<never> => {
  switch (check) {
    case "allow":
      return PermissionCheck.allow(
        updated === undefined
          ? { reason: "the tool vouches" }
          : { reason: "the tool vouches", updatedInput: updated as never }
      )
    case "deny":
      return PermissionCheck.deny("the tool refuses")
    case "ask":
      return PermissionCheck.ask("the tool wants a person", ["Fake(suggested)"])
    case "askStrict":
      return PermissionCheck.ask("the tool wants a person, whatever the rules say", [], { overridable: false })
    default:
      return PermissionCheck.passthrough()
  }
}

const realOrSelf = (p: string): string => {
  try {
    return fs.realpathSync(p)
  } catch {
    const parent = path.dirname(p)
    return parent === p ? p : path.join(realOrSelf(parent), path.basename(p))
  }
}

export const FileInput = Schema.Struct({ path: Schema.String, check: Check })

/** Where the fake file tools resolve relative paths: the last sandbox made. */
let fixtureCwd = process.cwd()

/** Matches a path rule against the path as given (made absolute) and its real path, like a careful file tool. */
const fileMatches = (content: string, input: typeof FileInput.Type, context: Tool.RuleContext): boolean => {
  const matcher = compilePathPattern(content, { cwd: context.cwd, home: context.home, ruleDir: context.ruleDirectory })
  const absolute = path.resolve(context.cwd, input.path)
  return matcher(absolute) || matcher(realOrSelf(absolute))
}

const fileClaims = (access: "read" | "write") => (input: typeof FileInput.Type): ReadonlyArray<Tool.Claim> => [
  { resource: `file:${realOrSelf(path.resolve(fixtureCwd, input.path))}`, access }
]

export const Read = Tool.make("Read", { description: "Reads a file.", input: FileInput, fileAccess: "read" })
export const ReadLive = Read.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  claims: fileClaims("read"),
  matchesRule: fileMatches,
  call: () => Effect.succeed("contents")
})

export const Edit = Tool.make("Edit", { description: "Edits a file.", input: FileInput, fileAccess: "edit" })
export const EditLive = Edit.service({
  checkPermissions: (input) =>
    Effect.succeed(
      toolCheck(input.check, input.check === "allow" ? { ...input, path: `${input.path}.rewritten` } : undefined)
    ),
  claims: fileClaims("write"),
  matchesRule: fileMatches,
  call: () => Effect.succeed("edited")
})

/** An edit tool without matchers: rules are matched against its `file:` claims by the policy. */
export const Write = Tool.make("Write", { description: "Writes a file.", input: FileInput, fileAccess: "edit" })
export const WriteLive = Write.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  claims: fileClaims("write"),
  call: () => Effect.succeed("written")
})

/** A read-only grep without matchers. */
export const Grep = Tool.make("Grep", { description: "Searches files.", input: FileInput, fileAccess: "read" })
export const GrepLive = Grep.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  traits: () => ({ readOnly: true, concurrencySafe: true }),
  claims: fileClaims("read"),
  call: () => Effect.succeed("matches")
})

export const Bash = Tool.make("Bash", {
  description: "Runs a command.",
  input: Schema.Struct({ command: Schema.String, check: Check })
})
export const BashLive = Bash.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  matchRules: (input, rules) => {
    const verdict = decideBashRules(input.command, rules)
    switch (verdict._tag) {
      case "Deny":
        return { _tag: "Deny", rule: rules.deny.find((rule) => rule === verdict.rule)! }
      case "Ask":
        return { _tag: "Ask", rule: rules.ask.find((rule) => rule === verdict.rule)! }
      case "Allow":
        return { _tag: "Allow", rules: rules.allow.filter((rule) => verdict.rules.includes(rule)) }
      case "NoMatch":
        return { _tag: "NoMatch" }
    }
  },
  call: () => Effect.succeed("ran")
})

/** A read-only, open-world fetcher with no rule matcher. */
export const WebFetch = Tool.make("WebFetch", {
  description: "Fetches a URL.",
  input: Schema.Struct({ url: Schema.String, check: Check })
})
export const WebFetchLive = WebFetch.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  traits: () => ({ readOnly: true, concurrencySafe: true, openWorld: true }),
  claims: () => [],
  call: () => Effect.succeed("page")
})

export const McpTool = Tool.make("mcp__srv__lookup", {
  description: "An MCP tool.",
  input: Schema.Struct({ q: Schema.String, check: Check })
})
export const McpToolLive = McpTool.service({
  checkPermissions: (input) => Effect.succeed(toolCheck(input.check)),
  call: () => Effect.succeed("found")
})

export const Echo = Tool.make("Echo", {
  description: "Repeats text.",
  aliases: ["Say"],
  input: Schema.Struct({ text: Schema.String }),
  touchesEnvironment: false
})
export const EchoLive = Echo.service({ call: ({ text }) => Effect.succeed(text) })

export const allTools = [Read, Edit, Write, Grep, Bash, WebFetch, McpTool, Echo] as const
export const allToolLayers = Layer.mergeAll(
  Layer.succeed(Read, ReadLive),
  Layer.succeed(Edit, EditLive),
  Layer.succeed(Write, WriteLive),
  Layer.succeed(Grep, GrepLive),
  Layer.succeed(Bash, BashLive),
  Layer.succeed(WebFetch, WebFetchLive),
  Layer.succeed(McpTool, McpToolLive),
  Layer.succeed(Echo, EchoLive)
)

const services: Record<string, Tool.AnyService> = {
  Read: ReadLive as Tool.AnyService,
  Edit: EditLive as Tool.AnyService,
  Write: WriteLive as Tool.AnyService,
  Grep: GrepLive as Tool.AnyService,
  Bash: BashLive as Tool.AnyService,
  WebFetch: WebFetchLive as Tool.AnyService,
  mcp__srv__lookup: McpToolLive as Tool.AnyService,
  Echo: EchoLive as Tool.AnyService
}

/** A policy request for one call, with the tool's own check run. */
export const request = (
  tool: Tool.Any,
  input: unknown,
  hook?: PolicyRequest["hook"]
): PolicyRequest => {
  const service = services[tool.definition.name]!
  const context: Tool.CallContext = {
    toolUseId: "toolu_1",
    toolName: tool.definition.name,
    progress: () => Effect.void,
    isReadDenied: () => false
  }
  const invocation = service.plan(input)
  return {
    definition: tool.definition,
    invocation,
    toolCheck: Effect.runSync(invocation.checkPermissions(context)),
    hook,
    context
  }
}

// ---------------------------------------------------------------------------------------------------------------
// a real workspace on disk
// ---------------------------------------------------------------------------------------------------------------

export interface Sandbox {
  readonly base: string
  /** The working directory (symlinks resolved). */
  readonly root: string
  readonly home: string
  readonly outside: string
}

export const makeSandbox = (): Sandbox => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-perm-")))
  const root = path.join(base, "proj")
  const home = path.join(base, "home")
  const outside = path.join(base, "outside")
  for (
    const dir of [root, home, outside, path.join(root, "src"), path.join(root, "secrets"), path.join(root, ".git")]
  ) {
    fs.mkdirSync(dir, { recursive: true })
  }
  fs.writeFileSync(path.join(root, "secrets", "key.txt"), "secret")
  fs.writeFileSync(path.join(root, "src", "a.ts"), "a")
  fixtureCwd = root
  return { base, root, home, outside }
}

/** The sandbox's workspace, built synchronously (its directories are already real paths), plus the file system. */
export const workspaceLayer = (sandbox: Sandbox) =>
  Layer.merge(
    Layer.succeed(Workspace, {
      cwd: sandbox.root,
      home: sandbox.home,
      roots: [sandbox.root],
      resolve: () => Effect.die("not used by the policy"),
      contains: (absolutePath: string) => isWithin(sandbox.root, absolutePath)
    }),
    NodeFileSystem.layer
  )

/** Settings as if loaded from a file. */
export const settingsFrom = (
  json: unknown,
  path: string,
  kind: SettingsFileKind = "projectSettings"
): LoadedSettings => {
  const decoded = decodeSettingsJson(json, { kind, path })
  if (Either.isLeft(decoded)) throw new Error(decoded.left.message)
  return decoded.right
}
