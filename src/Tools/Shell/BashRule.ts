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
 * - **deny / ask** rules match when *any* simple command matches, checked best-effort and broadly: leading
 *   assignments and wrappers (`timeout`, `time`, `nice`, `nohup`, `stdbuf`, `env`, `command`, `builtin`,
 *   `exec`, `sudo`, `doas`, `xargs`) are stripped, a path-qualified name is also tried by its base name
 *   (`/bin/rm` as `rm`), the scripts of `eval ...` and `sh -c ...` are analysed in turn, and the command of
 *   `find -exec ... ;` is tried too. Deny wins over ask. An unanalyzable command is still checked, against
 *   the raw text split at shell operators.
 * - **allow** rules allow only when *every* simple command (substitutions, function bodies and here-document
 *   expansions included) is matched by some allow rule, checked strictly: nothing is stripped except leading
 *   assignments of a few harmless variables (`NODE_ENV`, `CI`, `NO_COLOR`, `LANG`, ...) with literal values.
 *   A command whose name is not literal, with any other assignment, or with an output redirection to a file
 *   is matched by no allow rule except `*`; so are bare assignments, function definitions, loops assigning
 *   sensitive variables (`for PATH in ...`) and assigning expansions (`${PATH:=...}`). An unanalyzable command
 *   matches no allow rule at all, not even `*`.
 *
 * @since 0.1.0
 */
import { Data, Option } from "effect"
import { parse } from "unbash"
import type { Word as UWord } from "unbash"
import { analyze } from "./Analysis.js"
import type { ParsedShell, ShellAnalysis, SimpleCommand } from "./Analysis.js"
import { redirectionProblem, sensitiveVariable } from "./ReadOnly.js"

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
  readonly source?: string
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
    if (command.prefix.length > 0 || command.name === undefined) return undefined
    const words: Array<string> = []
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
// normalisation
// -----------------------------------------------------------------------------

const isAssignmentWord = (word: string): boolean => /^[A-Za-z_][A-Za-z0-9_]*\+?=/.test(word)

/** Skip leading options; `withValue` options take the next word unless attached. Returns the next index. */
const skipOptions = (
  words: ReadonlyArray<string>,
  start: number,
  withValue: ReadonlySet<string>,
  options: { readonly numericFlags?: boolean } = {}
): number => {
  let i = start
  while (i < words.length) {
    const word = words[i]!
    if (word === "--") return i + 1
    if (!word.startsWith("-") || word === "-") return i
    if (options.numericFlags === true && /^-[0-9]+$/.test(word)) {
      i++
      continue
    }
    i += withValue.has(word) ? 2 : 1
  }
  return i
}

const wrapperStep = (words: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const [first] = words
  if (first === undefined) return undefined
  if (isAssignmentWord(first)) return words.slice(1)
  switch (first) {
    case "timeout": {
      const i = skipOptions(words, 1, new Set(["-s", "--signal", "-k", "--kill-after"]))
      return words.slice(i + 1)
    }
    case "time":
      return words.slice(skipOptions(words, 1, new Set(["-o", "--output", "-f", "--format"])))
    case "nice":
      return words.slice(skipOptions(words, 1, new Set(["-n", "--adjustment"]), { numericFlags: true }))
    case "nohup":
    case "builtin":
      return words.slice(skipOptions(words, 1, new Set()))
    case "stdbuf":
      return words.slice(skipOptions(words, 1, new Set(["-i", "-o", "-e", "--input", "--output", "--error"])))
    case "exec":
      return words.slice(skipOptions(words, 1, new Set(["-a"])))
    case "command":
      if (words[1] === "-v" || words[1] === "-V") return undefined
      return words.slice(skipOptions(words, 1, new Set()))
    case "sudo":
    case "doas":
      return words.slice(
        skipOptions(words, 1, new Set(["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R"]))
      )
    case "xargs":
      return words.slice(
        skipOptions(words, 1, new Set(["-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter",
          "--max-args", "--max-lines", "--max-procs", "--max-chars", "--eof", "--replace", "--process-slot-var"]))
      )
    case "env": {
      let i = 1
      const result: Array<string> = []
      while (i < words.length) {
        const word = words[i]!
        if (word === "--") {
          i++
          break
        }
        if (word === "-S" || word === "--split-string") {
          result.push(...(words[i + 1] ?? "").split(/\s+/).filter((w) => w.length > 0))
          i += 2
        } else if (word.startsWith("-S") && word.length > 2) {
          result.push(...word.slice(2).split(/\s+/).filter((w) => w.length > 0))
          i++
        } else if (word.startsWith("--split-string=")) {
          result.push(...word.slice("--split-string=".length).split(/\s+/).filter((w) => w.length > 0))
          i++
        } else if (["-u", "--unset", "-C", "--chdir"].includes(word)) i += 2
        else if (word.startsWith("-") || isAssignmentWord(word)) i++
        else break
      }
      return [...result, ...words.slice(i)]
    }
    default:
      return undefined
  }
}

/** Strip leading assignments and wrapper commands, repeatedly. */
const stripWrappers = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  let current = words
  for (let step = 0; step < 16; step++) {
    const next = wrapperStep(current)
    if (next === undefined || next.length === 0) return current
    current = next
  }
  return current
}

const shells: ReadonlySet<string> = new Set(["sh", "bash", "zsh", "dash", "ksh", "mksh", "busybox"])

const baseName = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

const withBaseName = (words: ReadonlyArray<string>): ReadonlyArray<string> =>
  words.length > 0 && words[0]!.includes("/") ? [baseName(words[0]!), ...words.slice(1)] : words

/** git's global options, with whether each takes a separate value: `git -C dir commit` is `git commit` to a rule. */
const gitGlobalOptions: ReadonlyMap<string, boolean> = new Map([
  ["-C", true], ["-c", true], ["--config-env", true], ["--git-dir", true], ["--work-tree", true], ["--namespace", true],
  ["--exec-path", false], ["-p", false], ["--paginate", false], ["-P", false], ["--no-pager", false], ["--bare", false],
  ["--no-replace-objects", false], ["--literal-pathspecs", false], ["--glob-pathspecs", false],
  ["--noglob-pathspecs", false], ["--icase-pathspecs", false], ["--no-optional-locks", false], ["--no-lazy-fetch", false],
  ["--no-advice", false]
])

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

/** The word lists a deny/ask rule is tried against for one simple command (nested scripts included). */
const denyCandidates = (words: ReadonlyArray<string>, depth: number): ReadonlyArray<string> => {
  const candidates = new Set<string>()
  const add = (list: ReadonlyArray<string>) => {
    if (list.length > 0) candidates.add(list.join(" "))
  }
  add(words)
  const stripped = stripWrappers(words)
  add(stripped)
  const named = withBaseName(stripped)
  add(named)
  add(stripWrappers(named))
  add(withoutGitGlobals(stripWrappers(named)))
  const name = named[0]
  if (depth < 3 && name !== undefined) {
    // The script of `eval ...` or `sh -c ...`, analysed in turn.
    let script: string | undefined
    if (name === "eval") script = named.slice(1).join(" ")
    else if (shells.has(name)) {
      const flag = named.findIndex((word, index) => index > 0 && /^-[a-zA-Z]*c[a-zA-Z]*$/.test(word))
      if (flag !== -1) script = named[flag + 1]
    }
    if (script !== undefined) {
      for (const candidate of scriptCandidates(script, depth + 1)) candidates.add(candidate)
    }
    if (name === "find") {
      // `find ... -exec cmd args ;` runs `cmd args`.
      named.forEach((word, index) => {
        if (["-exec", "-execdir", "-ok", "-okdir"].includes(word)) {
          const rest = named.slice(index + 1)
          const end = rest.findIndex((w) => w === ";" || w === "+")
          for (const candidate of denyCandidates(end === -1 ? rest : rest.slice(0, end), depth + 1)) {
            candidates.add(candidate)
          }
        }
      })
    }
  }
  return [...candidates]
}

/** Best-effort words of a raw string: split at shell operators, quotes dropped. */
const rawSegments = (raw: string): ReadonlyArray<ReadonlyArray<string>> =>
  raw.split(/&&|\|\||\$\(|<\(|>\(|[;&|\n`(){}]/)
    .map((segment) => segment.replace(/["'\\]/g, "").split(/\s+/).filter((word) => word.length > 0))
    .filter((words) => words.length > 0)

const scriptCandidates = (script: string, depth: number): ReadonlyArray<string> => {
  const analysis = analyze(script)
  const lists = analysis._tag === "Parsed"
    ? analysis.commands.map((command) => command.words.map((word) => word.value))
    : [...rawSegments(script), script.split(/\s+/).filter((word) => word.length > 0)]
  return lists.flatMap((words) => denyCandidates(words, depth))
}

// -----------------------------------------------------------------------------
// allow
// -----------------------------------------------------------------------------

const harmlessVariables: ReadonlySet<string> = new Set([
  "NODE_ENV", "RUST_LOG", "RUST_BACKTRACE", "CI", "NO_COLOR", "FORCE_COLOR", "LANG", "LC_ALL", "TZ",
  "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "COLUMNS", "TERM"
])

/** The normalised string an allow rule must match, or why no allow rule (but `*`) can match. */
const allowSubject = (command: SimpleCommand): { readonly subject: string } | { readonly problem: string } => {
  for (const assignment of command.assignments) {
    if (!harmlessVariables.has(assignment.name) || assignment.value === undefined || !assignment.value.literal) {
      return { problem: `${command.source} (assigns ${assignment.name})` }
    }
  }
  for (const redirection of command.redirections) {
    if (redirectionProblem(redirection) !== undefined) return { problem: `${command.source} (${redirection.text})` }
  }
  const name = command.words[0]
  if (name === undefined) {
    return command.assignments.length === 0 ? { subject: "" } : { problem: command.source }
  }
  if (!name.literal) return { problem: `${command.source} (the command name is not literal)` }
  return { subject: command.words.map((word) => word.value).join(" ") }
}

const structuralProblems = (analysis: ParsedShell): ReadonlyArray<string> => {
  const features = analysis.features
  const problems: Array<string> = []
  for (const name of features.functionDefinitions) problems.push(`function definition ${name}()`)
  for (const name of features.loopVariables) {
    if (sensitiveVariable.test(name)) problems.push(`loop assigning ${name}`)
  }
  if (features.assigningExpansions) problems.push("an expansion assigning a variable")
  for (const redirection of features.compoundRedirections) {
    if (redirectionProblem(redirection) !== undefined) problems.push(redirection.text)
  }
  return problems
}

// -----------------------------------------------------------------------------
// decision
// -----------------------------------------------------------------------------

const firstMatch = (
  rules: ReadonlyArray<RuleRef>,
  candidates: ReadonlyArray<string>
): { readonly rule: RuleRef; readonly subcommand: string } | undefined => {
  for (const rule of rules) {
    const predicate = compileRule(rule.content)
    const subcommand = candidates.find(predicate)
    if (subcommand !== undefined) return { rule, subcommand }
  }
  return undefined
}

/**
 * Decide a command against `Bash(...)` rule contents: deny, then ask, then allow (see the module
 * documentation). Never throws.
 *
 * @since 0.1.0
 * @category decision
 */
export const decideBashRules = (input: ShellAnalysis | string, rules: BashRules): BashRuleVerdict => {
  const analysis = typeof input === "string" ? analyze(input) : input
  const command = analysis.source
  const candidates: ReadonlyArray<string> = analysis._tag === "Parsed"
    ? analysis.commands.flatMap((simple) => denyCandidates(simple.words.map((word) => word.value), 0))
    : [
      ...scriptCandidates(command.length > 100_000 ? command.slice(0, 100_000) : command, 1),
      command.trim()
    ]
  const denied = firstMatch(rules.deny, candidates)
  if (denied !== undefined) return BashRuleVerdict.Deny(denied)
  const asked = firstMatch(rules.ask, candidates)
  if (asked !== undefined) return BashRuleVerdict.Ask(asked)
  if (analysis._tag === "Unanalyzable") return BashRuleVerdict.NoMatch({ unmatched: [command] })
  const unknowable = undecidedRule(analysis.commands, [...rules.deny, ...rules.ask])
  if (unknowable !== undefined) return BashRuleVerdict.Ask(unknowable)

  const everything = rules.allow.find((rule) => isMatchAll(rule.content))
  const used: Array<RuleRef> = []
  const unmatched: Array<string> = []
  if (everything !== undefined) {
    used.push(everything)
  } else {
    unmatched.push(...structuralProblems(analysis))
    for (const simple of analysis.commands) {
      const subject = allowSubject(simple)
      if ("problem" in subject) {
        unmatched.push(subject.problem)
        continue
      }
      if (subject.subject === "") continue
      const rule = rules.allow.find((candidate) => compileRule(candidate.content)(subject.subject))
      if (rule === undefined) unmatched.push(simple.source)
      else if (!used.includes(rule)) used.push(rule)
    }
  }
  return unmatched.length === 0 && used.length > 0
    ? BashRuleVerdict.Allow({ rules: used })
    : BashRuleVerdict.NoMatch({ unmatched })
}

/**
 * Deny and ask rules fail closed. A simple command whose words are only known when it runs (`$g push`, `git $x`,
 * `git \`echo push\``, a glob) — or a git command that defines an alias on its own command line
 * (`git -c alias.p=push p`) — might be one a rule names. When a deny or ask rule starts with the words that are
 * known, the command is asked about rather than let through on a text that does not match.
 */
const undecidedRule = (commands: ReadonlyArray<SimpleCommand>, rules: ReadonlyArray<RuleRef>): { readonly rule: RuleRef; readonly subcommand: string } | undefined => {
  if (rules.length === 0) return undefined
  for (const simple of commands) {
    const values = simple.words.map((word) => word.value)
    const definesAlias = values[0] === "git" && values.some((value, i) =>
      (values[i - 1] === "-c" || values[i - 1] === "--config-env") && value.startsWith("alias.") || /^--config-env=alias\./.test(value))
    const opaque = simple.words.findIndex((word) => !word.literal)
    if (opaque === -1 && !definesAlias) continue
    const known = definesAlias ? ["git"] : values.slice(0, opaque)
    const stripped = withoutGitGlobals(stripWrappers(withBaseName(known))).join(" ")
    const rule = rules.find((candidate) => {
      const content = candidate.content.trim().replace(/:\*$/, "")
      const literalPart = content.split("*")[0]!.trim()
      return stripped === "" || literalPart.startsWith(stripped) || stripped.startsWith(literalPart)
    })
    if (rule !== undefined) return { rule, subcommand: simple.source }
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
  "git", "npm", "pnpm", "yarn", "bun", "npx", "cargo", "go", "docker", "kubectl", "gh", "pip", "pip3", "uv",
  "poetry", "dotnet", "mvn", "gradle", "./gradlew", "terraform", "helm", "brew", "make", "deno", "rustup",
  "swift", "mix", "bundle", "rake", "composer", "nx", "turbo", "pytest", "tsc", "vitest", "jest"
])

/** Tools whose `run`/`exec`-like subcommand is followed by a script name worth keeping. */
const runSubcommands: ReadonlySet<string> = new Set(["run", "exec", "x", "test", "compose"])

/** Commands for which a prefix rule would grant arbitrary execution: suggest the exact command instead. */
const unsafePrefixes: ReadonlySet<string> = new Set([
  "eval", "exec", "source", ".", "sh", "bash", "zsh", "dash", "fish", "python", "python3", "node", "perl", "ruby",
  "php", "awk", "gawk", "xargs", "env", "command", "builtin", "sudo", "doas", "su", "timeout", "nice", "nohup",
  "time", "stdbuf", "find", "sed",
  "rm", "rmdir", "shred", "dd", "chmod", "chown", "chgrp", "ln", "truncate", "ksh", "csh", "tcsh", "ash", "busybox",
  "pwsh", "python2", "pypy", "pypy3", "ipython", "irb", "lua", "luajit", "Rscript", "julia", "tclsh", "expect", "osascript"
])

/** Subcommands whose prefix would grant code execution or configuration (`git config core.fsmonitor=...`): exact only. */
const exactSubcommands: ReadonlySet<string> = new Set([
  "git config", "git submodule", "git filter-branch", "git update-index", "npm config", "npm exec", "npm x", "pnpm config",
  "pnpm exec", "pnpm dlx", "yarn config", "yarn exec", "yarn dlx", "bun x", "docker run", "docker exec", "kubectl exec",
  "gh alias", "gh extension", "go env", "cargo install", "pip install", "pip3 install", "uv run", "poetry run"
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
  const subject = allowSubject(simple)
  if ("problem" in subject || subject.subject === "") return Option.none()
  const words = simple.words.map((word) => word.value)
  if (!simple.words.every((word) => word.literal)) return Option.none()
  const name = words[0]!
  if (!isPlainWord(name) || name.includes(":")) return Option.none()
  const exact = words.join(" ")
  // Keep the command, its subcommand, and the script name after `run`-like subcommands.
  // A program named by path (`/usr/bin/rm`) is judged by its name, and never gets a whole-program prefix.
  if (unsafePrefixes.has(name.slice(name.lastIndexOf("/") + 1)) || (name.includes("/") && !subcommandTools.has(name))) return Option.some(exact)
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
  const prefix = kept.join(" ")
  return Option.some(prefix.includes(":") ? exact : `${prefix}:*`)
}
