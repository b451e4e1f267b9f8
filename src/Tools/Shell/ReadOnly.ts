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
 * - No variable assignment, neither alone (`X=1`) nor as a prefix (`X=1 cmd`), except a locale or time-zone prefix
 *   with a plain value (`LANG=C`, `LC_ALL=C.UTF-8`, `TZ=UTC`): programs read those only to pick a language or clock.
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
import type { ShellAnalysis, ShellAssignment, ShellRedirection, ShellWord, SimpleCommand } from "./Analysis.js"
import { anyArguments, atMostOperands, gnu, grammar, show } from "./internal/argumentRules.js"
import type { ArgumentRule, Words } from "./internal/argumentRules.js"
import {
  cdRule,
  dateRule,
  diffGrammar,
  envRule,
  findRule,
  grepGrammar,
  hostnameRule,
  jqRule,
  lsGrammar,
  printfRule,
  sumGrammar,
  testRule,
  versionQuery
} from "./internal/commandRules.js"
import { gitRule } from "./internal/git.js"
import { gitRepositoryProblem } from "./internal/gitRepository.js"
import { sedRule } from "./internal/sed.js"
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
        "after-context=,before-context=,context=,case-sensitive,color=,colors=,column,no-column,count,count-matches," +
        "crlf,no-crlf,debug,trace,dfa-size-limit=,encoding=,engine=,fixed-strings,no-fixed-strings,follow," +
        "no-follow,glob=,iglob=,glob-case-insensitive,no-glob-case-insensitive,heading,no-heading,hidden,no-hidden," +
        "ignore-case,ignore-file=,ignore-file-case-insensitive,include-zero,invert-match,no-invert-match,json," +
        "no-json,line-buffered,block-buffered,line-number,no-line-number,line-regexp,max-columns=," +
        "max-columns-preview,max-count=,max-depth=,max-filesize=,mmap,no-mmap,multiline,no-multiline," +
        "multiline-dotall,no-config,no-ignore,no-ignore-dot,no-ignore-exclude,no-ignore-files,no-ignore-global," +
        "no-ignore-parent,no-ignore-vcs,no-messages,null,null-data,one-file-system,only-matching,passthru," +
        "path-separator=,pcre2,no-pcre2,pcre2-version,quiet,regex-size-limit=,regexp=,replace=,smart-case,sort=," +
        "sortr=,stats,text,no-text,threads=,trim,no-trim,type=,type-not=,type-list,type-add=,type-clear=," +
        "unrestricted,vimgrep,with-filename,no-filename,word-regexp,files,files-with-matches,files-without-match," +
        "help,version,hyperlink-format=,field-context-separator=,field-match-separator=,context-separator=," +
        "no-context-separator,byte-offset,binary,no-binary,auto-hybrid-regex,no-unicode,unicode,max-depth=," +
        "no-require-git,sort-files,no-sort-files",
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
        "null,all,apparent-size,block-size=,bytes,total,dereference-args,max-depth=,human-readable,inodes,si," +
          "count-links,dereference,separate-dirs,summarize,threshold=,time?,time-style=,exclude-from=,exclude=," +
          "one-file-system,no-dereference"
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
        "all,block-size=,human-readable,si,inodes,local,output?,portability,print-type,type=,exclude-type=,total," +
          "sync,no-sync"
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
        "canonicalize-existing,canonicalize-missing,logical,physical,quiet,relative-to=,relative-base=,strip," +
          "no-symlinks,zero"
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
        "body-numbering=,section-delimiter=,footer-numbering=,header-numbering=,line-increment=,join-blank-lines=," +
          "number-format=,no-renumber,number-separator=,starting-line-number=,number-width="
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
        "ignore-leading-blanks,dictionary-order,ignore-case,general-numeric-sort,ignore-nonprinting,month-sort," +
          "human-numeric-sort,numeric-sort,random-sort,random-source=,reverse,sort=,version-sort,batch-size=,check?," +
          "key=,merge,buffer-size=,stable,field-separator=,parallel=,unique,zero-terminated,debug"
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
      long: "gitignore,ignore-case,matchdirs,metafirst,prune,noreport,dirsfirst,filesfirst,du,si,charset=,filelimit=," +
        "timefmt=,sort=,help,version,noindent,nolinks,hintro=,houtro=,info",
      permute: true
    })
  ],
  [
    "file",
    grammar("file", {
      flags: "bcdEhikLlNnrsvzZ0",
      values: "emFfP",
      long: gnu(
        "brief,mime,mime-type,mime-encoding,keep-going,dereference,no-dereference,raw,special-files,uncompress," +
          "uncompress-noreport,no-pad,separator=,files-from=,magic-file=,exclude=,exclude-quiet=,extension,apple," +
          "parameter=,print0,checking-printout,debug,no-buffer"
      ),
      permute: true
    })
  ],
  [
    "xxd",
    grammar("xxd", {
      singleDash:
        "a,autoskip,b,bits,c=,cols=,C,capitalize,d,E,EBCDIC,e,g=,groupsize=,h,help,i,include,l=,len=,n=,name=,o=," +
        "offset=,p,ps,postscript,plain,s=,seek=,u,v,version,R=",
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

/** The repository check for every directory a command may run in (the process's directory without a context). */
const gitRepositoryCheck = (context: ClassifyContext | undefined): () => string | undefined => {
  let answer: { readonly problem: string | undefined } | undefined
  return () => {
    if (answer === undefined) {
      const directories = context?.directories ?? [process.cwd()]
      const problems = directories.map(gitRepositoryProblem).filter((problem) => problem !== undefined)
      answer = { problem: directories.length === 0 ? "no directory to run in is known" : problems[0] }
    }
    return answer.problem
  }
}

const noWords: Words = { isOperand: () => false, gitRepositoryProblem: gitRepositoryCheck(undefined) }

/**
 * Locale and time-zone variables a command may be given (`LANG=C git log -1`): programs only read them to choose a
 * language, collation or clock, with a plain literal value (no `/`: `TZ=:/path` and locale paths name files).
 */
const harmlessAssignment = (assignment: ShellAssignment): boolean =>
  /^(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|NO_COLOR)$/.test(assignment.name) && !assignment.append &&
  assignment.value !== undefined && assignment.value.literal && /^[A-Za-z0-9_.@:+-]*$/.test(assignment.value.value) &&
  assignment.text === `${assignment.name}=${assignment.value.text}`

const commandProblem = (command: SimpleCommand, words: Words): string | undefined => {
  if (command.assignments.length > 0 && !(command.words.length > 0 && command.assignments.every(harmlessAssignment))) {
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
  const words: Words = { isOperand: operandProof(analysis, context), gitRepositoryProblem: gitRepositoryCheck(context) }
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
  isOperand: (word: ShellWord) => boolean,
  context?: ClassifyContext
): string | undefined => commandProblem(command, { isOperand, gitRepositoryProblem: gitRepositoryCheck(context) })

/**
 * Why a single simple command is not read-only, or `undefined` when it is (ignoring the rest of its
 * compound command; non-literal words that could be options are not read-only).
 *
 * @since 0.1.0
 * @category classification
 */
export const simpleCommandProblem = (command: SimpleCommand): string | undefined => commandProblem(command, noWords)
