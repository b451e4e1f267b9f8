/**
 * What a simple command runs besides itself: wrappers (`env`, `timeout`, `nice`, `xargs`, `flock`, `sudo`, ...)
 * read by their real option grammar, shell text run a second time (`sh -c`, `eval`, `trap`, `alias`, `su -c`,
 * `script -c`, `watch`, `find -exec`, `git rebase --exec`), and the forms whose code nobody can see (an interpreter
 * fed code on standard input, a here-document or `-c`/`-e`; `source`; an unknown wrapper; a git command-line
 * alias or configuration that runs programs).
 *
 * {@link unwrap} answers one step: the command it runs (`Command`), shell text it runs (`Script`), that it runs
 * something unknowable (`Opaque`, with the words known to start it, when any), or nothing (`None`). `BashRule`
 * follows the steps for deny and ask rules, and fails closed on `Opaque`.
 *
 * @since 0.2.0
 */
import type { ShellWord, SimpleCommand } from "./Analysis.js"
import { parseOptions } from "./Options.js"
import type { GivenOption, OptionGrammar } from "./Options.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * One step of unwrapping a simple command.
 *
 * @since 0.2.0
 * @category models
 */
export type Unwrapped =
  | { readonly _tag: "Command"; readonly words: ReadonlyArray<ShellWord> }
  | { readonly _tag: "Script"; readonly text: string }
  | { readonly _tag: "Opaque"; readonly reason: string; readonly known: ReadonlyArray<ShellWord> }
  | { readonly _tag: "None" }

const none: Unwrapped = { _tag: "None" }
const command = (words: ReadonlyArray<ShellWord>): Unwrapped => (words.length === 0 ? none : { _tag: "Command", words })
const opaque = (reason: string, known: ReadonlyArray<ShellWord> = []): Unwrapped => ({ _tag: "Opaque", reason, known })
const script = (word: ShellWord | string | undefined, what: string): Unwrapped => {
  if (word === undefined) return opaque(`${what} without its text`)
  if (typeof word === "string") return { _tag: "Script", text: word }
  return word.literal
    ? { _tag: "Script", text: word.value }
    : opaque(`${what} runs text only known when it runs (\`${word.text}\`)`)
}

/** A word written as plain literal text (`value` as is, nothing to expand). */
export const literalWord = (value: string): ShellWord => ({
  text: value,
  value,
  literal: true,
  expansion: false,
  glob: false,
  brace: false,
  quoted: false,
  prefix: value,
  unquotedExpansion: false
})

const valueOf = (option: GivenOption): ShellWord | undefined =>
  option.value === undefined ? undefined : typeof option.value === "string" ? literalWord(option.value) : option.value

/** The program's name without its directory (`/usr/bin/git` is `git`). */
export const baseName = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

// -----------------------------------------------------------------------------
// wrappers with a grammar
// -----------------------------------------------------------------------------

/** Reads a `+`-style grammar (options end at the first operand) and hands the rest to `then`. */
const wrapper = (
  name: string,
  grammar: OptionGrammar,
  then: (options: ReadonlyArray<GivenOption>, rest: ReadonlyArray<ShellWord>) => Unwrapped
) =>
(args: ReadonlyArray<ShellWord>): Unwrapped => {
  const parsed = parseOptions({ ...grammar, abbreviations: true, permute: false }, args)
  if (parsed._tag === "Unknown") return opaque(`\`${name}\`: ${parsed.reason}`)
  return then(parsed.options, args.slice(parsed.rest))
}

const has = (options: ReadonlyArray<GivenOption>, ...names: ReadonlyArray<string>): GivenOption | undefined =>
  options.find((option) => names.includes(option.name))

/** `env`: options, `NAME=VALUE` words, then the command; `-S` text is split and read again as arguments. */
const envStep = (args: ReadonlyArray<ShellWord>, depth = 0): Unwrapped => {
  const grammar: OptionGrammar = {
    flags: "0iv",
    values: "uCSa",
    long: "null,ignore-environment,unset=,chdir=,split-string=,debug,block-signal?,default-signal?,ignore-signal?," +
      "list-signal-handling,argv0=,help,version",
    abbreviations: true
  }
  const parsed = parseOptions(grammar, args)
  if (parsed._tag === "Unknown") return opaque(`\`env\`: ${parsed.reason}`)
  let rest = args.slice(parsed.rest)
  const split = has(parsed.options, "-S", "--split-string")
  if (split !== undefined) {
    const text = valueOf(split)
    if (text === undefined || !text.literal || /[\\$'"#{}]/.test(text.value) || depth > 3) {
      return opaque("`env -S` splits text with its own quoting and expansion rules")
    }
    const words = text.value.split(/\s+/).filter((word) => word.length > 0).map(literalWord)
    return envStep([...words, ...rest], depth + 1)
  }
  while (rest[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(rest[0].value)) {
    const name = rest[0].value.slice(0, rest[0].value.indexOf("="))
    if (namesProgram(name)) return opaque(`\`env ${name}=...\` chooses a program that runs`)
    rest = rest.slice(1)
  }
  return command(rest)
}

const xargsStep = (args: ReadonlyArray<ShellWord>): Unwrapped => {
  const parsed = parseOptions({
    flags: "0oprtx",
    values: "adEIHLnPs",
    optional: "eil",
    long:
      "null,arg-file=,delimiter=,eof?,replace?,max-lines?,max-args=,open-tty,max-procs=,interactive,no-run-if-empty," +
      "max-chars=,verbose,show-limits,exit,process-slot-var=,help,version",
    abbreviations: true
  }, args)
  if (parsed._tag === "Unknown") return opaque(`\`xargs\`: ${parsed.reason}`)
  const inner = args.slice(parsed.rest)
  const words = inner.length === 0 ? [literalWord("echo")] : inner
  // Standard input supplies more arguments (or, with -I, fills the replace string in): only a prefix is known.
  const replace = has(parsed.options, "-I", "-i", "--replace")
  const marker = replace === undefined
    ? undefined
    : (replace.value === undefined ? "{}" : typeof replace.value === "string" ? replace.value : replace.value.value)
  const cut = marker === undefined ? words.length : words.findIndex((word) => word.value.includes(marker))
  const known = cut === -1 ? words : words.slice(0, cut)
  return opaque("`xargs` builds the rest of the command from its input", known)
}

const findStep = (args: ReadonlyArray<ShellWord>): Unwrapped => {
  const index = args.findIndex((word) => ["-exec", "-execdir", "-ok", "-okdir"].includes(word.value))
  if (index === -1) return none
  const rest = args.slice(index + 1)
  const end = rest.findIndex((word) => word.value === ";" || word.value === "+")
  const inner = end === -1 ? rest : rest.slice(0, end)
  const cut = inner.findIndex((word) => word.value.includes("{}") || !word.literal)
  if (cut === -1) return command(inner)
  return opaque("`find -exec` fills file names into the command", inner.slice(0, cut))
}

const interpreterOpaque = (name: string, how: string): Unwrapped => opaque(`\`${name}\` runs code ${how}`)

/** A shell: `-c TEXT` runs TEXT; no script operand (or `-s`, `-`, `/dev/stdin`) reads code from standard input. */
const shellStep = (name: string, args: ReadonlyArray<ShellWord>): Unwrapped => {
  const parsed = parseOptions({
    flags: "abefhkmnptuvxBCEHPTilrsc",
    values: "oO",
    long:
      "norc,noprofile,rcfile=,init-file=,login,noediting,posix,restricted,verbose,version,help,debugger,dump-strings," +
      "dump-po-strings,pretty-print",
    abbreviations: false
  }, args)
  if (parsed._tag === "Unknown") return opaque(`\`${name}\`: ${parsed.reason}`)
  const rest = args.slice(parsed.rest)
  if (has(parsed.options, "-c") !== undefined) return script(rest[0], `\`${name} -c\``)
  if (has(parsed.options, "--version", "--help") !== undefined) return none
  const file = rest[0]
  if (
    file === undefined || has(parsed.options, "-s") !== undefined || ["-", "/dev/stdin"].includes(file.value) ||
    !file.literal
  ) {
    return interpreterOpaque(name, "read from standard input or a here-document")
  }
  return none
}

/** Interpreters: the options that take code inline, and whether no script operand means code on standard input. */
const interpreters: Readonly<
  Record<string, { readonly code: ReadonlyArray<string>; readonly grammar: OptionGrammar }>
> = {
  python: {
    code: ["-c"],
    grammar: {
      flags: "bBdEhiIOPqsSuvVx3",
      values: "cmWX",
      long: "version,help,help-env,help-xoptions,help-all,check-hash-based-pycs="
    }
  },
  node: {
    code: ["-e", "-p", "--eval", "--print"],
    grammar: {
      flags: "hvicp",
      values: "er",
      long:
        "version,help,eval=,print?,require=,import=,loader=,experimental-loader=,input-type=,check,interactive,test," +
        "watch,env-file=,inspect?,inspect-brk?,enable-source-maps,no-warnings,trace-warnings," +
        "experimental-strip-types,experimental-vm-modules,conditions=,stack-size=,max-old-space-size="
    }
  },
  perl: { code: ["-e", "-E"], grammar: { flags: "acnpsTtuUvWXwlS0", values: "eEIMmdxiDCF", long: "version,help" } },
  ruby: {
    code: ["-e"],
    grammar: {
      flags: "acdlnpsSvwWyh",
      values: "eErICFx",
      long: "version,help,verbose,yydebug,disable=,enable=,encoding=,external-encoding=,internal-encoding=,dump=,jit," +
        "backtrace-limit="
    }
  },
  php: {
    code: ["-r", "-B", "-R", "-F", "-E"],
    grammar: { flags: "aCehHilmnqsvw", values: "cdfrBRFEtz", long: "version,help,ini?,rf=,rc=,re=,rz=,ri=" }
  },
  lua: { code: ["-e"], grammar: { flags: "iEvW", values: "el", long: "" } }
}

const interpreterOf = (name: string): string | undefined => {
  if (/^python[0-9.]*$|^pypy[0-9.]*$/.test(name)) return "python"
  if (name === "node" || name === "nodejs") return "node"
  if (/^perl[0-9.]*$/.test(name)) return "perl"
  if (name === "ruby" || name === "php" || name === "lua" || name === "luajit") return name === "luajit" ? "lua" : name
  return undefined
}

const interpreterStep = (name: string, kind: string, args: ReadonlyArray<ShellWord>): Unwrapped => {
  const spec = interpreters[kind]!
  const parsed = parseOptions(spec.grammar, args)
  if (parsed._tag === "Unknown") return opaque(`\`${name}\`: ${parsed.reason}`)
  const inline = parsed.options.find((option) => spec.code.includes(option.name))
  if (inline !== undefined) return interpreterOpaque(name, `given on its command line (\`${inline.name}\`)`)
  if (
    parsed.options.some((option) => ["--version", "--help", "-V", "-v", "-h", "-m", "--check"].includes(option.name))
  ) return none
  const file = args[parsed.rest]
  if (file === undefined || ["-", "/dev/stdin"].includes(file.value) || !file.literal) {
    return interpreterOpaque(name, "read from standard input or a here-document")
  }
  return none
}

/** `awk 'program'`: the program is code; one that can run commands (`system`, a pipe) is opaque. */
const awkStep = (name: string, args: ReadonlyArray<ShellWord>): Unwrapped => {
  const parsed = parseOptions({
    flags: "bcCdDeghiklLMnNoOpPrsStVyz",
    values: "FvfEIlx",
    long: "field-separator=,assign=,file=,exec=,include=,load=,source=,version,help,posix,traditional,sandbox," +
      "characters-as-bytes,re-interval"
  }, args)
  if (parsed._tag === "Unknown") return opaque(`\`${name}\`: ${parsed.reason}`)
  if (
    parsed.options.some((option) =>
      ["-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"].includes(option.name)
    )
  ) return none
  const source = has(parsed.options, "--source")
  const program = source === undefined ? args[parsed.rest] : valueOf(source)
  if (program === undefined) return none
  if (!program.literal || /system|\||getline|@/.test(program.value)) {
    return opaque(`\`${name}\` runs a program that can run commands`)
  }
  return none
}

/** GNU sed runs commands with the `e` command and the `e` flag of `s`. */
const sedExecutes = (text: string): boolean =>
  /(?:^|[;\n{}!\s0-9$/])e(?:\s|;|$)/.test(text) || /s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1[gpiImMw0-9]*e/.test(text)

const sedStep = (args: ReadonlyArray<ShellWord>): Unwrapped => {
  if (args.some((word) => /^-[^-]*f|^--file/.test(word.value))) {
    return opaque("`sed -f` runs a script file this runtime cannot see")
  }
  for (const word of args) {
    if (!word.literal) return opaque(`\`sed\` with a script only known when it runs (\`${word.text}\`)`)
    if (sedExecutes(word.value)) return opaque("`sed` runs commands (`e`)")
  }
  return none
}

const gitStep = (args: ReadonlyArray<ShellWord>): Unwrapped => {
  // Global options: the ones that take a value, and configuration that runs programs.
  let i = 0
  for (; i < args.length; i++) {
    const word = args[i]!
    if (!word.literal) return opaque(`\`git\` with \`${word.text}\`, only known when it runs`, [literalWord("git")])
    const value = word.value
    if (!value.startsWith("-")) break
    if (value === "-c" || value === "--config-env" || value.startsWith("--config-env=")) {
      const setting = value === "-c" || value === "--config-env"
        ? args[++i]
        : literalWord(value.slice("--config-env=".length))
      if (setting === undefined || !setting.literal) return opaque("`git -c` with a setting only known when it runs")
      if (runsPrograms(setting.value)) {
        return opaque(`\`git -c ${setting.value}\` configures a program or alias git runs`)
      }
      continue
    }
    if (value.startsWith("--exec-path=")) return opaque("`git --exec-path` chooses where git's commands come from")
    if (["-C", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--list-cmds"].includes(value)) i++
  }
  const sub = args[i]
  if (sub === undefined) return none
  const rest = args.slice(i + 1)
  const git = literalWord("git")
  if (!gitCommands.has(sub.value)) {
    // An alias from the configuration, or a typo help.autocorrect runs as the nearest command.
    // An alias may be `!shell text`: anything can run, so no word of it is known.
    return opaque(`\`git ${sub.value}\` is not a git command: an alias or autocorrection decides what runs`)
  }
  const synonym = gitSynonyms.get(sub.value)
  if (synonym !== undefined) return command([git, literalWord(synonym), ...rest])
  switch (sub.value) {
    case "rebase": {
      const index = rest.findIndex((word) =>
        word.value === "-x" || word.value === "--exec" || word.value.startsWith("--exec=") || /^-x./.test(word.value)
      )
      if (index === -1) return none
      const word = rest[index]!
      const text = word.value.startsWith("--exec=")
        ? word.value.slice(7)
        : /^-x./.test(word.value)
        ? word.value.slice(2)
        : rest[index + 1]
      return script(text === undefined || typeof text === "string" ? text : text, "`git rebase --exec`")
    }
    case "bisect":
      return rest[0]?.value === "run" ? command(rest.slice(1)) : none
    case "submodule": {
      const index = rest.findIndex((word) => word.value === "foreach")
      if (index === -1) return none
      const words = rest.slice(index + 1).filter((word) => !["--recursive", "-q", "--quiet"].includes(word.value))
      return words.every((word) => word.literal)
        ? script(words.map((word) => word.value).join(" "), "`git submodule foreach`")
        : opaque("`git submodule foreach` runs text only known when it runs")
    }
    case "difftool":
    case "mergetool":
    case "filter-branch":
    case "filter-repo":
      return opaque(`\`git ${sub.value}\` runs configured or given programs`)
    default:
      return none
  }
}

/** Configuration keys whose value git runs as a program (or an alias it expands). */
const runsPrograms = (setting: string): boolean => {
  const key = setting.split("=", 1)[0]!.toLowerCase()
  return /^alias\.|^core\.(?:pager|editor|sshcommand|fsmonitor|hookspath|askpass|gitproxy|attributesfile)$|^pager\.|^sequence\.editor$|^diff\.(?:external|.*\.(?:command|textconv))$|^merge\..*\.driver$|^filter\.|^credential\.|^gpg\.|^include(?:if)?\.|^(?:uploadpack|receive)\.|^remote\..*\.(?:uploadpack|receivepack|proxy)$|^(?:diff|merge)tool\.|^protocol\.|^url\.|^http\..*proxy|^ssh\.|^sendemail\.|^init\.templatedir$|^submodule\./
    .test(key)
}

/** git's commands (porcelain and plumbing). Anything else is an alias, an external `git-*` program or a typo. */
const gitCommands: ReadonlySet<string> = new Set(
  `add am annotate apply archive bisect blame branch bundle cat-file check-attr check-ignore
check-mailmap check-ref-format checkout checkout-index cherry cherry-pick citool clean clone column commit commit-graph
commit-tree config count-objects credential daemon describe diagnose diff diff-files diff-index diff-tree difftool
fast-export fast-import fetch fetch-pack filter-branch filter-repo fmt-merge-msg for-each-ref for-each-repo format-patch fsck gc
get-tar-commit-id grep gui hash-object help http-push index-pack init instaweb interpret-trailers log ls-files ls-remote
ls-tree mailinfo mailsplit maintenance merge merge-base merge-file merge-index merge-tree mergetool mktag mktree mv
name-rev notes pack-objects pack-refs prune prune-packed pull push range-diff read-tree rebase receive-pack reflog
remote repack replace request-pull rerere reset restore rev-list rev-parse revert rm send-email send-pack shortlog show
show-branch show-index show-ref sparse-checkout stage stash status stripspace submodule switch symbolic-ref tag
unpack-file unpack-objects update-index update-ref update-server-info upload-archive upload-pack var verify-commit
verify-pack verify-tag version whatchanged worktree write-tree lfs`.split(/\s+/)
)

/** Plumbing that does what a porcelain command does: a rule about the porcelain is about these too. */
const gitSynonyms: ReadonlyMap<string, string> = new Map([["send-pack", "push"], ["http-push", "push"], [
  "stage",
  "add"
], ["annotate", "blame"]])

// -----------------------------------------------------------------------------
// the table
// -----------------------------------------------------------------------------

const joinedScript =
  (what: string) => (_options: ReadonlyArray<GivenOption>, rest: ReadonlyArray<ShellWord>): Unwrapped =>
    rest.every((word) => word.literal)
      ? script(rest.map((word) => word.value).join(" "), what)
      : opaque(`${what} runs text only known when it runs`)

const steps: Readonly<Record<string, (args: ReadonlyArray<ShellWord>) => Unwrapped>> = {
  env: (args) => envStep(args),
  timeout: wrapper("timeout", {
    flags: "v",
    values: "ks",
    long: "kill-after=,signal=,foreground,preserve-status,verbose,help,version"
  }, (_, rest) => command(rest.slice(1))),
  nice: wrapper("nice", { values: "n", numeric: true, long: "adjustment=,help,version" }, (_, rest) => command(rest)),
  nohup: wrapper("nohup", { long: "help,version" }, (_, rest) => command(rest)),
  stdbuf: wrapper("stdbuf", { values: "ioe", long: "input=,output=,error=,help,version" }, (_, rest) => command(rest)),
  setsid: wrapper("setsid", { flags: "cfw", long: "ctty,fork,wait,help,version" }, (_, rest) => command(rest)),
  time: wrapper("time", {
    flags: "apqvV",
    values: "of",
    long: "output=,append,format=,portability,quiet,verbose,help,version"
  }, (_, rest) => command(rest)),
  flock: wrapper("flock", {
    flags: "sexnuoFv",
    values: "wEc",
    long:
      "shared,exclusive,unlock,nonblock,nb,timeout=,wait=,conflict-exit-code=,close,no-fork,command=,verbose,help," +
      "version"
  }, (options, rest) => {
    const text = has(options, "-c", "--command")
    if (text !== undefined) return script(valueOf(text), "`flock -c`")
    const after = rest.slice(1)
    if (after[0] !== undefined && (after[0].value === "-c" || after[0].value === "--command")) {
      return script(after[1], "`flock -c`")
    }
    return command(after)
  }),
  taskset: wrapper(
    "taskset",
    { flags: "pcaV", long: "pid,cpu-list,all-tasks,help,version" },
    (options, rest) => (has(options, "-p", "--pid") !== undefined ? none : command(rest.slice(1)))
  ),
  ionice: wrapper(
    "ionice",
    { flags: "tVh", values: "cnpPu", long: "class=,classdata=,pid=,pgid=,uid=,ignore,help,version" },
    (options, rest) => (has(options, "-p", "-P", "-u", "--pid", "--pgid", "--uid") !== undefined ? none : command(rest))
  ),
  prlimit: wrapper("prlimit", {
    flags: "Vh",
    values: "po",
    optional: "acdefilmnqrstuvxy",
    long:
      "noheadings,output=,pid=,raw,verbose,help,version,as?,core?,cpu?,data?,fsize?,locks?,memlock?,msgqueue?,nice?," +
      "nofile?,nproc?,rss?,rtprio?,rttime?,sigpending?,stack?"
  }, (options, rest) => (has(options, "-p", "--pid") !== undefined ? none : command(rest))),
  chrt: wrapper("chrt", {
    flags: "abdefiomrRvh",
    values: "TPD",
    long: "all-tasks,batch,deadline,fifo,idle,other,rr,reset-on-fork,max,pid,verbose,sched-runtime=,sched-period=," +
      "sched-deadline=,help,version"
  }, (options, rest) => (has(options, "-p", "--pid", "-m", "--max") !== undefined ? none : command(rest.slice(1)))),
  chroot: wrapper(
    "chroot",
    { long: "userspec=,groups=,skip-chdir,help,version" },
    (
      _,
      rest
    ) => (rest.length <= 1 ? opaque("`chroot` without a command runs an interactive shell") : command(rest.slice(1)))
  ),
  command: wrapper(
    "command",
    { flags: "pvV" },
    (options, rest) => (has(options, "-v", "-V") !== undefined ? none : command(rest))
  ),
  builtin: (args) => command(args),
  exec: wrapper("exec", { flags: "cl", values: "a" }, (_, rest) => command(rest)),
  sudo: wrapper("sudo", {
    flags: "AbBEeHiKklNnPSsVv",
    values: "aCcDgpRrTtUu",
    optional: "h",
    long: "askpass,background,bell,close-from=,chdir=,preserve-env?,edit,group=,set-home,help,host=,login," +
      "remove-timestamp,reset-timestamp,list,non-interactive,preserve-groups,prompt=,chroot=,role=,stdin,shell," +
      "type=,command-timeout=,other-user=,user=,version,validate"
  }, (options, rest) => {
    if (rest.length === 0 && has(options, "-s", "-i", "--shell", "--login") !== undefined) {
      return opaque("`sudo -s` runs a shell reading standard input")
    }
    return command(rest)
  }),
  doas: wrapper(
    "doas",
    { flags: "Lns", values: "aCu" },
    (
      options,
      rest
    ) => (rest.length === 0 || has(options, "-s") !== undefined ? opaque("`doas -s` runs a shell") : command(rest))
  ),
  su: wrapper("su", {
    flags: "flmpP",
    values: "cgGsw",
    long: "command=,session-command=,fast,group=,supp-group=,login,preserve-environment,pty,shell=," +
      "whitelist-environment=,help,version"
  }, (options) => {
    const text = has(options, "-c", "--command", "--session-command")
    return text === undefined ? opaque("`su` runs a shell reading standard input") : script(valueOf(text), "`su -c`")
  }),
  script: wrapper("script", {
    flags: "aefqhV",
    values: "cEIOBmT",
    optional: "t",
    long: "append,command=,echo=,return,flush,force,quiet,log-in=,log-out=,log-io=,log-timing=,logging-format=," +
      "output-limit=,timing?,help,version"
  }, (options) => {
    const text = has(options, "-c", "--command")
    return text === undefined
      ? opaque("`script` runs a shell reading standard input")
      : script(valueOf(text), "`script -c`")
  }),
  watch: wrapper(
    "watch",
    {
      flags: "bcCeghprtwxv",
      values: "nq",
      optional: "d",
      long:
        "beep,color,no-color,differences?,errexit,chgexit,interval=,precise,no-rerun,no-title,no-wrap,exec,equexit=," +
        "help,version"
    },
    (options, rest) =>
      has(options, "-x", "--exec") !== undefined ? command(rest) : joinedScript("`watch`")(options, rest)
  ),
  eval: (
    args
  ) => (args.every((word) => word.literal)
    ? script(args.map((word) => word.value).join(" "), "`eval`")
    : opaque("`eval` runs text only known when it runs")),
  trap: (args) => {
    const first = args[0]
    if (first === undefined || (first.literal && ["-l", "-p", "-lp", "-pl"].includes(first.value))) return none
    const text = first.literal && first.value === "--" ? args[1] : first
    return script(text, "`trap`")
  },
  source: () => opaque("`source` runs a file's text as commands"),
  ".": () => opaque("`.` runs a file's text as commands"),
  alias: (args) => {
    const bodies = args.filter((word) => word.value.includes("="))
    if (bodies.some((word) => !word.literal)) return opaque("`alias` defines a command only known when it runs")
    return bodies.length === 0
      ? none
      : { _tag: "Script", text: bodies.map((word) => word.value.slice(word.value.indexOf("=") + 1)).join("\n") }
  },
  // The remote shell runs the joined words (on another machine, perhaps this one).
  ssh: wrapper("ssh", { flags: "46AaCfGgKkMNnqsTtVvXxYy", values: "BbcDEeFIiJLlmOoPpQRSWw" }, (_options, rest) => {
    const remote = rest.slice(1)
    if (rest.length === 0) return none
    if (remote.length === 0) return opaque("`ssh` without a command runs a remote shell reading standard input")
    return joinedScript("`ssh`")([], remote)
  }),
  xargs: xargsStep,
  find: findStep,
  sed: sedStep,
  git: gitStep
}

/** Wrappers whose option grammar is not modelled here: what they run is not known. */
const unknownWrappers: ReadonlySet<string> = new Set([
  "strace",
  "ltrace",
  "valgrind",
  "gdb",
  "lldb",
  "unshare",
  "nsenter",
  "firejail",
  "bwrap",
  "systemd-run",
  "runuser",
  "setpriv",
  "numactl",
  "parallel",
  "xvfb-run",
  "dbus-run-session",
  "dbus-launch",
  "faketime",
  "torsocks",
  "proxychains",
  "proxychains4",
  "catchsegv",
  "pkexec",
  "busybox",
  "caffeinate",
  "fakeroot",
  "sg",
  "nix-shell",
  "tmux",
  "screen",
  "rlwrap",
  "entr",
  "nodemon",
  "chpst",
  "softlimit",
  "envdir",
  "setuidgid",
  "s6-setuidgid",
  "gosu",
  "su-exec",
  "tini",
  "dumb-init",
  "sshpass",
  "cross-env",
  "dotenv",
  "env-cmd",
  "direnv"
])

/** Other interpreters: code on the command line (`-c`, `-e`) or on standard input (no operand) is not visible. */
const otherInterpreters: ReadonlySet<string> = new Set([
  "deno",
  "bun",
  "tclsh",
  "wish",
  "expect",
  "osascript",
  "Rscript",
  "julia",
  "jshell",
  "groovy",
  "scala",
  "guile",
  "racket",
  "sbcl",
  "ocaml",
  "erl",
  "elixir",
  "iex",
  "ghci",
  "runghc"
])

/**
 * Editors take commands on their command line (`vim -c '!x'`, `emacs --eval`) or, for `ed` and `ex`, on standard input.
 */
const editors: ReadonlySet<string> = new Set(["vim", "vi", "nvim", "view", "ex", "ed", "emacs", "nano"])

/** Database shells run shell commands from their input (`.shell`, `\\!`, `system`). */
const databaseShells: ReadonlySet<string> = new Set(["sqlite3", "psql", "mysql", "mariadb"])

/** Package runners: `npm exec CMD`, `pnpm dlx CMD`, `uv run CMD`, ... run CMD (options before it are skipped). */
const runners: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["npm", new Set(["exec", "x"])],
  ["pnpm", new Set(["exec", "dlx"])],
  ["yarn", new Set(["exec", "dlx"])],
  ["uv", new Set(["run"])],
  ["poetry", new Set(["run"])],
  ["pipenv", new Set(["run"])],
  ["pdm", new Set(["run"])],
  ["hatch", new Set(["run"])],
  ["bundle", new Set(["exec"])],
  ["mise", new Set(["exec", "x"])]
])

const shells: ReadonlySet<string> = new Set(["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh"])

/**
 * One step of unwrapping: what the simple command `words` runs besides itself. A path-qualified name counts by
 * its base name (`/usr/bin/env`); `git-push` (an entry point in git's exec path) is `git push`.
 *
 * @since 0.2.0
 * @category unwrapping
 */
export const unwrap = (words: ReadonlyArray<ShellWord>): Unwrapped => {
  const [name, ...args] = words
  if (name === undefined) return none
  if (!name.literal) return opaque(`the command name \`${name.text}\` is only known when it runs`)
  const base = baseName(name.value)
  if (base !== name.value) return command([literalWord(base), ...args])
  if (/^git-[a-z][a-z-]*$/.test(base) && base !== "git-shell") {
    return command([literalWord("git"), literalWord(base.slice(4)), ...args])
  }
  if (Object.hasOwn(steps, base)) return steps[base]!(args)
  if (shells.has(base)) return shellStep(base, args)
  const interpreter = interpreterOf(base)
  if (interpreter !== undefined) return interpreterStep(base, interpreter, args)
  if (/^[gmn]?awk$/.test(base)) return awkStep(base, args)
  if (unknownWrappers.has(base)) return opaque(`\`${base}\` runs commands this runtime cannot see`)
  if (otherInterpreters.has(base)) {
    if (
      args.length === 0 ||
      args.some((word) =>
        !word.literal || /^-(?:c|e|-eval|E|p|-print)$/.test(word.value) || word.value === "eval" || word.value === "-"
      )
    ) {
      return interpreterOpaque(base, "given on its command line or standard input")
    }
    return none
  }
  if (["npx", "pnpx", "bunx", "uvx"].includes(base)) return runnerStep(base, args, 0)
  if (editors.has(base)) {
    if (
      base === "ed" || base === "ex" || args.length === 0 || args.some((word) =>
        !word.literal ||
        /^(?:[-+]|--cmd|--eval|--load|--funcall|--batch|--script)/.test(word.value) &&
          !/^--?(?:version|help)$/.test(word.value)
      )
    ) {
      return opaque(`\`${base}\` runs editor commands this runtime cannot see`)
    }
    return none
  }
  if (databaseShells.has(base)) return opaque(`\`${base}\` can run shell commands from its input`)
  const runner = runners.get(base)
  if (runner !== undefined && args[0] !== undefined && runner.has(args[0].value)) {
    return runnerStep(`${base} ${args[0].value}`, args, 1)
  }
  return none
}

/** A package runner's command: after flags (`-y`, `--quiet`) and `--opt=value` options; `-c TEXT` runs shell text. */
const runnerStep = (name: string, args: ReadonlyArray<ShellWord>, start: number): Unwrapped => {
  let i = start
  while (i < args.length && (!args[i]!.literal || args[i]!.value.startsWith("-"))) {
    const word = args[i]!
    if (!word.literal) return opaque(`\`${name}\` with \`${word.text}\`, only known when it runs`)
    if (word.value === "--") {
      i++
      break
    }
    if (word.value === "-c" || word.value === "--call" || word.value.startsWith("--call=")) {
      return script(word.value.startsWith("--call=") ? word.value.slice(7) : args[i + 1], `\`${name} -c\``)
    }
    if (word.value === "-p" || word.value === "--package") {
      i += 2
      continue
    }
    if (!word.value.includes("=") && !/^-(?:y|q|-yes|-quiet|-silent|-no|-no-install)$/.test(word.value)) {
      return opaque(`\`${name} ${word.value}\`: an option this runtime does not know`)
    }
    i++
  }
  return command(args.slice(i))
}

/**
 * Variables whose value is a program, a command line or code that programs run (`GIT_EDITOR`, `PAGER`,
 * `GIT_SSH_COMMAND`, `LD_PRELOAD`, `PATH`, `BASH_ENV`, `NODE_OPTIONS`...): an assignment of one runs what it names.
 *
 * @since 0.2.0
 * @category unwrapping
 */
export const namesProgram = (name: string): boolean =>
  /EDITOR|PAGER|VISUAL|BROWSER|SHELL|ASKPASS|SSH|EXTERNAL_DIFF|DIFF_OPTS|PROXY_COMMAND|^GIT_|^LD_|^DYLD_|^PATH$|^BASH_ENV$|^ENV$|^PROMPT_COMMAND$|^PS[0-4]$|^IFS$|^NODE_OPTIONS$|^PYTHONSTARTUP$|^PYTHONPATH$|^PERL5OPT$|^PERL5LIB$|^RUBYOPT$|^LESSOPEN$|^LESSCLOSE$|^MANPAGER$|^TAR_OPTIONS$|^npm_config_|^NPM_CONFIG_/i
    .test(name)

/**
 * Why a simple command makes bash evaluate model-chosen text again through a builtin (`let`, `declare -i`,
 * subscripts in `declare`/`export`/`local`/`readonly`/`unset`/`printf -v`/`read`, `test -v a[...]`, `mapfile -C`),
 * or `undefined`.
 *
 * @since 0.2.0
 * @category unwrapping
 */
export const builtinEvaluation = (command: SimpleCommand): string | undefined => {
  const [name, ...args] = command.words
  if (name === undefined || !name.literal) return undefined
  const evaluates = (word: ShellWord) => !word.literal || /[[`$]/.test(word.value)
  switch (name.value) {
    case "let":
      return args.length > 0 ? "`let` evaluates its arguments as arithmetic" : undefined
    case "declare":
    case "typeset":
    case "local":
    case "export":
    case "readonly":
    case "unset":
    case "read":
    case "mapfile":
    case "readarray":
    case "printf":
    case "test":
    case "[":
    case "getopts":
    case "wait":
      if (
        args.some((word) =>
          word.literal &&
          (/^-[a-zA-Z]*[iC]/.test(word.value) && name.value !== "printf" && name.value !== "test" && name.value !== "[")
        )
      ) {
        return `\`${name.value}\` evaluates text as arithmetic or runs a callback`
      }
      return args.some(evaluates) && (name.value !== "printf" || args.some((word) => word.value === "-v")) &&
          (name.value !== "test" && name.value !== "[" ||
            args.some((word) => word.value === "-v" || word.value === "-R"))
        ? `\`${name.value}\` may evaluate a subscript in its arguments`
        : undefined
    default:
      return undefined
  }
}
