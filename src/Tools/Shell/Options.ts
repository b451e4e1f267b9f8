/**
 * Command-line option grammars, as `getopt_long` and its relatives read them, for the shell classifier
 * (`ReadOnly`: which options a read-only command may have) and the wrapper parser (`Wrappers`: where the wrapped
 * command starts).
 *
 * A grammar lists a command's options with their arity: a flag, an option with a required value (attached
 * `-n5`, `--lines=5`, or the next word `-n 5`, `--lines 5`), or an optional value (attached only: `--color`,
 * `--color=auto`). Short options cluster (`-la`); `--` ends the options; with `permute` (GNU's default) options
 * may follow operands, otherwise (`+` in getopt's string, and every wrapper) the first operand ends them.
 *
 * Long options are matched exactly, unless the grammar sets `abbreviations`: then a unique prefix of one of its
 * long options is that option, as getopt_long does (`--split` is `--split-string`). A classifier's positive list
 * is never complete, so it matches exactly: `--out` is not `--outline`, it is an unknown option, and an unknown
 * option is not read-only. A wrapper's grammar is complete, so abbreviations resolve; an ambiguous or unknown one
 * makes the wrapper opaque.
 *
 * @since 0.2.0
 */
import type { ShellWord } from "./Analysis.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * How many values an option takes: none, one (attached or the next word), or an optional attached one.
 *
 * @since 0.2.0
 * @category models
 */
export type Arity = "flag" | "value" | "optional"

/**
 * The options of one command.
 *
 * @since 0.2.0
 * @category models
 */
export interface OptionGrammar {
  /** Short flags (`-a`). */
  readonly flags?: string | undefined
  /** Short options with a required value (`-n 5`, `-n5`). */
  readonly values?: string | undefined
  /** Short options with an optional attached value (`-w`, `-w80`). */
  readonly optional?: string | undefined
  /**
   * Long options without the dashes, comma-separated: `name` a flag, `name=` a required value, `name?` an
   * optional attached value (`"all,color?,lines="`).
   */
  readonly long?: string | undefined
  /** Long options with a single dash (`find -name`, `xxd -cols`), same notation as `long`. */
  readonly singleDash?: string | undefined
  /** Options may follow operands (GNU's default); otherwise the first operand ends the options. */
  readonly permute?: boolean | undefined
  /** `-5` is an option with a value (`head -5`, `nice -5`). */
  readonly numeric?: boolean | undefined
  /** A unique prefix of a long option is that option (a complete grammar only). */
  readonly abbreviations?: boolean | undefined
}

/**
 * One option as given.
 *
 * @since 0.2.0
 * @category models
 */
export interface GivenOption {
  /** `-x` for short options, `--name` (or `-name` for single-dash ones) for long options, canonical. */
  readonly name: string
  /** The value, when the option takes one and has it. */
  readonly value: ShellWord | string | undefined
  /** The word the option was written in. */
  readonly word: ShellWord
}

/**
 * The options and operands of a command line, or why it could not be read.
 *
 * @since 0.2.0
 * @category models
 */
export type ParsedOptions =
  | {
    readonly _tag: "Parsed"
    readonly options: ReadonlyArray<GivenOption>
    readonly operands: ReadonlyArray<ShellWord>
    /** Index in the argument list of the first word after the options (wrappers: the wrapped command). */
    readonly rest: number
  }
  | { readonly _tag: "Unknown"; readonly reason: string; readonly word: ShellWord }

// -----------------------------------------------------------------------------
// compiled grammars
// -----------------------------------------------------------------------------

interface Compiled {
  readonly grammar: OptionGrammar
  readonly short: ReadonlyMap<string, Arity>
  readonly long: ReadonlyMap<string, Arity>
  readonly singleDash: ReadonlyMap<string, Arity>
}

const table = (spec: string | undefined): ReadonlyMap<string, Arity> => {
  const map = new Map<string, Arity>()
  for (const entry of (spec ?? "").split(",")) {
    const item = entry.trim()
    if (item === "") continue
    if (item.endsWith("=")) map.set(item.slice(0, -1), "value")
    else if (item.endsWith("?")) map.set(item.slice(0, -1), "optional")
    else map.set(item, "flag")
  }
  return map
}

const cache = new WeakMap<OptionGrammar, Compiled>()

const compile = (grammar: OptionGrammar): Compiled => {
  const cached = cache.get(grammar)
  if (cached !== undefined) return cached
  const short = new Map<string, Arity>()
  for (const letter of grammar.flags ?? "") short.set(letter, "flag")
  for (const letter of grammar.values ?? "") short.set(letter, "value")
  for (const letter of grammar.optional ?? "") short.set(letter, "optional")
  const compiled: Compiled = { grammar, short, long: table(grammar.long), singleDash: table(grammar.singleDash) }
  cache.set(grammar, compiled)
  return compiled
}

/** The long option a name stands for: exact, or (with abbreviations) the only one it is a prefix of. */
const resolveLong = (compiled: Compiled, name: string): { readonly name: string; readonly arity: Arity } | string => {
  const exact = compiled.long.get(name)
  if (exact !== undefined) return { name, arity: exact }
  if (compiled.grammar.abbreviations === true && name.length > 0) {
    const candidates = [...compiled.long.keys()].filter((option) => option.startsWith(name))
    if (candidates.length === 1) return { name: candidates[0]!, arity: compiled.long.get(candidates[0]!)! }
    if (candidates.length > 1) return `\`--${name}\` is ambiguous (${candidates.map((c) => `--${c}`).join(", ")})`
  }
  return `\`--${name}\` is not a known option`
}

// -----------------------------------------------------------------------------
// parsing
// -----------------------------------------------------------------------------

/**
 * Whether a word may be read as an option by the command: for a literal word, it starts with `-` (and is not
 * `-`); for any other word, unless `isOperand` proves what it expands to never does.
 */
const looksLikeOption = (word: ShellWord, isOperand: (word: ShellWord) => boolean): boolean =>
  word.literal ? word.value.startsWith("-") && word.value !== "-" : !isOperand(word)

/**
 * Reads `args` with `grammar`. A word that is not literal is an operand only when `isOperand` says it cannot
 * expand to something starting with `-`; otherwise it could be any option, and the answer is `Unknown`.
 *
 * @since 0.2.0
 * @category parsing
 */
export const parseOptions = (
  grammar: OptionGrammar,
  args: ReadonlyArray<ShellWord>,
  isOperand: (word: ShellWord) => boolean = () => false
): ParsedOptions => {
  const compiled = compile(grammar)
  const options: Array<GivenOption> = []
  const operands: Array<ShellWord> = []
  let endOfOptions = false
  let i = 0
  for (; i < args.length; i++) {
    const word = args[i]!
    if (endOfOptions || !looksLikeOption(word, isOperand)) {
      if (!endOfOptions && grammar.permute !== true) break
      operands.push(word)
      continue
    }
    if (!word.literal) {
      return { _tag: "Unknown", reason: `\`${word.text}\` is not literal and could expand to an option`, word }
    }
    const value = word.value
    if (value === "--") {
      endOfOptions = true
      if (grammar.permute !== true) {
        i++
        break
      }
      continue
    }
    // A value word that expands to several words (`-k *`) would push the rest into option positions.
    const next = (): ShellWord | undefined => {
      const given = args[i + 1]
      return given !== undefined && splits(given) && !isOperand(given) ? undefined : given
    }
    if (compiled.singleDash.size > 0 && !value.startsWith("--")) {
      const [name, attached] = splitAttached(value.slice(1))
      const arity = compiled.singleDash.get(name)
      if (arity !== undefined) {
        if (arity === "flag") {
          if (attached !== undefined) return unknown(word, `\`-${name}\` takes no value`)
          options.push({ name: `-${name}`, value: undefined, word })
        } else if (attached !== undefined) options.push({ name: `-${name}`, value: attached, word })
        else if (arity === "value") {
          const given = next()
          if (given === undefined) return unknown(word, `\`-${name}\` needs a value`)
          options.push({ name: `-${name}`, value: given, word })
          i++
        } else options.push({ name: `-${name}`, value: undefined, word })
        continue
      }
    }
    if (value.startsWith("--")) {
      const [name, attached] = splitAttached(value.slice(2))
      const resolved = resolveLong(compiled, name)
      if (typeof resolved === "string") return unknown(word, resolved)
      if (resolved.arity === "flag") {
        if (attached !== undefined) return unknown(word, `\`--${resolved.name}\` takes no value`)
        options.push({ name: `--${resolved.name}`, value: undefined, word })
      } else if (attached !== undefined) options.push({ name: `--${resolved.name}`, value: attached, word })
      else if (resolved.arity === "value") {
        const given = next()
        if (given === undefined) return unknown(word, `\`--${resolved.name}\` needs a value`)
        options.push({ name: `--${resolved.name}`, value: given, word })
        i++
      } else options.push({ name: `--${resolved.name}`, value: undefined, word })
      continue
    }
    if (grammar.numeric === true && /^-[0-9]+$/.test(value)) {
      options.push({ name: "-#", value: value.slice(1), word })
      continue
    }
    // A cluster of short options: `-la`, `-n5`, `-vn 5`.
    for (let j = 1; j < value.length; j++) {
      const letter = value[j]!
      const arity = compiled.short.get(letter)
      if (arity === undefined) return unknown(word, `\`-${letter}\` is not a known option`)
      if (arity === "flag") {
        options.push({ name: `-${letter}`, value: undefined, word })
        continue
      }
      const attached = value.slice(j + 1)
      if (attached.length > 0) options.push({ name: `-${letter}`, value: attached, word })
      else if (arity === "value") {
        const given = next()
        if (given === undefined) return unknown(word, `\`-${letter}\` needs a value`)
        options.push({ name: `-${letter}`, value: given, word })
        i++
      } else options.push({ name: `-${letter}`, value: undefined, word })
      break
    }
  }
  for (; i < args.length && grammar.permute !== true; i++) operands.push(args[i]!)
  return { _tag: "Parsed", options, operands, rest: firstRest(args, operands, grammar) }
}

/** The word may expand to several words: a glob, a brace expansion, an unquoted expansion. */
const splits = (word: ShellWord): boolean => word.glob || word.brace || word.unquotedExpansion

const firstRest = (
  args: ReadonlyArray<ShellWord>,
  operands: ReadonlyArray<ShellWord>,
  grammar: OptionGrammar
): number => grammar.permute === true ? args.length : args.length - operands.length

const splitAttached = (text: string): readonly [string, string | undefined] => {
  const equals = text.indexOf("=")
  return equals === -1 ? [text, undefined] : [text.slice(0, equals), text.slice(equals + 1)]
}

const unknown = (word: ShellWord, reason: string): ParsedOptions => ({ _tag: "Unknown", reason, word })

/**
 * The value of a given option as text, when it is literal (attached values always are).
 *
 * @since 0.2.0
 * @category parsing
 */
export const optionValue = (option: GivenOption): string | undefined =>
  option.value === undefined
    ? undefined
    : typeof option.value === "string"
    ? option.value
    : option.value.literal
    ? option.value.value
    : undefined

/**
 * Whether any of `names` was given.
 *
 * @since 0.2.0
 * @category parsing
 */
export const hasOption = (parsed: ParsedOptions, ...names: ReadonlyArray<string>): boolean =>
  parsed._tag === "Parsed" && parsed.options.some((option) => names.includes(option.name))
