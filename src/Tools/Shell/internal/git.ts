/**
 * `git` as a read-only command: safe global options, read-only subcommands with their option grammars, listing forms
 * of `branch`/`tag`/`remote`/`reflog`/`stash`, read forms of `config` (local ones only: `--global`, `--system` and
 * `--file` read outside the workspace), and the repository check of `./gitRepository.ts`.
 *
 * @internal
 */
import type { ShellWord } from "../Analysis.js"
import type { OptionGrammar } from "../Options.js"
import { grammar, opaque } from "./argumentRules.js"
import type { ArgumentRule, Words } from "./argumentRules.js"

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
  "patch,no-patch,unified=,output-indicator-new=,output-indicator-old=,output-indicator-context=,raw,patch-with-raw," +
  "indent-heuristic,no-indent-heuristic,minimal,patience,histogram,anchored=,diff-algorithm=,stat?,compact-summary," +
  "numstat,shortstat,dirstat?,cumulative,dirstat-by-file?,summary,patch-with-stat,name-only,name-status,submodule?," +
  "color?,no-color,color-moved?,no-color-moved,color-moved-ws=,no-color-moved-ws,word-diff?,word-diff-regex=," +
  "color-words?,no-renames,rename-empty,no-rename-empty,check,ws-error-highlight=,full-index,binary,abbrev?," +
  "break-rewrites?,find-renames?,find-copies?,find-copies-harder,irreversible-delete,diff-filter=,find-object=," +
  "pickaxe-all,pickaxe-regex,skip-to=,rotate-to=,relative?,no-relative,text,ignore-cr-at-eol,ignore-space-at-eol," +
  "ignore-space-change,ignore-all-space,ignore-blank-lines,ignore-matching-lines=,inter-hunk-context=," +
  "function-context,exit-code,quiet,no-ext-diff,no-textconv,ignore-submodules?,src-prefix=,dst-prefix=,no-prefix," +
  "default-prefix,line-prefix=,ita-invisible-in-index,ita-visible-in-index,merge-base,cached,staged,no-index,base," +
  "ours,theirs,combined-all-paths,dd,cc,diff-merges=,no-diff-merges,remerge-diff,stat-width=,stat-name-width=," +
  "stat-graph-width=,stat-count="
const gitLogLong =
  "oneline,pretty?,format=,abbrev-commit,no-abbrev-commit,encoding=,expand-tabs?,no-expand-tabs,notes?,no-notes," +
  "show-notes?,show-signature,no-show-signature,relative-date,date=,parents,children,left-right,graph," +
  "show-linear-break?,decorate?,no-decorate,decorate-refs=,decorate-refs-exclude=,clear-decorations,source,mailmap," +
  "no-mailmap,use-mailmap,no-use-mailmap,full-diff,log-size,max-count=,skip=,since=,after=,until=,before=," +
  "since-as-filter=,author=,committer=,grep-reflog=,grep=,all-match,invert-grep,regexp-ignore-case,basic-regexp," +
  "extended-regexp,fixed-strings,perl-regexp,remove-empty,merges,no-merges,min-parents=,max-parents=," +
  "no-min-parents,no-max-parents,first-parent,exclude-first-parent-only,not,all,branches?,tags?,remotes?,glob=," +
  "exclude=,exclude-hidden=,reflog,alternate-refs,single-worktree,ignore-missing,bisect,cherry-mark,cherry-pick," +
  "left-only,right-only,cherry,walk-reflogs,merge,boundary,simplify-by-decoration,show-pulls,full-history,dense," +
  "sparse,simplify-merges,ancestry-path?,topo-order,date-order,author-date-order,reverse,no-walk?,do-walk,count," +
  "follow,no-follow,show-origin,end-of-options"
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
    long: "short,branch,show-stash,porcelain?,long,verbose,untracked-files?,ignore-submodules?,ignored?,column?," +
      "no-column,ahead-behind,no-ahead-behind,renames,no-renames,find-renames?,null",
    permute: true
  },
  blame: {
    flags: "bclnpsfteMCwh",
    values: "LS",
    long:
      "porcelain,line-porcelain,incremental,root,show-stats,progress,no-progress,score-debug,show-name,show-number," +
      "show-email,abbrev?,date=,reverse,first-parent,encoding=,contents=,ignore-rev=,ignore-revs-file=,color-lines," +
      "color-by-age,minimal,end-of-options",
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
    long: "show-toplevel,git-dir,absolute-git-dir,git-common-dir,is-inside-work-tree,is-inside-git-dir," +
      "is-bare-repository,is-shallow-repository,show-prefix,show-cdup,short?,abbrev-ref?,symbolic," +
      "symbolic-full-name,verify,quiet,sq,sq-quote,not,all,branches?,tags?,remotes?,glob=,exclude=,default=," +
      "prefix=,local-env-vars,resolve-git-dir=,git-path=,show-superproject-working-tree,shared-index-path," +
      "show-object-format?,show-ref-format,since=,after=,until=,before=,revs-only,no-revs,flags,no-flags," +
      "disambiguate=,stop-at-non-option,keep-dashdash,path-format=,end-of-options",
    permute: true
  },
  "ls-files": {
    flags: "cdmoiskuvtfz",
    values: "xX",
    long: "cached,deleted,modified,others,ignored,stage,directory,no-empty-directory,unmerged,killed,exclude=," +
      "exclude-from=,exclude-per-directory=,exclude-standard,error-unmatch,with-tree=,full-name,recurse-submodules," +
      "abbrev?,debug,eol,deduplicate,sparse,format=,resolve-undo",
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
      "batch?,batch-check?,batch-all-objects,buffer,unordered,follow-symlinks,allow-unknown-type,mailmap,use-mailmap," +
      "no-mailmap,path=,Z",
    permute: true
  },
  grep: {
    flags: "aiIwvhHEGFPnlLcozqrW",
    values: "efABCm",
    numeric: true,
    long: "cached,no-index,untracked,no-exclude-standard,exclude-standard,recurse-submodules,text,no-textconv," +
      "ignore-case,max-depth=,recursive,no-recursive,word-regexp,invert-match,full-name,extended-regexp," +
      "basic-regexp,perl-regexp,fixed-strings,line-number,column,files-with-matches,name-only,files-without-match," +
      "null,only-matching,count,color?,no-color,break,heading,show-function,context=,after-context=," +
      "before-context=,function-context,max-count=,threads=,and,or,not,all-match,quiet",
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

export const gitRule: ArgumentRule = (args, words) => {
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
  const problem = gitSubcommands[subcommand.value]!(args.slice(i + 1), words)
  if (problem !== undefined) return problem
  const repository = words.gitRepositoryProblem()
  return repository === undefined ? undefined : `\`git ${subcommand.value}\`: ${repository}`
}
