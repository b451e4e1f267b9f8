/**
 * Matching Claude Code `Bash(...)` permission rules against a command.
 *
 * A rule's content is one of:
 * - `*` or empty: every command;
 * - `cmd:*` (legacy prefix): the command's words start with `cmd` at a word boundary (`git log:*` matches
 *   `git log` and `git log --oneline`, never `git logout`);
 * - a pattern with `*` wildcards anywhere (`git * main`, `git commit -m "*"`); a trailing ` *` also matches
 *   the bare command (`ls *` matches `ls`); `\*` is a literal star;
 * - otherwise the exact command.
 *
 * Commands and rules are compared as normalised words (after quote removal) joined by single spaces, one
 * simple command at a time: `npm test && rm -rf x` is two commands, and `$(...)` substitutions are commands
 * of their own.
 *
 * - **deny / ask** rules match when *any* command the text may run matches: every simple command, and what it
 *   runs through wrappers read by their real option grammar (`Shell/Wrappers`: `env` with `-S`/`--split-string`
 *   and `--chdir`, `timeout`, `nice`, `nohup`, `stdbuf`, `setsid`, `flock`, `taskset`, `ionice`, `prlimit`, `chrt`,
 *   `sudo`, `xargs`, `command`, `builtin`, `exec`, `/usr/bin/time`, package runners such as `npx` and `uv run`;
 *   GNU abbreviations resolved), shell text run again (`sh -c`, `eval`, `trap`, `alias`, `su -c`, `script -c`,
 *   `watch`, `flock -c`, `git rebase --exec`), `find -exec`, and other names of the same program (`/bin/rm`,
 *   `git-core/git-push`, `git send-pack` for `git push`, git's global options). Deny wins over ask. They **fail
 *   closed**: when something runs that cannot be known — a word only known at run time, an interpreter fed code on
 *   standard input, a here-document or `-c`/`-e`, `source`, an unknown wrapper, a git alias or autocorrected
 *   command, configuration that runs programs (`git -c core.pager=...`), text bash evaluates a second time — and a
 *   deny or ask rule could apply (its literal start agrees with what is known), the command is denied (a deny rule) or
 *   asked about (an ask rule), as if it matched.
 * - **allow** rules allow only when *every* simple command (substitutions, function bodies and here-document
 *   expansions included) is matched by some allow rule, checked strictly. A rule with leading assignments matches the
 *   same assignments (`Bash(TZ=UTC npx vitest run:*)` matches `TZ=UTC npx vitest run x`, `Bash(PYTHONPATH=.
 *   python:*)` matches `PYTHONPATH=. python x.py`); a rule without them matches a command whose assignments all set
 *   harmless variables (`NODE_ENV`, `CI`, `TZ`, `LANG`, ...) to literal values; `timeout`, `time`, `nice`, `nohup`
 *   and `stdbuf` are looked through. An allow rule never grants a **known-dangerous form** it does not name:
 *   `Bash(git log:*)` does not allow `git log --output=x` (nor `--out=x`), `Bash(npm test:*)` not
 *   `--script-shell=./x`, `Bash(git * main)` not `git -c core.fsmonitor=... push origin main`, `Bash(find:*)` not
 *   `-exec` or `-delete`. A command whose name is not literal, with an assignment of a non-literal value, or with an
 *   output redirection to a file is matched by no allow rule except `*`; so are bare assignments, function
 *   definitions, loops assigning sensitive variables, assigning expansions and second evaluations. An unanalyzable
 *   command matches no allow rule at all, not even `*`.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Option from "effect/Option"
import { parse } from "unbash"
import type { Word as UWord } from "unbash"
import { analyze } from "./Analysis.js"
import type { ParsedShell, ShellAnalysis, ShellWord, SimpleCommand } from "./Analysis.js"
import { dangerousForm, gitGlobalOptions } from "./internal/dangerousForms.js"
import { operandsOf, redirectionProblem, sensitiveVariable } from "./ReadOnly.js"
import type { ClassifyContext } from "./ReadOnly.js"
import { baseName, builtinEvaluation, namesProgram, unwrap } from "./Wrappers.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * A rule's content (what is inside `Bash(...)`) and an opaque label of where it came from.
 *
 * @since 0.1.0
 * @category models
 */
export interface RuleRef {
  readonly content: string
  readonly source?: string | undefined
}

/**
 * The rules to decide with, by behaviour.
 *
 * @since 0.1.0
 * @category models
 */
export interface BashRules {
  readonly allow: ReadonlyArray<RuleRef>
  readonly ask: ReadonlyArray<RuleRef>
  readonly deny: ReadonlyArray<RuleRef>
}

/**
 * The outcome of matching rules against a command. `subcommand` is the normalised simple command that
 * matched; `unmatched` lists the parts no allow rule covers.
 *
 * @since 0.1.0
 * @category models
 */
export type BashRuleVerdict = Data.TaggedEnum<{
  Deny: { readonly rule: RuleRef; readonly subcommand: string }
  Ask: { readonly rule: RuleRef; readonly subcommand: string }
  Allow: { readonly rules: ReadonlyArray<RuleRef> }
  NoMatch: { readonly unmatched: ReadonlyArray<string> }
}>

/**
 * Constructors and matchers for {@link BashRuleVerdict}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const BashRuleVerdict = Data.taggedEnum<BashRuleVerdict>()

// -----------------------------------------------------------------------------
// rule patterns
// -----------------------------------------------------------------------------

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** A star stays a wildcard inside quotes (`git commit -m "*"`): only `\*` is a literal star. */
const quotedPattern = (value: string): string => value.split("*").map(escapeRegExp).join(".*")

/** Regex source for a word of the rule: unquoted `*` globs are wildcards, everything else is literal. */
const wordPattern = (word: UWord): string | undefined => {
  const parts = word.parts
  if (parts === undefined) return escapeRegExp(word.value)
  let source = ""
  for (const part of parts) {
    switch (part.type) {
      case "Glob":
        source += part.kind === "star" ? ".*" : escapeRegExp(part.text)
        break
      case "Literal":
        // Backslash-escaped characters (`\*`) are literal.
        source += escapeRegExp(part.value)
        break
      case "SingleQuoted":
      case "AnsiCQuoted":
        source += quotedPattern(part.value)
        break
      case "DoubleQuoted":
        if (!part.parts.every((child) => child.type === "Literal")) return undefined
        source += quotedPattern(part.parts.map((child) => child.type === "Literal" ? child.value : "").join(""))
        break
      default:
        // Expansions and other constructs in a rule are compared as written.
        source += escapeRegExp(part.text)
    }
  }
  return source
}

/** Parse the rule text as one simple command; `undefined` when it is anything else. */
const structuredPattern = (text: string): ReadonlyArray<string> | undefined => {
  try {
    const script = parse(text)
    if ((script.errors?.length ?? 0) > 0 || script.commands.length !== 1) return undefined
    const statement = script.commands[0]!
    const command = statement.command
    if (statement.background === true || command.type !== "Command") return undefined
    if (command.name === undefined) return undefined
    const words: Array<string> = []
    // Leading assignments are matched as written, value after quote removal (`TZ=UTC`, `PYTHONPATH=.`).
    for (const item of command.prefix) {
      if (item.type !== "Assignment" || item.value.type !== "Word" || item.index !== undefined) return undefined
      const value = wordPattern(item.value)
      if (value === undefined) return undefined
      words.push(`${escapeRegExp(item.name)}${item.append === true ? "\\+=" : "="}${value}`)
    }
    for (const item of [command.name, ...command.suffix]) {
      if (item.type !== "Word") return undefined
      const pattern = wordPattern(item)
      if (pattern === undefined) return undefined
      words.push(pattern)
    }
    return words
  } catch {
    return undefined
  }
}

/** Fallback: whitespace-separated words, unescaped `*` as wildcard. */
const rawPattern = (text: string): ReadonlyArray<string> =>
  text.split(/\s+/).filter((word) => word.length > 0).map((word) =>
    word.split(/(\\\*|\*)/).map((piece) => piece === "*" ? ".*" : piece === "\\*" ? "\\*" : escapeRegExp(piece))
      .join("")
  )

const compiled = new Map<string, (command: string) => boolean>()

/**
 * Compile a rule's content into a predicate over normalised commands (words joined by single spaces).
 *
 * @since 0.1.0
 * @category matching
 */
export const compileRule = (content: string): (command: string) => boolean => {
  const cached = compiled.get(content)
  if (cached !== undefined) return cached
  const predicate = compileUncached(content)
  if (compiled.size > 1000) compiled.clear()
  compiled.set(content, predicate)
  return predicate
}

const compileUncached = (content: string): (command: string) => boolean => {
  const text = content.replace(/\\([()])/g, "$1").trim()
  if (text === "" || text === "*") return () => true
  const legacy = text.endsWith(":*")
  const body = legacy ? text.slice(0, -2).trimEnd() : text
  const words = structuredPattern(body) ?? rawPattern(body)
  if (words.length === 0) return () => legacy
  let source: string
  if (legacy) source = `${words.join(" ")}(?: .*)?`
  else if (words.length > 1 && words[words.length - 1] === ".*") {
    source = `${words.slice(0, -1).join(" ")}(?: .*)?`
  } else source = words.join(" ")
  const regex = new RegExp(`^${source}$`, "s")
  return (command) => regex.test(command)
}

/**
 * Whether a rule's content matches one normalised simple command.
 *
 * @since 0.1.0
 * @category matching
 */
export const matchesRule = (content: string, command: string): boolean => compileRule(content)(command)

// -----------------------------------------------------------------------------
// deny and ask: everything a command may run
// -----------------------------------------------------------------------------

/** `git [global options] rest` as `git rest`; other commands unchanged. */
const withoutGitGlobals = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  if (words[0] !== "git") return words
  let i = 1
  while (i < words.length) {
    const word = words[i]!
    const [flag] = word.split("=", 1)
    const takesValue = gitGlobalOptions.get(flag!)
    if (takesValue === undefined) break
    i += takesValue && !word.includes("=") ? 2 : 1
  }
  return ["git", ...words.slice(i)]
}

/** What deny and ask rules are checked against: every command the text may run, and what cannot be known. */
interface Reach {
  readonly candidates: Set<string>
  readonly unknown: Array<
    { readonly known: ReadonlyArray<string>; readonly reason: string; readonly subcommand: string }
  >
}

const MAX_UNWRAP_DEPTH = 8

const addCandidates = (reach: Reach, values: ReadonlyArray<string>): void => {
  if (values.length === 0) return
  reach.candidates.add(values.join(" "))
  const named = values[0]!.includes("/") ? [baseName(values[0]!), ...values.slice(1)] : values
  reach.candidates.add(named.join(" "))
  reach.candidates.add(withoutGitGlobals(named).join(" "))
}

/** Follows one simple command through its wrappers, nested scripts and second evaluations. */
const explore = (words: ReadonlyArray<ShellWord>, subcommand: string, depth: number, reach: Reach): void => {
  const values = words.map((word) => word.value)
  addCandidates(reach, values)
  const opaque = words.findIndex((word) => !word.literal)
  if (opaque !== -1) {
    reach.unknown.push({
      known: values.slice(0, opaque),
      reason: `\`${words[opaque]!.text}\` is only known when it runs`,
      subcommand
    })
  }
  if (depth >= MAX_UNWRAP_DEPTH) {
    reach.unknown.push({ known: [], reason: "wrappers nested too deep", subcommand })
    return
  }
  const step = unwrap(words)
  switch (step._tag) {
    case "Command":
      explore(step.words, subcommand, depth + 1, reach)
      return
    case "Script":
      exploreScript(step.text, depth + 1, reach)
      return
    case "Opaque":
      reach.unknown.push({ known: step.known.map((word) => word.value), reason: step.reason, subcommand })
      if (step.known.length > 0) explore(step.known, subcommand, depth + 1, reach)
      return
    case "None":
      return
  }
}

const exploreAnalysis = (analysis: ParsedShell, depth: number, reach: Reach): void => {
  for (const reason of analysis.features.secondEvaluations) {
    reach.unknown.push({ known: [], reason, subcommand: analysis.source })
  }
  for (const simple of analysis.commands) {
    const evaluation = builtinEvaluation(simple)
    if (evaluation !== undefined) reach.unknown.push({ known: [], reason: evaluation, subcommand: simple.source })
    const program = simple.assignments.find((assignment) => namesProgram(assignment.name))
    if (program !== undefined) {
      reach.unknown.push({
        known: [],
        reason: `\`${program.name}\` names a program that runs`,
        subcommand: simple.source
      })
    }
    explore(simple.words, simple.source, depth, reach)
  }
}

/** Best-effort words of a raw string: split at shell operators, quotes dropped. */
const rawSegments = (raw: string): ReadonlyArray<ReadonlyArray<string>> =>
  raw.split(/&&|\|\||\$\(|<\(|>\(|[;&|\n`(){}]/)
    .map((segment) => segment.replace(/["'\\]/g, "").split(/\s+/).filter((word) => word.length > 0))
    .filter((words) => words.length > 0)

const exploreScript = (text: string, depth: number, reach: Reach): void => {
  const analysis = analyze(text)
  if (analysis._tag === "Parsed") {
    exploreAnalysis(analysis, depth, reach)
    return
  }
  reach.unknown.push({ known: [], reason: `a nested script cannot be analysed (${analysis.reason})`, subcommand: text })
  for (const words of [...rawSegments(text), text.split(/\s+/).filter((word) => word.length > 0)]) {
    addCandidates(reach, words)
  }
}

// -----------------------------------------------------------------------------
// allow
// -----------------------------------------------------------------------------

/**
 * Variables a leading assignment may set and still be matched by a rule that does not name it (as Claude Code
 * strips safe environment variables when matching): they change no program that runs.
 */
const harmlessVariables: ReadonlySet<string> = new Set([
  "NODE_ENV",
  "RUST_LOG",
  "RUST_BACKTRACE",
  "CI",
  "NO_COLOR",
  "FORCE_COLOR",
  "LANG",
  "LC_ALL",
  "LC_CTYPE",
  "TZ",
  "PYTHONUNBUFFERED",
  "PYTHONDONTWRITEBYTECODE",
  "COLUMNS",
  "TERM",
  "GOOS",
  "GOARCH",
  "CGO_ENABLED",
  "DEBUG",
  "NODE_NO_WARNINGS",
  "LOG_LEVEL"
])

interface Subject {
  readonly text: string
  readonly words: ReadonlyArray<ShellWord>
}

/**
 * Wrappers a rule about the wrapped command also covers (Claude Code strips them when matching): their options
 * are read by their grammar, and an unknown one keeps the wrapper.
 */
const transparentWrappers: ReadonlySet<string> = new Set(["timeout", "time", "nice", "nohup", "stdbuf"])

/**
 * The normalised strings an allow rule may match for one simple command, or why no allow rule (but `*`) can:
 * the command as written with its leading assignments (`TZ=UTC npx vitest run x` for
 * `Bash(TZ=UTC npx vitest run:*)`); without them when every one sets a harmless variable to a literal value; and
 * inside `timeout`/`time`/`nice`/`nohup`/`stdbuf`.
 */
const allowSubjects = (
  command: SimpleCommand
): { readonly subjects: ReadonlyArray<Subject> } | { readonly problem: string } => {
  for (const assignment of command.assignments) {
    if (assignment.value === undefined || !assignment.value.literal) {
      return { problem: `${command.source} (assigns ${assignment.name} a value only known when it runs)` }
    }
  }
  for (const redirection of command.redirections) {
    if (redirectionProblem(redirection) !== undefined) return { problem: `${command.source} (${redirection.text})` }
  }
  const name = command.words[0]
  if (name === undefined) {
    return command.assignments.length === 0 ? { subjects: [] } : { problem: command.source }
  }
  if (!name.literal) return { problem: `${command.source} (the command name is not literal)` }
  const assignments = command.assignments.map((assignment) =>
    `${assignment.name}${assignment.append ? "+=" : "="}${assignment.value!.value}`
  )
  const subjects: Array<Subject> = []
  const add = (words: ReadonlyArray<ShellWord>, prefix: ReadonlyArray<string>) => {
    subjects.push({ text: [...prefix, ...words.map((word) => word.value)].join(" "), words })
    let current = words
    for (let depth = 0; depth < 4; depth++) {
      const head = current[0]
      if (head === undefined || !head.literal || !transparentWrappers.has(head.value)) break
      const step = unwrap(current)
      if (step._tag !== "Command") break
      current = step.words
      subjects.push({ text: [...prefix, ...current.map((word) => word.value)].join(" "), words: current })
    }
  }
  add(command.words, assignments)
  if (
    command.assignments.length > 0 && command.assignments.every((assignment) => harmlessVariables.has(assignment.name))
  ) add(command.words, [])
  return { subjects }
}

const structuralProblems = (analysis: ParsedShell): ReadonlyArray<string> => {
  const features = analysis.features
  const problems: Array<string> = []
  for (const name of features.functionDefinitions) problems.push(`function definition ${name}()`)
  for (const name of features.loopVariables) {
    if (sensitiveVariable.test(name)) problems.push(`loop assigning ${name}`)
  }
  if (features.assigningExpansions) problems.push("an expansion assigning a variable")
  for (const reason of features.secondEvaluations) problems.push(reason)
  for (const redirection of features.compoundRedirections) {
    if (redirectionProblem(redirection) !== undefined) problems.push(redirection.text)
  }
  for (const simple of analysis.commands) {
    const evaluation = builtinEvaluation(simple)
    if (evaluation !== undefined) problems.push(`${simple.source} (${evaluation})`)
  }
  return problems
}

// -----------------------------------------------------------------------------
// decision
// -----------------------------------------------------------------------------

const firstMatch = (
  rules: ReadonlyArray<RuleRef>,
  candidates: Iterable<string>
): { readonly rule: RuleRef; readonly subcommand: string } | undefined => {
  const list = [...candidates]
  for (const rule of rules) {
    const predicate = compileRule(rule.content)
    const subcommand = list.find(predicate)
    if (subcommand !== undefined) return { rule, subcommand }
  }
  return undefined
}

/**
 * Decide a command against `Bash(...)` rule contents: deny, then ask, then allow (see the module
 * documentation). The context lets a glob count as an operand after a look at the directory it lists. Never throws.
 *
 * @since 0.1.0
 * @category decision
 */
export const decideBashRules = (
  input: ShellAnalysis | string,
  rules: BashRules,
  context?: ClassifyContext
): BashRuleVerdict => {
  const analysis = typeof input === "string" ? analyze(input) : input
  const command = analysis.source
  const reach: Reach = { candidates: new Set(), unknown: [] }
  if (analysis._tag === "Parsed") exploreAnalysis(analysis, 0, reach)
  else {
    exploreScript(command.length > 100_000 ? command.slice(0, 100_000) : command, 1, reach)
    reach.candidates.add(command.trim())
  }
  const denied = firstMatch(rules.deny, reach.candidates)
  if (denied !== undefined) return BashRuleVerdict.Deny(denied)
  const asked = firstMatch(rules.ask, reach.candidates)
  if (asked !== undefined) return BashRuleVerdict.Ask(asked)
  // What cannot be known fails closed: denied when a deny rule could apply to it, asked when an ask rule could.
  const undeniable = undecidedRule(reach, rules.deny)
  if (undeniable !== undefined) return BashRuleVerdict.Deny(undeniable)
  const unknowable = undecidedRule(reach, rules.ask)
  if (unknowable !== undefined) return BashRuleVerdict.Ask(unknowable)
  if (analysis._tag === "Unanalyzable") return BashRuleVerdict.NoMatch({ unmatched: [command] })

  const everything = rules.allow.find((rule) => isMatchAll(rule.content))
  const used: Array<RuleRef> = []
  const unmatched: Array<string> = []
  if (everything !== undefined) {
    used.push(everything)
  } else {
    unmatched.push(...structuralProblems(analysis))
    const isOperand = operandsOf(analysis, context)
    for (const simple of analysis.commands) {
      const found = allowSubjects(simple)
      if ("problem" in found) {
        unmatched.push(found.problem)
        continue
      }
      if (found.subjects.length === 0) continue
      let rule: RuleRef | undefined
      let refused: string | undefined
      for (const subject of found.subjects) {
        for (const candidate of rules.allow) {
          if (!compileRule(candidate.content)(subject.text)) continue
          const danger = dangerousForm(subject.words, candidate.content, isOperand)
          if (danger === undefined) {
            rule = candidate
            break
          }
          refused = danger
        }
        if (rule !== undefined) break
      }
      if (rule === undefined) unmatched.push(refused === undefined ? simple.source : `${simple.source} (${refused})`)
      else if (!used.includes(rule)) used.push(rule)
    }
  }
  return unmatched.length === 0 && used.length > 0
    ? BashRuleVerdict.Allow({ rules: used })
    : BashRuleVerdict.NoMatch({ unmatched })
}

/**
 * Deny and ask rules fail closed (a deny rule that could apply denies, an ask rule asks). Whatever runs only known at
 * run time — a word only known then (`$g push`, `git $x`), an interpreter fed code on standard input, a here-document
 * or `-c`, `source`, `eval` of a variable, an unknown wrapper, a git alias, command-line configuration that runs
 * programs, text bash evaluates a second time — might be a command a rule names. When a deny or ask rule could apply
 * (its literal start agrees with the words that are known; with none known, every rule could), the command is asked
 * about rather than let through on a text that does not match.
 */
const undecidedRule = (
  reach: Reach,
  rules: ReadonlyArray<RuleRef>
): { readonly rule: RuleRef; readonly subcommand: string } | undefined => {
  if (rules.length === 0) return undefined
  for (const unknown of reach.unknown) {
    const known = unknown.known.length === 0
      ? ""
      : withoutGitGlobals([baseName(unknown.known[0]!), ...unknown.known.slice(1)]).join(" ")
    const rule = rules.find((candidate) => {
      const content = candidate.content.trim().replace(/:\*$/, "")
      const literalPart = content.split("*")[0]!.trim()
      return known === "" || literalPart.startsWith(known) || known.startsWith(literalPart)
    })
    if (rule !== undefined) return { rule, subcommand: `${unknown.subcommand} (${unknown.reason})` }
  }
  return undefined
}

const isMatchAll = (content: string): boolean => {
  const text = content.trim()
  return text === "" || text === "*"
}

// -----------------------------------------------------------------------------
// suggestions
// -----------------------------------------------------------------------------

/** Tools whose second word is a subcommand worth keeping in a suggestion. */
const subcommandTools: ReadonlySet<string> = new Set([
  "git",
  "npm",
  "pnpm",
  "yarn",
  "bun",
  "npx",
  "cargo",
  "go",
  "docker",
  "kubectl",
  "gh",
  "pip",
  "pip3",
  "uv",
  "poetry",
  "dotnet",
  "mvn",
  "gradle",
  "./gradlew",
  "terraform",
  "helm",
  "brew",
  "make",
  "deno",
  "rustup",
  "swift",
  "mix",
  "bundle",
  "rake",
  "composer",
  "nx",
  "turbo",
  "pytest",
  "tsc",
  "vitest",
  "jest"
])

/** Tools whose `run`/`exec`-like subcommand is followed by a script name worth keeping. */
const runSubcommands: ReadonlySet<string> = new Set(["run", "exec", "x", "test", "compose"])

/** Commands for which a prefix rule would grant arbitrary execution: suggest the exact command instead. */
const unsafePrefixes: ReadonlySet<string> = new Set([
  "eval",
  "exec",
  "source",
  ".",
  "sh",
  "bash",
  "zsh",
  "dash",
  "fish",
  "python",
  "python3",
  "node",
  "perl",
  "ruby",
  "php",
  "awk",
  "gawk",
  "xargs",
  "env",
  "command",
  "builtin",
  "sudo",
  "doas",
  "su",
  "timeout",
  "nice",
  "nohup",
  "time",
  "stdbuf",
  "find",
  "sed",
  "rm",
  "rmdir",
  "shred",
  "dd",
  "chmod",
  "chown",
  "chgrp",
  "ln",
  "truncate",
  "ksh",
  "csh",
  "tcsh",
  "ash",
  "busybox",
  "pwsh",
  "python2",
  "pypy",
  "pypy3",
  "ipython",
  "irb",
  "lua",
  "luajit",
  "Rscript",
  "julia",
  "tclsh",
  "expect",
  "osascript"
])

/**
 * Subcommands whose prefix would grant code execution or configuration (`git config core.fsmonitor=...`): exact only.
 */
const exactSubcommands: ReadonlySet<string> = new Set([
  "git config",
  "git submodule",
  "git filter-branch",
  "git update-index",
  "npm config",
  "npm exec",
  "npm x",
  "pnpm config",
  "pnpm exec",
  "pnpm dlx",
  "yarn config",
  "yarn exec",
  "yarn dlx",
  "bun x",
  "docker run",
  "docker exec",
  "kubectl exec",
  "gh alias",
  "gh extension",
  "go env",
  "cargo install",
  "pip install",
  "pip3 install",
  "uv run",
  "poetry run"
])

const isPlainWord = (word: string): boolean => /^[A-Za-z0-9][A-Za-z0-9_.:@/-]*$/.test(word)

/**
 * Suggest a rule content for an approval prompt ("always allow `npm run build:*`"), or none when the command
 * is unanalyzable, compound, or not made of plain literal words.
 *
 * @since 0.1.0
 * @category suggestions
 */
export const suggestRule = (input: ShellAnalysis | string): Option.Option<string> => {
  const analysis = typeof input === "string" ? analyze(input) : input
  if (analysis._tag === "Unanalyzable" || analysis.commands.length !== 1) return Option.none()
  if (structuralProblems(analysis).length > 0 || analysis.features.background) return Option.none()
  const simple = analysis.commands[0]!
  const found = allowSubjects(simple)
  if ("problem" in found || found.subjects.length === 0) return Option.none()
  const words = simple.words.map((word) => word.value)
  if (!simple.words.every((word) => word.literal)) return Option.none()
  const name = words[0]!
  if (!isPlainWord(name) || name.includes(":")) return Option.none()
  // Leading assignments are part of the rule (`Bash(PYTHONPATH=. python x.py)`), so the rule matches this call.
  const assignments = simple.assignments.map((assignment) =>
    `${assignment.name}${assignment.append ? "+=" : "="}${assignment.value!.value}`
  )
  if (!assignments.every((assignment) => /^[A-Za-z0-9_+=.:/@,-]*$/.test(assignment))) return Option.none()
  const lead = assignments.length === 0 ? "" : `${assignments.join(" ")} `
  const exact = `${lead}${words.join(" ")}`
  // Keep the command, its subcommand, and the script name after `run`-like subcommands.
  // A program named by path (`/usr/bin/rm`) is judged by its name, and never gets a whole-program prefix.
  if (unsafePrefixes.has(name.slice(name.lastIndexOf("/") + 1)) || (name.includes("/") && !subcommandTools.has(name))) {
    return Option.some(exact)
  }
  // A prefix that would also allow a dangerous form of this very call (`git log --output=x`): the exact command.
  if (dangerousForm(simple.words, "", () => false) !== undefined) return Option.some(exact)
  const kept = [name]
  const second = words[1]
  if (subcommandTools.has(name) && second !== undefined) {
    // `git -c x=y log`: a global option before the subcommand makes any prefix too broad.
    if (!/^[a-z][a-z0-9-]*$/.test(second) || exactSubcommands.has(`${name} ${second}`)) return Option.some(exact)
    kept.push(second)
    const third = words[2]
    if (runSubcommands.has(second) && third !== undefined && isPlainWord(third) && !third.startsWith("-")) {
      kept.push(third)
    }
  }
  if (kept.length === words.length) return Option.some(exact.includes(":") ? exact : `${exact}:*`)
  const prefix = `${lead}${kept.join(" ")}`
  return Option.some(prefix.includes(":") ? exact : `${prefix}:*`)
}
