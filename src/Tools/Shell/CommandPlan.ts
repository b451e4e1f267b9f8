/**
 * The Bash tool's view of one command, bound once per call: the command is parsed once ({@link planCommand}) and
 * every later question — read-only? which traits and claims? what do the `Bash(...)` rules say? which rule to
 * suggest? what does exit code 1 mean? — is answered from that one analysis. `Tools/Bash.ts` keeps the tool
 * (schema, plan, call, presentation); the shell's grammar is `Analysis`, the positive list `ReadOnly`, the rule
 * language `BashRule`.
 *
 * @since 0.2.0
 */
import * as Option from "effect/Option"
import * as fs from "node:fs"
import * as path from "node:path"
import { globSync } from "tinyglobby"
import { printRule } from "../../Runtime/Permission/Rule.js"
import { isWithin } from "../../Runtime/Workspace.js"
import { PermissionCheck } from "../../Tool/Permission.js"
import * as Tool from "../../Tool/Tool.js"
import { analyze } from "./Analysis.js"
import type { ShellAnalysis, ShellWord } from "./Analysis.js"
import { BashRuleVerdict, decideBashRules, suggestRule } from "./BashRule.js"
import type { RuleRef } from "./BashRule.js"
import { classifyReadOnly } from "./ReadOnly.js"

// ---------------------------------------------------------------------------------------------------------------
// the plan
// ---------------------------------------------------------------------------------------------------------------

/**
 * Where a command runs: the working directory, the home directory and the workspace roots (symlinks resolved).
 *
 * @since 0.1.0
 * @category models
 */
export interface CommandPlace {
  readonly cwd: string
  readonly home: string
  readonly roots: ReadonlyArray<string>
}

/**
 * One command, analysed once, with every answer the Bash tool's stages need.
 *
 * @since 0.2.0
 * @category models
 */
export interface CommandPlan {
  readonly command: string
  readonly analysis: ShellAnalysis
  readonly readOnly: boolean
  readonly traits: Tool.Traits
  readonly claims: ReadonlyArray<Tool.Claim>
  /** The tool's own permission view: ask for what cannot be analysed, else no opinion (with a suggested rule). */
  readonly permissionCheck: PermissionCheck<never>
  /** Decides `Bash(...)` rules, reporting the policy's own rule values back. */
  readonly matchRules: <R extends Tool.ContentRule>(rules: Tool.RulesByBehavior<R>) => Tool.RuleMatch<R>
  /** What exit code 1 means when it is an answer rather than an error (see {@link exitOneMeaning}). */
  readonly exitOneMeaning: string | undefined
}

/** Counts analyses, for `bench/bash` (how many times a call parses its command). */
let analysesRun = 0

/**
 * How many commands have been analysed since the process started (a benchmark reads it to show one parse per call).
 *
 * @since 0.2.0
 * @category diagnostics
 */
export const analysisCount = (): number => analysesRun

const analyzeSafely = (command: string): ShellAnalysis => {
  analysesRun++
  try {
    return analyze(command)
  } catch (error) {
    return { _tag: "Unanalyzable", source: command, reason: `the analysis failed: ${String(error)}` }
  }
}

const readOnlyOf = (analysis: ShellAnalysis): boolean => {
  try {
    return classifyReadOnly(analysis).readOnly
  } catch {
    return false
  }
}

/**
 * Analyses a command once and binds everything the Bash tool's stages need.
 *
 * @since 0.2.0
 * @category constructors
 */
export const planCommand = (command: string, place: CommandPlace): CommandPlan => {
  const analysis = analyzeSafely(command)
  const readOnly = readOnlyOf(analysis)
  return {
    command,
    analysis,
    readOnly,
    traits: traitsFrom(analysis, readOnly),
    claims: claimsFrom(analysis, readOnly, place),
    permissionCheck: permissionCheckFrom(analysis),
    matchRules: (rules) => matchRulesFrom(analysis, rules),
    exitOneMeaning: exitOneMeaningFrom(analysis)
  }
}

// ---------------------------------------------------------------------------------------------------------------
// answers
// ---------------------------------------------------------------------------------------------------------------

const destructiveNames: ReadonlySet<string> = new Set(["rm", "rmdir", "shred", "dd", "mkfs", "truncate", "wipefs", "fdisk"])
const networkNames: ReadonlySet<string> = new Set(["curl", "wget", "ssh", "scp", "sftp", "rsync", "nc", "ncat", "telnet", "ftp"])

/**
 * The traits of a command: read-only (and so concurrency-safe) per `Shell/ReadOnly`; destructive and open-world by
 * a rough look at the command names (a hint for UIs, never a permission input).
 */
const traitsFrom = (analysis: ShellAnalysis, readOnly: boolean): Tool.Traits => {
  if (analysis._tag === "Unanalyzable") return { readOnly, concurrencySafe: readOnly, destructive: false, openWorld: true }
  const words = analysis.commands.map((simple) => simple.words.map((word) => word.value))
  const destructive = words.some(([name, ...args]) =>
    (name !== undefined && destructiveNames.has(name)) ||
    (name === "git" && (args.includes("--force") || args.includes("--hard") || (args[0] === "clean" && args.some((a) => /^-[a-z]*f/.test(a)))))
  )
  const openWorld = words.some(([name, sub]) =>
    (name !== undefined && networkNames.has(name)) || (name === "git" && ["push", "pull", "fetch", "clone", "ls-remote"].includes(sub ?? ""))
  )
  return { readOnly, concurrencySafe: readOnly, destructive, openWorld }
}

const realOrLexical = (absolute: string): string => {
  try {
    return fs.realpathSync.native(absolute)
  } catch {
    return absolute
  }
}

/** The paths a glob word matches (absolute patterns too), or undefined when there are too many to check. */
const expandGlob = (pattern: string, cwd: string): ReadonlyArray<string> | undefined => {
  try {
    const absolute = path.isAbsolute(pattern)
    // bash has no globstar by default: `**` is `*`, which also keeps the walk as shallow as the pattern. Symlinks
    // must be listed (as themselves: `inside` resolves them), so they are followed.
    const bashPattern = pattern.replace(/\*{2,}/g, "*")
    const matches = globSync(absolute ? bashPattern.slice(1) : bashPattern, {
      cwd: absolute ? "/" : cwd,
      absolute: true,
      dot: true,
      onlyFiles: false,
      followSymbolicLinks: true,
      expandDirectories: false
    })
    // No match: bash passes the word as it is, which names no existing file.
    return matches.length > 1000 ? undefined : matches.length === 0 ? [pattern] : matches
  } catch {
    return undefined
  }
}

/** Read-only commands that read no file named by an argument: their arguments are not checked. */
const pathlessCommands: ReadonlySet<string> = new Set([
  "echo", "printf", "basename", "dirname", "true", "false", "pwd", "whoami", "id", "uname", "hostname",
  "which", "type", "seq", "nproc"
])

/**
 * Whether every file a read-only command names lies inside the workspace. Every literal word and redirection
 * target counts as a possible path (and an option's value after `=`), resolved against the working directory and
 * through symlinks when it exists; a glob counts by its literal prefix; `$PWD` is the working directory, and a
 * `for` variable is inside when every word of its list is. Any other expansion (`$HOME/x`, `$(...)`) could be
 * anywhere: outside.
 */
const staysInside = (analysis: ShellAnalysis, place: CommandPlace): boolean => {
  if (analysis._tag === "Unanalyzable") return false
  const inside = (candidate: string): boolean => {
    if (candidate === "") return true
    // `~user`, `~+`, `~-`: bash expands them to other directories.
    if (candidate.startsWith("~") && candidate !== "~" && !candidate.startsWith("~/")) return false
    // The kernel follows a symlink before `..`, path.resolve removes `..` first: a `..` segment is not checked, it asks.
    if (candidate.split("/").includes("..")) return false
    const expanded = candidate === "~" ? place.home : candidate.startsWith("~/") ? path.join(place.home, candidate.slice(2)) : candidate
    const absolute = path.resolve(place.cwd, expanded)
    const real = realOrLexical(absolute)
    return place.roots.some((root) => isWithin(root, absolute) && isWithin(root, real))
  }
  const loopInside = new Map<string, boolean>()
  const wordInside = (word: ShellWord): boolean => {
    let value = word.value
    if (word.expansion) {
      const loop = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$/.exec(value)?.[1]
      if (loop !== undefined && loopInside.has(loop)) return loopInside.get(loop)!
      value = value.replace(/^\$\{?PWD\}?(?=\/|$)/, place.cwd)
      if (/[$`]/.test(value)) return false
    }
    // A brace expansion can build any path (`{.,x}{.,y}/secret` is `../secret`): outside. A glob cannot produce `..`,
    // so it counts by its literal prefix, once any literal `..` segment is ruled out.
    if (word.brace) return false
    if (word.glob) {
      if (value.split("/").includes("..")) return false
      // What the glob matches now, each through its symlinks (`li*/x` may cross `linkout -> /elsewhere`). More
      // matches than we care to check, or a pattern we cannot expand, asks.
      const matches = expandGlob(value, place.cwd)
      return matches !== undefined && matches.every(inside)
    }
    const option = /^-[^=]*=(.*)$/s.exec(value)
    if (option !== null) return inside(option[1]!)
    // `-f/etc/x`: an attached option value that looks like a path.
    if (value.startsWith("-")) return !value.includes("/") && !value.includes("~")
    return inside(value)
  }
  for (const { variable, words } of analysis.features.loopLists) {
    const ok = words !== undefined && words.every(wordInside)
    loopInside.set(variable, (loopInside.get(variable) ?? true) && ok)
  }
  return analysis.commands.every((simple) =>
    (pathlessCommands.has(simple.words[0]?.value ?? "") || simple.words.slice(1).every(wordInside)) &&
    simple.redirections.every((redirection) =>
      redirection.target === undefined ||
      redirection.hereDoc !== undefined ||
      redirection.operator === "<<<" ||
      /^(?:\d+|-)$/.test(redirection.target.value) ||
      /^\/dev\/(?:null|stdout|stderr)$/.test(redirection.target.value) ||
      wordInside(redirection.target)
    )
  )
}

/**
 * The claims of a command. Read-only and naming only files inside the workspace: a read of the workspace roots (it
 * runs alongside other reads, and the policy may auto-allow it). Read-only but reaching outside (`cat /etc/x`,
 * `ls ..`, `cat $HOME/.ssh/id_rsa`): a read of every file, `file:/`, which no workspace contains, so a person or a
 * rule decides. Anything else: the whole world.
 */
const claimsFrom = (analysis: ShellAnalysis, readOnly: boolean, place: CommandPlace): ReadonlyArray<Tool.Claim> => {
  if (!readOnly) return [Tool.Claim.world]
  let within: boolean
  try {
    within = staysInside(analysis, place)
  } catch {
    within = false
  }
  return within ? place.roots.map((root) => Tool.Claim.read(`file:${root}`)) : [Tool.Claim.read("file:/")]
}

/**
 * The tool's own permission view: ask, with the reason, for a command the analysis cannot vouch for; otherwise no
 * opinion (the policy's rules, modes and read-only auto-allow decide), with a suggested rule for the prompt.
 */
const permissionCheckFrom = (analysis: ShellAnalysis): PermissionCheck<never> => {
  if (analysis._tag === "Unanalyzable") return PermissionCheck.ask(`This command cannot be analysed (${analysis.reason}); approve it only if you have read it.`, undefined, { overridable: false })
  let suggestion: Option.Option<string>
  try {
    suggestion = suggestRule(analysis)
  } catch {
    suggestion = Option.none()
  }
  return Option.match(suggestion, {
    onNone: () => PermissionCheck.passthrough(),
    onSome: (content) => PermissionCheck.passthrough([printRule({ toolName: "Bash", content })])
  })
}

/**
 * Decides `Bash(...)` rules for a command with `Shell/BashRule`, reporting the policy's own rule values back.
 */
const matchRulesFrom = <R extends Tool.ContentRule>(analysis: ShellAnalysis, rules: Tool.RulesByBehavior<R>): Tool.RuleMatch<R> => {
  const original = new Map<RuleRef, R>()
  const refs = (list: ReadonlyArray<R>): ReadonlyArray<RuleRef> =>
    list.map((rule) => {
      const ref: RuleRef = { content: rule.content }
      original.set(ref, rule)
      return ref
    })
  const verdict = decideBashRules(analysis, { deny: refs(rules.deny), ask: refs(rules.ask), allow: refs(rules.allow) })
  return BashRuleVerdict.$match(verdict, {
    Deny: ({ rule, subcommand }): Tool.RuleMatch<R> => ({ _tag: "Deny", rule: original.get(rule)!, detail: `it matches \`${subcommand}\`` }),
    Ask: ({ rule, subcommand }): Tool.RuleMatch<R> => ({ _tag: "Ask", rule: original.get(rule)!, detail: `it matches \`${subcommand}\`` }),
    Allow: ({ rules: used }): Tool.RuleMatch<R> => ({ _tag: "Allow", rules: used.map((rule) => original.get(rule)!) }),
    NoMatch: ({ unmatched }): Tool.RuleMatch<R> =>
      unmatched.length === 0 ? { _tag: "NoMatch" } : { _tag: "NoMatch", detail: `no allow rule covers: ${unmatched.join("; ")}` }
  })
}

/** Exit code 1 of these, as the last command, is an answer. */
const exitOneMeanings: ReadonlyMap<string, string> = new Map([
  ["grep", "no matches"],
  ["egrep", "no matches"],
  ["fgrep", "no matches"],
  ["rg", "no matches"],
  ["diff", "the inputs differ"],
  ["cmp", "the files differ"],
  ["test", "the condition is false"],
  ["[", "the condition is false"]
])

/**
 * What exit code 1 means when it is not an error: the last simple command at the top level (not in a
 * substitution or function body), whose status is the shell's when it runs last, is one of `grep`, `egrep`,
 * `fgrep`, `rg`, `diff`, `cmp`, `test`, `[`. `test -f x && cat x` ending with 1 is therefore an error (its last
 * command is `cat`), and so is `set -o pipefail` with a grep early in a pipeline: when in doubt, an error.
 */
const exitOneMeaningFrom = (analysis: ShellAnalysis): string | undefined => {
  if (analysis._tag === "Unanalyzable") return undefined
  const top = analysis.commands.filter((simple) => !simple.inSubstitution && !simple.inFunction)
  const name = top.at(-1)?.words[0]
  return name?.literal === true ? exitOneMeanings.get(name.value) : undefined
}

// ---------------------------------------------------------------------------------------------------------------
// one-off questions (each analyses the command once; a call uses its plan instead)
// ---------------------------------------------------------------------------------------------------------------

const nowhere: CommandPlace = { cwd: "/", home: "/", roots: [] }

/**
 * The traits of a command: read-only (and so concurrency-safe) per `ReadOnly`; destructive and open-world by a rough
 * look at the command names (a hint for UIs, never a permission input).
 *
 * @since 0.1.0
 * @category classification
 */
export const traitsOf = (command: string): Tool.Traits => planCommand(command, nowhere).traits

/**
 * The claims of a command run at `place`.
 *
 * @since 0.1.0
 * @category classification
 */
export const claimsOf = (command: string, place: CommandPlace): ReadonlyArray<Tool.Claim> => planCommand(command, place).claims

/**
 * The tool's own permission view of a command.
 *
 * @since 0.1.0
 * @category classification
 */
export const permissionCheckOf = (command: string): PermissionCheck<never> => planCommand(command, nowhere).permissionCheck

/**
 * Decides `Bash(...)` rules for a command.
 *
 * @since 0.1.0
 * @category classification
 */
export const matchRules = <R extends Tool.ContentRule>(command: string, rules: Tool.RulesByBehavior<R>): Tool.RuleMatch<R> =>
  planCommand(command, nowhere).matchRules(rules)

/**
 * What exit code 1 of a command means when it is an answer.
 *
 * @since 0.1.0
 * @category classification
 */
export const exitOneMeaning = (command: string): string | undefined => planCommand(command, nowhere).exitOneMeaning
