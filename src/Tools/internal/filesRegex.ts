/**
 * ripgrep's patterns (Rust's `regex` syntax) as JavaScript regular expressions, for Grep's JavaScript search: what a
 * pattern means to rg is what it means here, or the pattern is refused with a parse error, never quietly read another
 * way. Two steps:
 *
 * 1. **Spelling** ({@link fromRust}), on the text: what Rust writes and JavaScript (with the `u` flag) cannot parse or
 *    reads otherwise. `\:` and other escaped punctuation (a literal), `\x{41}`, `\pL`, `\p{greek}` (a script, named
 *    loosely), `[[:digit:]]` (POSIX classes, ASCII), `\A` and `\z`, `]` and `}` as literals, `[]a]`.
 * 2. **Meaning** ({@link rustMeanings}), on the syntax tree: what both parse but mean differently. `\w`, `\d`, `\s`
 *    and `\b` are Unicode in Rust (`\s` without U+FEFF); `.` stops only at `\n` (JavaScript's at `\r`, U+2028 and
 *    U+2029 too); under `--multiline`, `^` and `$` are line anchors at `\n` only.
 *
 * A pattern that still does not compile under the `u` flag is refused (rg refuses look-around and back-references;
 * the rest of what is refused here is rare). Outside `--multiline`, a literal newline in the pattern is refused, as rg
 * refuses it.
 *
 * @since 0.3.0
 * @internal
 */
import { RegExpParser, visitRegExpAST } from "@eslint-community/regexpp"
import type { AST } from "@eslint-community/regexpp"

/** What a pattern is, compiled: a RegExp, or rg's kind of message for one that is refused. */
export type Compiled = RegExp | string

/** Rust's `\w`, as a class body: Unicode word characters (rg finds `é` with `\w`); JavaScript's is ASCII. */
const unicodeWord = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}"
/** Rust's `\s`: Unicode White_Space, which (unlike JavaScript's `\s`) leaves out U+FEFF. */
const unicodeSpace = "\\p{White_Space}"

/** POSIX classes (`[[:alpha:]]`), ASCII in Rust as everywhere, as class bodies. */
const posixClasses: Readonly<Record<string, string>> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f"
}

/** The characters JavaScript lets a `u` pattern escape anywhere; `-` only inside a class. */
const escapable = "^$\\.*+?()[]{}|/"

const hex = (char: string): string => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`

/** Whether JavaScript knows a Unicode property by this name (`\p{...}` under the `u` flag). */
const knownProperty = (name: string): boolean => {
  try {
    new RegExp(`\\p{${name}}`, "u")
    return true
  } catch {
    return false
  }
}

/** `white space` or `WHITE_SPACE` as `White_Space`. */
const titled = (name: string): string =>
  name.split(/[\s_-]+/).filter((part) => part !== "").map((part) =>
    `${part[0]!.toUpperCase()}${part.slice(1).toLowerCase()}`
  ).join("_")

/**
 * A Unicode property as JavaScript names it, from the loose names Rust takes (`greek`, `Greek`, `sc=greek`,
 * `Uppercase Letter`): the first spelling JavaScript knows, or undefined.
 */
const propertyName = (name: string): string | undefined => {
  const equals = name.indexOf("=")
  const value = name.slice(equals + 1).trim()
  const keys = equals === -1
    ? ["", "Script="]
    : (() => {
      const key = name.slice(0, equals).trim()
      return [`${key}=`, `${titled(key)}=`, `${key.toLowerCase()}=`]
    })()
  for (const key of keys) {
    for (const candidate of [value, titled(value)]) if (knownProperty(`${key}${candidate}`)) return `${key}${candidate}`
  }
  return undefined
}

/** Rust's word assertions as look-arounds on Unicode word characters: `\b`, `\B`, `\<`, `\>`, `\b{start}`... */
const wordClass = `[${unicodeWord}]`
const wordAssertions = {
  boundary: `(?:(?<=${wordClass})(?!${wordClass})|(?<!${wordClass})(?=${wordClass}))`,
  inside: `(?:(?<=${wordClass})(?=${wordClass})|(?<!${wordClass})(?!${wordClass}))`,
  start: `(?<!${wordClass})(?=${wordClass})`,
  end: `(?<=${wordClass})(?!${wordClass})`,
  startHalf: `(?<!${wordClass})`,
  endHalf: `(?!${wordClass})`
} as const

/** `\b{...}` forms by name. */
const boundedWord: Readonly<Record<string, string>> = {
  start: wordAssertions.start,
  end: wordAssertions.end,
  "start-half": wordAssertions.startHalf,
  "end-half": wordAssertions.endHalf
}

/** Whether hexadecimal digits name a Unicode scalar value (not a surrogate, not past U+10FFFF), as Rust requires. */
const scalar = (digits: string): boolean => {
  const code = Number.parseInt(digits, 16)
  return /^[0-9A-Fa-f]{1,8}$/.test(digits) && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff)
}

const notScalar = (digits: string): { readonly refused: string } => ({
  refused: `\\x{${digits}} is not a Unicode scalar value`
})

/** An escape that writes a newline (`\n`, `\x0A`, `\x{a}`, `\u000A`...). */
const NEWLINE_ESCAPE = /^\\(?:n|x0[aA]|[xu]\{0*[aA]\}|u000[aA]|U0000000[aA])$/

/** What a `\` and the characters after it are: text to emit and how many characters it took. */
type Escape = { readonly text: string; readonly length: number } | { readonly refused: string }

const escapeAt = (pattern: string, i: number, inClass: boolean): Escape => {
  const next = pattern[i + 1]
  if (next === undefined) return { refused: "incomplete escape sequence at the end of the pattern" }
  const braced = (from: number) => {
    const end = pattern.indexOf("}", from)
    return end === -1 ? undefined : { body: pattern.slice(from, end), length: end - i + 1 }
  }
  if ((next === "x" || next === "u" || next === "U") && pattern[i + 2] === "{") {
    const code = braced(i + 3)
    if (code === undefined) return { refused: `unclosed \\${next}{...} escape` }
    return scalar(code.body) ? { text: `\\u{${code.body}}`, length: code.length } : notScalar(code.body)
  }
  if (next === "U") {
    const digits = pattern.slice(i + 2, i + 10)
    if (!/^[0-9A-Fa-f]{8}$/.test(digits)) return { refused: "\\U needs eight hexadecimal digits" }
    return scalar(digits) ? { text: `\\u{${digits}}`, length: 10 } : notScalar(digits)
  }
  if (next === "c") return { refused: "\\c (control characters) is not supported" }
  if (inClass && (next === "b" || next === "B" || next === "<" || next === ">")) {
    return { refused: `\\${next} is not allowed in a character class` }
  }
  if (inClass && (next === "W" || next === "D" || next === "S")) {
    return { refused: `\\${next} inside a character class is not supported by the JavaScript search` }
  }
  if (next === "p" || next === "P") {
    const written = pattern[i + 2] === "{" ? braced(i + 3) : pattern[i + 2] === undefined
      ? undefined
      : { body: pattern[i + 2]!, length: 3 }
    if (written === undefined) return { refused: `incomplete \\${next} class` }
    const known = propertyName(written.body)
    if (known === undefined) return { refused: `unrecognized Unicode class: ${written.body}` }
    // Under the `i` flag JavaScript negates `\P{..}` before folding case, Rust after: a negated class is the same in
    // both.
    const text = next === "P" && !inClass ? `[^\\p{${known}}]` : `\\${next}{${known}}`
    return { text, length: written.length }
  }
  if (/^[0-9]$/.test(next) || next === "k") return { refused: "backreferences are not supported" }
  if (!inClass) {
    switch (next) {
      case "A":
        return { text: "(?<![^])", length: 2 }
      case "z":
        return { text: "(?![^])", length: 2 }
      case "<":
        return { text: wordAssertions.start, length: 2 }
      case ">":
        return { text: wordAssertions.end, length: 2 }
      case "b":
      case "B": {
        if (next === "b" && pattern[i + 2] === "{") {
          const kind = braced(i + 3)
          const text = kind === undefined || !Object.hasOwn(boundedWord, kind.body) ? undefined : boundedWord[kind.body]
          return text === undefined || kind === undefined
            ? { refused: "unrecognized word boundary \\b{...}" }
            : { text, length: kind.length }
        }
        return { text: next === "b" ? wordAssertions.boundary : wordAssertions.inside, length: 2 }
      }
    }
  }
  // Rust escapes any ASCII punctuation to a literal; JavaScript's `u` flag only its syntax characters.
  if (/^[!-/:-@[-`{-~ ]$/.test(next) && !escapable.includes(next) && !(inClass && next === "-")) {
    return { text: hex(next), length: 2 }
  }
  // \d \w \s \n \t and the like, and JavaScript's own syntax characters: as written (their meanings, next step).
  return { text: `\\${next}`, length: 2 }
}

/**
 * A Rust pattern spelled so that JavaScript's `u` flag parses it as Rust means it; or why it cannot be searched
 * (what rg refuses too: look-around, backreferences; or a construct JavaScript has no spelling for here).
 */
export const fromRust = (
  pattern: string
): { readonly source: string; readonly newline: boolean } | { readonly refused: string } => {
  let out = ""
  let newline = false
  let inClass = false
  let inRepetition = false
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!
    if (char === "\\") {
      const escape = escapeAt(pattern, i, inClass)
      if ("refused" in escape) return escape
      if (NEWLINE_ESCAPE.test(pattern.slice(i, i + escape.length))) newline = true
      out += escape.text
      i += escape.length - 1
      continue
    }
    if (inClass) {
      if (char === "[" && pattern[i + 1] === ":") {
        const end = pattern.indexOf(":]", i + 2)
        const name = end === -1 ? undefined : pattern.slice(i + 2, end)
        if (name !== undefined && name.startsWith("^")) return { refused: `negated POSIX class [:${name}:]` }
        if (name !== undefined && Object.hasOwn(posixClasses, name)) {
          out += posixClasses[name]
          i = end + 1
          continue
        }
      }
      if (char === "[") return { refused: "nested character classes ([a[b]])" }
      if ((char === "&" || char === "~") && pattern[i + 1] === char) {
        return { refused: "character class set operations (&&, ~~)" }
      }
      if (char === "]") inClass = false
      out += char
      continue
    }
    if (char === "(" && pattern[i + 1] === "?" && /^(?:[=!]|<[=!])/.test(pattern.slice(i + 2, i + 4))) {
      return { refused: "look-around, including look-ahead and look-behind, is not supported" }
    }
    // Python's spelling of a named group, which Rust takes too.
    if (char === "(" && pattern.startsWith("?P<", i + 1)) {
      out += "(?<"
      i += 3
      continue
    }
    if (char === "[") {
      inClass = true
      out += "["
      if (pattern[i + 1] === "^") {
        out += "^"
        i++
      }
      // A `]` first in a class is one of its characters.
      if (pattern[i + 1] === "]") {
        out += "\\]"
        i++
      }
      continue
    }
    if (char === "{") inRepetition = true
    if (char === "}") {
      if (!inRepetition) {
        out += "\\}"
        continue
      }
      inRepetition = false
    }
    out += char === "]" ? "\\]" : char
  }
  return { source: out, newline: newline || pattern.includes("\n") }
}

/** rg's own words for a newline in a pattern without `--multiline`. */
const literalNewline = "the literal \"\\n\" is not allowed in a regex"

/** Whether a node stands inside a look-around (which consumes nothing). */
const inLookaround = (node: AST.Node): boolean => {
  for (let parent = node.parent; parent !== null && parent !== undefined; parent = parent.parent) {
    if (parent.type === "Assertion") return true
  }
  return false
}

/**
 * A `u` pattern (spelled by {@link fromRust}) with Rust's meanings where JavaScript's differ; or why it cannot be
 * searched (a parse error).
 */
export const rustMeanings = (
  source: string,
  flags: { readonly dotAll: boolean; readonly lineAnchors: boolean }
): { readonly source: string } | { readonly refused: string } => {
  let ast: AST.Pattern
  try {
    ast = new RegExpParser({ ecmaVersion: 2025 }).parsePattern(source, undefined, undefined, { unicode: true })
  } catch (error) {
    return { refused: error instanceof Error ? error.message : String(error) }
  }
  const edits: Array<{ readonly start: number; readonly end: number; readonly text: string }> = []
  visitRegExpAST(ast, {
    onCharacterSetEnter: (node) => {
      const inClass = node.parent.type === "CharacterClass"
      if (node.kind === "any") {
        if (!flags.dotAll) edits.push({ start: node.start, end: node.end, text: "[^\\n]" })
        return
      }
      if (node.kind !== "word" && node.kind !== "digit" && node.kind !== "space") return
      const positive = node.kind === "word" ? unicodeWord : node.kind === "digit" ? "\\p{Nd}" : unicodeSpace
      // A negated one inside a class (`[\W]`) has no spelling without the `v` flag: it stays as JavaScript reads it.
      if (!node.negate) edits.push({ start: node.start, end: node.end, text: inClass ? positive : `[${positive}]` })
      else if (!inClass) edits.push({ start: node.start, end: node.end, text: `[^${positive}]` })
    },
    onAssertionEnter: (node) => {
      if (flags.lineAnchors && node.kind === "start") {
        edits.push({ start: node.start, end: node.end, text: "(?<![^\\n])" })
      } else if (flags.lineAnchors && node.kind === "end") {
        edits.push({ start: node.start, end: node.end, text: "(?![^\\n])" })
      }
    }
  })
  let out = source
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    out = `${out.slice(0, edit.start)}${edit.text}${out.slice(edit.end)}`
  }
  return { source: out }
}

/**
 * A ripgrep pattern as a JavaScript RegExp (always with the `u` flag), or the message of a pattern refused: leading
 * inline flags (`(?i)`, `(?s)`, `(?m)`) and `(?P<name>` groups are read as Rust reads them, then {@link fromRust} and
 * {@link rustMeanings}.
 */
export const compilePattern = (
  pattern: string,
  flags: { readonly ignoreCase: boolean; readonly multiline: boolean; readonly global: boolean }
): Compiled => {
  let source = pattern
  let inline = ""
  const leading = /^\(\?([imsx]+)\)/.exec(source)
  if (leading !== null && !leading[1]!.includes("x")) {
    inline = leading[1]!
    source = source.slice(leading[0].length)
  }
  const dotAll = flags.multiline || inline.includes("s")
  const lineAnchors = flags.multiline || inline.includes("m")
  const letters = [
    ...(flags.ignoreCase || inline.includes("i") ? ["i"] : []),
    ...(dotAll ? ["s"] : []),
    ...(flags.global ? ["g"] : [])
  ].join("")
  const spelled = fromRust(source)
  if ("refused" in spelled) return `regex parse error: ${spelled.refused}`
  // rg refuses `\n` and `[\n]` alike outside multiline (not `\s` or `[[:space:]]`, which hold it).
  if (spelled.newline && !flags.multiline) return literalNewline
  const meant = rustMeanings(spelled.source, { dotAll, lineAnchors })
  if ("refused" in meant) return `regex parse error: ${meant.refused}`
  try {
    return new RegExp(meant.source, `${letters}u`)
  } catch (error) {
    return `regex parse error: ${error instanceof Error ? error.message : String(error)}`
  }
}

/**
 * Whether a compiled pattern can match a newline anywhere. rg counts differently by it under `--multiline`: a
 * pattern that cannot match one is searched line by line (`--count` counts matching lines), one that can is searched
 * as a whole (`--count` counts matches). Read from the pattern's syntax tree: each atom that consumes a character (a
 * character, a class, `.`, `\s`, a property; not one inside a look-around) is tried on "\n" with the pattern's flags.
 */
export const canMatchNewline = (regex: RegExp): boolean => {
  const flags = regex.flags.replace(/[gy]/g, "")
  let ast: AST.Pattern
  try {
    ast = new RegExpParser({ ecmaVersion: 2025 }).parsePattern(regex.source, undefined, undefined, {
      unicode: flags.includes("u"),
      unicodeSets: flags.includes("v")
    })
  } catch {
    // A pattern the parser does not know: the answer that counts as rg does for the usual patterns.
    return false
  }
  let found = false
  const atom = (node: AST.Node) => {
    if (found || node.parent?.type === "CharacterClass" || node.parent?.type === "CharacterClassRange") return
    if (node.parent?.type === "ClassIntersection" || node.parent?.type === "ClassSubtraction") return
    if (inLookaround(node)) return
    try {
      found = new RegExp(node.raw, flags).test("\n")
    } catch {
      found = false
    }
  }
  visitRegExpAST(ast, {
    onCharacterEnter: atom,
    onCharacterSetEnter: atom,
    onCharacterClassEnter: atom,
    onExpressionCharacterClassEnter: atom
  })
  return found
}
