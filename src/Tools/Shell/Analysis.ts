/**
 * Static analysis of a Bash command string, without running anything.
 *
 * `analyze` parses the command with `unbash` and flattens the tree into the list of every simple command the
 * shell could run: the top level, pipelines and lists, subshells, brace groups, `if`/`while`/`for`/`case`,
 * function bodies, and everything inside `$(...)`, backticks, `<(...)`, `>(...)`, `$((...))` and unquoted
 * here-document bodies. Compound constructs that matter to a permission decision are recorded in `features`.
 *
 * Anything the analysis cannot vouch for is `Unanalyzable` with a specific reason: a parse error at any depth,
 * a command longer than {@link MAX_COMMAND_LENGTH}, or nesting deeper than {@link MAX_NESTING}. Callers must
 * treat `Unanalyzable` as "could do anything". `analyze` never throws.
 *
 * @since 0.1.0
 */
import { forEachChild, parse } from "unbash"
import type {
  ArithmeticExpression as UArithmetic,
  Assignment as UAssignment,
  Command as UCommand,
  ParameterExpansionPart as UParameterExpansion,
  ParsedScript,
  Redirection as URedirection,
  SyntaxNode,
  TestExpression as UTestExpression,
  Word as UWord
} from "unbash"

// -----------------------------------------------------------------------------
// limits
// -----------------------------------------------------------------------------

/**
 * Commands longer than this many UTF-16 code units are not analysed.
 *
 * @since 0.1.0
 * @category limits
 */
export const MAX_COMMAND_LENGTH = 10_000

/**
 * Maximum nesting of compound constructs and substitutions (subshells, groups, loops, conditionals, function
 * bodies, `$(...)`, `<(...)`, `${...}`).
 *
 * @since 0.1.0
 * @category limits
 */
export const MAX_NESTING = 20

/** Raw syntax-tree depth guard: keeps the traversal's own recursion bounded whatever the input. */
const MAX_TREE_DEPTH = 200

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * One shell word, as written and after quote removal.
 *
 * `value` is the word after quote removal; expansions that cannot be resolved statically are kept verbatim
 * (`$HOME`, `$(id)`), so `value` is the word's real runtime value only when `literal` is true.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellWord {
  /** Source text of the word, quotes and escapes included. */
  readonly text: string
  /** The word after quote removal (expansions left verbatim). */
  readonly value: string
  /** True when the word's runtime value is exactly `value`: no expansion, glob or brace expansion. */
  readonly literal: boolean
  /** Contains a parameter, command, arithmetic or process substitution. */
  readonly expansion: boolean
  /** Contains an unquoted glob (`*`, `?`, `[...]`, extglob): may expand to several words or to file names. */
  readonly glob: boolean
  /** Contains a brace expansion (`{a,b}`, `{1..3}`): expands to several words. */
  readonly brace: boolean
  /** Contains quoting or backslash escapes (`"ls"`, `\ls`, `$'\x72m'`). */
  readonly quoted: boolean
  /**
   * Text the word's runtime value certainly starts with: the literal (or quoted) text before its first expansion,
   * glob or brace. The whole value for a literal word; `""` for `$x`, `*.md`, `{a,b}`.
   */
  readonly prefix: string
  /** Contains an expansion outside double quotes: its value is split at spaces and globbed into more words. */
  readonly unquotedExpansion: boolean
}

/**
 * A variable assignment (`NAME=value`, `NAME+=value`, `NAME[i]=value`, `NAME=(a b)`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellAssignment {
  readonly name: string
  /** The assigned word; `undefined` for array assignments `NAME=(...)`. */
  readonly value: ShellWord | undefined
  readonly append: boolean
  /** Source text of the whole assignment. */
  readonly text: string
}

/**
 * The redirection operators, including here-documents (`<<`, `<<-`) and here-strings (`<<<`).
 *
 * @since 0.1.0
 * @category models
 */
export type RedirectionOperator = ">" | ">>" | "<" | "<>" | "<&" | ">&" | ">|" | "&>" | "&>>" | "<<" | "<<-" | "<<<"

/**
 * One redirection of a simple or compound command.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellRedirection {
  /** Explicit file descriptor number (`2>`), if any. */
  readonly fd: number | undefined
  /** File-descriptor variable (`{fd}>file`), if any: bash assigns a fresh descriptor to it. */
  readonly fdVariable: string | undefined
  readonly operator: RedirectionOperator
  /** The target word (a file, a descriptor number, `-`, or the here-string); the delimiter for here-documents. */
  readonly target: ShellWord | undefined
  /** Here-document details: a quoted delimiter disables expansion in the body. */
  readonly hereDoc: { readonly delimiter: string; readonly quoted: boolean; readonly body: string } | undefined
  /** Source text of the redirection. */
  readonly text: string
}

/**
 * A simple command: assignments, words and redirections, as the shell would run them.
 *
 * `words[0]` is the command name. A command may have no words (a bare assignment `X=1`, or a bare
 * redirection `> file`).
 *
 * @since 0.1.0
 * @category models
 */
export interface SimpleCommand {
  readonly words: ReadonlyArray<ShellWord>
  /** Leading assignments (`FOO=1 cmd`) and, for declaration builtins, assignment arguments (`export A=1`). */
  readonly assignments: ReadonlyArray<ShellAssignment>
  readonly redirections: ReadonlyArray<ShellRedirection>
  /** Source text of the command. */
  readonly source: string
  /** True when the command runs inside a command or process substitution. */
  readonly inSubstitution: boolean
  /** True when the command is part of a function body (runs only if the function is called). */
  readonly inFunction: boolean
}

/**
 * Constructs found anywhere in the command that a permission decision may care about.
 *
 * @since 0.1.0
 * @category models
 */
export interface ShellFeatures {
  /** Names of functions defined (`f() { ...; }`, `function f { ...; }`). */
  readonly functionDefinitions: ReadonlyArray<string>
  /** Some list element runs in the background (`cmd &`). */
  readonly background: boolean
  readonly commandSubstitution: boolean
  readonly processSubstitution: boolean
  /** Here-documents whose body undergoes expansion (unquoted delimiter). */
  readonly expandingHereDocs: boolean
  readonly hereDocs: boolean
  readonly subshells: boolean
  readonly coprocesses: boolean
  /** `(( ... ))` and `for (( ... ))`: arithmetic may assign shell variables. */
  readonly arithmeticCommands: boolean
  /** `[[ ... ]]` conditional expressions. */
  readonly testCommands: boolean
  /** `for`, `while`, `until`, `select` loops. */
  readonly loops: boolean
  /** `select` menus (read from standard input). */
  readonly selects: boolean
  /** The `time` keyword or `!` in front of a pipeline. */
  readonly pipelinePrefixes: boolean
  /** Variables assigned by `for`/`select` loops. */
  readonly loopVariables: ReadonlyArray<string>
  /**
   * The word lists of `for` loops (`for f in *.md`), by variable; `undefined` words for `for f; do` (the
   * positional parameters).
   */
  readonly loopLists: ReadonlyArray<{ readonly variable: string; readonly words: ReadonlyArray<ShellWord> | undefined }>
  /**
   * An expansion assigns a variable: `${X=v}`, `${X:=v}`, `$((X=1))`, `$((X++))`, or a subscript that does
   * (`${a[i++]}`).
   */
  readonly assigningExpansions: boolean
  /** Redirections attached to compound commands (`{ ...; } > file`, `while ...; done < f`). */
  readonly compoundRedirections: ReadonlyArray<ShellRedirection>
  /**
   * Places where bash evaluates text a second time and the text is not a literal number or an inert name (see
   * {@link secondEvaluationProblem}): `$((x))`, `$[x]`, `(( ))`, `for (( ))`, subscripts `${a[i]}` and `a[i]=`,
   * substring offsets `${x:o:l}`, indirection `${!x}`, the prompt transformation `${x@P}`, `[[ -v w ]]` and the
   * numeric operators of `[[ ]]`. Each entry names the construct; any entry makes the command unanalysable for
   * read-only purposes and an unknown command for deny and ask rules.
   */
  readonly secondEvaluations: ReadonlyArray<string>
}

/**
 * The result of analysing a command string.
 *
 * @since 0.1.0
 * @category models
 */
export type ShellAnalysis =
  | {
    readonly _tag: "Parsed"
    readonly source: string
    readonly commands: ReadonlyArray<SimpleCommand>
    readonly features: ShellFeatures
  }
  | { readonly _tag: "Unanalyzable"; readonly source: string; readonly reason: string }

/**
 * The `Parsed` case of {@link ShellAnalysis}.
 *
 * @since 0.1.0
 * @category models
 */
export type ParsedShell = Extract<ShellAnalysis, { readonly _tag: "Parsed" }>

// -----------------------------------------------------------------------------
// analysis
// -----------------------------------------------------------------------------

class Unanalyzable {
  constructor(readonly reason: string) {}
}

const nestingNodes: ReadonlySet<string> = new Set([
  "Subshell",
  "BraceGroup",
  "If",
  "While",
  "For",
  "ArithmeticFor",
  "Select",
  "Case",
  "Function",
  "Coproc",
  "CommandExpansion",
  "ProcessSubstitution",
  "ArithmeticCommandExpansion",
  "ParameterExpansion"
])

const expansionParts: ReadonlySet<string> = new Set([
  "SimpleExpansion",
  "ParameterExpansion",
  "CommandExpansion",
  "ArithmeticExpansion",
  "ProcessSubstitution"
])

interface WordFlags {
  expansion: boolean
  glob: boolean
  brace: boolean
  quoted: boolean
  unquotedExpansion: boolean
  /** The known leading text so far, and whether it is still growing (no expansion, glob or brace met yet). */
  prefix: string
  prefixOpen: boolean
}

const scanParts = (parts: ReadonlyArray<SyntaxNode>, flags: WordFlags, depth: number, inQuotes: boolean): void => {
  if (depth > MAX_TREE_DEPTH) throw new Unanalyzable(`a word is nested deeper than ${MAX_TREE_DEPTH} levels`)
  for (const part of parts) {
    switch (part.type) {
      case "Literal":
        if (part.text !== part.value) flags.quoted = true
        if (flags.prefixOpen) flags.prefix += part.value
        break
      case "SingleQuoted":
      case "AnsiCQuoted":
        flags.quoted = true
        if (flags.prefixOpen) flags.prefix += part.value
        break
      case "DoubleQuoted":
      case "LocaleString":
        flags.quoted = true
        scanParts(part.parts, flags, depth + 1, true)
        break
      case "Glob":
      case "ExtendedGlob":
        flags.glob = true
        flags.prefixOpen = false
        if (part.parts) scanParts(part.parts, flags, depth + 1, inQuotes)
        break
      case "BraceExpansion":
        flags.brace = true
        flags.prefixOpen = false
        if (part.parts) scanParts(part.parts, flags, depth + 1, inQuotes)
        break
      case "ProcessSubstitution":
        // Expands to a path such as `/dev/fd/63`: one word, never an option.
        flags.expansion = true
        if (flags.prefixOpen) flags.prefix += "/dev/fd/"
        flags.prefixOpen = false
        break
      default:
        if (expansionParts.has(part.type)) {
          flags.expansion = true
          flags.prefixOpen = false
          if (!inQuotes) flags.unquotedExpansion = true
        }
    }
  }
}

const toWord = (word: UWord): ShellWord => {
  const flags: WordFlags = {
    expansion: false,
    glob: false,
    brace: false,
    quoted: false,
    unquotedExpansion: false,
    prefix: "",
    prefixOpen: true
  }
  const parts = word.parts
  if (parts) scanParts(parts, flags, 0, false)
  else if (word.text !== word.value) flags.quoted = true
  const literal = !flags.expansion && !flags.glob && !flags.brace
  return {
    text: word.text,
    value: word.value,
    literal,
    expansion: flags.expansion,
    glob: flags.glob,
    brace: flags.brace,
    quoted: flags.quoted,
    prefix: literal ? word.value : flags.prefix,
    unquotedExpansion: flags.unquotedExpansion
  }
}

const toAssignment = (assignment: UAssignment): ShellAssignment => ({
  name: assignment.name,
  value: assignment.value.type === "Word" ? toWord(assignment.value) : undefined,
  append: assignment.append === true,
  text: assignment.text
})

interface Walker {
  source: string
  readonly commands: Array<SimpleCommand>
  readonly functionDefinitions: Array<string>
  readonly compoundRedirections: Array<ShellRedirection>
  readonly loopVariables: Array<string>
  readonly loopLists: Array<{ readonly variable: string; readonly words: ReadonlyArray<ShellWord> | undefined }>
  readonly secondEvaluations: Array<string>
  assigningExpansions: boolean
  background: boolean
  commandSubstitution: boolean
  processSubstitution: boolean
  expandingHereDocs: boolean
  hereDocs: boolean
  subshells: boolean
  coprocesses: boolean
  arithmeticCommands: boolean
  testCommands: boolean
  loops: boolean
  selects: boolean
  pipelinePrefixes: boolean
}

interface Position {
  readonly depth: number
  readonly nesting: number
  readonly inSubstitution: boolean
  readonly inFunction: boolean
}

const slice = (walker: Walker, node: { readonly pos: number; readonly end: number }): string =>
  walker.source.slice(node.pos, node.end)

const toRedirection = (walker: Walker, redirection: URedirection): ShellRedirection => {
  const descriptor = redirection.descriptor
  const fd = descriptor?.type === "FileDescriptor" ? descriptor.value : undefined
  const fdVariable = descriptor?.type === "FileDescriptorVariable" ? descriptor.name : undefined
  if (redirection.type === "HereDoc") {
    const delimiter = redirection.delimiter
    return {
      fd,
      fdVariable,
      operator: redirection.operator,
      target: undefined,
      hereDoc: {
        delimiter: delimiter?.value ?? "",
        quoted: delimiter?.quoted ?? false,
        body: redirection.body.text
      },
      text: slice(walker, redirection)
    }
  }
  return {
    fd,
    fdVariable,
    operator: redirection.operator,
    target: redirection.target ? toWord(redirection.target) : undefined,
    hereDoc: undefined,
    text: slice(walker, redirection)
  }
}

// -----------------------------------------------------------------------------
// second evaluation
// -----------------------------------------------------------------------------

/** A literal integer as bash arithmetic reads it: decimal, octal, hex, or `base#digits`. */
const arithmeticNumber = /^(?:0[xX][0-9A-Fa-f]+|[0-9]+|[0-9]+#[0-9A-Za-z@_]+)$/

/**
 * Variables whose value the shell itself keeps numeric: naming one in arithmetic evaluates nothing a command chose.
 * Every other name may hold text (`$_`, loop variables, `BASH_REMATCH`, `BASH_COMMAND`, the environment) that bash
 * would evaluate again, subscripts and substitutions included.
 *
 * @since 0.2.0
 * @category second evaluation
 */
export const numericShellVariables: ReadonlySet<string> = new Set([
  "RANDOM",
  "SRANDOM",
  "SECONDS",
  "LINENO",
  "EPOCHSECONDS",
  "PPID",
  "UID",
  "EUID",
  "BASHPID"
])

/** Whether a word in an arithmetic position is inert: a literal number or a shell-kept numeric variable. */
const isInertArithmeticText = (text: string): boolean => {
  const trimmed = text.trim()
  const unsigned = trimmed.replace(/^[-+]\s*/, "")
  return arithmeticNumber.test(unsigned) || (unsigned === trimmed && numericShellVariables.has(unsigned))
}

/** Any expansion in the word (even `${#x}`) makes it text chosen at run time: not inert. */
const isInertArithmeticWord = (word: UWord): boolean => {
  const parts = word.parts
  if (parts !== undefined && !parts.every((part) => part.type === "Literal")) return false
  return isInertArithmeticText(word.value)
}

/** Why an arithmetic expression evaluates chosen text again, or `undefined` when every operand is inert. */
const arithmeticProblem = (expression: UArithmetic | undefined): string | undefined => {
  if (expression === undefined) return undefined
  switch (expression.type) {
    case "ArithmeticWord": {
      const parts = expression.parts
      if (parts !== undefined && !parts.every((part) => part.type === "Literal")) {
        return `\`${parts.map((part) => part.text).join("")}\` as arithmetic`
      }
      return isInertArithmeticText(expression.value) ? undefined : `\`${expression.value}\` as arithmetic`
    }
    case "ArithmeticCommandExpansion":
      return `the output of \`${expression.text}\` as arithmetic`
    case "ArithmeticBinary":
      return arithmeticProblem(expression.left) ?? arithmeticProblem(expression.right)
    case "ArithmeticUnary":
      return arithmeticProblem(expression.operand)
    case "ArithmeticTernary":
      return arithmeticProblem(expression.test) ?? arithmeticProblem(expression.consequent) ??
        arithmeticProblem(expression.alternate)
    case "ArithmeticGroup":
      return arithmeticProblem(expression.expression)
  }
}

/** Transformations `${x@op}` that only quote or change case: `@P` expands the value as a prompt (running `$(...)`). */
const inertTransforms: ReadonlySet<string> = new Set(["Q", "E", "U", "u", "L", "a", "A", "K", "k"])

const parameterProblem = (node: UParameterExpansion): string | undefined => {
  if (node.prefix === "!") return `\`${node.text}\` is an indirect expansion: the value names what is expanded`
  const index = node.index
  if (index !== undefined && !(index.value === "@" || index.value === "*") && !isInertArithmeticWord(index)) {
    return `the subscript of \`${node.text}\` is evaluated as arithmetic`
  }
  const operation = node.operation
  if (operation?.type === "Slice") {
    if (
      !isInertArithmeticWord(operation.offset) ||
      (operation.length !== undefined && !isInertArithmeticWord(operation.length))
    ) {
      return `the offset of \`${node.text}\` is evaluated as arithmetic`
    }
  } else if (operation?.type === "Transform") {
    if (!inertTransforms.has(operation.operand.value)) return `\`${node.text}\` expands the value again`
  } else if (operation?.type === "Unknown") return `\`${node.text}\` is an expansion bash may evaluate again`
  return undefined
}

/**
 * A `$` followed by `[` that the parser left as text and a glob (`$[[]`): bash reads it as `$[ ]` arithmetic, so
 * what it would evaluate is not known.
 */
const hasUnparsedArithmetic = (parts: ReadonlyArray<SyntaxNode>, depth: number): boolean => {
  if (depth > MAX_TREE_DEPTH) return true
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (part.type === "DoubleQuoted" && hasUnparsedArithmetic(part.parts, depth + 1)) return true
    const next = parts[i + 1]
    if (part.type === "Literal" && part.text.includes("$[")) return true
    if (
      (part.type === "Literal" || part.type === "SimpleExpansion") && part.text.endsWith("$") && next !== undefined &&
      "text" in next && next.text.startsWith("[")
    ) return true
  }
  return false
}

/** `[[ ]]` numeric operators evaluate both operands as arithmetic; `-v` and `-R` evaluate a subscript. */
const numericTestOperators: ReadonlySet<string> = new Set(["-eq", "-ne", "-lt", "-le", "-gt", "-ge"])

const plainName = /^[A-Za-z_][A-Za-z0-9_]*$/

const testProblem = (expression: UTestExpression, depth: number): string | undefined => {
  if (depth > MAX_TREE_DEPTH) return "a `[[ ]]` expression nested too deep"
  switch (expression.type) {
    case "TestUnary":
      if (
        (expression.operator === "-v" || expression.operator === "-R") &&
        !(expression.operand.parts === undefined && plainName.test(expression.operand.value))
      ) {
        return `\`[[ ${expression.operator} ${expression.operand.text} ]]\` evaluates a subscript`
      }
      return undefined
    case "TestBinary":
      if (
        numericTestOperators.has(expression.operator) &&
        !(isInertArithmeticWord(expression.left) && isInertArithmeticWord(expression.right))
      ) {
        return `\`[[ ${expression.left.text} ${expression.operator} ${expression.right.text} ]]\` evaluates its ` +
          `operands as arithmetic`
      }
      return undefined
    case "TestLogical":
      for (const operand of expression.operands) {
        const problem = testProblem(operand, depth + 1)
        if (problem !== undefined) return problem
      }
      return undefined
    case "TestNot":
      return testProblem(expression.operand, depth + 1)
    case "TestGroup":
      return testProblem(expression.expression, depth + 1)
  }
}

const recordCommand = (walker: Walker, command: UCommand, at: Position): void => {
  const words: Array<ShellWord> = []
  const assignments: Array<ShellAssignment> = []
  const redirections: Array<ShellRedirection> = []
  for (const item of command.prefix) {
    if (item.type === "Assignment") assignments.push(toAssignment(item))
    else redirections.push(toRedirection(walker, item))
  }
  if (command.name) words.push(toWord(command.name))
  for (const item of command.suffix) {
    if (item.type === "Word") words.push(toWord(item))
    else if (item.type === "Assignment") {
      // Arguments of declaration builtins (`export A=1`): an assignment, and still an argument word.
      const assignment = toAssignment(item)
      assignments.push(assignment)
      const value = assignment.value
      const literal = value !== undefined && value.literal && item.index === undefined
      words.push({
        text: item.text,
        value: literal ? `${item.name}${assignment.append ? "+=" : "="}${value.value}` : item.text,
        literal,
        expansion: value?.expansion ?? false,
        glob: value?.glob ?? false,
        brace: value?.brace ?? false,
        quoted: value?.quoted ?? false,
        prefix: literal
          ? `${item.name}${assignment.append ? "+=" : "="}${value.value}`
          : `${item.name}${assignment.append ? "+=" : "="}${value?.prefix ?? ""}`,
        unquotedExpansion: value?.unquotedExpansion ?? false
      })
    } else redirections.push(toRedirection(walker, item))
  }
  walker.commands.push({
    words,
    assignments,
    redirections,
    source: slice(walker, command),
    inSubstitution: at.inSubstitution,
    inFunction: at.inFunction
  })
}

const checkErrors = (script: ParsedScript): void => {
  const errors = script.errors
  if (errors && errors.length > 0) {
    const first = errors[0]!
    throw new Unanalyzable(`parse error at offset ${first.pos}: ${first.message}`)
  }
}

const visit = (walker: Walker, node: SyntaxNode, at: Position): void => {
  if (at.depth > MAX_TREE_DEPTH) {
    throw new Unanalyzable(`syntax tree is deeper than ${MAX_TREE_DEPTH} levels`)
  }
  const nesting = nestingNodes.has(node.type) ? at.nesting + 1 : at.nesting
  if (nesting > MAX_NESTING) {
    throw new Unanalyzable(`constructs are nested deeper than ${MAX_NESTING} levels`)
  }
  let next: Position = { depth: at.depth + 1, nesting, inSubstitution: at.inSubstitution, inFunction: at.inFunction }
  let savedSource: string | undefined
  switch (node.type) {
    case "Script":
      checkErrors(node)
      if (node.source !== undefined) {
        savedSource = walker.source
        walker.source = node.source
      }
      break
    case "Statement":
      if (node.background === true) walker.background = true
      break
    case "Command":
      recordCommand(walker, node, at)
      break
    case "Redirected":
      for (const redirection of node.redirects) walker.compoundRedirections.push(toRedirection(walker, redirection))
      break
    case "Pipeline":
      if (node.prefixes.length > 0) walker.pipelinePrefixes = true
      break
    case "Function":
      walker.functionDefinitions.push(node.name.value)
      next = { ...next, inFunction: true }
      break
    case "Subshell":
      walker.subshells = true
      break
    case "Coproc":
      walker.coprocesses = true
      break
    case "For":
      walker.loops = true
      walker.loopVariables.push(node.name.value)
      walker.loopLists.push({ variable: node.name.value, words: node.wordlist?.map(toWord) })
      break
    case "While":
      walker.loops = true
      break
    case "Select":
      walker.loops = true
      walker.selects = true
      walker.loopVariables.push(node.name.value)
      break
    case "ParameterExpansion": {
      const problem = parameterProblem(node)
      if (problem !== undefined) walker.secondEvaluations.push(problem)
      const operation = node.operation
      if (operation?.type === "Default" && (operation.operator === "=" || operation.operator === ":=")) {
        walker.assigningExpansions = true
      }
      if (node.index !== undefined && /=|\+\+|--/.test(node.index.text)) walker.assigningExpansions = true
      break
    }
    case "ArithmeticBinary":
      if (/^(?:[-+*/%&|^]|<<|>>|\*\*)?=$/.test(node.operator)) walker.assigningExpansions = true
      break
    case "ArithmeticUnary":
      if (node.operator === "++" || node.operator === "--") walker.assigningExpansions = true
      break
    case "ArithmeticFor": {
      walker.loops = true
      walker.arithmeticCommands = true
      const problem = [node.initialize, node.test, node.update].map(arithmeticProblem).find((p) => p !== undefined)
      if (problem !== undefined) walker.secondEvaluations.push(`\`for ((...))\` evaluates ${problem}`)
      break
    }
    case "ArithmeticCommand": {
      walker.arithmeticCommands = true
      const problem = node.expression === undefined ? "text it could not parse" : arithmeticProblem(node.expression)
      if (problem !== undefined) walker.secondEvaluations.push(`\`((...))\` evaluates ${problem}`)
      break
    }
    case "ArithmeticExpansion": {
      const problem = node.expression === undefined ? "text it could not parse" : arithmeticProblem(node.expression)
      if (problem !== undefined) walker.secondEvaluations.push(`\`${node.text}\` evaluates ${problem}`)
      break
    }
    case "Assignment":
      if (node.index !== undefined && !isInertArithmeticWord(node.index)) {
        walker.secondEvaluations.push(`the subscript of \`${node.text}\` is evaluated as arithmetic`)
      }
      break
    case "Word":
      if (node.parts !== undefined && hasUnparsedArithmetic(node.parts, 0)) {
        walker.secondEvaluations.push(`\`${node.text}\` holds \`$[\` the parser did not read as arithmetic`)
      }
      break
    case "TestCommand": {
      walker.testCommands = true
      const problem = testProblem(node.expression, 0)
      if (problem !== undefined) walker.secondEvaluations.push(problem)
      break
    }
    case "CommandExpansion":
    case "ArithmeticCommandExpansion":
      walker.commandSubstitution = true
      next = { ...next, inSubstitution: true }
      if (node.script === undefined) throw new Unanalyzable("a command substitution could not be parsed")
      break
    case "ProcessSubstitution":
      walker.processSubstitution = true
      next = { ...next, inSubstitution: true }
      if (node.script === undefined) throw new Unanalyzable("a process substitution could not be parsed")
      break
    case "HereDoc":
      walker.hereDocs = true
      if (node.delimiter?.quoted !== true) walker.expandingHereDocs = true
      break
    default:
      break
  }
  forEachChildOf(walker, node, next)
  if (savedSource !== undefined) walker.source = savedSource
}

// Every child is visited, words and redirections included: they hold the nested substitutions.
const forEachChildOf = (walker: Walker, node: SyntaxNode, at: Position): void => {
  forEachChild(node, (child) => visit(walker, child, at))
}

/**
 * Analyse a Bash command string. Never throws: any failure, including an unexpected parser exception, is
 * reported as `Unanalyzable`.
 *
 * @since 0.1.0
 * @category analysis
 */
export const analyze = (command: string): ShellAnalysis => {
  if (typeof command !== "string") {
    return { _tag: "Unanalyzable", source: String(command), reason: "the command is not a string" }
  }
  if (command.length > MAX_COMMAND_LENGTH) {
    return {
      _tag: "Unanalyzable",
      source: command,
      reason: `the command is ${command.length} characters long (limit ${MAX_COMMAND_LENGTH})`
    }
  }
  if (command.includes("\u0000")) {
    return { _tag: "Unanalyzable", source: command, reason: "the command contains a NUL character" }
  }
  const walker: Walker = {
    source: command,
    commands: [],
    functionDefinitions: [],
    compoundRedirections: [],
    loopVariables: [],
    loopLists: [],
    secondEvaluations: [],
    assigningExpansions: false,
    background: false,
    commandSubstitution: false,
    processSubstitution: false,
    expandingHereDocs: false,
    hereDocs: false,
    subshells: false,
    coprocesses: false,
    arithmeticCommands: false,
    testCommands: false,
    loops: false,
    selects: false,
    pipelinePrefixes: false
  }
  try {
    const script = parse(command)
    visit(walker, script, { depth: 0, nesting: 0, inSubstitution: false, inFunction: false })
  } catch (error) {
    if (error instanceof Unanalyzable) return { _tag: "Unanalyzable", source: command, reason: error.reason }
    const message = error instanceof Error ? error.message : String(error)
    return { _tag: "Unanalyzable", source: command, reason: `the shell parser failed: ${message}` }
  }
  return {
    _tag: "Parsed",
    source: command,
    commands: walker.commands,
    features: {
      functionDefinitions: walker.functionDefinitions,
      background: walker.background,
      commandSubstitution: walker.commandSubstitution,
      processSubstitution: walker.processSubstitution,
      expandingHereDocs: walker.expandingHereDocs,
      hereDocs: walker.hereDocs,
      subshells: walker.subshells,
      coprocesses: walker.coprocesses,
      arithmeticCommands: walker.arithmeticCommands,
      testCommands: walker.testCommands,
      loops: walker.loops,
      selects: walker.selects,
      pipelinePrefixes: walker.pipelinePrefixes,
      loopVariables: walker.loopVariables,
      loopLists: walker.loopLists,
      assigningExpansions: walker.assigningExpansions,
      compoundRedirections: walker.compoundRedirections,
      secondEvaluations: walker.secondEvaluations
    }
  }
}

/**
 * The literal values of a command's words, or `undefined` when any word is not literal.
 *
 * @since 0.1.0
 * @category utils
 */
export const literalWords = (command: SimpleCommand): ReadonlyArray<string> | undefined =>
  command.words.every((word) => word.literal) ? command.words.map((word) => word.value) : undefined
