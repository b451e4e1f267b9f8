/**
 * The option grammars and argument rules of the read-only commands other than git and sed: `ls`, `grep`, the `*sum`
 * family, `diff`, `find`, `date`, `hostname`, `printf`, `test`, version queries, `cd`, `env`, `jq`.
 *
 * @internal
 */
import { parseOptions } from "../Options.js"
import type { OptionGrammar } from "../Options.js"
import { atMostOperands, gnu, grammar, opaque, show } from "./argumentRules.js"
import type { ArgumentRule } from "./argumentRules.js"

// -----------------------------------------------------------------------------
// the grammars of read-only commands
// -----------------------------------------------------------------------------

export const lsGrammar: OptionGrammar = {
  flags: "aAbBcCdfFgGhHiklLmnNopqQrRsStuUvxXZ1",
  values: "ITw",
  long: gnu(
    "all,almost-all,author,escape,block-size=,ignore-backups,color?,colour?,directory,dired,classify?,file-type," +
      "format=,full-time,group-directories-first,no-group,human-readable,si,dereference-command-line," +
      "dereference-command-line-symlink-to-dir,hide=,hyperlink?,indicator-style=,inode,ignore=,kibibytes,dereference," +
      "numeric-uid-gid,literal,hide-control-chars,show-control-chars,quote-name,quoting-style=,reverse,recursive," +
      "size,sort=,time=,time-style=,tabsize=,width=,context,zero"
  ),
  permute: true
}

export const grepGrammar: OptionGrammar = {
  flags: "EFGPiyvwxcLloqsbHhnTZzUarRIV",
  values: "efmABCdD",
  numeric: true,
  long: gnu(
    "extended-regexp,fixed-strings,basic-regexp,perl-regexp,regexp=,file=,ignore-case,no-ignore-case,word-regexp," +
      "line-regexp,null-data,no-messages,invert-match,max-count=,byte-offset,line-number,no-line-number," +
      "line-buffered,with-filename,no-filename,label=,only-matching,quiet,silent,binary-files=,text,directories=," +
      "devices=,recursive,dereference-recursive,include=,exclude=,exclude-from=,exclude-dir=,files-without-match," +
      "files-with-matches,count,initial-tab,null,before-context=,after-context=,context?,color?,colour?,binary"
  ),
  permute: true
}

export const sumGrammar: OptionGrammar = {
  flags: "bctwz",
  values: "l",
  long: gnu("binary,check,tag,text,zero,ignore-missing,quiet,status,strict,warn,length="),
  permute: true
}

export const diffGrammar: OptionGrammar = {
  flags: "abBcdeEilnNpqrsStTuwyZ",
  values: "CDFIStUWxX",
  long: gnu(
    "normal,brief,report-identical-files,context?,unified?,ed,rcs,side-by-side,width=,left-column," +
      "suppress-common-lines,show-c-function,show-function-line=,label=,expand-tabs,initial-tab,tabsize=," +
      "suppress-blank-empty,recursive,no-dereference,new-file,unidirectional-new-file,ignore-file-name-case," +
      "no-ignore-file-name-case,exclude=,exclude-from=,starting-file=,from-file=,to-file=,ignore-case," +
      "ignore-tab-expansion,ignore-trailing-space,ignore-space-change,ignore-all-space,ignore-blank-lines," +
      "ignore-matching-lines=,text,strip-trailing-cr,ifdef=,old-group-format=,new-group-format=," +
      "unchanged-group-format=,changed-group-format=,line-format=,old-line-format=,new-line-format=," +
      "unchanged-line-format=,minimal,horizon-lines=,speed-large-files,color?,palette="
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

export const findRule: ArgumentRule = (args, words) => {
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

export const dateRule: ArgumentRule = grammar("date", {
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
export const hostnameRule: ArgumentRule = (args) => {
  const word = args.find((arg) => !arg.literal || !hostnameDisplayOptions.has(arg.value))
  return word === undefined ? undefined : `\`hostname ${word.text}\` may set the host name`
}

export const printfRule: ArgumentRule = (args) => {
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
export const testRule: ArgumentRule = (args) => {
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
export const versionQuery = (name: string, ...forms: ReadonlyArray<string>): ArgumentRule => (args) =>
  args.length === 1 && args[0]!.literal && forms.includes(args[0]!.value)
    ? undefined
    : `\`${name}\` runs programs; only \`${name} ${forms.join("` or `")}\` is read-only`

export const cdRule: ArgumentRule = grammar("cd", { flags: "LPe@" }, atMostOperands("cd", 1, "is an error"))

export const envRule: ArgumentRule = (args) =>
  args.every((word) => word.literal && (word.value === "-0" || word.value === "--null"))
    ? undefined
    : "`env` with arguments runs a command or changes the environment"

export const jqRule: ArgumentRule = (args, words) => {
  const parsed = parseOptions(
    {
      flags: "nRscrjaSCMehV",
      values: "fL",
      long: "null-input,raw-input,slurp,compact-output,raw-output,raw-output0,join-output,ascii-output,sort-keys," +
        "color-output,monochrome-output,tab,indent=,unbuffered,stream,stream-errors,seq,exit-status,from-file=," +
        "arg=,argjson=,slurpfile=,rawfile=,args,jsonargs,help,version,build-configuration",
      permute: true
    },
    args,
    words.isOperand
  )
  if (parsed._tag === "Unknown") return `\`jq\`: ${parsed.reason}, so it is not known to be read-only`
  // `--arg NAME VALUE` and friends take two words; the parser took one: the rest are operands either way.
  return undefined
}
