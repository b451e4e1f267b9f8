/**
 * The vocabulary of the read-only argument rules (`../ReadOnly.ts` and its per-family modules): what a rule may ask
 * about its words, the rule type, and the grammar-based rule builder.
 *
 * @internal
 */
import type { ShellWord } from "../Analysis.js"
import { parseOptions } from "../Options.js"
import type { OptionGrammar, ParsedOptions } from "../Options.js"

/** What a command's argument rule may ask about its words. */
export interface Words {
  /** The word expands only to operands (never to something starting with `-`). */
  readonly isOperand: (word: ShellWord) => boolean
  /**
   * Why git, run in the directories the command may run in, would not be read-only there: the repository it finds
   * is configured by files the model could have written (see `./gitRepository.ts`). `undefined` when it is fine.
   */
  readonly gitRepositoryProblem: () => string | undefined
}

/** A per-command argument rule: `undefined` when the arguments are acceptable, else why not. */
export type ArgumentRule = (args: ReadonlyArray<ShellWord>, words: Words) => string | undefined

// -----------------------------------------------------------------------------
// argument helpers
// -----------------------------------------------------------------------------

export const anyArguments: ArgumentRule = () => undefined

export const show = (word: ShellWord): string => `\`${word.text}\``

export const opaque = (word: ShellWord): string => `argument ${show(word)} is not literal and could expand to an option`

/** A command read with a grammar, then checked by `check` (operand counts, option combinations). */
export const grammar = (
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

/**
 * How many operands the shell will pass for these words: a glob, a brace expansion or an unquoted expansion can be
 * any number of words (bash passes every match), so such a word counts as infinitely many.
 */
export const operandCount = (operands: ReadonlyArray<ShellWord>): number =>
  operands.some((word) => word.glob || word.brace || word.unquotedExpansion) ? Infinity : operands.length

export const atMostOperands =
  (name: string, count: number, why: string) =>
  (parsed: Extract<ParsedOptions, { _tag: "Parsed" }>): string | undefined => {
    const counted = operandCount(parsed.operands)
    if (counted <= count) return undefined
    return counted === Infinity
      ? `\`${name}\` with an operand that can expand to several words (a glob, a brace or an unquoted expansion) ${why}`
      : `\`${name}\` with ${counted} operands ${why}`
  }

/**
 * Commands with no option at all (in their full, real option set) that writes, runs a program, or reads files no
 * argument names.
 */
export const inertCommands: ReadonlySet<string> = new Set([
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
export const gnu = (long: string): string => `${long},help,version`
