/**
 * Read-only classification of Bash commands.
 *
 * A command is **read-only** when running it cannot change files, settings, processes or the shell session:
 * it may only read and print. The classification is an allowlist over the static analysis of
 * `./Analysis.ts`; anything it cannot vouch for is *not* read-only, with a reason naming the offending
 * simple command. It is a trait for scheduling and for plan mode, never a permission grant on its own.
 *
 * ## The whole command
 * - It must parse completely (no parse error at any depth, at most 10,000 characters, nesting at most 20).
 * - **Every** simple command counts, including those in `$(...)`, backticks, `<(...)`, `>(...)`, unquoted
 *   here-document bodies, subshells, groups, loops, conditionals and pipelines.
 * - Not read-only: function definitions, `coproc`, background jobs (`cmd &`, the job outlives the call),
 *   `(( ... ))` and `for (( ... ))`, `select`, expansions that assign (`${X:=v}`, `$((X=1))`, `$((i++))`),
 *   and `for` loops whose variable is a variable the shell or tools read (`PATH`, `IFS`, `LD_*`, `GIT_*`, ...).
 * - Transparent: `;`, `&&`, `||`, `|`, newlines, `!`, the `time` keyword, subshells, `{ ...; }`,
 *   `if`/`case`/`while`/`until`/`for`, `[[ ... ]]`.
 *
 * ## Each simple command
 * - No variable assignment at all, neither alone (`X=1`) nor as a prefix (`X=1 cmd`): prefixes such as
 *   `PAGER=`, `GIT_*=`, `LD_PRELOAD=`, `PATH=`, `IFS=` change what a command runs, and a bare assignment
 *   persists in a shell session. This is stricter than needed for most names, on purpose.
 * - Redirections: input (`<`), here-documents and here-strings are fine, except input from `/dev/tcp/*` and
 *   `/dev/udp/*` (bash opens a network connection) and non-literal input targets. Output (`>`, `>>`, `>|`,
 *   `&>`, `&>>`, `>&file`) only to `/dev/null`, `/dev/stdout` or `/dev/stderr`. Descriptor duplication and
 *   closing (`2>&1`, `>&2`, `2>&-`, `<&3`) is fine. `<>` (opens for writing) and `{fd}>` forms are not.
 * - The command name must be a plain literal word: not a variable, substitution, glob or brace expansion
 *   (`$CMD`, `*.sh`, `{rm,-rf,x}`), not path-qualified (`/bin/ls`, `./ls`), not quoted or escaped (`"ls"`,
 *   `\ls`, `$'\x6c\x73'`): these select a different program or bypass aliases and name checks.
 * - The name must be on the allowlist below, and its arguments must pass that command's rules. For commands
 *   with dangerous options, an argument that is not literal (variable, substitution, glob, brace expansion)
 *   before `--` is rejected: it could expand to one of those options (think of a file named `--pre=evil`).
 *   Long options are matched by unambiguous prefix, as GNU `getopt_long` and git do (`--out=f` is `--output=f`).
 *
 * ## The allowlist
 * - Any arguments: `ls`, `cat`, `head`, `tail`, `wc`, `pwd`, `echo`, `grep`, `egrep`, `fgrep`, `cut`, `tr`,
 *   `diff`, `cmp`, `stat`, `du`, `df`, `which`, `type`, `basename`, `dirname`, `realpath`, `readlink`,
 *   `whoami`, `id`, `uname`, `printenv`, `true`, `false`, `test`, `[`, `nl`, `od`, `tac`, `rev`, `seq`,
 *   `paste`, `comm`, `fold`, `nproc`, `md5sum`, `sha1sum`, `sha224sum`, `sha256sum`, `sha384sum`,
 *   `sha512sum`, `b2sum`, `cksum`, `jq` (jq reads files but cannot write them).
 * - `printf`: no `-v` (assigns a variable).
 * - `rg`: no `--pre`, `--pre-glob`, `--hostname-bin`, `-z`/`--search-zip` (they run other programs).
 * - `find`: none of `-exec`, `-execdir`, `-ok`, `-okdir`, `-delete`, `-fprint`, `-fprint0`, `-fprintf`,
 *   `-fls`; no non-literal argument anywhere (find has no `--` for its expression).
 * - `sed`: only with `-n`/`--quiet`/`--silent`, no `-i`/`--in-place`, no `-f` script file, and every script
 *   in a small print-only grammar: addresses (`N`, `$`, `/re/`, `\%re%`, `N~M`, `addr,+N`), `!`, `{ }`, and the
 *   commands `p P = l d D n N g G h H x z q Q y` and `s///` with flags among `g p i I m M` and digits (no
 *   `w`, `W`, `e`, `r`, `R`, no labels or branches). Anything else, including what this grammar does not
 *   understand, is not read-only.
 * - `sort`: no `-o`/`--output`, no `--compress-program`.
 * - `base64`: no `-o`/`--output` (BSD base64 writes its output file).
 * - `uniq`: at most one file operand (a second operand is an output file).
 * - `tree`: no `-o` (output file), no `-R` (writes `00Tree.html` files).
 * - `file`: no `-C`/`--compile` (writes a compiled magic file).
 * - `xxd`: no `-r`/`-revert`, at most one file operand (a second operand is an output file).
 * - `date`: no `-s`/`--set`, and no operand except a `+FORMAT` (an operand `MMDDhhmm...` sets the clock).
 * - `hostname`: no operand (it would set the host name), only display options.
 * - `git`, global options only `--no-pager`, `-P`, `--no-optional-locks`, `--literal-pathspecs`,
 *   `--glob-pathspecs`, `--noglob-pathspecs`, `--icase-pathspecs`, `--version` (so no `-c`, `--config-env`,
 *   `-C`, `--git-dir`, `--work-tree`, `--exec-path`, `-p`/`--paginate`, `--namespace`...), then one of:
 *   `status`, `log`, `show`, `diff`, `blame`, `shortlog`, `describe`, `rev-parse`, `ls-files`, `ls-tree`,
 *   `cat-file`, `grep`; `branch` with only `-a`/`--all`, `-r`/`--remotes`, `-v`/`-vv`/`--verbose`,
 *   `--show-current`, `--no-color`, and patterns only after `-l`/`--list`; `tag` with no arguments or with
 *   `-l`/`--list` (plus `-n`, `--sort=`, `--format=`, `--contains`, `--merged`, `--no-merged`, `--points-at`,
 *   `-i`); `remote` with no arguments, `-v`/`--verbose`, or `get-url`; `config` only reading (`--get`,
 *   `--get-all`, `--get-regexp`, `--get-urlmatch`, `--list`/`-l`, `get`, `list`; never `--edit`, `--add`,
 *   `--unset`, `set`...); `reflog` with no subcommand or `show`; `stash list`, `stash show`. In every
 *   subcommand: no `--output`, `--ext-diff`, `--textconv`, `--filters`, `-O`/`--open-files-in-pager`, and no
 *   non-literal argument before `--`. Caveat: git obeys the repository's own configuration, so a repository
 *   whose `.git/config` already sets `core.fsmonitor`, `core.pager` or a diff driver runs that code even for
 *   `git status`; writing `.git/config` is never read-only, so only a repository prepared beforehand can do it.
 *
 * ## Never read-only (non-exhaustive: anything not on the allowlist is not read-only)
 * `eval`, `exec`, `source`, `.`, shells and interpreters (`bash`, `sh`, `zsh`, `python*`, `node`, `perl`,
 * `ruby`, `awk`/`gawk`/`mawk`/`nawk`, ...), `xargs`, `env`, `command`, `builtin`, `timeout`, `nice`, `nohup`,
 * `time` as a command, `sudo`, `trap`, `alias`, `set`, `shopt`, `export`, `read`, `tee`, and `cd`/`pushd`/`popd`
 * (they change the working directory that later commands, and the workspace boundary, depend on).
 *
 * @since 0.1.0
 */
import { analyze } from "./Analysis.js"
import type { ShellAnalysis, ShellRedirection, ShellWord, SimpleCommand } from "./Analysis.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * The verdict: read-only, or not with a reason naming the offending simple command.
 *
 * @since 0.1.0
 * @category models
 */
export type ReadOnlyVerdict =
  | { readonly readOnly: true }
  | { readonly readOnly: false; readonly reason: string }

const readOnly: ReadOnlyVerdict = { readOnly: true }
const notReadOnly = (reason: string): ReadOnlyVerdict => ({ readOnly: false, reason })

/** A per-command argument rule: `undefined` when the arguments are acceptable, else why not. */
type ArgumentRule = (args: ReadonlyArray<ShellWord>) => string | undefined

// -----------------------------------------------------------------------------
// argument helpers
// -----------------------------------------------------------------------------

const anyArguments: ArgumentRule = () => undefined

const show = (word: ShellWord): string => `\`${word.text}\``

/** Words before the first literal `--`. */
const beforeDashDash = (args: ReadonlyArray<ShellWord>): ReadonlyArray<ShellWord> => {
  const index = args.findIndex((word) => word.literal && word.value === "--")
  return index === -1 ? args : args.slice(0, index)
}

const opaque = (word: ShellWord): string =>
  `argument ${show(word)} is not literal and could expand to an option`

interface ForbiddenOptions {
  /** Short option letters, searched in every `-xyz` cluster. */
  readonly short?: string
  /** Long options (`--name`), matched exactly or by any abbreviation (`--out` for `--output`). */
  readonly long?: ReadonlyArray<string>
  /** Options matched exactly or with an attached value (`-exec`, `-revert`). */
  readonly exact?: ReadonlyArray<string>
  /** Stop at `--` (true for getopt-style tools). */
  readonly stopAtDashDash?: boolean
  /** Explanation appended to the reason. */
  readonly why: string
}

const findForbidden = (args: ReadonlyArray<ShellWord>, options: ForbiddenOptions): string | undefined => {
  const words = options.stopAtDashDash === false ? args : beforeDashDash(args)
  for (const word of words) {
    if (!word.literal) return opaque(word)
    const value = word.value
    if (!value.startsWith("-") || value === "-") continue
    for (const exact of options.exact ?? []) {
      if (value === exact || value.startsWith(`${exact}=`)) return `\`${exact}\` ${options.why}`
    }
    if (value.startsWith("--")) {
      const name = value.split("=", 1)[0]!
      for (const long of options.long ?? []) {
        if (name === long || (name.length >= 3 && long.startsWith(name))) return `\`${long}\` ${options.why}`
      }
    } else if (options.short !== undefined) {
      for (const letter of value.slice(1)) {
        if (options.short.includes(letter)) return `\`-${letter}\` ${options.why}`
      }
    }
  }
  return undefined
}

const forbid = (options: ForbiddenOptions): ArgumentRule => (args) => findForbidden(args, options)

/** Non-option operands, skipping the separate values of options that take one. */
const operands = (
  args: ReadonlyArray<ShellWord>,
  takesValue: ReadonlySet<string>
): ReadonlyArray<ShellWord> => {
  const result: Array<ShellWord> = []
  let endOfOptions = false
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    if (endOfOptions || !word.value.startsWith("-") || word.value === "-") {
      result.push(word)
      continue
    }
    if (word.value === "--") endOfOptions = true
    else if (takesValue.has(word.value)) i++
  }
  return result
}

const allOf = (...rules: ReadonlyArray<ArgumentRule>): ArgumentRule => (args) => {
  for (const rule of rules) {
    const reason = rule(args)
    if (reason !== undefined) return reason
  }
  return undefined
}

const allLiteral: ArgumentRule = (args) => {
  const word = args.find((arg) => !arg.literal)
  return word === undefined ? undefined : opaque(word)
}

// -----------------------------------------------------------------------------
// sed scripts
// -----------------------------------------------------------------------------

/**
 * Whether a sed script stays within a print-only grammar. Deliberately small: anything it does not
 * understand is rejected.
 */
const sedScriptIsPrintOnly = (script: string): boolean => {
  let i = 0
  const n = script.length
  const skipBlank = () => {
    while (i < n && /[ \t]/.test(script[i]!)) i++
  }
  // A delimited section (`/re/`, `s/a/b/`): returns false when unterminated. Newlines are not allowed inside.
  const delimited = (delimiter: string): boolean => {
    while (i < n) {
      const c = script[i]!
      if (c === "\n") return false
      if (c === "\\") {
        i += 2
        continue
      }
      i++
      if (c === delimiter) return true
    }
    return false
  }
  const address = (): boolean => {
    const c = script[i]
    if (c === undefined) return true
    if (/[0-9]/.test(c)) {
      while (i < n && /[0-9]/.test(script[i]!)) i++
      if (script[i] === "~") {
        i++
        while (i < n && /[0-9]/.test(script[i]!)) i++
      }
      return true
    }
    if (c === "$") {
      i++
      return true
    }
    if (c === "/" || c === "\\") {
      let delimiter = "/"
      if (c === "\\") {
        delimiter = script[i + 1] ?? ""
        if (delimiter === "" || delimiter === "\n" || delimiter === "\\") return false
        i += 2
      } else i++
      if (!delimited(delimiter)) return false
      while (i < n && /[IM]/.test(script[i]!)) i++
      return true
    }
    return true
  }
  let depth = 0
  while (i < n) {
    skipBlank()
    const c = script[i]
    if (c === undefined) break
    if (c === ";" || c === "\n") {
      i++
      continue
    }
    if (c === "}") {
      if (depth === 0) return false
      depth--
      i++
      continue
    }
    const start = i
    if (!address()) return false
    if (i > start) {
      skipBlank()
      if (script[i] === ",") {
        i++
        skipBlank()
        if (script[i] === "+" || script[i] === "~") {
          i++
          if (!/[0-9]/.test(script[i] ?? "")) return false
          while (i < n && /[0-9]/.test(script[i]!)) i++
        } else {
          const second = i
          if (!address() || i === second) return false
        }
      }
    }
    skipBlank()
    while (script[i] === "!") {
      i++
      skipBlank()
    }
    const command = script[i]
    if (command === undefined) return false
    i++
    if (command === "{") {
      depth++
      continue
    }
    if ("pP=ldDnNgGhHxz".includes(command)) {
      // fall through to the end-of-command check
    } else if (command === "q" || command === "Q") {
      skipBlank()
      while (i < n && /[0-9]/.test(script[i]!)) i++
    } else if (command === "s" || command === "y") {
      const delimiter = script[i]
      if (delimiter === undefined || delimiter === "\n" || delimiter === "\\" || delimiter === " ") return false
      i++
      if (!delimited(delimiter) || !delimited(delimiter)) return false
      if (command === "s") {
        while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++
      }
    } else return false
    skipBlank()
    const end = script[i]
    if (end !== undefined && end !== ";" && end !== "\n" && end !== "}") return false
  }
  return depth === 0
}

const sedRule: ArgumentRule = (args) => {
  let quiet = false
  const scripts: Array<string> = []
  let endOfOptions = false
  const positional: Array<ShellWord> = []
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    const value = word.value
    if (endOfOptions || !value.startsWith("-") || value === "-") {
      if (!word.literal && scripts.length === 0 && positional.length === 0) return opaque(word)
      positional.push(word)
      continue
    }
    if (!word.literal) return opaque(word)
    if (value === "--") {
      endOfOptions = true
      continue
    }
    if (value.startsWith("--")) {
      const name = value.split("=", 1)[0]!
      if (["--quiet", "--silent"].includes(name)) quiet = true
      else if (name === "--expression") {
        const script = value.includes("=") ? value.slice(value.indexOf("=") + 1) : args[++i]
        if (script === undefined) return "`sed --expression` needs a script"
        if (typeof script !== "string" && !script.literal) return opaque(script)
        scripts.push(typeof script === "string" ? script : script.value)
      } else if (["--regexp-extended", "--posix", "--separate", "--null-data", "--unbuffered", "--debug", "--sandbox"]
        .includes(name)) {
        // harmless
      } else return `\`sed ${name}\` is not known to be read-only`
      continue
    }
    // A short-option cluster: `-n`, `-nE`, `-ne 'p'`, `-e'p'`.
    for (let j = 1; j < value.length; j++) {
      const letter = value[j]!
      if (letter === "n") quiet = true
      else if ("Ersuz".includes(letter)) continue
      else if (letter === "e") {
        const rest = value.slice(j + 1)
        const next = rest.length > 0 ? undefined : args[++i]
        if (rest.length === 0 && next === undefined) return "`sed -e` needs a script"
        if (next !== undefined && !next.literal) return opaque(next)
        scripts.push(rest.length > 0 ? rest : next!.value)
        break
      } else if (letter === "i") return "`sed -i` edits files in place"
      else return `\`sed -${letter}\` is not known to be read-only`
    }
  }
  if (scripts.length === 0) {
    const first = positional[0]
    if (first === undefined) return "`sed` without a script"
    if (!first.literal) return opaque(first)
    scripts.push(first.value)
  }
  if (!quiet) return "`sed` is read-only only with `-n` and a print-only script"
  for (const script of scripts) {
    if (!sedScriptIsPrintOnly(script)) {
      return `\`sed\` script \`${script}\` is not recognised as print-only (it may write files or run commands)`
    }
  }
  return undefined
}

// -----------------------------------------------------------------------------
// other commands with rules
// -----------------------------------------------------------------------------

const uniqRule: ArgumentRule = allOf(allLiteral, (args) =>
  operands(args, new Set(["-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"])).length > 1
    ? "`uniq` with two operands writes its output to the second one"
    : undefined)

const xxdRule: ArgumentRule = allOf(
  forbid({ exact: ["-r", "-revert"], short: "r", why: "converts a hex dump back and can write files" }),
  (args) =>
    operands(args, new Set(["-c", "-cols", "-g", "-groupsize", "-l", "-len", "-o", "-offset", "-s", "-seek", "-n", "-name"]))
        .length > 1
      ? "`xxd` with two operands writes its output to the second one"
      : undefined
)

const dateRule: ArgumentRule = allOf(
  forbid({ short: "s", long: ["--set"], why: "sets the system clock" }),
  (args) => {
    const operand = operands(args, new Set(["-d", "--date", "-f", "--file", "-r", "--reference"]))
      .find((word) => !word.value.startsWith("+"))
    return operand === undefined ? undefined : `\`date ${operand.text}\` would set the system clock`
  }
)

const hostnameDisplayOptions: ReadonlySet<string> = new Set([
  "-f", "-s", "-i", "-I", "-d", "-A", "-a", "--fqdn", "--long", "--short", "--domain", "--ip-address",
  "--all-ip-addresses", "--all-fqdns", "--alias"
])
const hostnameRule: ArgumentRule = (args) => {
  const word = args.find((arg) => !arg.literal || !hostnameDisplayOptions.has(arg.value))
  return word === undefined ? undefined : `\`hostname ${word.text}\` may set the host name`
}

const printfRule: ArgumentRule = (args) => {
  const first = args[0]
  if (first === undefined) return undefined
  if (!first.literal) return opaque(first)
  return first.value.startsWith("-v") ? "`printf -v` assigns a shell variable" : undefined
}

// -----------------------------------------------------------------------------
// git
// -----------------------------------------------------------------------------

const gitSafeGlobals: ReadonlySet<string> = new Set([
  "--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs",
  "--icase-pathspecs", "--version"
])

const gitAlwaysForbidden: ForbiddenOptions = {
  short: "O",
  long: ["--output", "--ext-diff", "--textconv", "--filters", "--open-files-in-pager", "--exec"],
  why: "can write files or run external programs"
}

const flagsOnly = (allowed: ReadonlySet<string>, listFlags: ReadonlySet<string>, subcommand: string) =>
(args: ReadonlyArray<ShellWord>): string | undefined => {
  const listing = args.some((word) => listFlags.has(word.value))
  for (const word of args) {
    if (word.value.startsWith("-")) {
      const name = word.value.split("=", 1)[0]!
      if (!allowed.has(word.value) && !allowed.has(`${name}=`)) {
        return `\`git ${subcommand} ${word.text}\` is not a listing option`
      }
    } else if (!listing) return `\`git ${subcommand} ${word.text}\` would create or change a ${subcommand}`
  }
  return undefined
}

const gitSubcommands: Readonly<Record<string, ArgumentRule>> = {
  status: anyArguments,
  log: anyArguments,
  show: anyArguments,
  diff: anyArguments,
  blame: anyArguments,
  shortlog: anyArguments,
  describe: anyArguments,
  "rev-parse": anyArguments,
  "ls-files": anyArguments,
  "ls-tree": anyArguments,
  "cat-file": anyArguments,
  grep: anyArguments,
  branch: flagsOnly(
    new Set([
      "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--no-color", "-l", "--list"
    ]),
    new Set(["-l", "--list"]),
    "branch"
  ),
  tag: flagsOnly(
    new Set([
      "-l", "--list", "-n", "--sort=", "--format=", "--contains", "--no-contains", "--merged", "--no-merged",
      "--points-at", "-i", "--ignore-case", "--column", "--no-column"
    ]),
    new Set(["-l", "--list"]),
    "tag"
  ),
  remote: (args) => {
    if (args.length === 0) return undefined
    if (args.length === 1 && ["-v", "--verbose"].includes(args[0]!.value)) return undefined
    if (args[0]!.value === "get-url") return undefined
    return `\`git remote ${args[0]!.text}\` is not a listing form`
  },
  config: (args) => {
    // Read-only only in an explicit read form with the right number of operands: `git config NAME VALUE list` SETS
    // NAME (the last word is a value pattern), so a read word anywhere is not enough.
    const scopes = new Set(["--global", "--system", "--local", "--worktree", "--show-origin", "--show-scope", "--null", "-z",
      "--name-only", "--includes", "--no-includes"])
    const reads: Record<string, number> = { "--get": 2, "--get-all": 2, "--get-regexp": 2, "--get-urlmatch": 2, "--list": 0, "-l": 0 }
    const subcommands: Record<string, number> = { get: 1, list: 0 }
    const options = args.filter((word) => word.value.startsWith("-"))
    const operands = args.filter((word) => !word.value.startsWith("-"))
    const action = options.filter((word) => word.value in reads)
    const unknown = options.find((word) => !(word.value in reads) && !scopes.has(word.value))
    if (unknown !== undefined) return `\`git config ${unknown.text}\` is not a known read-only option`
    if (action.length === 1) {
      return operands.length <= reads[action[0]!.value]! ? undefined : "`git config` with more operands than its read form takes may change configuration"
    }
    const sub = operands[0]?.value
    if (action.length === 0 && sub !== undefined && sub in subcommands && operands.length - 1 <= subcommands[sub]!) return undefined
    return "`git config` without exactly one `--get`/`--list` form may change configuration"
  },
  reflog: (args) => {
    const first = args[0]
    if (first === undefined || first.value === "show" || first.value.startsWith("-")) {
      const bad = args.find((word) => ["expire", "delete", "drop", "write"].includes(word.value))
      return bad === undefined ? undefined : `\`git reflog ${bad.text}\` changes the reflog`
    }
    return `\`git reflog ${first.text}\` is not \`git reflog show\``
  },
  stash: (args) =>
    args[0] !== undefined && ["list", "show"].includes(args[0].value)
      ? undefined
      : "`git stash` other than `list`/`show` changes the stash or the working tree"
}

const gitRule: ArgumentRule = (args) => {
  let i = 0
  for (; i < args.length; i++) {
    const word = args[i]!
    if (!word.literal) return opaque(word)
    if (!word.value.startsWith("-")) break
    if (!gitSafeGlobals.has(word.value)) {
      return `git global option \`${word.value}\` can change configuration, repository or run programs`
    }
  }
  const subcommand = args[i]
  if (subcommand === undefined) return undefined
  const rule = gitSubcommands[subcommand.value]
  if (rule === undefined || !Object.hasOwn(gitSubcommands, subcommand.value)) {
    return `\`git ${subcommand.value}\` is not a read-only git subcommand`
  }
  const rest = args.slice(i + 1)
  return findForbidden(rest, gitAlwaysForbidden) ?? rule(rest)
}

// -----------------------------------------------------------------------------
// allowlist
// -----------------------------------------------------------------------------

const anyArgumentCommands = [
  "ls", "cat", "head", "tail", "pwd", "echo", "grep", "egrep", "fgrep", "cut", "tr", "diff", "cmp", "stat",
  "df", "which", "type", "basename", "dirname", "realpath", "readlink", "whoami", "id", "uname",
  "printenv", "true", "false", "test", "[", "nl", "od", "tac", "rev", "seq", "paste", "comm", "fold", "nproc",
  "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum", "cksum", "jq"
] as const

const allowlist: ReadonlyMap<string, ArgumentRule> = new Map<string, ArgumentRule>([
  ...anyArgumentCommands.map((name) => [name, anyArguments] as const),
  ["printf", printfRule],
  [
    "rg",
    forbid({
      short: "z",
      long: ["--pre", "--pre-glob", "--hostname-bin", "--search-zip"],
      why: "makes ripgrep run other programs"
    })
  ],
  [
    "find",
    forbid({
      exact: ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"],
      stopAtDashDash: false,
      why: "can run commands, delete files or write files"
    })
  ],
  ["sed", sedRule],
  [
    "sort",
    forbid({ short: "o", long: ["--output", "--compress-program", "--files0-from"], why: "writes files, runs a program, or reads a list of files no argument names" })
  ],
  // `--files0-from=-` reads the names of the files to read from standard input: no argument shows where it reaches.
  ["wc", forbid({ long: ["--files0-from"], why: "reads a list of files no argument names" })],
  ["du", forbid({ long: ["--files0-from"], why: "reads a list of files no argument names" })],
  ["uniq", uniqRule],
  ["base64", forbid({ short: "o", long: ["--output"], why: "writes an output file (BSD base64)" })],
  ["tree", forbid({ short: "oR", why: "writes output files" })],
  ["file", forbid({ short: "C", long: ["--compile"], why: "writes a compiled magic file" })],
  ["xxd", xxdRule],
  ["date", dateRule],
  ["hostname", hostnameRule],
  ["git", gitRule]
])

const neverReason = (name: string): string | undefined => {
  if (["eval", "exec", "source", "."].includes(name)) return "runs arbitrary code"
  if (/^(?:ba|da|z|k|c|tc|fi|mk)?sh$|^busybox$/.test(name)) return "is a shell and runs arbitrary code"
  if (/^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby|php|lua|tclsh|osascript)$/.test(name)) {
    return "is an interpreter and runs arbitrary code"
  }
  if (/^[gmn]?awk$/.test(name)) return "runs programs that can write files and run commands"
  if (["xargs", "env", "command", "builtin", "timeout", "nice", "nohup", "time", "sudo", "doas", "su", "stdbuf"]
    .includes(name)) return "runs another command"
  if (["trap", "alias", "unalias", "set", "shopt", "export", "declare", "typeset", "local", "readonly", "unset",
    "read", "mapfile", "readarray", "enable", "hash"].includes(name)) return "changes the shell session"
  if (["cd", "pushd", "popd"].includes(name)) return "changes the working directory for later commands"
  if (name === "tee") return "writes files"
  return undefined
}

// -----------------------------------------------------------------------------
// redirections and names
// -----------------------------------------------------------------------------

const harmlessOutputTargets: ReadonlySet<string> = new Set(["/dev/null", "/dev/stdout", "/dev/stderr"])

/**
 * Why a redirection is not read-only (writes a file, opens a network connection, assigns a descriptor
 * variable, has a non-literal target), or `undefined` when it only reads or duplicates descriptors.
 *
 * @since 0.1.0
 * @category classification
 */
export const redirectionProblem = (redirection: ShellRedirection): string | undefined => {
  if (redirection.fdVariable !== undefined) return `redirection \`${redirection.text}\` assigns a variable`
  const target = redirection.target
  switch (redirection.operator) {
    case "<<":
    case "<<-":
    case "<<<":
      return undefined
    case "<":
      if (target === undefined || !target.literal) return `input redirection \`${redirection.text}\` is not literal`
      return /^\/dev\/(?:tcp|udp)\//.test(target.value)
        ? `redirection \`${redirection.text}\` opens a network connection`
        : undefined
    case "<&":
    case ">&":
      if (target !== undefined && target.literal && /^(?:[0-9]+-?|-)$/.test(target.value)) return undefined
      if (redirection.operator === ">&" && target !== undefined && target.literal &&
        harmlessOutputTargets.has(target.value)) return undefined
      return `redirection \`${redirection.text}\` writes to a file`
    case "<>":
      return `redirection \`${redirection.text}\` opens a file for writing`
    default:
      if (target !== undefined && target.literal && harmlessOutputTargets.has(target.value)) return undefined
      return `output redirection \`${redirection.text}\` writes to a file`
  }
}

/**
 * Variables whose value changes which program runs or how the shell and tools behave.
 *
 * @since 0.1.0
 * @category classification
 */
export const sensitiveVariable = /^(?:PATH|IFS|BASH_ENV|ENV|PS4|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|HOME|LD_.*|GIT_.*|PAGER|EDITOR|VISUAL)$/

const commandProblem = (command: SimpleCommand): string | undefined => {
  if (command.assignments.length > 0) {
    return command.words.length === 0
      ? "assigns a shell variable"
      : `assigns \`${command.assignments.map((a) => a.name).join("`, `")}\` for the command`
  }
  for (const redirection of command.redirections) {
    const problem = redirectionProblem(redirection)
    if (problem !== undefined) return problem
  }
  const [name, ...args] = command.words
  if (name === undefined) return undefined
  if (!name.literal) return `the command name ${show(name)} is not literal`
  if (name.quoted) return `the command name ${show(name)} is quoted or escaped`
  if (name.value.includes("/")) return `the command name ${show(name)} is path-qualified`
  const never = neverReason(name.value)
  if (never !== undefined) return `\`${name.value}\` ${never}`
  const rule = allowlist.get(name.value)
  if (rule === undefined) return `\`${name.value}\` is not on the read-only allowlist`
  return rule(args)
}

// -----------------------------------------------------------------------------
// classification
// -----------------------------------------------------------------------------

/**
 * Classify a command (or its analysis) as read-only or not. See the module documentation for the rules.
 *
 * @since 0.1.0
 * @category classification
 */
export const classifyReadOnly = (input: ShellAnalysis | string): ReadOnlyVerdict => {
  const analysis = typeof input === "string" ? analyze(input) : input
  if (analysis._tag === "Unanalyzable") return notReadOnly(`the command cannot be analysed: ${analysis.reason}`)
  const features = analysis.features
  if (features.functionDefinitions.length > 0) {
    return notReadOnly(`defines the function \`${features.functionDefinitions[0]}\``)
  }
  if (features.coprocesses) return notReadOnly("starts a coprocess")
  if (features.background) return notReadOnly("runs a job in the background (`&`), which outlives the call")
  if (features.arithmeticCommands) return notReadOnly("`(( ... ))` can assign shell variables")
  if (features.selects) return notReadOnly("`select` reads a choice interactively")
  if (features.assigningExpansions) return notReadOnly("an expansion assigns a shell variable")
  const loopVariable = features.loopVariables.find((name) => sensitiveVariable.test(name))
  if (loopVariable !== undefined) return notReadOnly(`a loop assigns the sensitive variable \`${loopVariable}\``)
  for (const redirection of features.compoundRedirections) {
    const problem = redirectionProblem(redirection)
    if (problem !== undefined) return notReadOnly(problem)
  }
  for (const command of analysis.commands) {
    const problem = commandProblem(command)
    if (problem !== undefined) return notReadOnly(`\`${command.source}\`: ${problem}`)
  }
  return readOnly
}

/**
 * Why a single simple command is not read-only, or `undefined` when it is (ignoring the rest of its
 * compound command).
 *
 * @since 0.1.0
 * @category classification
 */
export const simpleCommandProblem = (command: SimpleCommand): string | undefined => commandProblem(command)
