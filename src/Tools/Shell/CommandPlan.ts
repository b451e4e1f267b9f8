/**
 * The Bash tool's view of one command, bound once per call: the command is parsed once ({@link planCommand}) and
 * every later question — read-only? which traits and claims? what do the `Bash(...)` rules say? which rule to
 * suggest? what does exit code 1 mean? — is answered from that one analysis. `Tools/Bash.ts` keeps the tool
 * (schema, plan, call, presentation); the shell's grammar is `Analysis`, the positive list `ReadOnly`, the rule
 * language `BashRule`.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { isWithin, realPathSync } from "../../Session/Workspace.js"
import { PermissionCheck } from "../../Tool/Permission.js"
import { printRule } from "../../Tool/Rule.js"
import * as Tool from "../../Tool/Tool.js"
import { analyze } from "./Analysis.js"
import type { ShellAnalysis, ShellRedirection, ShellWord } from "./Analysis.js"
import { BashRuleVerdict, decideBashRules } from "./BashRule.js"
import type { RuleRef } from "./BashRule.js"
import { fileCommandPaths } from "./FileCommands.js"
import { gitTopOf } from "./internal/gitRepository.js"
import {
  classifyReadOnly,
  operandsOf,
  readsBeyondArguments,
  simpleCommandProblemWith,
  structuralProblem
} from "./ReadOnly.js"
import { suggestRules } from "./Suggestions.js"

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
  /**
   * The command is made of simple file commands (`mkdir`, `touch`, `mv`, `cp`, see `Shell/FileCommands`) and
   * read-only commands, and every path they touch is inside the workspace: its claims are then `file:` write claims
   * on exactly those paths (symlinks resolved; both spellings when they differ) and reads of the workspace, instead
   * of the whole world, so acceptEdits mode accepts it as an edit inside the workspace.
   */
  readonly fileCommand: boolean
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

const readOnlyOf = (analysis: ShellAnalysis, directories: ReadonlyArray<string>): boolean => {
  try {
    return classifyReadOnly(analysis, { directories }).readOnly
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
  const directories = safely(() => directoriesOf(analysis, place), undefined)
  const readOnly = readOnlyOf(analysis, directories ?? [])
  const files = readOnly || directories === undefined
    ? undefined
    : safely(() => fileCommandClaims(analysis, place, directories), undefined)
  const claims = files ?? claimsFrom(analysis, readOnly, place, directories)
  const lists = readOnly && claims.every((claim) => claim.resource !== "file:/") && listsOnly(analysis)
  return {
    command,
    analysis,
    readOnly,
    fileCommand: files !== undefined,
    traits: traitsFrom(analysis, readOnly),
    claims,
    permissionCheck: lists
      ? PermissionCheck.allow({ reason: "it only lists names inside the workspace, reading no file's content" })
      : permissionCheckFrom(analysis, directories ?? []),
    matchRules: (rules) => matchRulesFrom(analysis, rules, directories ?? []),
    exitOneMeaning: exitOneMeaningFrom(analysis)
  }
}

/** Commands that print names and facts, never a file's content (`ls`: a listing is not a read of a file). */
const listingCommands: ReadonlySet<string> = new Set([
  "ls",
  "pwd",
  "cd",
  "echo",
  "true",
  "false",
  ":",
  "whoami",
  "id",
  "uname",
  "nproc",
  "basename",
  "dirname"
])

/**
 * The command only lists: every simple command is a listing command and no redirection reads a file (`ls < .env`
 * reads it). Read deny rules then do not make it ask, as in Claude Code: they protect contents, not names.
 */
const listsOnly = (analysis: ShellAnalysis): boolean =>
  analysis._tag === "Parsed" && analysis.commands.length > 0 &&
  analysis.commands.every((simple) =>
    listingCommands.has(simple.words[0]?.literal === true ? simple.words[0].value : "") &&
    simple.redirections.every((redirection) => harmlessTarget(redirection))
  ) && analysis.features.compoundRedirections.every((redirection) => harmlessTarget(redirection))

const safely = <A, B>(f: () => A, fallback: B): A | B => {
  try {
    return f()
  } catch {
    return fallback
  }
}

// ---------------------------------------------------------------------------------------------------------------
// answers
// ---------------------------------------------------------------------------------------------------------------

const destructiveNames: ReadonlySet<string> = new Set([
  "rm",
  "rmdir",
  "shred",
  "dd",
  "mkfs",
  "truncate",
  "wipefs",
  "fdisk"
])
const networkNames: ReadonlySet<string> = new Set([
  "curl",
  "wget",
  "ssh",
  "scp",
  "sftp",
  "rsync",
  "nc",
  "ncat",
  "telnet",
  "ftp"
])

/**
 * The traits of a command: read-only (and so concurrency-safe) per `Shell/ReadOnly`; destructive and open-world by
 * a rough look at the command names (a hint for UIs, never a permission input).
 */
const traitsFrom = (analysis: ShellAnalysis, readOnly: boolean): Tool.Traits => {
  if (analysis._tag === "Unanalyzable") {
    return { readOnly, concurrencySafe: readOnly, destructive: false, openWorld: true }
  }
  const words = analysis.commands.map((simple) => simple.words.map((word) => word.value))
  const destructive = words.some(([name, ...args]) =>
    (name !== undefined && destructiveNames.has(name)) ||
    (name === "git" && (args.includes("--force") || args.includes("--hard") || (args[0] === "clean" && args.some((a) =>
      /^-[a-z]*f/.test(a)
    ))))
  )
  const openWorld = words.some(([name, sub]) =>
    (name !== undefined && networkNames.has(name)) ||
    (name === "git" && ["push", "pull", "fetch", "clone", "ls-remote"].includes(sub ?? ""))
  )
  return { readOnly, concurrencySafe: readOnly, destructive, openWorld }
}

/**
 * The real path of a path that may not exist yet: its nearest existing ancestor, resolved, with the rest appended; a
 * dangling symlink is followed to its target (`echo x > link` creates the target), so it is inside only when that
 * target is (`Session/Workspace.realPathSync`).
 */
const realOfNew = (absolute: string): string => realPathSync(absolute)

/** At most this many paths a glob may match before the answer is "too many to check". */
const MAX_GLOB_MATCHES = 1000

const globCharacters = /[*?[\]]/

/**
 * Every path a glob word can match now, and more: a superset of bash's expansion, so checking each one is never
 * less safe than checking what bash passes. Each segment with a wildcard matches every entry of its directory
 * that starts with the segment's literal text before its first wildcard and ends with the literal text after its
 * last (`*.md` the entries ending in `.md`, dot files and all; `lin[k]` every entry starting with `lin`); symlinks
 * are entries like any other (a matching glob library skipped symlinks to directories, which bash does match).
 * `undefined` when there are more than {@link MAX_GLOB_MATCHES}.
 */
const expandGlob = (pattern: string, cwd: string): ReadonlyArray<string> | undefined => {
  let current: Array<string> = [path.isAbsolute(pattern) ? "/" : cwd]
  for (const segment of pattern.split("/").filter((part) => part !== "")) {
    if (!globCharacters.test(segment)) {
      current = current.map((directory) => path.join(directory, segment))
      continue
    }
    const first = segment.search(/[*?[]/)
    const prefix = first === -1 ? "" : segment.slice(0, first)
    let last = -1
    for (let i = segment.length - 1; i >= 0; i--) {
      if ("*?]".includes(segment[i]!)) {
        last = i
        break
      }
    }
    const suffix = last === -1 ? "" : segment.slice(last + 1)
    const next: Array<string> = []
    for (const directory of current) {
      let entries: ReadonlyArray<string>
      try {
        entries = fs.readdirSync(directory)
      } catch {
        continue
      }
      for (const entry of entries) {
        if (entry.length >= prefix.length + suffix.length && entry.startsWith(prefix) && entry.endsWith(suffix)) {
          next.push(path.join(directory, entry))
        }
      }
      if (next.length > MAX_GLOB_MATCHES) return undefined
    }
    current = next
  }
  return current.filter((candidate) => {
    try {
      fs.lstatSync(candidate)
      return true
    } catch {
      return false
    }
  })
}

/** Read-only commands that read no file named by an argument: their arguments are not checked. */
const pathlessCommands: ReadonlySet<string> = new Set([
  "echo",
  "printf",
  "basename",
  "dirname",
  "true",
  "false",
  ":",
  "pwd",
  "whoami",
  "id",
  "uname",
  "hostname",
  "which",
  "type",
  "seq",
  "nproc",
  "tr",
  "df",
  "env",
  "printenv",
  "cd",
  "node",
  "nodejs",
  "python",
  "python3",
  "perl",
  "ruby",
  "bash",
  "deno",
  "npm"
])

/** At most this many directories a command's `cd`s may lead to are followed; more asks. */
const MAX_DIRECTORIES = 16

/**
 * The directories a command may run its simple commands in: the working directory and, for every `cd DIR`, DIR
 * from each directory reached so far (a `cd` in a subshell, a branch or a loop may or may not have happened, so
 * every combination counts). `undefined` when a `cd` goes somewhere the analysis cannot follow inside the
 * workspace: no operand (home), `-`, a non-literal or `..` operand, a directory outside the roots, too many.
 */
const directoriesOf = (analysis: ShellAnalysis, place: CommandPlace): ReadonlyArray<string> | undefined => {
  if (analysis._tag === "Unanalyzable") return undefined
  let directories: ReadonlyArray<string> = [place.cwd]
  for (const simple of analysis.commands) {
    const [name, ...args] = simple.words
    if (name?.literal !== true || name.value !== "cd") continue
    const operands = args.filter((word) => !(word.literal && /^-[LPe@]+$/.test(word.value)))
    const target = operands[0]
    if (
      operands.length !== 1 || target === undefined || !target.literal || target.value === "-" ||
      target.value.startsWith("~")
    ) return undefined
    if (target.value.split("/").includes("..")) return undefined
    const next = new Set(directories)
    for (const directory of directories) {
      const absolute = path.resolve(directory, target.value)
      const real = realOfNew(absolute)
      if (!place.roots.some((root) => isWithin(root, absolute) && isWithin(root, real))) return undefined
      next.add(absolute)
    }
    if (next.size > MAX_DIRECTORIES) return undefined
    directories = [...next]
  }
  return directories
}

/**
 * Resolves path-like words of a command to absolute paths, against every directory the command may run in:
 * `~`, `$PWD`, loop variables, globs (what they match now, through symlinks). `undefined` when a word could be
 * anywhere (another expansion, a brace expansion, `..`, `~user`), when a glob matches nothing (bash would pass the
 * pattern, and what it names later is unknown) or too much, or when a match could be read as an option.
 */
const resolverOf = (
  analysis: Extract<ShellAnalysis, { _tag: "Parsed" }>,
  place: CommandPlace,
  directories: ReadonlyArray<string>
) => {
  const loops = new Map<string, ReadonlyArray<ShellWord> | undefined>()
  for (const { variable, words } of analysis.features.loopLists) {
    const known = loops.has(variable) ? loops.get(variable) : []
    loops.set(variable, known === undefined || words === undefined ? undefined : [...known, ...words])
  }
  const literalPaths = (candidate: string): ReadonlyArray<string> | undefined => {
    if (candidate === "") return []
    // `~user`, `~+`, `~-`: bash expands them to other directories.
    if (candidate.startsWith("~") && candidate !== "~" && !candidate.startsWith("~/")) return undefined
    // The kernel follows a symlink before `..`, path.resolve removes `..` first: a `..` segment is not checked, it
    // asks.
    if (candidate.split("/").includes("..")) return undefined
    const expanded = candidate === "~"
      ? place.home
      : candidate.startsWith("~/")
      ? path.join(place.home, candidate.slice(2))
      : candidate
    return path.isAbsolute(expanded) ? [expanded] : directories.map((directory) => path.resolve(directory, expanded))
  }
  const resolveWord = (word: ShellWord, depth: number): ReadonlyArray<string> | undefined => {
    let value = word.value
    if (word.expansion) {
      // A process substitution on its own is a pipe (`/dev/fd/63`); its commands are checked as commands.
      if (word.prefix === "/dev/fd/" && /^[<>]\(.*\)$/s.test(word.text)) return []
      const loop = /^"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?$/.exec(word.text)?.[1]
      if (loop !== undefined && loops.has(loop) && depth === 0) {
        const words = loops.get(loop)
        if (words === undefined) return undefined
        const all: Array<string> = []
        for (const listed of words) {
          const resolved = resolveWord(listed, depth + 1)
          if (resolved === undefined) return undefined
          all.push(...resolved)
        }
        return all
      }
      const pwd = /^"?\$\{?PWD\}?"?(?=\/|$)/.exec(word.text)
      if (pwd === null) return undefined
      // Double quotes only keep the word whole; anything else that bash would read specially asks.
      const rest = word.text.slice(pwd[0].length).replaceAll("\"", "")
      if (/[$`'\\*?[{~]/.test(rest) || rest.split("/").includes("..")) return undefined
      return directories.map((directory) => path.join(directory, rest))
    }
    // A brace expansion can build any path (`{.,x}{.,y}/secret` is `../secret`): anywhere.
    if (word.brace) return undefined
    if (word.glob) {
      if (value.split("/").includes("..")) return undefined
      const all: Array<string> = []
      for (const directory of directories) {
        const matches = expandGlob(value, directory)
        if (matches === undefined || matches.length === 0) return undefined
        // A match bash would pass as an option (`*` meeting a file named `-R`).
        if (word.prefix === "" && matches.some((match) => path.relative(directory, match).startsWith("-"))) {
          return undefined
        }
        all.push(...matches)
      }
      return all
    }
    const option = /^-[^=]*=(.*)$/s.exec(value)
    if (option !== null) value = option[1]!
    // `-f/etc/x`: an attached option value that looks like a path.
    else if (value.startsWith("-")) return !value.includes("/") && !value.includes("~") ? [] : undefined
    return literalPaths(value)
  }
  return (word: ShellWord): ReadonlyArray<string> | undefined => resolveWord(word, 0)
}

const insideRoots = (place: CommandPlace, absolute: string, real: string): boolean =>
  place.roots.some((root) => isWithin(root, absolute) && isWithin(root, real))

const harmlessTarget = (redirection: ShellRedirection): boolean =>
  redirection.target === undefined ||
  redirection.hereDoc !== undefined ||
  redirection.operator === "<<<" ||
  /^(?:\d+|-)$/.test(redirection.target.value) ||
  /^\/dev\/(?:null|stdout|stderr)$/.test(redirection.target.value)

/**
 * Whether every file a read-only command names lies inside the workspace. Every literal word and redirection
 * target counts as a possible path (and an option's value after `=`), resolved against every directory the command
 * may run in and through symlinks when it exists; globs by what they match now; `$PWD` is each of those
 * directories, and a `for` variable is inside when every word of its list is. Any other expansion (`$HOME/x`,
 * `$(...)`) could be anywhere: outside. A command whose reads go beyond its words (`grep -R`, `sha256sum -c`, jq
 * `import`; see `ReadOnly.readsBeyondArguments`) is never inside.
 */
const staysInside = (
  analysis: ShellAnalysis,
  place: CommandPlace,
  directories: ReadonlyArray<string> | undefined
): boolean => namedPaths(analysis, place, directories) !== undefined

/**
 * The paths a read-only command names (lexical and real spellings), when they all lie inside the workspace (see
 * {@link staysInside}); `undefined` when one may not.
 */
const namedPaths = (
  analysis: ShellAnalysis,
  place: CommandPlace,
  directories: ReadonlyArray<string> | undefined
): ReadonlyArray<string> | undefined => {
  if (analysis._tag === "Unanalyzable" || directories === undefined) return undefined
  const resolve = resolverOf(analysis, place, directories)
  const named = new Set<string>()
  const wordInside = (word: ShellWord): boolean => {
    const paths = resolve(word)
    if (paths === undefined) return false
    for (const absolute of paths) {
      const real = realOfNew(absolute)
      if (!insideRoots(place, absolute, real)) return false
      named.add(absolute)
      named.add(real)
    }
    return true
  }
  // git reads `HEAD:path`, `:/path` and `:(top)path` from the top of the repository, not from the working directory:
  // when that top is not inside the workspace (the workspace is a sub-directory of a repository), such a word is not.
  const gitReachesAbove = (simple: (typeof analysis.commands)[number]): boolean =>
    simple.words[0]?.value === "git" && simple.words.slice(1).some((word) =>
      !word.literal || word.value.includes(":")
    ) &&
    directories.some((directory) => {
      const top = gitTopOf(directory)
      return top !== undefined && !place.roots.some((root) => isWithin(root, top) && isWithin(root, realOfNew(top)))
    })
  const inside = !analysis.commands.some(gitReachesAbove) &&
    analysis.commands.every((simple) =>
      readsBeyondArguments(simple) === undefined &&
      (pathlessCommands.has(simple.words[0]?.value ?? "") || simple.words.slice(1).every(wordInside)) &&
      simple.redirections.every((redirection) => harmlessTarget(redirection) || wordInside(redirection.target!))
    ) &&
    analysis.features.compoundRedirections.every((redirection) =>
      harmlessTarget(redirection) || wordInside(redirection.target!)
    )
  return inside ? [...named] : undefined
}

/**
 * The claims of a command. Read-only and naming only files inside the workspace: a read of the workspace roots (it
 * runs alongside other reads, and the policy may auto-allow it). Read-only but reaching outside (`cat /etc/x`,
 * `ls ..`, `cat $HOME/.ssh/id_rsa`): a read of every file, `file:/`, which no workspace contains, so a person or a
 * rule decides. Anything else: the whole world.
 */
const claimsFrom = (
  analysis: ShellAnalysis,
  readOnly: boolean,
  place: CommandPlace,
  directories: ReadonlyArray<string> | undefined
): ReadonlyArray<Tool.Claim> => {
  if (!readOnly) return [Tool.Claim.world]
  const named = safely(() => namedPaths(analysis, place, directories), undefined)
  if (named === undefined) return [Tool.Claim.read("file:/")]
  // The roots for scheduling; the files it names too, so that Read deny rules can deny `cat .env` outright.
  const roots = new Set(place.roots)
  return [
    ...place.roots.map((root) => Tool.Claim.read(`file:${root}`)),
    ...named.filter((file) => !roots.has(file)).map((file) => Tool.Claim.read(`file:${file}`))
  ]
}

/**
 * The claims of a command made of simple file commands (`Shell/FileCommands`) and read-only commands, when every
 * path is inside the workspace: a write (or, for `cp` sources, a read) of each path, under its lexical and its real
 * spelling, and a read of the roots for the read-only parts. `undefined` when the command is anything else.
 */
const fileCommandClaims = (
  analysis: ShellAnalysis,
  place: CommandPlace,
  directories: ReadonlyArray<string>
): ReadonlyArray<Tool.Claim> | undefined => {
  if (analysis._tag === "Unanalyzable" || structuralProblem(analysis) !== undefined) return undefined
  const isOperand = operandsOf(analysis, { directories })
  const resolve = resolverOf(analysis, place, directories)
  const claims: Array<Tool.Claim> = []
  let files = 0
  for (const simple of analysis.commands) {
    if (simpleCommandProblemWith(simple, isOperand, { directories }) === undefined) {
      const single: ShellAnalysis = { ...analysis, commands: [simple] }
      if (!staysInside(single, place, directories)) return undefined
      claims.push(...place.roots.map((root) => Tool.Claim.read(`file:${root}`)))
      continue
    }
    const paths = fileCommandPaths(simple, isOperand)
    if (typeof paths === "string") return undefined
    files++
    for (const { access, word } of paths) {
      const resolved = resolve(word)
      if (resolved === undefined || resolved.length === 0) return undefined
      for (const absolute of resolved) {
        const real = realOfNew(absolute)
        if (!insideRoots(place, absolute, real)) return undefined
        const make = access === "write" ? Tool.Claim.write : Tool.Claim.read
        claims.push(make(`file:${absolute}`))
        if (real !== absolute) claims.push(make(`file:${real}`))
      }
    }
  }
  return files > 0 ? claims : undefined
}

/**
 * The tool's own permission view: ask, with the reason, for a command the analysis cannot vouch for; otherwise no
 * opinion (the policy's rules, modes and read-only auto-allow decide), with a suggested rule for the prompt.
 */
const permissionCheckFrom = (
  analysis: ShellAnalysis,
  directories: ReadonlyArray<string>
): PermissionCheck<never> => {
  if (analysis._tag === "Unanalyzable") {
    return PermissionCheck.ask(
      `This command cannot be analysed (${analysis.reason}); approve it only if you have read it.`,
      undefined,
      { overridable: false }
    )
  }
  let contents: ReadonlyArray<string>
  try {
    // One rule for a simple command; one per part of a compound one, when together they allow it (Shell/Suggestions).
    contents = suggestRules(analysis, directories)
  } catch {
    contents = []
  }
  return contents.length === 0
    ? PermissionCheck.passthrough()
    : PermissionCheck.passthrough(contents.map((content) => printRule({ toolName: "Bash", content })))
}

/**
 * Decides `Bash(...)` rules for a command with `Shell/BashRule`, reporting the policy's own rule values back.
 */
const matchRulesFrom = <R extends Tool.ContentRule>(
  analysis: ShellAnalysis,
  rules: Tool.RulesByBehavior<R>,
  directories: ReadonlyArray<string>
): Tool.RuleMatch<R> => {
  const original = new Map<RuleRef, R>()
  const refs = (list: ReadonlyArray<R>): ReadonlyArray<RuleRef> =>
    list.map((rule) => {
      const ref: RuleRef = { content: rule.content }
      original.set(ref, rule)
      return ref
    })
  const verdict = decideBashRules(
    analysis,
    { deny: refs(rules.deny), ask: refs(rules.ask), allow: refs(rules.allow) },
    { directories }
  )
  return BashRuleVerdict.$match(verdict, {
    Deny: ({ rule, subcommand }): Tool.RuleMatch<R> => ({
      _tag: "Deny",
      rule: original.get(rule)!,
      detail: `it matches \`${subcommand}\``
    }),
    Ask: ({ rule, subcommand }): Tool.RuleMatch<R> => ({
      _tag: "Ask",
      rule: original.get(rule)!,
      detail: `it matches \`${subcommand}\``
    }),
    Allow: ({ rules: used }): Tool.RuleMatch<R> => ({ _tag: "Allow", rules: used.map((rule) => original.get(rule)!) }),
    NoMatch: ({ unmatched }): Tool.RuleMatch<R> =>
      unmatched.length === 0
        ? { _tag: "NoMatch" }
        : { _tag: "NoMatch", detail: `no allow rule covers: ${unmatched.join("; ")}` }
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
export const claimsOf = (command: string, place: CommandPlace): ReadonlyArray<Tool.Claim> =>
  planCommand(command, place).claims

/**
 * The tool's own permission view of a command.
 *
 * @since 0.1.0
 * @category classification
 */
export const permissionCheckOf = (command: string): PermissionCheck<never> =>
  planCommand(command, nowhere).permissionCheck

/**
 * Decides `Bash(...)` rules for a command.
 *
 * @since 0.1.0
 * @category classification
 */
export const matchRules = <R extends Tool.ContentRule>(
  command: string,
  rules: Tool.RulesByBehavior<R>
): Tool.RuleMatch<R> => planCommand(command, nowhere).matchRules(rules)

/**
 * What exit code 1 of a command means when it is an answer.
 *
 * @since 0.1.0
 * @category classification
 */
export const exitOneMeaning = (command: string): string | undefined => planCommand(command, nowhere).exitOneMeaning
