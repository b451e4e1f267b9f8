/**
 * Honest prompts: whatever a call carries (CR, ANSI sequences, bidi overrides, zero-width characters), the person
 * sees it spelled out, and two different calls never look the same on the screen.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import { escapeForDisplay, maxShownChars, maxShownLines, renderRequest } from "../../src/Permission/TerminalApprover.js"
import { UiBlock } from "../../src/Tool/Presentation.js"

/**
 * What must never reach a terminal raw, listed plainly: C0 controls but the line feed, DEL and C1, the no-break and
 * other non-ASCII spaces, soft hyphen, Arabic letter mark, zero-width and directional marks, line and paragraph
 * separators, bidi embeddings, overrides and isolates, invisible operators, the BOM, interlinear annotations,
 * variation selectors, tag characters, Hangul fillers, and lone surrogates.
 */
const forbiddenRanges: ReadonlyArray<readonly [number, number]> = [
  [0x00, 0x09],
  [0x0b, 0x1f],
  [0x7f, 0xa0],
  [0xad, 0xad],
  [0x61c, 0x61c],
  [0x115f, 0x1160],
  [0x180e, 0x180e],
  [0x2000, 0x200f],
  [0x2028, 0x202f],
  [0x205f, 0x206f],
  [0x3000, 0x3000],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
  [0xd800, 0xdfff]
]
const isForbidden = (char: string): boolean => {
  const code = char.codePointAt(0)!
  return forbiddenRanges.some(([from, to]) => code >= from && code <= to)
}
/** The forbidden characters in a text (code point by code point: a lone surrogate counts, a pair does not). */
const forbiddenIn = (text: string): Array<string> => Array.from(text).filter(isForbidden)

/** Characters that make escapes, or that an escape could be confused with: what a collision would be made of. */
const tricky = fc.constantFrom(
  "\\",
  "r",
  "t",
  "n",
  "x",
  "1",
  "b",
  "<",
  ">",
  "U",
  "+",
  "2",
  "0",
  "E",
  "\r",
  "\n",
  "\t",
  "\x1b",
  "\x00",
  "\x7f",
  "\u009b",
  "\u202e",
  "\u2066",
  "\u200b",
  "\u00a0",
  "\ufeff",
  "\ud800",
  "\udc00",
  "\u{e0041}",
  "\ufe0f",
  " ",
  "a",
  "é"
)
const trickyText = fc.array(tricky, { maxLength: 12 }).map((chars) => chars.join(""))
const anyText = fc.oneof(trickyText, fc.string({ unit: "binary" }), fc.string({ unit: "grapheme" }))

const request = (command: string, suggestions: ReadonlyArray<string> = []): ApprovalRequest => ({
  toolUseId: "toolu_1",
  toolName: "Bash",
  input: { command },
  ui: [UiBlock.Title({ text: "Bash" }), UiBlock.Code({ text: command, language: "bash" })],
  message: "Bash needs approval: no rule allows this call.",
  suggestions
})

describe("escapeForDisplay", () => {
  it("spells out CR, ESC and the rest of an ANSI sequence, so a command cannot hide behind a fake one", () => {
    const shown = escapeForDisplay("touch X; git status #\r\x1b[2Kgit status")
    expect(shown).toBe("touch X; git status #\\r\\x1b[2Kgit status")
  })

  it("spells out bidi overrides, isolates, zero-width and other invisible characters as <U+XXXX>", () => {
    expect(escapeForDisplay("ls \u202etxt.exe")).toBe("ls <U+202E>txt.exe")
    expect(escapeForDisplay("rm\u00a0-rf /tmp/\u200bx\u2066\ufeff")).toBe(
      "rm<U+00A0>-rf /tmp/<U+200B>x<U+2066><U+FEFF>"
    )
    expect(escapeForDisplay("a\u{e0041}b\u2028c")).toBe("a<U+E0041>b<U+2028>c")
    expect(escapeForDisplay("\t\x00\x7f\u009b")).toBe("\\t\\x00\\x7f\\x9b")
  })

  it("leaves ordinary text, shell backslashes and every script alone", () => {
    expect(escapeForDisplay("grep -n 'a\\.b' src/*.ts | wc -l")).toBe("grep -n 'a\\.b' src/*.ts | wc -l")
    expect(escapeForDisplay("printf 'a\\n'")).toBe("printf 'a\\n'")
    expect(escapeForDisplay("echo héllo wörld 日本語 😀 ❤")).toBe("echo héllo wörld 日本語 😀 ❤")
    expect(escapeForDisplay("line one\nline two")).toBe("line one\nline two")
  })

  it("doubles a backslash, and escapes a literal <U+, only where they would read as an escape", () => {
    expect(escapeForDisplay("\\r")).toBe("\\\\r")
    expect(escapeForDisplay("<U+202E>")).toBe("\\<U+202E>")
    expect(escapeForDisplay("\\\r")).toBe("\\\\\\r")
    expect(escapeForDisplay("a\nb", { newlines: "escape" })).toBe("a\\nb")
    expect(escapeForDisplay("a\\nb", { newlines: "escape" })).toBe("a\\\\nb")
  })

  it.prop("for any text, nothing hidden is displayed", [anyText], ([text]) => {
    const shown = escapeForDisplay(text)
    expect(forbiddenIn(shown)).toEqual([])
    expect(escapeForDisplay(text, { newlines: "escape" })).not.toMatch(/\n/)
  }, { fastCheck: { numRuns: 2_000 }, timeout: 60_000 })

  /**
   * Reads a display back, as a person would: `\\` is a backslash, `\<` a `<`, `\r` `\t` `\n` `\xHH` controls,
   * `<U+XXXX>` that code point; a backslash before anything else is itself (`\n` is a line feed only where line feeds
   * were escaped). If every display reads back to its text, no two texts share a display.
   */
  const readBack = (shown: string, newlines: "keep" | "escape"): string => {
    let out = ""
    for (let i = 0; i < shown.length;) {
      const rest = shown.slice(i)
      const code = /^<U\+([0-9A-F]{4,6})>/.exec(rest)
      const byte = /^\\x([0-9a-f]{2})/.exec(rest)
      if (code !== null) {
        out += String.fromCodePoint(parseInt(code[1]!, 16))
        i += code[0].length
      } else if (byte !== null) {
        out += String.fromCharCode(parseInt(byte[1]!, 16))
        i += 4
      } else if (rest.startsWith("\\") && (newlines === "escape" ? "\\<rtn" : "\\<rt").includes(rest[1] ?? "-")) {
        out += ({ "\\": "\\", "<": "<", r: "\r", t: "\t", n: "\n" } as Record<string, string>)[rest[1]!]
        i += 2
      } else {
        out += rest[0]
        i += 1
      }
    }
    return out
  }

  it.prop("every display reads back to exactly its text", [anyText], ([text]) => {
    expect(readBack(escapeForDisplay(text), "keep")).toBe(text)
    expect(readBack(escapeForDisplay(text, { newlines: "escape" }), "escape")).toBe(text)
  }, { fastCheck: { numRuns: 5_000 }, timeout: 60_000 })

  const shortTricky = fc.array(fc.constantFrom("\\", "r", "x", "1", "b", "<", "U", "+", "\r", "\x1b", "\n", "n"), {
    maxLength: 4
  }).map((c) => c.join(""))

  it.prop("distinct texts are never displayed identically", [shortTricky, shortTricky], ([a, b]) => {
    if (a !== b) {
      expect(escapeForDisplay(a)).not.toBe(escapeForDisplay(b))
      expect(escapeForDisplay(a, { newlines: "escape" })).not.toBe(escapeForDisplay(b, { newlines: "escape" }))
    }
  }, { fastCheck: { numRuns: 20_000 }, timeout: 60_000 })

  it.prop(
    "the generator reaches texts that differ only in hidden characters and backslashes",
    [trickyText],
    ([text]) => {
      // Sanity of the property above: pairs made of these characters collide under a naive "drop what is hidden".
      const naive = (t: string) => Array.from(t).filter((char) => !isForbidden(char)).join("")
      const other = `${text}\u200b`
      expect(naive(other)).toBe(naive(text))
      expect(escapeForDisplay(other)).not.toBe(escapeForDisplay(text))
    }
  )
})

describe("renderRequest", () => {
  it("names a durable turn's pending approval by its token, and says a later run asks it again", () => {
    const shown = renderRequest({ ...request("rm -rf build"), token: "tok_abc" })
    expect(shown).toContain(
      "  (durable approval tok_abc: if this process stops, the next run of the session asks it again)"
    )
    expect(renderRequest(request("rm -rf build"))).not.toContain("durable approval")
  })

  it("shows the issue's disguised command as what it is, in a gutter, with no raw control character", () => {
    const shown = renderRequest(
      request("touch X; git status #\r\x1b[2Kgit status", ["Bash(touch X; git status #\r\x1b[2Kgit status)"])
    )
    expect(shown).toContain("  │ touch X; git status #\\r\\x1b[2Kgit status")
    expect(shown).toContain("[Bash(touch X; git status #\\r\\x1b[2Kgit status)]")
    expect(forbiddenIn(shown)).toEqual([])
  })

  it("a multi-line command cannot print lines that pass for the prompt's own", () => {
    const shown = renderRequest(request("true\n\n  1) Allow once\n── Permission needed: Read ──"))
    const lines = shown.split("\n")
    expect(lines.filter((line) => line === "  1) Allow once")).toHaveLength(1)
    expect(lines.filter((line) => line.startsWith("── Permission needed"))).toEqual(["── Permission needed: Bash ──"])
    expect(shown).toContain("  │   1) Allow once")
  })

  it(`bounds what it shows to ${maxShownLines} lines, keeping the end in view, saying how many more there are`, () => {
    const command = [...Array.from({ length: maxShownLines + 25 }, (_, i) => `echo ${i}`), "touch PWNED"].join("\n")
    const shown = renderRequest(request(command))
    // "Bash", then 426 command lines: 427 lines, 400 shown (300 first, 100 last).
    expect(shown).toContain("  │ echo 298\n  │ … 27 more lines …\n  │ echo 326\n")
    expect(shown).toContain("  │ touch PWNED\n")
    expect(shown).not.toContain("echo 299\n")
  })

  it(`bounds one huge line to ${maxShownChars} characters, keeping its end in view`, () => {
    const shown = renderRequest(request(`echo ${"x".repeat(maxShownChars * 3)}; touch PWNED`))
    // The rendered use is "Bash\n" then the command: 3 * max + 23 characters, of which max are shown.
    expect(shown).toContain(`\n  │ … ${maxShownChars * 2 + 23} more characters …\n`)
    expect(shown).toContain("x; touch PWNED\n")
    expect(shown.length).toBeLessThan(maxShownChars + 1_000)
  })

  it.prop(
    "for any command and suggestion, the whole prompt shows nothing hidden",
    [anyText, anyText],
    ([command, rule]) => {
      expect(forbiddenIn(renderRequest(request(command, [rule])))).toEqual([])
    },
    { fastCheck: { numRuns: 500 }, timeout: 60_000 }
  )
})
