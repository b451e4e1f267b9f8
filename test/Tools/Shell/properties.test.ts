import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { analyze } from "../../../src/Tools/Shell/Analysis.js"
import { decideBashRules, matchesRule, suggestRule } from "../../../src/Tools/Shell/BashRule.js"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"

/** Simple commands that are read-only and covered by `allowRules`. */
const allowedCommands = ["ls", "ls -la", "cat README.md", "git status", "echo hi", "wc -l x", "grep -n foo x"]
/** Simple commands that are neither read-only nor covered by `allowRules`. */
const otherCommands = ["touch PWNED", "rm -rf x", "sort -o y x", "find . -delete", "git push", "ls > out", "sed -i s/a/b/ x"]
const allowRules = {
  allow: ["ls:*", "cat:*", "git status", "echo:*", "wc:*", "grep:*"].map((content) => ({ content })),
  ask: [],
  deny: []
}

interface Compound {
  readonly text: string
  readonly allowed: boolean
}

const leaf: fc.Arbitrary<Compound> = fc.oneof(
  fc.constantFrom(...allowedCommands).map((text) => ({ text, allowed: true })),
  fc.constantFrom(...otherCommands).map((text) => ({ text, allowed: false }))
)

const separator = fc.constantFrom("; ", " && ", " || ", " | ", "\n")

/**
 * Simple commands that take a substitution as an extra argument without changing their own verdict (git's
 * arguments must be literal: a non-literal one could expand to an option such as `--output`).
 */
const substitutionHost: fc.Arbitrary<Compound> = fc.oneof(
  fc.constantFrom("ls", "echo hi", "cat README.md", "grep -n foo x").map((text) => ({ text, allowed: true })),
  fc.constantFrom("touch PWNED", "rm -rf x").map((text) => ({ text, allowed: false }))
)

const compound: fc.Arbitrary<Compound> = fc.letrec<{ node: Compound }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leaf,
    fc.tuple(tie("node"), separator, tie("node")).map(([left, op, right]) => ({
      text: `${left.text}${op}${right.text}`,
      allowed: left.allowed && right.allowed
    })),
    fc.tuple(substitutionHost, tie("node"), fc.boolean()).map(([outer, inner, quoted]) => ({
      // A substitution in an argument position of a simple command: `cmd args $(inner)`.
      text: quoted ? `${outer.text} "$(${inner.text})"` : `${outer.text} $(${inner.text})`,
      allowed: outer.allowed && inner.allowed
    }))
  )
})).node

const shellish = fc.array(
  fc.oneof(
    fc.constantFrom("ls", "rm", "echo", " ", "\n", ";", "&&", "||", "|", "&", "$(", ")", "(", "`", "'", "\"", "\\",
      "<(", ">(", "<<", "EOF", ">", "<", "${", "}", "{", "$((", "))", "*", "?", "[", "]", "#", "=", "!", "~", "$'\\x"),
    fc.string({ maxLength: 3 })
  ),
  { maxLength: 40 }
).map((parts) => parts.join(""))

describe("properties", () => {
  it.prop("a compound is read-only iff every part is", [compound], ([command]) => {
    expect(classifyReadOnly(command.text).readOnly).toBe(command.allowed)
  })

  it.prop("a compound is allowed by allow rules iff every part is", [compound], ([command]) => {
    expect(decideBashRules(command.text, allowRules)._tag).toBe(command.allowed ? "Allow" : "NoMatch")
  })

  it.prop("nothing throws on arbitrary strings", [fc.oneof(fc.string(), fc.fullUnicodeString(), shellish)], ([text]) => {
    expect(() => {
      analyze(text)
      classifyReadOnly(text)
      decideBashRules(text, { allow: [{ content: text }, { content: "ls:*" }], ask: [{ content: "*" }], deny: [{ content: text }] })
      suggestRule(text)
      matchesRule(text, text)
    }).not.toThrow()
  })

  it.prop("unanalyzable commands are never read-only nor allowed", [shellish], ([text]) => {
    if (analyze(text)._tag === "Unanalyzable") {
      expect(classifyReadOnly(text).readOnly).toBe(false)
      expect(decideBashRules(text, { allow: [{ content: "*" }], ask: [], deny: [] })._tag).toBe("NoMatch")
    }
  })

  it.prop(
    "`git log:*` never matches a longer first word",
    [fc.stringMatching(/^[A-Za-z0-9_.:=-]{1,12}$/), fc.constantFrom("", " --oneline", " -n 1")],
    ([suffix, rest]) => {
      expect(matchesRule("git log:*", `git log${suffix}${rest}`)).toBe(false)
      expect(decideBashRules(`git log${suffix}${rest}`, { allow: [{ content: "git log:*" }], ask: [], deny: [] })._tag)
        .toBe("NoMatch")
      expect(matchesRule("git log:*", `git log${rest}`)).toBe(true)
    }
  )
})
