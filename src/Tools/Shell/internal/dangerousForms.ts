/**
 * The known-dangerous forms an allow rule never grants unless it names them: per program, the options that write
 * files or run other programs (`git log --output`, `npm --script-shell`, `find -exec`, `sort -o`), abbreviations of
 * them, and git's global options that reconfigure or relocate it. Also git's global option grammar, which deny and
 * ask rules use to read `git -C dir commit` as `git commit`.
 *
 * @internal
 */
import type { ShellWord } from "../Analysis.js"
import { unwrap } from "../Wrappers.js"

/** The program's name without its directory (`/usr/bin/git` is `git`). */
export const baseName = (word: string): string => word.slice(word.lastIndexOf("/") + 1)

/** git's global options, with whether each takes a separate value: `git -C dir commit` is `git commit` to a rule. */
export const gitGlobalOptions: ReadonlyMap<string, boolean> = new Map([
  ["-C", true],
  ["-c", true],
  ["--config-env", true],
  ["--git-dir", true],
  ["--work-tree", true],
  ["--namespace", true],
  ["--exec-path", false],
  ["-p", false],
  ["--paginate", false],
  ["-P", false],
  ["--no-pager", false],
  ["--bare", false],
  ["--no-replace-objects", false],
  ["--literal-pathspecs", false],
  ["--glob-pathspecs", false],
  ["--noglob-pathspecs", false],
  ["--icase-pathspecs", false],
  ["--no-optional-locks", false],
  ["--no-lazy-fetch", false],
  ["--no-advice", false],
  ["--super-prefix", true]
])

/** Options an allow rule never grants unless the rule itself names them: they write files or run other programs. */
interface DangerousOptions {
  readonly long?: ReadonlyArray<string>
  readonly short?: string
  readonly singleDash?: ReadonlyArray<string>
}

const dangerousOptions: Readonly<Record<string, DangerousOptions>> = {
  npm: {
    long: [
      "script-shell",
      "node-options",
      "userconfig",
      "globalconfig",
      "call",
      "shell",
      "editor",
      "browser",
      "viewer",
      "git"
    ]
  },
  pnpm: { long: ["script-shell", "node-options", "userconfig", "globalconfig", "shell-emulator", "config"] },
  yarn: { long: ["script-shell", "node-options", "userconfig", "globalconfig"] },
  npx: { long: ["script-shell", "node-options", "userconfig", "globalconfig", "call", "shell"], short: "c" },
  find: { singleDash: ["exec", "execdir", "ok", "okdir", "delete", "fprint", "fprint0", "fprintf", "fls"] },
  sort: { long: ["output", "compress-program"], short: "o" },
  rg: { long: ["pre", "hostname-bin"] },
  tar: {
    long: [
      "to-command",
      "use-compress-program",
      "checkpoint-action",
      "info-script",
      "new-volume-script",
      "rsh-command",
      "rmt-command"
    ],
    short: "IF"
  },
  rsync: { long: ["rsh", "rsync-path"], short: "e" },
  ssh: { short: "oF" },
  scp: { short: "oFS" },
  sftp: { short: "oFS" }
}

/** git: global options that reconfigure or relocate it, and per-subcommand options that write or run programs. */
const gitDangerousGlobals: ReadonlySet<string> = new Set([
  "-c",
  "--config-env",
  "--exec-path",
  "-C",
  "--git-dir",
  "--work-tree"
])
const gitDangerousLong: ReadonlyArray<string> = [
  "output",
  "ext-diff",
  "open-files-in-pager",
  "exec",
  "upload-pack",
  "receive-pack",
  "extcmd",
  "template",
  "config"
]
const gitDangerousShort: Readonly<Record<string, string>> = {
  grep: "O",
  rebase: "x",
  difftool: "x",
  clone: "uc",
  "ls-remote": "u"
}
const gitDangerousWords: Readonly<Record<string, string>> = {
  submodule: "foreach",
  bisect: "run",
  "filter-branch": "",
  difftool: "",
  mergetool: ""
}

const mentions = (content: string, option: string): boolean => content.includes(option)

/**
 * Why a command an allow rule matched is a known-dangerous form the rule does not name, or `undefined`:
 * `Bash(git log:*)` allows `git log`, not `git log --output=x` (nor `--out=x`: an abbreviation of a dangerous option
 * is that option); `Bash(npm test:*)` does not allow `--script-shell=./x`; `Bash(git * main)` does not allow
 * `git -c core.fsmonitor=x ...`. A word that could expand to an option counts as one.
 */
export const dangerousForm = (
  words: ReadonlyArray<ShellWord>,
  content: string,
  isOperand: (word: ShellWord) => boolean
): string | undefined => {
  const name = words[0]
  if (name === undefined || !name.literal) return undefined
  const program = baseName(name.value)
  const isGit = program === "git"
  const spec = isGit ? undefined : dangerousOptions[program]
  if (!isGit && spec === undefined) {
    if (
      program === "sed" &&
      words.slice(1).some((word) => word.literal && /e/.test(word.value) && unwrap(words)._tag === "Opaque")
    ) return "`sed` runs commands (`e`)"
    return undefined
  }
  let subcommand: string | undefined
  for (let i = 1; i < words.length; i++) {
    const word = words[i]!
    if (word.literal && word.value === "--") break
    if (!word.literal) {
      if (isOperand(word)) continue
      return `\`${word.text}\` could expand to an option the rule does not name`
    }
    const value = word.value
    if (isGit && subcommand === undefined) {
      if (!value.startsWith("-")) {
        subcommand = value
        const marker = gitDangerousWords[value]
        if (
          marker !== undefined && (marker === "" || words.some((w) => w.value === marker)) &&
          !mentions(content, marker === "" ? value : marker)
        ) {
          return `\`git ${value}${marker === "" ? "" : ` ${marker}`}\` runs programs`
        }
        continue
      }
      const flag = value.split("=", 1)[0]!
      if (gitDangerousGlobals.has(flag) && !mentions(content, flag)) {
        return `git's global option \`${flag}\` reconfigures or relocates git`
      }
      if (gitGlobalOptions.get(flag) === true && !value.includes("=")) i++
      continue
    }
    if (value.startsWith("--") && value.length > 2) {
      const option = value.slice(2).split("=", 1)[0]!
      const list = isGit ? gitDangerousLong : spec!.long ?? []
      // `--template` and `--config` install hooks or configuration only for `git clone`, `init` and `submodule`.
      const hit = list.find((dangerous) =>
        dangerous.startsWith(option) &&
        !(isGit && (dangerous === "template" || dangerous === "config") &&
          !["clone", "init", "submodule"].includes(subcommand ?? ""))
      )
      if (
        hit !== undefined && !mentions(content, `--${hit}`) &&
        !(option.length < hit.length && mentions(content, `--${option}`))
      ) {
        return hit === option
          ? `\`--${hit}\` writes files or runs programs`
          : `\`--${option}\` abbreviates \`--${hit}\`, which writes files or runs programs`
      }
      continue
    }
    if (value.startsWith("-") && value.length > 1) {
      const single = spec?.singleDash?.find((dangerous) => value === `-${dangerous}`)
      if (single !== undefined && !mentions(content, `-${single}`)) {
        return `\`-${single}\` runs commands, deletes or writes files`
      }
      const letters = isGit ? gitDangerousShort[subcommand ?? ""] ?? "" : spec?.short ?? ""
      if (spec?.singleDash === undefined) {
        for (const letter of value.slice(1)) {
          if (letters.includes(letter) && !mentions(content, `-${letter}`)) {
            return `\`-${letter}\` writes files or runs programs`
          }
        }
      }
    }
  }
  return undefined
}
