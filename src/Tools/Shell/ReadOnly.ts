/**
 * Read-only classification of Bash commands.
 *
 * A command is **read-only** when running it cannot change files, settings, processes or the shell session:
 * it may only read and print. The classification is a positive list over the static analysis of
 * `./Analysis.ts`: a command, option or construct it does not know to be read-only is not read-only, with a
 * reason naming the offending simple command. It is a trait for scheduling and for plan mode, never a permission
 * grant on its own (the policy also needs the command's claims to stay inside the workspace).
 *
 * ## The whole command
 * - It must parse completely (no parse error at any depth, at most 10,000 characters, nesting at most 20).
 * - **Every** simple command counts, including those in `$(...)`, backticks, `<(...)`, `>(...)`, unquoted
 *   here-document bodies, subshells, groups, loops, conditionals and pipelines.
 * - Not read-only: function definitions, `coproc`, background jobs (`cmd &`, the job outlives the call),
 *   `(( ... ))` and `for (( ... ))`, `select`, expansions that assign (`${X:=v}`, `$((X=1))`, `$((i++))`),
 *   `for` loops whose variable is not a plain lower-case name (`PATH`, `IFS`, `PWD`, `http_proxy`...), and
 *   **anything bash evaluates a second time** unless the text is a literal number or a shell-kept numeric variable:
 *   `$(( ))`, `$[ ]`, subscripts, substring offsets, `${!x}`, `${x@P}`, `[[ -v ]]`, the numeric operators of
 *   `[[ ]]`, `test -v` and `test`'s numeric operators (see `Analysis.ShellFeatures.secondEvaluations`).
 * - Transparent: `;`, `&&`, `||`, `|`, newlines, `!`, the `time` keyword, subshells, `{ ...; }`,
 *   `if`/`case`/`while`/`until`/`for`, `[[ ... ]]`, and `cd` (each call runs in a fresh shell; the plan checks paths
 *   against every directory a `cd` may have entered).
 *
 * ## Each simple command
 * - No variable assignment at all, neither alone (`X=1`) nor as a prefix (`X=1 cmd`).
 * - Redirections: input (`<`), here-documents and here-strings are fine, except input from `/dev/tcp/*` and
 *   `/dev/udp/*` and non-literal input targets. Output only to `/dev/null`, `/dev/stdout` or `/dev/stderr`.
 *   Descriptor duplication and closing (`2>&1`, `>&2`, `2>&-`) is fine; `<>` and `{fd}>` are not.
 * - The command name must be a plain literal word: not a variable, substitution, glob or brace expansion, not
 *   path-qualified, not quoted or escaped.
 * - **Options by positive list.** Each command has the grammar of its read-only options (`Options.ts`): short
 *   flags and clusters, options with values (attached or separate), long options matched **exactly** (an
 *   abbreviation such as `--out` is an unknown option: getopt_long would read it as `--output`), and whether
 *   options may follow operands (GNU permutation: `xxd README.md -X` is two operands, `sort x -o y` is an option).
 *   Any option not on the list makes the command not read-only.
 * - **Operands by the command's grammar**: `uniq IN OUT`, `xxd IN OUT` and `date MMDDhhmm` write or set, so at most
 *   one operand (`date`: only `+FORMAT`; `hostname`: none).
 * - A word that is not literal could expand to an option. It counts as an operand only when what it expands to
 *   provably does not start with `-`: its known leading text does not (`src/*.ts`, `"$PWD/x"`, `./"$f"`) and no
 *   unquoted expansion can split it; a glob that starts with a wildcard (`*.md`, `*`) when no entry of the
 *   directory it lists starts with `-` (checked against the real directory at classification time, with the
 *   context's `listDirectory`; without a context such a glob is not read-only); `"$f"` for a loop variable whose
 *   every list word is such an operand. Anything else, before `--`, is not read-only.
 *
 * ## The positive list
 * Coreutils and friends with their read-only options: `ls`, `cat`, `head`, `tail`, `wc`, `pwd`, `echo`, `printf`
 * (no `-v`), `grep`/`egrep`/`fgrep`, `rg` (no `--pre`, `--pre-glob`, `--hostname-bin`, `-z`), `cut`, `tr`, `diff`,
 * `cmp`, `stat`, `du`, `df`, `which`, `type`, `basename`, `dirname`, `realpath`, `readlink`, `whoami`, `id`,
 * `uname`, `printenv`, `env` (without arguments: it prints the environment), `true`, `false`, `:`, `test`/`[`,
 * `nl`, `od`, `tac`, `rev`, `seq`, `paste`, `comm`, `fold`, `nproc`, the `*sum` family and `cksum`, `jq`, `find`
 * (expression primaries that only test and print), `sed` (`-n` with a print-only script), `sort` (no `-o`,
 * `--compress-program`, `--files0-from`, `-T`), `base64`, `uniq`, `tree` (no `-o`, `-R`, `--fromfile`), `file`
 * (no `-C`, `-p`), `xxd` (no `-r`), `date` (no `-s`), `hostname`, `cd`, version queries (`node --version`,
 * `python3 -V`, ...), and `git` with read-only global options and subcommands, each with its read-only options
 * (never `--output`, `--ext-diff`, `--textconv`, `-O`/`--open-files-in-pager`); `git config` only in a read form
 * (`--get`, `--list`, `get`, `list`, or a single `section.key` operand).
 *
 * ## Reads beyond the arguments
 * {@link readsBeyondArguments} names the read-only forms whose reads are not the files their words name:
 * recursion that follows symlinks (`grep -R`, `ls -LR`, `find -L`, `diff -r`, `du -L`, `rg -L`, `tree -l`), file
 * lists (`sha256sum -c LIST`, `file -f LIST`), and program text that names files (`jq` with `import`, `include`,
 * `-L` or `-f`). The plan never counts them as staying inside the workspace.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { analyze } from "./Analysis.js"
import type { ShellAnalysis, ShellRedirection, ShellWord, SimpleCommand } from "./Analysis.js"
import { hasOption, parseOptions } from "./Options.js"
import type { OptionGrammar, ParsedOptions } from "./Options.js"

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

/**
 * Where a command would run, for the words only the file system can decide: a glob starting with a wildcard is
 * an operand when no entry of the directory it lists starts with `-`.
 *
 * @since 0.2.0
 * @category models
 */
export interface ClassifyContext {
  /** The directories the command may run in: the working directory, and any `cd` target. */
  readonly directories: ReadonlyArray<string>
  /** Lists a directory's entries, `undefined` when it cannot. Default `fs.readdirSync`. */
  readonly listDirectory?: ((directory: string) => ReadonlyArray<string> | undefined) | undefined
}

const readOnly: ReadOnlyVerdict = { readOnly: true }
const notReadOnly = (reason: string): ReadOnlyVerdict => ({ readOnly: false, reason })

/** What a command's argument rule may ask about its words. */
interface Words {
  /** The word expands only to operands (never to something starting with `-`). */
  readonly isOperand: (word: ShellWord) => boolean
}

/** A per-command argument rule: `undefined` when the arguments are acceptable, else why not. */
type ArgumentRule = (args: ReadonlyArray<ShellWord>, words: Words) => string | undefined

// -----------------------------------------------------------------------------
// argument helpers
// -----------------------------------------------------------------------------

const anyArguments: ArgumentRule = () => undefined

const show = (word: ShellWord): string => `\`${word.text}\``

const opaque = (word: ShellWord): string => `argument ${show(word)} is not literal and could expand to an option`

/** A command read with a grammar, then checked by `check` (operand counts, option combinations). */
const grammar = (
  name: string,
  options: OptionGrammar,
  check?: (parsed: Extract<ParsedOptions, { _tag: "Parsed" }>, args: ReadonlyArray<ShellWord>) => string | undefined
): ArgumentRule =>
(args, words) => {
  // A command none of whose real options writes, runs or reads a list of files takes any non-literal word: whatever
  // option it expands to is read-only (its reads are the plan's question, and non-literal words never count as inside).
  const parsed = parseOptions(options, args, inertCommands.has(name) ? () => true : words.isOperand)
  if (parsed._tag === "Unknown") return `\`${name}\`: ${parsed.reason}, so it is not known to be read-only`
  return check?.(parsed, args)
}

const atMostOperands =
  (name: string, count: number, why: string) =>
  (parsed: Extract<ParsedOptions, { _tag: "Parsed" }>): string | undefined =>
    parsed.operands.length > count ? `\`${name}\` with ${parsed.operands.length} operands ${why}` : undefined

/**
 * Commands with no option at all (in their full, real option set) that writes, runs a program, or reads files no
 * argument names.
 */
const inertCommands: ReadonlySet<string> = new Set([
  "ls",
  "cat",
  "head",
  "tail",
  "pwd",
  "cut",
  "tr",
  "nl",
  "od",
  "tac",
  "rev",
  "paste",
  "comm",
  "fold",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "stat",
  "id",
  "uname",
  "printenv",
  "which",
  "cmp",
  "nproc",
  "seq",
  "whoami",
  "df",
  "type",
  "grep",
  "egrep",
  "fgrep"
])

/** GNU's common `--help` and `--version`. */
const gnu = (long: string): string => `${long},help,version`

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
      } else if (
        ["--regexp-extended", "--posix", "--separate", "--null-data", "--unbuffered", "--debug", "--sandbox"]
          .includes(name)
      ) {
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
// the grammars of read-only commands
// -----------------------------------------------------------------------------

const lsGrammar: OptionGrammar = {
  flags: "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
  values: "ITw",
  long: gnu(
    "all,almost-all,author,escape,block-size=,ignore-backups,color?,colour?,directory,dired,classify?,file-type,format=,full-time,group-directories-first,no-group,human-readable,si,dereference-command-line,dereference-command-line-symlink-to-dir,hide=,hyperlink?,indicator-style=,inode,ignore=,kibibytes,dereference,numeric-uid-gid,literal,hide-control-chars,show-control-chars,quote-name,quoting-style=,reverse,recursive,size,sort=,time=,time-style=,tabsize=,width=,context,zero"
  ),
  permute: true
}

const grepGrammar: OptionGrammar = {
  flags: "EFGPiyvwxcLloqsbHhnTZzUarRIV",
  values: "efmABCdD",
  numeric: true,
  long: gnu(
    "extended-regexp,fixed-strings,basic-regexp,perl-regexp,regexp=,file=,ignore-case,no-ignore-case,word-regexp,line-regexp,null-data,no-messages,invert-match,max-count=,byte-offset,line-number,no-line-number,line-buffered,with-filename,no-filename,label=,only-matching,quiet,silent,binary-files=,text,directories=,devices=,recursive,dereference-recursive,include=,exclude=,exclude-from=,exclude-dir=,files-without-match,files-with-matches,count,initial-tab,null,before-context=,after-context=,context?,color?,colour?,binary"
  ),
  permute: true
}

const sumGrammar: OptionGrammar = {
  flags: "bctwz",
  values: "l",
  long: gnu("binary,check,tag,text,zero,ignore-missing,quiet,status,strict,warn,length="),
  permute: true
}

const diffGrammar: OptionGrammar = {
  flags: "abBcdeEilnNpqrsStTuwyZ",
  values: "CDFIStUWxX",
  long: gnu(
    "normal,brief,report-identical-files,context?,unified?,ed,rcs,side-by-side,width=,left-column,suppress-common-lines,show-c-function,show-function-line=,label=,expand-tabs,initial-tab,tabsize=,suppress-blank-empty,recursive,no-dereference,new-file,unidirectional-new-file,ignore-file-name-case,no-ignore-file-name-case,exclude=,exclude-from=,starting-file=,from-file=,to-file=,ignore-case,ignore-tab-expansion,ignore-trailing-space,ignore-space-change,ignore-all-space,ignore-blank-lines,ignore-matching-lines=,text,strip-trailing-cr,ifdef=,old-group-format=,new-group-format=,unchanged-group-format=,changed-group-format=,line-format=,old-line-format=,new-line-format=,unchanged-line-format=,minimal,horizon-lines=,speed-large-files,color?,palette="
  ),
  permute: true
}

const findGlobals: ReadonlySet<string> = new Set(["-P", "-H", "-L"])
/** find primaries and options that only test, print to standard output, or steer the walk. */
const findFlags: ReadonlySet<string> = new Set([
  "-print",
  "-print0",
  "-ls",
  "-prune",
  "-quit",
  "-true",
  "-false",
  "-empty",
  "-nouser",
  "-nogroup",
  "-readable",
  "-writable",
  "-executable",
  "-depth",
  "-d",
  "-mount",
  "-xdev",
  "-noleaf",
  "-ignore_readdir_race",
  "-noignore_readdir_race",
  "-daystart",
  "-follow",
  "-not",
  "!",
  "-a",
  "-and",
  "-o",
  "-or",
  "(",
  ")",
  ",",
  "-warn",
  "-nowarn",
  "-help",
  "--help",
  "-version",
  "--version"
])
const findWithValue: ReadonlySet<string> = new Set([
  "-name",
  "-iname",
  "-path",
  "-ipath",
  "-wholename",
  "-iwholename",
  "-regex",
  "-iregex",
  "-type",
  "-xtype",
  "-size",
  "-newer",
  "-anewer",
  "-cnewer",
  "-mtime",
  "-atime",
  "-ctime",
  "-mmin",
  "-amin",
  "-cmin",
  "-perm",
  "-user",
  "-group",
  "-uid",
  "-gid",
  "-links",
  "-inum",
  "-samefile",
  "-lname",
  "-ilname",
  "-fstype",
  "-used",
  "-maxdepth",
  "-mindepth",
  "-regextype",
  "-printf",
  "-context"
])

const findRule: ArgumentRule = (args, words) => {
  let i = 0
  // Leading options, then starting points, then the expression. find has no `--` for its expression.
  while (
    i < args.length && args[i]!.literal && (findGlobals.has(args[i]!.value) || /^-D|^-O[0-9]/.test(args[i]!.value))
  ) {
    if (args[i]!.value === "-D") i++
    i++
  }
  for (; i < args.length; i++) {
    const word = args[i]!
    const expression = word.literal ? /^[-!(),]/.test(word.value) : !words.isOperand(word)
    if (expression) break
  }
  for (; i < args.length; i++) {
    const word = args[i]!
    if (!word.literal) return `\`find\`: ${opaque(word)}`
    const value = word.value
    if (findFlags.has(value)) continue
    if (findWithValue.has(value) || /^-newer[amcBt][amcBt]$/.test(value)) {
      const given = args[i + 1]
      if (given === undefined) return `\`find ${value}\` needs a value`
      if ((given.glob || given.brace || given.unquotedExpansion) && !words.isOperand(given)) {
        return `\`find\`: ${opaque(given)}`
      }
      i++
      continue
    }
    return `\`find ${value}\` is not known to be read-only (find can run commands, delete and write files)`
  }
  return undefined
}

const dateRule: ArgumentRule = grammar("date", {
  flags: "uR",
  values: "dfr",
  optional: "I",
  long: gnu("date=,file=,iso-8601?,rfc-email,rfc-3339=,reference=,utc,universal,debug,resolution"),
  permute: true
}, (parsed) => {
  const operand = parsed.operands.find((word) => !word.prefix.startsWith("+"))
  return operand === undefined ? undefined : `\`date ${operand.text}\` would set the system clock`
})

const hostnameDisplayOptions: ReadonlySet<string> = new Set([
  "-f",
  "-s",
  "-i",
  "-I",
  "-d",
  "-A",
  "-a",
  "--fqdn",
  "--long",
  "--short",
  "--domain",
  "--ip-address",
  "--all-ip-addresses",
  "--all-fqdns",
  "--alias"
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

const numericTestOperators: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])
const integer = /^[-+]?[0-9]+$/

/**
 * `test` and `[`: `-v NAME` and `-R NAME` evaluate a subscript in NAME (`test -v 'a[$(touch X)]'` runs touch), so
 * NAME must be a plain name; the numeric operators' operands must be literal integers.
 */
const testRule: ArgumentRule = (args) => {
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!
    if (!word.literal) continue
    if ((word.value === "-v" || word.value === "-R") && args[i + 1] !== undefined) {
      const name = args[i + 1]!
      if (!name.literal || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name.value)) {
        return `\`test ${word.value} ${name.text}\` evaluates a subscript in the name`
      }
    }
    if (numericTestOperators.has(word.value)) {
      for (const operand of [args[i - 1], args[i + 1]]) {
        if (operand !== undefined && !(operand.literal && integer.test(operand.value))) {
          return `\`test\`'s \`${word.value}\` reads ${show(operand)} as a number`
        }
      }
    }
  }
  return undefined
}

/** `NAME --version` and the like: the interpreter prints its version and exits. */
const versionQuery = (name: string, ...forms: ReadonlyArray<string>): ArgumentRule => (args) =>
  args.length === 1 && args[0]!.literal && forms.includes(args[0]!.value)
    ? undefined
    : `\`${name}\` runs programs; only \`${name} ${forms.join("` or `")}\` is read-only`

const cdRule: ArgumentRule = grammar("cd", { flags: "LPe@" }, atMostOperands("cd", 1, "is an error"))

const envRule: ArgumentRule = (args) =>
  args.every((word) => word.literal && (word.value === "-0" || word.value === "--null"))
    ? undefined
    : "`env` with arguments runs a command or changes the environment"

const jqRule: ArgumentRule = (args, words) => {
  const parsed = parseOptions(
    {
      flags: "nRscrjaSCMehV",
      values: "fL",
      long:
        "null-input,raw-input,slurp,compact-output,raw-output,raw-output0,join-output,ascii-output,sort-keys,color-output,monochrome-output,tab,indent=,unbuffered,stream,stream-errors,seq,exit-status,from-file=,arg=,argjson=,slurpfile=,rawfile=,args,jsonargs,help,version,build-configuration",
      permute: true
    },
    args,
    words.isOperand
  )
  if (parsed._tag === "Unknown") return `\`jq\`: ${parsed.reason}, so it is not known to be read-only`
  // `--arg NAME VALUE` and friends take two words; the parser took one: the rest are operands either way.
  return undefined
}

const gitCommand = (sub: string) => `git ${sub}`

// -----------------------------------------------------------------------------
// git
// -----------------------------------------------------------------------------

const gitSafeGlobals: ReadonlySet<string> = new Set([
  "--no-pager",
  "-P",
  "--no-optional-locks",
  "--literal-pathspecs",
  "--glob-pathspecs",
  "--noglob-pathspecs",
  "--icase-pathspecs",
  "--version",
  "--no-replace-objects",
  "--no-lazy-fetch",
  "--no-advice"
])

const gitDiffLong =
  "patch,no-patch,unified=,output-indicator-new=,output-indicator-old=,output-indicator-context=,raw,patch-with-raw,indent-heuristic,no-indent-heuristic,minimal,patience,histogram,anchored=,diff-algorithm=,stat?,compact-summary,numstat,shortstat,dirstat?,cumulative,dirstat-by-file?,summary,patch-with-stat,name-only,name-status,submodule?,color?,no-color,color-moved?,no-color-moved,color-moved-ws=,no-color-moved-ws,word-diff?,word-diff-regex=,color-words?,no-renames,rename-empty,no-rename-empty,check,ws-error-highlight=,full-index,binary,abbrev?,break-rewrites?,find-renames?,find-copies?,find-copies-harder,irreversible-delete,diff-filter=,find-object=,pickaxe-all,pickaxe-regex,skip-to=,rotate-to=,relative?,no-relative,text,ignore-cr-at-eol,ignore-space-at-eol,ignore-space-change,ignore-all-space,ignore-blank-lines,ignore-matching-lines=,inter-hunk-context=,function-context,exit-code,quiet,no-ext-diff,no-textconv,ignore-submodules?,src-prefix=,dst-prefix=,no-prefix,default-prefix,line-prefix=,ita-invisible-in-index,ita-visible-in-index,merge-base,cached,staged,no-index,base,ours,theirs,combined-all-paths,dd,cc,diff-merges=,no-diff-merges,remerge-diff,stat-width=,stat-name-width=,stat-graph-width=,stat-count="
const gitLogLong =
  "oneline,pretty?,format=,abbrev-commit,no-abbrev-commit,encoding=,expand-tabs?,no-expand-tabs,notes?,no-notes,show-notes?,show-signature,no-show-signature,relative-date,date=,parents,children,left-right,graph,show-linear-break?,decorate?,no-decorate,decorate-refs=,decorate-refs-exclude=,clear-decorations,source,mailmap,no-mailmap,use-mailmap,no-use-mailmap,full-diff,log-size,max-count=,skip=,since=,after=,until=,before=,since-as-filter=,author=,committer=,grep-reflog=,grep=,all-match,invert-grep,regexp-ignore-case,basic-regexp,extended-regexp,fixed-strings,perl-regexp,remove-empty,merges,no-merges,min-parents=,max-parents=,no-min-parents,no-max-parents,first-parent,exclude-first-parent-only,not,all,branches?,tags?,remotes?,glob=,exclude=,exclude-hidden=,reflog,alternate-refs,single-worktree,ignore-missing,bisect,cherry-mark,cherry-pick,left-only,right-only,cherry,walk-reflogs,merge,boundary,simplify-by-decoration,show-pulls,full-history,dense,sparse,simplify-merges,ancestry-path?,topo-order,date-order,author-date-order,reverse,no-walk?,do-walk,count,follow,no-follow,show-origin,end-of-options"
const gitLogGrammar: OptionGrammar = {
  flags: "pusziEFPgmctrRaDbwW",
  values: "nSGL",
  optional: "UMCBl",
  numeric: true,
  long: `${gitDiffLong},${gitLogLong}`,
  permute: true
}
const gitDiffGrammar: OptionGrammar = {
  flags: "pusRaDbwWz",
  values: "SG",
  optional: "UMCBl",
  long: gitDiffLong,
  permute: true
}

const gitGrammars: Readonly<Record<string, OptionGrammar>> = {
  log: gitLogGrammar,
  show: gitLogGrammar,
  diff: gitDiffGrammar,
  status: {
    flags: "sbvz",
    optional: "u",
    long:
      "short,branch,show-stash,porcelain?,long,verbose,untracked-files?,ignore-submodules?,ignored?,column?,no-column,ahead-behind,no-ahead-behind,renames,no-renames,find-renames?,null",
    permute: true
  },
  blame: {
    flags: "bclnpsfteMCwh",
    values: "LS",
    long:
      "porcelain,line-porcelain,incremental,root,show-stats,progress,no-progress,score-debug,show-name,show-number,show-email,abbrev?,date=,reverse,first-parent,encoding=,contents=,ignore-rev=,ignore-revs-file=,color-lines,color-by-age,minimal,end-of-options",
    permute: true
  },
  shortlog: {
    flags: "nsec",
    optional: "w",
    long: `numbered,summary,email,committer,group=,format=,${gitLogLong}`,
    permute: true
  },
  describe: {
    long:
      "all,tags,contains,abbrev=,candidates=,exact-match,debug,long,match=,exclude=,always,first-parent,dirty?,broken?",
    permute: true
  },
  "rev-parse": {
    flags: "qS",
    long:
      "show-toplevel,git-dir,absolute-git-dir,git-common-dir,is-inside-work-tree,is-inside-git-dir,is-bare-repository,is-shallow-repository,show-prefix,show-cdup,short?,abbrev-ref?,symbolic,symbolic-full-name,verify,quiet,sq,sq-quote,not,all,branches?,tags?,remotes?,glob=,exclude=,default=,prefix=,local-env-vars,resolve-git-dir=,git-path=,show-superproject-working-tree,shared-index-path,show-object-format?,show-ref-format,since=,after=,until=,before=,revs-only,no-revs,flags,no-flags,disambiguate=,stop-at-non-option,keep-dashdash,path-format=,end-of-options",
    permute: true
  },
  "ls-files": {
    flags: "cdmoiskuvtfz",
    values: "xX",
    long:
      "cached,deleted,modified,others,ignored,stage,directory,no-empty-directory,unmerged,killed,exclude=,exclude-from=,exclude-per-directory=,exclude-standard,error-unmatch,with-tree=,full-name,recurse-submodules,abbrev?,debug,eol,deduplicate,sparse,format=,resolve-undo",
    permute: true
  },
  "ls-tree": {
    flags: "dlrtz",
    long: "long,name-only,name-status,object-only,full-name,full-tree,abbrev?,format=",
    permute: true
  },
  "cat-file": {
    flags: "tspe",
    long:
      "batch?,batch-check?,batch-all-objects,buffer,unordered,follow-symlinks,allow-unknown-type,mailmap,use-mailmap,no-mailmap,path=,Z",
    permute: true
  },
  grep: {
    flags: "aiIwvhHEGFPnlLcozqrW",
    values: "efABCm",
    numeric: true,
    long:
      "cached,no-index,untracked,no-exclude-standard,exclude-standard,recurse-submodules,text,no-textconv,ignore-case,max-depth=,recursive,no-recursive,word-regexp,invert-match,full-name,extended-regexp,basic-regexp,perl-regexp,fixed-strings,line-number,column,files-with-matches,name-only,files-without-match,null,only-matching,count,color?,no-color,break,heading,show-function,context=,after-context=,before-context=,function-context,max-count=,threads=,and,or,not,all-match,quiet",
    permute: true
  }
}

const flagsOnly =
  (allowed: ReadonlySet<string>, listFlags: ReadonlySet<string>, subcommand: string) =>
  (args: ReadonlyArray<ShellWord>): string | undefined => {
    const listing = args.some((word) => listFlags.has(word.value))
    for (const word of args) {
      if (!word.literal) return opaque(word)
      if (word.value.startsWith("-")) {
        const name = word.value.split("=", 1)[0]!
        if (!allowed.has(word.value) && !allowed.has(`${name}=`)) {
          return `\`git ${subcommand} ${word.text}\` is not a listing option`
        }
      } else if (!listing) return `\`git ${subcommand} ${word.text}\` would create or change a ${subcommand}`
    }
    return undefined
  }

const gitSubcommands: Readonly<Record<string, (args: ReadonlyArray<ShellWord>, words: Words) => string | undefined>> = {
  ...Object.fromEntries(Object.entries(gitGrammars).map(([sub, options]) => [sub, grammar(gitCommand(sub), options)])),
  branch: flagsOnly(
    new Set([
      "-a",
      "--all",
      "-r",
      "--remotes",
      "-v",
      "-vv",
      "--verbose",
      "--show-current",
      "--no-color",
      "-l",
      "--list"
    ]),
    new Set(["-l", "--list"]),
    "branch"
  ),
  tag: flagsOnly(
    new Set([
      "-l",
      "--list",
      "-n",
      "--sort=",
      "--format=",
      "--contains",
      "--no-contains",
      "--merged",
      "--no-merged",
      "--points-at",
      "-i",
      "--ignore-case",
      "--column",
      "--no-column"
    ]),
    new Set(["-l", "--list"]),
    "tag"
  ),
  remote: (args) => {
    if (args.some((word) => !word.literal)) return "`git remote` with a non-literal argument"
    if (args.length === 0) return undefined
    if (args.length === 1 && ["-v", "--verbose"].includes(args[0]!.value)) return undefined
    if (
      args[0]!.value === "get-url" &&
      args.slice(1).every((word) => !word.value.startsWith("-") || ["--all", "--push"].includes(word.value))
    ) return undefined
    return `\`git remote ${args[0]!.text}\` is not a listing form`
  },
  config: (args) => {
    // Read-only only in an explicit read form with the right number of operands: `git config NAME VALUE list` SETS
    // NAME (the last word is a value pattern), so a read word anywhere is not enough.
    if (args.some((word) => !word.literal)) return "`git config` with a non-literal argument may change configuration"
    const scopes = new Set([
      "--global",
      "--system",
      "--local",
      "--worktree",
      "--show-origin",
      "--show-scope",
      "--null",
      "-z",
      "--name-only",
      "--includes",
      "--no-includes"
    ])
    const reads: Record<string, number> = {
      "--get": 2,
      "--get-all": 2,
      "--get-regexp": 2,
      "--get-urlmatch": 2,
      "--list": 0,
      "-l": 0
    }
    const subcommands: Record<string, number> = { get: 1, list: 0 }
    const options = args.filter((word) => word.value.startsWith("-"))
    const operands = args.filter((word) => !word.value.startsWith("-"))
    const action = options.filter((word) => Object.hasOwn(reads, word.value))
    const unknown = options.find((word) => !Object.hasOwn(reads, word.value) && !scopes.has(word.value))
    if (unknown !== undefined) return `\`git config ${unknown.text}\` is not a known read-only option`
    if (action.length === 1) {
      return operands.length <= reads[action[0]!.value]!
        ? undefined
        : "`git config` with more operands than its read form takes may change configuration"
    }
    const sub = operands[0]?.value
    if (
      action.length === 0 && sub !== undefined && Object.hasOwn(subcommands, sub) &&
      operands.length - 1 <= subcommands[sub]!
    ) return undefined
    // `git config section.key`: one operand naming a key (a dot, no subcommand word) reads it.
    if (
      action.length === 0 && operands.length === 1 &&
      /^[A-Za-z0-9][A-Za-z0-9-]*(?:\.[^\s=]+)?\.[A-Za-z][A-Za-z0-9-]*$/.test(operands[0]!.value)
    ) {
      return undefined
    }
    return "`git config` without exactly one `--get`/`--list` form may change configuration"
  },
  reflog: (args) => {
    if (args.some((word) => !word.literal)) return "`git reflog` with a non-literal argument"
    const first = args[0]
    if (first === undefined || first.value === "show" || first.value.startsWith("-")) {
      const bad = args.find((word) =>
        ["expire", "delete", "drop", "write"].includes(word.value) ||
        (word.value.startsWith("-") &&
          !/^-(?:n|-max-count=)?[0-9]*$|^--(?:oneline|date=.*|format=.*|pretty=.*|all|abbrev-commit)$/.test(word.value))
      )
      return bad === undefined ? undefined : `\`git reflog ${bad.text}\` is not known to be read-only`
    }
    return `\`git reflog ${first.text}\` is not \`git reflog show\``
  },
  stash: (args, words) => {
    const sub = args[0]
    if (sub === undefined || !sub.literal || !["list", "show"].includes(sub.value)) {
      return "`git stash` other than `list`/`show` changes the stash or the working tree"
    }
    return grammar("git stash", gitLogGrammar)(args.slice(1), words)
  }
}

const gitRule: ArgumentRule = (args, words) => {
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
  if (!Object.hasOwn(gitSubcommands, subcommand.value)) {
    return `\`git ${subcommand.value}\` is not a read-only git subcommand`
  }
  return gitSubcommands[subcommand.value]!(args.slice(i + 1), words)
}

// -----------------------------------------------------------------------------
// the positive list
// -----------------------------------------------------------------------------

const allowlist: ReadonlyMap<string, ArgumentRule> = new Map<string, ArgumentRule>([
  ["ls", grammar("ls", lsGrammar)],
  [
    "cat",
    grammar("cat", {
      flags: "AbeEnstTuv",
      long: gnu("show-all,number-nonblank,show-ends,number,squeeze-blank,show-tabs,show-nonprinting"),
      permute: true
    })
  ],
  [
    "head",
    grammar("head", {
      flags: "qvz",
      values: "nc",
      numeric: true,
      long: gnu("bytes=,lines=,quiet,silent,verbose,zero-terminated"),
      permute: true
    })
  ],
  [
    "tail",
    grammar("tail", {
      flags: "fFqvrz",
      values: "ncs",
      numeric: true,
      long: gnu(
        "bytes=,follow?,lines=,max-unchanged-stats=,pid=,quiet,silent,retry,sleep-interval=,verbose,zero-terminated"
      ),
      permute: true
    })
  ],
  ["wc", grammar("wc", { flags: "clmwL", long: gnu("bytes,chars,lines,max-line-length,words,total="), permute: true })],
  ["pwd", grammar("pwd", { flags: "LP" })],
  ["echo", anyArguments],
  ["printf", printfRule],
  ["grep", grammar("grep", grepGrammar)],
  ["egrep", grammar("egrep", grepGrammar)],
  ["fgrep", grammar("fgrep", grepGrammar)],
  [
    "rg",
    grammar("rg", {
      flags: "0aciFHhIlLnNopqsSuUvVwxbPUj",
      values: "ABCeEfgjmMrtTd",
      long:
        "after-context=,before-context=,context=,case-sensitive,color=,colors=,column,no-column,count,count-matches,crlf,no-crlf,debug,trace,dfa-size-limit=,encoding=,engine=,fixed-strings,no-fixed-strings,follow,no-follow,glob=,iglob=,glob-case-insensitive,no-glob-case-insensitive,heading,no-heading,hidden,no-hidden,ignore-case,ignore-file=,ignore-file-case-insensitive,include-zero,invert-match,no-invert-match,json,no-json,line-buffered,block-buffered,line-number,no-line-number,line-regexp,max-columns=,max-columns-preview,max-count=,max-depth=,max-filesize=,mmap,no-mmap,multiline,no-multiline,multiline-dotall,no-config,no-ignore,no-ignore-dot,no-ignore-exclude,no-ignore-files,no-ignore-global,no-ignore-parent,no-ignore-vcs,no-messages,null,null-data,one-file-system,only-matching,passthru,path-separator=,pcre2,no-pcre2,pcre2-version,quiet,regex-size-limit=,regexp=,replace=,smart-case,sort=,sortr=,stats,text,no-text,threads=,trim,no-trim,type=,type-not=,type-list,type-add=,type-clear=,unrestricted,vimgrep,with-filename,no-filename,word-regexp,files,files-with-matches,files-without-match,help,version,hyperlink-format=,field-context-separator=,field-match-separator=,context-separator=,no-context-separator,byte-offset,binary,no-binary,auto-hybrid-regex,no-unicode,unicode,max-depth=,no-require-git,sort-files,no-sort-files",
      permute: true
    })
  ],
  [
    "cut",
    grammar("cut", {
      flags: "nsz",
      values: "bcdf",
      long: gnu("bytes=,characters=,delimiter=,fields=,complement,only-delimited,output-delimiter=,zero-terminated"),
      permute: true
    })
  ],
  [
    "tr",
    grammar("tr", { flags: "cCdst", long: gnu("complement,delete,squeeze-repeats,truncate-set1"), permute: true })
  ],
  ["diff", grammar("diff", diffGrammar)],
  [
    "cmp",
    grammar("cmp", {
      flags: "bls",
      values: "in",
      long: gnu("print-bytes,ignore-initial=,verbose,bytes=,quiet,silent"),
      permute: true
    })
  ],
  [
    "stat",
    grammar("stat", {
      flags: "LftZ",
      values: "c",
      long: gnu("dereference,file-system,format=,printf=,terse,cached="),
      permute: true
    })
  ],
  [
    "du",
    grammar("du", {
      flags: "0abcDhHklLmPsSx",
      values: "BdtX",
      long: gnu(
        "null,all,apparent-size,block-size=,bytes,total,dereference-args,max-depth=,human-readable,inodes,si,count-links,dereference,separate-dirs,summarize,threshold=,time?,time-style=,exclude-from=,exclude=,one-file-system,no-dereference"
      ),
      permute: true
    })
  ],
  [
    "df",
    grammar("df", {
      flags: "ahHiklPTv",
      values: "Btx",
      long: gnu(
        "all,block-size=,human-readable,si,inodes,local,output?,portability,print-type,type=,exclude-type=,total,sync,no-sync"
      ),
      permute: true
    })
  ],
  ["which", grammar("which", { flags: "a", permute: true })],
  ["type", grammar("type", { flags: "afptP", permute: true })],
  ["basename", grammar("basename", { flags: "az", values: "s", long: gnu("multiple,suffix=,zero"), permute: true })],
  ["dirname", grammar("dirname", { flags: "z", long: gnu("zero"), permute: true })],
  [
    "realpath",
    grammar("realpath", {
      flags: "eLmPqsz",
      long: gnu(
        "canonicalize-existing,canonicalize-missing,logical,physical,quiet,relative-to=,relative-base=,strip,no-symlinks,zero"
      ),
      permute: true
    })
  ],
  [
    "readlink",
    grammar("readlink", {
      flags: "efmnqsvz",
      long: gnu("canonicalize,canonicalize-existing,canonicalize-missing,no-newline,quiet,silent,verbose,zero"),
      permute: true
    })
  ],
  ["whoami", grammar("whoami", { long: gnu("") }, atMostOperands("whoami", 0, "is an error"))],
  ["id", grammar("id", { flags: "agGnruzZ", long: gnu("context,group,groups,name,real,user,zero"), permute: true })],
  [
    "uname",
    grammar("uname", {
      flags: "asnrvmpio",
      long: gnu(
        "all,kernel-name,nodename,kernel-release,kernel-version,machine,processor,hardware-platform,operating-system"
      ),
      permute: true
    }, atMostOperands("uname", 0, "is an error"))
  ],
  ["printenv", grammar("printenv", { flags: "0", long: gnu("null"), permute: true })],
  ["env", envRule],
  ["true", anyArguments],
  ["false", anyArguments],
  [":", anyArguments],
  ["test", testRule],
  ["[", testRule],
  [
    "nl",
    grammar("nl", {
      flags: "p",
      values: "bdfhilnsvw",
      long: gnu(
        "body-numbering=,section-delimiter=,footer-numbering=,header-numbering=,line-increment=,join-blank-lines=,number-format=,no-renumber,number-separator=,starting-line-number=,number-width="
      ),
      permute: true
    })
  ],
  [
    "od",
    grammar("od", {
      flags: "abcdfhilosvx",
      values: "AjNtS",
      optional: "w",
      long: gnu("address-radix=,endian=,skip-bytes=,read-bytes=,strings?,format=,output-duplicates,width?,traditional"),
      permute: true
    })
  ],
  ["tac", grammar("tac", { flags: "br", values: "s", long: gnu("before,regex,separator="), permute: true })],
  ["rev", grammar("rev", { flags: "0", long: gnu("zero"), permute: true })],
  ["seq", grammar("seq", { flags: "w", values: "fs", long: gnu("format=,separator=,equal-width"), permute: true })],
  [
    "paste",
    grammar("paste", { flags: "sz", values: "d", long: gnu("delimiters=,serial,zero-terminated"), permute: true })
  ],
  [
    "comm",
    grammar("comm", {
      flags: "123iz",
      long: gnu("check-order,nocheck-order,output-delimiter=,total,zero-terminated"),
      permute: true
    })
  ],
  ["fold", grammar("fold", { flags: "bs", values: "w", long: gnu("bytes,characters,spaces,width="), permute: true })],
  ["nproc", grammar("nproc", { long: gnu("all,ignore=") }, atMostOperands("nproc", 0, "is an error"))],
  ...["md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum"].map((name) =>
    [name, grammar(name, sumGrammar)] as const
  ),
  [
    "cksum",
    grammar("cksum", {
      flags: "bctwz",
      values: "al",
      long: gnu("algorithm=,base64,check,length=,raw,tag,untagged,zero,ignore-missing,quiet,status,strict,warn,debug"),
      permute: true
    })
  ],
  ["jq", jqRule],
  ["find", findRule],
  ["sed", sedRule],
  [
    "sort",
    grammar("sort", {
      flags: "bdfgiMhnRrVcCmsuz",
      values: "kSt",
      long: gnu(
        "ignore-leading-blanks,dictionary-order,ignore-case,general-numeric-sort,ignore-nonprinting,month-sort,human-numeric-sort,numeric-sort,random-sort,random-source=,reverse,sort=,version-sort,batch-size=,check?,key=,merge,buffer-size=,stable,field-separator=,parallel=,unique,zero-terminated,debug"
      ),
      permute: true
    })
  ],
  [
    "base64",
    grammar(
      "base64",
      { flags: "di", values: "w", long: gnu("decode,ignore-garbage,wrap="), permute: true },
      atMostOperands("base64", 1, "is an error")
    )
  ],
  [
    "uniq",
    grammar("uniq", {
      flags: "cdDiuz",
      values: "fsw",
      long: gnu(
        "count,repeated,all-repeated?,skip-fields=,group?,ignore-case,skip-chars=,unique,zero-terminated,check-chars="
      ),
      permute: true
    }, atMostOperands("uniq", 1, "writes its output to the second one"))
  ],
  [
    "tree",
    grammar("tree", {
      flags: "adfxlisAnCpugshDFqNQrtcUvSXJ",
      values: "LPIHT",
      long:
        "gitignore,ignore-case,matchdirs,metafirst,prune,noreport,dirsfirst,filesfirst,du,si,charset=,filelimit=,timefmt=,sort=,help,version,noindent,nolinks,hintro=,houtro=,info",
      permute: true
    })
  ],
  [
    "file",
    grammar("file", {
      flags: "bcdEhikLlNnrsvzZ0",
      values: "emFfP",
      long: gnu(
        "brief,mime,mime-type,mime-encoding,keep-going,dereference,no-dereference,raw,special-files,uncompress,uncompress-noreport,no-pad,separator=,files-from=,magic-file=,exclude=,exclude-quiet=,extension,apple,parameter=,print0,checking-printout,debug,no-buffer"
      ),
      permute: true
    })
  ],
  [
    "xxd",
    grammar("xxd", {
      singleDash:
        "a,autoskip,b,bits,c=,cols=,C,capitalize,d,E,EBCDIC,e,g=,groupsize=,h,help,i,include,l=,len=,n=,name=,o=,offset=,p,ps,postscript,plain,s=,seek=,u,v,version,R=",
      values: "cglnos",
      flags: "abCdEehipuv"
    }, atMostOperands("xxd", 1, "writes its output to the second one"))
  ],
  ["date", dateRule],
  ["hostname", hostnameRule],
  ["cd", cdRule],
  ["git", gitRule],
  ["node", versionQuery("node", "--version", "-v")],
  ["nodejs", versionQuery("nodejs", "--version", "-v")],
  ["python", versionQuery("python", "--version", "-V")],
  ["python3", versionQuery("python3", "--version", "-V")],
  ["perl", versionQuery("perl", "--version", "-v")],
  ["ruby", versionQuery("ruby", "--version", "-v")],
  ["bash", versionQuery("bash", "--version")],
  ["deno", versionQuery("deno", "--version", "-V")],
  ["npm", versionQuery("npm", "--version", "-v")]
])

const neverReason = (name: string): string | undefined => {
  if (["eval", "exec", "source", "."].includes(name)) return "runs arbitrary code"
  if (/^(?:ba|da|z|k|c|tc|fi|mk)?sh$|^busybox$/.test(name)) return "is a shell and runs arbitrary code"
  if (/^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|deno|bun|perl[0-9.]*|ruby|php|lua|tclsh|osascript)$/.test(name)) {
    return "is an interpreter and runs arbitrary code"
  }
  if (/^[gmn]?awk$/.test(name)) return "runs programs that can write files and run commands"
  if (
    ["xargs", "command", "builtin", "timeout", "nice", "nohup", "time", "sudo", "doas", "su", "stdbuf"]
      .includes(name)
  ) return "runs another command"
  if (
    [
      "trap",
      "alias",
      "unalias",
      "set",
      "shopt",
      "export",
      "declare",
      "typeset",
      "local",
      "readonly",
      "unset",
      "read",
      "mapfile",
      "readarray",
      "enable",
      "hash",
      "let"
    ].includes(name)
  ) return "changes the shell session"
  if (["pushd", "popd"].includes(name)) return "changes the working directory for later commands"
  if (name === "tee") return "writes files"
  return undefined
}

// -----------------------------------------------------------------------------
// reads beyond the arguments
// -----------------------------------------------------------------------------

const parsedWith = (options: OptionGrammar, args: ReadonlyArray<ShellWord>): ParsedOptions =>
  parseOptions(options, args, () => true)

/**
 * Why a read-only simple command reads files its words do not name, or `undefined`: recursion that follows
 * symlinks (`grep -R`, `ls -LR`, `find -L`/`-follow`, `diff -r`, `du -L`, `rg -L`, `tree -l`), lists of files to
 * read (`sha256sum -c LIST`, `file -f LIST`, `cksum -c`), program text that names files (`jq` with `import` or
 * `include`, `-L`, `-f`). The answer is for the plan's "stays inside" check; it says nothing about writing.
 *
 * @since 0.2.0
 * @category classification
 */
export const readsBeyondArguments = (command: SimpleCommand): string | undefined => {
  const [name, ...args] = command.words
  if (name === undefined || !name.literal) return undefined
  const value = name.value
  switch (value) {
    case "grep":
    case "egrep":
    case "fgrep":
      return hasOption(parsedWith(grepGrammar, args), "-R", "--dereference-recursive")
        ? "`grep -R` follows symlinks while recursing"
        : undefined
    case "ls": {
      const parsed = parsedWith(lsGrammar, args)
      return hasOption(parsed, "-R", "--recursive") && hasOption(parsed, "-L", "--dereference")
        ? "`ls -LR` follows symlinks while recursing"
        : undefined
    }
    case "find":
      return args.some((word) => word.value === "-L" || word.value === "-follow")
        ? "`find -L` follows symlinks while walking"
        : undefined
    case "diff": {
      const parsed = parsedWith(diffGrammar, args)
      return hasOption(parsed, "-r", "--recursive") && !hasOption(parsed, "--no-dereference")
        ? "`diff -r` follows symlinks while recursing"
        : undefined
    }
    case "du":
      return args.some((word) => /^-[^-]*L/.test(word.value) || word.value === "--dereference")
        ? "`du -L` follows symlinks while recursing"
        : undefined
    case "rg":
      return args.some((word) => /^-[^-]*L/.test(word.value) || word.value === "--follow")
        ? "`rg -L` follows symlinks while recursing"
        : undefined
    case "tree":
      return args.some((word) => /^-[^-]*l/.test(word.value)) ? "`tree -l` follows symlinks while recursing" : undefined
    case "file":
      return args.some((word) => /^-[^-]*f/.test(word.value) || word.value.startsWith("--files-from"))
        ? "`file -f` reads a list of files"
        : undefined
    case "jq":
      return args.some((word) =>
          /^-[^-]*[Lf]/.test(word.value) || /^--from-file/.test(word.value) ||
          /\b(?:import|include|modulemeta|get_search_list)\b/.test(word.value)
        )
        ? "`jq` program text or options load files by name"
        : undefined
    default:
      if (/^(?:md5|sha1|sha224|sha256|sha384|sha512|b2)sum$|^cksum$/.test(value)) {
        return args.some((word) => /^-[^-]*c/.test(word.value) || word.value === "--check")
          ? `\`${value} -c\` reads the files a list names`
          : undefined
      }
      return undefined
  }
}

// -----------------------------------------------------------------------------
// operands: what a non-literal word can expand to
// -----------------------------------------------------------------------------

/** A variable reference on its own, quoted or not: `$f`, `"$f"`, `${f}`, `"${f}"`. */
const lonelyVariable = /^("?)\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))\1$/

const listDirectoryDefault = (directory: string): ReadonlyArray<string> | undefined => {
  try {
    return fs.readdirSync(directory)
  } catch {
    return undefined
  }
}

/**
 * Builds the operand proof for one analysis: a non-literal word is an operand when it cannot expand to a word
 * starting with `-` (see the module documentation).
 */
const operandProof = (
  analysis: Extract<ShellAnalysis, { _tag: "Parsed" }>,
  context: ClassifyContext | undefined
): (word: ShellWord) => boolean => {
  const list = context?.listDirectory ?? listDirectoryDefault
  const directoryHasOptionLikeEntry = new Map<string, boolean>()
  const globIsOperand = (word: ShellWord): boolean => {
    if (word.expansion || word.brace) return false
    if (word.prefix !== "") return !word.prefix.startsWith("-")
    // The pattern starts with a wildcard: its matches are entries of the directory (relative) it names.
    if (context === undefined || context.directories.length === 0) return false
    return context.directories.every((directory) => {
      const cached = directoryHasOptionLikeEntry.get(directory)
      if (cached !== undefined) return !cached
      const entries = list(path.resolve(directory))
      const found = entries === undefined || entries.some((entry) => entry.startsWith("-"))
      directoryHasOptionLikeEntry.set(directory, found)
      return !found
    })
  }
  const loopWords = new Map<string, Array<ShellWord> | undefined>()
  for (const { variable, words } of analysis.features.loopLists) {
    const known = loopWords.has(variable) ? loopWords.get(variable) : []
    loopWords.set(variable, known === undefined || words === undefined ? undefined : [...known, ...words])
  }
  const isOperand = (word: ShellWord, depth: number): boolean => {
    if (word.literal) return !word.value.startsWith("-") || word.value === "-"
    if (word.brace) return word.prefix !== "" && !word.prefix.startsWith("-") && !word.unquotedExpansion
    if (!word.expansion) return globIsOperand(word)
    // An expansion: the known leading text decides, unless an unquoted expansion splits the word.
    if (word.prefix !== "") return !word.prefix.startsWith("-") && !word.unquotedExpansion
    if (/^"?\$\{?(?:PWD|HOME)\}?(?:[/"]|$)/.test(word.text) && !word.unquotedExpansion) return true
    const variable = lonelyVariable.exec(word.text)
    if (variable !== null && depth === 0) {
      const name = variable[2] ?? variable[3]!
      const words = loopWords.get(name)
      if (words === undefined) return false
      const quoted = variable[1] === "\""
      return words.every((listed) =>
        isOperand(listed, depth + 1) && (quoted || (listed.literal && !/[\s*?[\\]/.test(listed.value)))
      )
    }
    return false
  }
  return (word) => isOperand(word, 0)
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
      if (
        redirection.operator === ">&" && target !== undefined && target.literal &&
        harmlessOutputTargets.has(target.value)
      ) return undefined
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
export const sensitiveVariable =
  /^(?:PATH|IFS|BASH_ENV|ENV|PS4|PROMPT_COMMAND|SHELLOPTS|BASHOPTS|CDPATH|GLOBIGNORE|HOME|PWD|OLDPWD|LD_.*|GIT_.*|PAGER|EDITOR|VISUAL)$/

/** A loop variable a read-only command may have: a plain lower-case name that no program reads from the environment. */
const inertLoopVariable = (name: string): boolean => /^[a-z][a-z0-9_]*$/.test(name) && !/_proxy$/.test(name)

const noWords: Words = { isOperand: () => false }

const commandProblem = (command: SimpleCommand, words: Words): string | undefined => {
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
  const rule = Object.hasOwn(Object.prototype, name.value) ? undefined : allowlist.get(name.value)
  const never = neverReason(name.value)
  if (rule === undefined) {
    return never === undefined
      ? `\`${name.value}\` is not on the read-only allowlist`
      : `\`${name.value}\` ${never}`
  }
  return rule(args, words)
}

// -----------------------------------------------------------------------------
// classification
// -----------------------------------------------------------------------------

/**
 * Classify a command (or its analysis) as read-only or not. See the module documentation for the rules. The
 * context lets globs that start with a wildcard count as operands after a look at the directory they list.
 *
 * @since 0.1.0
 * @category classification
 */
export const classifyReadOnly = (input: ShellAnalysis | string, context?: ClassifyContext): ReadOnlyVerdict => {
  const analysis = typeof input === "string" ? analyze(input) : input
  if (analysis._tag === "Unanalyzable") return notReadOnly(`the command cannot be analysed: ${analysis.reason}`)
  const structural = structuralProblem(analysis)
  if (structural !== undefined) return notReadOnly(structural)
  const words: Words = { isOperand: operandProof(analysis, context) }
  for (const command of analysis.commands) {
    const problem = commandProblem(command, words)
    if (problem !== undefined) return notReadOnly(`\`${command.source}\`: ${problem}`)
  }
  return readOnly
}

/**
 * Why the command as a whole is not read-only, whatever its simple commands are: function definitions,
 * coprocesses, background jobs, `(( ))`, `select`, assigning expansions, second evaluation, loop variables the shell
 * or programs read, writing redirections on compound commands.
 *
 * @since 0.2.0
 * @category classification
 */
export const structuralProblem = (analysis: Extract<ShellAnalysis, { _tag: "Parsed" }>): string | undefined => {
  const features = analysis.features
  if (features.functionDefinitions.length > 0) return `defines the function \`${features.functionDefinitions[0]}\``
  if (features.coprocesses) return "starts a coprocess"
  if (features.background) return "runs a job in the background (`&`), which outlives the call"
  if (features.arithmeticCommands) return "`(( ... ))` can assign shell variables"
  if (features.selects) return "`select` reads a choice interactively"
  if (features.assigningExpansions) return "an expansion assigns a shell variable"
  if (features.secondEvaluations.length > 0) {
    return `bash evaluates text a second time: ${features.secondEvaluations[0]}`
  }
  const loopVariable = features.loopVariables.find((name) => !inertLoopVariable(name))
  if (loopVariable !== undefined) return `a loop assigns \`${loopVariable}\`, a variable the shell or programs read`
  for (const redirection of features.compoundRedirections) {
    const problem = redirectionProblem(redirection)
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * The operand proof of {@link classifyReadOnly} for one analysis: whether a word certainly expands to words that
 * do not start with `-`.
 *
 * @since 0.2.0
 * @category classification
 */
export const operandsOf = (
  analysis: Extract<ShellAnalysis, { _tag: "Parsed" }>,
  context?: ClassifyContext
): (word: ShellWord) => boolean => operandProof(analysis, context)

/**
 * Why one simple command is not read-only, with the operand proof of its analysis ({@link operandsOf}).
 *
 * @since 0.2.0
 * @category classification
 */
export const simpleCommandProblemWith = (
  command: SimpleCommand,
  isOperand: (word: ShellWord) => boolean
): string | undefined => commandProblem(command, { isOperand })

/**
 * Why a single simple command is not read-only, or `undefined` when it is (ignoring the rest of its
 * compound command; non-literal words that could be options are not read-only).
 *
 * @since 0.1.0
 * @category classification
 */
export const simpleCommandProblem = (command: SimpleCommand): string | undefined => commandProblem(command, noWords)
