/**
 * Text made safe to show a person on a terminal: what the approval prompt shows and what the CLI's `--verbose`
 * prints from tool input and output, escaped one way (control, bidi and other hidden characters spelled out, never
 * interpreted by the terminal).
 *
 * @internal
 */

/**
 * Characters a terminal would not show as themselves: controls (C0, DEL, C1: CR, backspace, ESC that starts ANSI
 * sequences), format characters (bidi overrides and isolates, zero-width spaces and joiners, the BOM, tag
 * characters), line and paragraph separators, every space but U+0020 (a no-break space looks like a space but is part
 * of a shell word), private-use, unassigned and lone surrogate code points, and the invisible fillers and variation
 * selectors outside those classes. A line feed is not among them: it is shown as a line break, in a gutter.
 */
const hiddenClasses = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}\p{Zs}\u115F\u1160\u2800\u3164\uFFA0]/u

/** Invisible combining marks: the grapheme joiner, Khmer inherent vowels, Mongolian and other variation selectors. */
const invisibleMark = (code: number): boolean =>
  code === 0x034f || code === 0x17b4 || code === 0x17b5 || (code >= 0x180b && code <= 0x180f) ||
  (code >= 0xfe00 && code <= 0xfe0f) || (code >= 0xe0100 && code <= 0xe01ef)

const hidden = { test: (char: string): boolean => hiddenClasses.test(char) || invisibleMark(char.codePointAt(0)!) }

const controlNames: Readonly<Record<string, string>> = { "\t": "\\t", "\r": "\\r" }

const hex = (code: number, digits: number) => code.toString(16).toUpperCase().padStart(digits, "0")

/** The visible spelling of one hidden character: `\r`, `\t`, `\x1b` for controls below U+0100, else `<U+202E>`. */
const spell = (char: string): string => {
  const code = char.codePointAt(0)!
  const named = controlNames[char]
  if (named !== undefined) return named
  if (code < 0x100 && /\p{Cc}/u.test(char)) return `\\x${hex(code, 2).toLowerCase()}`
  return `<U+${hex(code, 4)}>`
}

/**
 * Text made safe to show a person: every hidden character (controls, ANSI escape sequences, CR, bidi and other
 * invisible characters) is spelled out visibly (`\r`, `\x1b`, `<U+202E>`), and the spelling is unambiguous, so two
 * different texts never look the same. A backslash is doubled only where it would otherwise read as the start of
 * such a spelling (before `r`, `t`, `x`, `\\`, `<` or a hidden character, and before `n` when line feeds are
 * escaped), and a `<` that would begin `<U+` is shown as `\<`; `grep 'a\.b'` is shown as written. Line feeds stay
 * line breaks unless `newlines` is `"escape"` (then `\n`).
 *
 * @internal
 */
export const escapeForDisplay = (
  text: string,
  options: { readonly newlines?: "keep" | "escape" | undefined } = {}
): string => {
  const escapeNewlines = options.newlines === "escape"
  const isHidden = (char: string) => char !== " " && char !== "\n" && hidden.test(char)
  /** Whether what `char` is shown as starts with a backslash or `<U+`, or is a letter a backslash escape uses. */
  const startsEscape = (char: string | undefined) =>
    char !== undefined &&
    (char === "r" || char === "t" || char === "x" || char === "\\" || char === "<" ||
      (escapeNewlines && (char === "n" || char === "\n")) || isHidden(char))
  let out = ""
  const chars = Array.from(text)
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!
    if (char === "\\") out += startsEscape(chars[i + 1]) ? "\\\\" : "\\"
    else if (char === "<" && chars[i + 1] === "U" && chars[i + 2] === "+") out += "\\<"
    else if (char === "\n") out += escapeNewlines ? "\\n" : "\n"
    else if (isHidden(char)) out += spell(char)
    else out += char
  }
  return out
}
