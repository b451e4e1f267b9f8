import { describe, expect, it } from "@effect/vitest"
import { Either, FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import {
  makeRule,
  parseRule,
  PermissionRuleFromString,
  printRule,
  ruleMatchesToolName,
  ruleTargetsTool
} from "../../src/Tool/Rule.js"

const parsed = (text: string) => {
  const result = parseRule(text)
  if (Either.isLeft(result)) throw new Error(result.left.message)
  return { toolName: result.right.toolName, content: result.right.content }
}

const failure = (text: string): string => {
  const result = parseRule(text)
  if (Either.isRight(result)) throw new Error(`expected ${text} to be rejected`)
  return result.left.message
}

// Tool names: anything without whitespace, parentheses or backslashes (MCP names included).
const toolName = fc.oneof(
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,15}$/),
  fc.stringMatching(/^mcp__[a-z0-9-]{1,8}(__[a-z0-9_*-]{1,8})?$/),
  fc.string({ minLength: 1, maxLength: 12, unit: "grapheme" }).filter((s) => !/[\s()\\]/.test(s))
)

// Content heavy in the characters that need escaping.
const content = fc.oneof(
  fc.array(fc.constantFrom("(", ")", "\\", "*", " ", "a", ":", "\"", "$", "/"), { maxLength: 20 }).map((cs) =>
    cs.join("")
  ),
  fc.string({ maxLength: 30, unit: "grapheme" })
)

describe("parseRule", () => {
  it("parses a bare tool name as the whole tool", () => {
    expect(parsed("Bash")).toEqual({ toolName: "Bash", content: undefined })
  })

  it("parses content between the outer parentheses", () => {
    expect(parsed("Bash(npm test:*)")).toEqual({ toolName: "Bash", content: "npm test:*" })
    expect(parsed("Read(./src/**)")).toEqual({ toolName: "Read", content: "./src/**" })
    expect(parsed("WebFetch(domain:example.com)")).toEqual({ toolName: "WebFetch", content: "domain:example.com" })
  })

  it("normalises Tool() and Tool(*) to the whole tool", () => {
    expect(parsed("Bash()")).toEqual({ toolName: "Bash", content: undefined })
    expect(parsed("Bash(*)")).toEqual({ toolName: "Bash", content: undefined })
  })

  it("unescapes \\( \\) and \\\\ and keeps other backslashes", () => {
    expect(parsed("Bash(python -c \"print\\(1\\)\")").content).toBe("python -c \"print(1)\"")
    expect(parsed("Bash(echo \\\\)").content).toBe("echo \\")
    expect(parsed("Bash(grep a\\|b)").content).toBe("grep a\\|b")
  })

  it("reads the content from the first unescaped ( to the last unescaped ), as Claude Code does", () => {
    expect(parsed("Bash(echo $(date))").content).toBe("echo $(date)")
    expect(parsed("Bash(echo \")(\" x)").content).toBe("echo \")(\" x")
    expect(parsed("Bash(a)(b)").content).toBe("a)(b")
  })

  it("ignores surrounding whitespace but keeps whitespace inside content", () => {
    expect(parsed("  Bash( ls )  ")).toEqual({ toolName: "Bash", content: " ls " })
  })

  it("rejects an empty rule and an empty tool name", () => {
    expect(failure("")).toContain("the rule is empty")
    expect(failure("   ")).toContain("the rule is empty")
    expect(failure("(ls)")).toContain("tool name before \"(\" is empty")
  })

  it("rejects unbalanced parentheses", () => {
    expect(failure("Bash(ls")).toBe(
      "Invalid permission rule \"Bash(ls\": missing \")\" to close the \"(\" opened here (at character 5)"
    )
    expect(failure("Bash(echo \\)")).toContain("missing \")\"")
    expect(failure("Bash)")).toContain("unmatched \")\"")
  })

  it("rejects trailing text after the closing parenthesis", () => {
    expect(failure("Bash(ls) extra")).toContain("unexpected text after the closing \")\": \" extra\"")
    expect(failure("Bash(a) (b")).toContain("unexpected text after the closing")
  })

  it("rejects whitespace in the tool name", () => {
    expect(failure("Bash (ls)")).toContain("unexpected \" \" in the tool name")
  })

  it.prop("never throws, whatever the input", [fc.string({ unit: "grapheme" })], ([text]) => {
    expect(() => parseRule(text)).not.toThrow()
  })

  it.prop("parse(print(rule)) is the rule", [toolName, content], ([name, text]) => {
    const rule = makeRule(name, text)
    const result = parseRule(printRule(rule))
    expect(Either.isRight(result)).toBe(true)
    if (Either.isRight(result)) {
      expect(result.right.toolName).toBe(rule.toolName)
      expect(result.right.content).toBe(rule.content)
    }
  })

  it.prop("print(parse(s)) is s for canonical strings", [toolName, content], ([name, text]) => {
    const canonical = printRule(makeRule(name, text))
    expect(Either.map(parseRule(canonical), printRule)).toEqual(Either.right(canonical))
  })

  it.prop("every parsable string prints to a canonical string for the same rule", [
    fc.oneof(
      fc.string({ unit: "grapheme" }),
      fc.tuple(toolName, content).map(([name, text]) => `${name}(${text})`)
    )
  ], ([text]) => {
    const result = parseRule(text)
    if (Either.isRight(result)) {
      const printed = printRule(result.right)
      const again = parseRule(printed)
      expect(Either.map(again, (rule) => [rule.toolName, rule.content])).toEqual(
        Either.right([result.right.toolName, result.right.content])
      )
      expect(Either.map(again, printRule)).toEqual(Either.right(printed))
    }
  })
})

describe("printRule", () => {
  it("escapes parentheses and only the backslashes that need it", () => {
    expect(printRule(makeRule("Bash", "python -c \"print(1)\""))).toBe("Bash(python -c \"print\\(1\\)\")")
    expect(printRule(makeRule("Bash", "grep a\\|b"))).toBe("Bash(grep a\\|b)")
    expect(printRule(makeRule("Bash", "echo \\"))).toBe("Bash(echo \\\\)")
    expect(printRule(makeRule("Bash", "a\\(b"))).toBe("Bash(a\\\\\\(b)")
  })

  it("prints the whole tool without parentheses", () => {
    expect(printRule(makeRule("Edit"))).toBe("Edit")
    expect(printRule(makeRule("Edit", "*"))).toBe("Edit")
  })
})

describe("PermissionRuleFromString", () => {
  it("decodes rule strings and reports the parse error", () => {
    const decode = Schema.decodeUnknownEither(PermissionRuleFromString)
    expect(Either.map(decode("Bash(ls)"), printRule)).toEqual(Either.right("Bash(ls)"))
    expect(Either.isLeft(decode("Bash(ls"))).toBe(true)
  })

  it("encodes to the canonical string", () => {
    expect(Schema.encodeSync(PermissionRuleFromString)(makeRule("Bash", "*"))).toBe("Bash")
  })
})

describe("ruleMatchesToolName", () => {
  it("matches a plain tool by its exact name only", () => {
    expect(ruleMatchesToolName(makeRule("Bash"), "Bash")).toBe(true)
    expect(ruleMatchesToolName(makeRule("Bash"), "BashOutput")).toBe(false)
    expect(ruleMatchesToolName(makeRule("bash"), "Bash")).toBe(false)
  })

  it("never matches a rule with content by name alone", () => {
    expect(ruleMatchesToolName(makeRule("Bash", "ls"), "Bash")).toBe(false)
    expect(ruleTargetsTool(makeRule("Bash", "ls"), "Bash")).toBe(true)
  })

  it("matches every tool of a server for mcp__server and mcp__server__*", () => {
    expect(ruleMatchesToolName(makeRule("mcp__github"), "mcp__github__create_issue")).toBe(true)
    expect(ruleMatchesToolName(makeRule("mcp__github__*"), "mcp__github__create_issue")).toBe(true)
    expect(ruleMatchesToolName(makeRule("mcp__github"), "mcp__github")).toBe(true)
  })

  it("does not match another server that shares a prefix", () => {
    expect(ruleMatchesToolName(makeRule("mcp__git"), "mcp__github__create_issue")).toBe(false)
    expect(ruleMatchesToolName(makeRule("mcp__git__*"), "mcp__github__create_issue")).toBe(false)
    expect(ruleMatchesToolName(makeRule("mcp__github"), "Bash")).toBe(false)
  })

  it("matches one MCP tool by its full name only", () => {
    expect(ruleMatchesToolName(makeRule("mcp__github__create_issue"), "mcp__github__create_issue")).toBe(true)
    expect(ruleMatchesToolName(makeRule("mcp__github__create_issue"), "mcp__github__close_issue")).toBe(false)
  })

  it("is dual", () => {
    expect([makeRule("Bash"), makeRule("Read")].filter(ruleMatchesToolName("Read"))).toHaveLength(1)
  })

  it.prop("a server-wide rule targets every tool of that server and no other server", [
    fc.stringMatching(/^[a-z0-9-]{1,8}$/),
    fc.stringMatching(/^[a-z0-9-]{1,8}$/),
    fc.stringMatching(/^[a-z0-9_]{1,10}$/).filter((s) => !s.startsWith("_"))
  ], ([server, other, tool]) => {
    const name = `mcp__${other}__${tool}`
    expect(ruleMatchesToolName(makeRule(`mcp__${server}`), name)).toBe(server === other)
    expect(ruleMatchesToolName(makeRule(`mcp__${server}__*`), name)).toBe(server === other)
  })
})
