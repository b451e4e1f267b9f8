/**
 * The tools that settings rules name: this runtime's tools, Claude Code's tools it lacks, and how a rule's tool name
 * is checked (kept with a warning, or an error naming the tool meant); file rules read as Claude Code reads them
 * (`Write(x)` deny is `Edit(x)`, `Glob(x)` deny is `Read(x)`).
 *
 * @since 0.3.0
 */
import { editDistance } from "../Shared/closest.js"
import { sameLooking } from "../Shared/lookAlike.js"
import type { PermissionRule, RuleBehavior } from "../Tool/Rule.js"
import { makeRule, parseMcpName, printRule } from "../Tool/Rule.js"

// -----------------------------------------------------------------------------
// tools named by rules
// -----------------------------------------------------------------------------

/**
 * The built-in tools of this runtime: rules for them need no comment.
 *
 * @since 0.2.0
 * @category rules
 */
export const RUNTIME_TOOLS: ReadonlyArray<string> = [
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "Bash",
  "WebFetch",
  "ToolSearch"
]

/**
 * Claude Code's tools that this runtime does not have. Rules for them load (real settings files carry them) and
 * match nothing here until a tool of that name is registered.
 *
 * @since 0.2.0
 * @category rules
 */
export const CLAUDE_CODE_ONLY_TOOLS: ReadonlyArray<string> = [
  "Agent",
  "Task",
  "TaskOutput",
  "TaskStop",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskUpdate",
  "WebSearch",
  "NotebookEdit",
  "NotebookRead",
  "TodoWrite",
  "TodoRead",
  "MultiEdit",
  "LS",
  "KillShell",
  "KillBash",
  "BashOutput",
  "ExitPlanMode",
  "EnterPlanMode",
  "SlashCommand",
  "Skill",
  "AskUserQuestion",
  "ListMcpResourcesTool",
  "ReadMcpResourceTool",
  "LSP",
  "EnterWorktree",
  "ExitWorktree",
  "SendMessage",
  "TeamCreate",
  "TeamDelete",
  "Monitor",
  "CronCreate",
  "CronDelete",
  "CronList",
  "PowerShell"
]

/** File tools whose path rules Claude Code reads as `Edit(...)` or `Read(...)`. */
const FILE_RULE_FAMILY: Readonly<Record<string, "Edit" | "Read">> = {
  Write: "Edit",
  MultiEdit: "Edit",
  NotebookEdit: "Edit",
  Glob: "Read",
  Grep: "Read",
  LS: "Read",
  NotebookRead: "Read"
}

/**
 * How one rule is read: as written, under its file family's name (`Write(x)` deny -> `Edit(x)`), or not at all
 * (`Write(x)` allow, which Claude Code never matches), with the warning that says so.
 *
 * @since 0.2.0
 * @category rules
 */
export const readFileRule = (
  behavior: RuleBehavior,
  rule: PermissionRule
): { readonly rule: PermissionRule | undefined; readonly warning: string | undefined } => {
  const family = FILE_RULE_FAMILY[rule.toolName]
  if (family === undefined || rule.content === undefined) return { rule, warning: undefined }
  const asFamily = printRule(makeRule(family, rule.content))
  if (behavior === "allow") {
    return {
      rule: undefined,
      warning: `${
        printRule(rule)
      } has no effect: as in Claude Code, only ${family}(path) rules are matched by file permission checks (${family} rules cover every tool that ${
        family === "Edit" ? "writes" : "reads or lists"
      } files); write ${asFamily} instead`
    }
  }
  return {
    rule: makeRule(family, rule.content),
    warning: `${printRule(rule)} is read as ${asFamily}: ${family} rules cover every tool that ${
      family === "Edit" ? "writes" : "reads or lists"
    } files (Claude Code would not match ${printRule(rule)} at all)`
  }
}

/**
 * The options that say which tools and MCP servers exist, for the checks on rules' tool names.
 *
 * @since 0.2.0
 * @category models
 */
export interface ToolNameOptions {
  /** Tools of this runtime. Default {@link RUNTIME_TOOLS}. */
  readonly knownTools?: ReadonlyArray<string> | undefined
  /** Configured MCP servers: rules for other servers get a warning. Default none. */
  readonly mcpServers?: ReadonlyArray<string> | undefined
}

type ToolNameCheck = { readonly _tag: "Ok" } | { readonly _tag: "Warning"; readonly message: string } | {
  readonly _tag: "Error"
  readonly message: string
}

/**
 * Checks the tool a rule names: a known tool is fine; a Claude Code tool this runtime lacks, an unconfigured MCP
 * server or an unknown name is a warning (the rule is kept); a name one edit away from a known tool is an error.
 *
 * @since 0.2.0
 * @category rules
 */
export const checkRuleToolName = (toolName: string, options: ToolNameOptions = {}): ToolNameCheck => {
  const known = options.knownTools ?? RUNTIME_TOOLS
  const mcp = parseMcpName(toolName)
  if (mcp !== undefined) {
    return (options.mcpServers ?? []).includes(mcp.server)
      ? { _tag: "Ok" }
      : {
        _tag: "Warning",
        message: `no MCP server "${mcp.server}" is configured; the rule is kept and matches nothing until it is`
      }
  }
  if (known.includes(toolName)) return { _tag: "Ok" }
  if (CLAUDE_CODE_ONLY_TOOLS.includes(toolName)) {
    return {
      _tag: "Warning",
      message: `${toolName} is a Claude Code tool this runtime does not have; the rule is kept and matches nothing`
    }
  }
  const near = [...known, ...CLAUDE_CODE_ONLY_TOOLS].find((name) =>
    editDistance(name, toolName) === 1 || sameLooking(name, toolName)
  )
  if (near !== undefined) return { _tag: "Error", message: `unknown tool "${toolName}", did you mean ${near}?` }
  return {
    _tag: "Warning",
    message: `unknown tool "${toolName}"; the rule is kept and matches nothing until a tool of that name exists`
  }
}
