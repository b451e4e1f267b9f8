/**
 * The simple file commands that acceptEdits mode accepts, as Claude Code documents it: `mkdir`, `touch`, `mv` and
 * `cp` whose every path is inside the working directories.
 *
 * `fileCommandPaths` reads such a command with the options each one has that only create, copy or move the named
 * files (a positive list: `cp -L`/`-H`, which copy what a symlink points to, and every option not listed, are not
 * simple file commands) and returns the words that are paths, each as read (a `cp` source) or written. It says
 * nothing about where the paths lead: the plan resolves them, through symlinks, and claims them only when every one
 * is inside the workspace.
 *
 * @since 0.2.0
 */
import type { ShellWord, SimpleCommand } from "./Analysis.js"
import { parseOptions } from "./Options.js"
import type { OptionGrammar } from "./Options.js"
import { redirectionProblem } from "./ReadOnly.js"
import { literalWord } from "./Wrappers.js"

/**
 * A path a file command touches.
 *
 * @since 0.2.0
 * @category models
 */
export interface FilePath {
  readonly word: ShellWord
  readonly access: "read" | "write"
}

/**
 * The names of the simple file commands.
 *
 * @since 0.2.0
 * @category models
 */
export const fileCommandNames: ReadonlySet<string> = new Set(["mkdir", "touch", "mv", "cp"])

interface FileGrammar {
  readonly options: OptionGrammar
  /** Options whose value is a path, with its access. */
  readonly pathValues: Readonly<Record<string, "read" | "write">>
  /** How operands are touched: every one written (`mkdir`, `touch`), or sources then a destination (`mv`, `cp`). */
  readonly operands: "write" | "move" | "copy"
}

const grammars: Readonly<Record<string, FileGrammar>> = {
  mkdir: {
    options: { flags: "pv", values: "m", long: "parents,verbose,mode=,help,version", permute: true },
    pathValues: {},
    operands: "write"
  },
  touch: {
    options: {
      flags: "acfhm",
      values: "drt",
      long: "no-create,date=,reference=,time=,no-dereference,help,version",
      permute: true
    },
    pathValues: { "-r": "read", "--reference": "read" },
    operands: "write"
  },
  mv: {
    options: {
      flags: "bfinuvTZ",
      values: "St",
      long:
        "backup?,force,interactive,no-clobber,strip-trailing-slashes,suffix=,target-directory=,no-target-directory," +
        "update?,verbose,context,exchange,no-copy,help,version",
      permute: true
    },
    pathValues: { "-t": "write", "--target-directory": "write" },
    operands: "move"
  },
  cp: {
    options: {
      flags: "abdfilnprsuvxPRT",
      values: "St",
      long:
        "archive,attributes-only,backup?,copy-contents,force,interactive,link,no-clobber,no-dereference,preserve?," +
        "no-preserve=,parents,recursive,reflink?,remove-destination,sparse=,strip-trailing-slashes,symbolic-link," +
        "suffix=,target-directory=,no-target-directory,update?,verbose,one-file-system,debug," +
        "keep-directory-symlink,help,version",
      permute: true
    },
    pathValues: { "-t": "write", "--target-directory": "write" },
    operands: "copy"
  }
}

/**
 * The paths a simple file command touches, or why it is not one (another command, an option not on its list, a
 * word that could expand to an option, an assignment, a writing redirection). `isOperand` proves non-literal words
 * are operands, as in `ReadOnly`.
 *
 * @since 0.2.0
 * @category classification
 */
export const fileCommandPaths = (
  command: SimpleCommand,
  isOperand: (word: ShellWord) => boolean
): ReadonlyArray<FilePath> | string => {
  const [name, ...args] = command.words
  if (name === undefined || !name.literal || name.quoted || !Object.hasOwn(grammars, name.value)) {
    return "not a simple file command"
  }
  if (command.assignments.length > 0) return "assigns variables for the command"
  const redirection = command.redirections.find((r) => redirectionProblem(r) !== undefined)
  if (redirection !== undefined) return `redirection \`${redirection.text}\` writes a file`
  const grammar = grammars[name.value]!
  const parsed = parseOptions(grammar.options, args, isOperand)
  if (parsed._tag === "Unknown") return `\`${name.value}\`: ${parsed.reason}`
  const paths: Array<FilePath> = []
  let target = false
  for (const option of parsed.options) {
    const access = grammar.pathValues[option.name]
    if (access === undefined) continue
    if (option.value === undefined) return `\`${name.value} ${option.name}\` needs a path`
    const word = typeof option.value === "string" ? literalWord(option.value) : option.value
    paths.push({ word, access })
    if (access === "write") target = true
  }
  const operands = parsed.operands
  if (operands.length === 0 && !target) return `\`${name.value}\` without a path`
  operands.forEach((word, i) => {
    const last = i === operands.length - 1 && !target
    const access = grammar.operands === "write" || grammar.operands === "move" || last ? "write" : "read"
    paths.push({ word, access })
  })
  return paths
}
