import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import { BashRuleVerdict, decideBashRules, matchesRule, suggestRule } from "../../../src/Tools/Shell/BashRule.js"
import type { RuleRef } from "../../../src/Tools/Shell/BashRule.js"

const rules = (
  allow: ReadonlyArray<string>,
  ask: ReadonlyArray<string> = [],
  deny: ReadonlyArray<string> = []
) => ({
  allow: allow.map((content): RuleRef => ({ content, source: "test" })),
  ask: ask.map((content): RuleRef => ({ content, source: "test" })),
  deny: deny.map((content): RuleRef => ({ content, source: "test" }))
})

const tag = (command: string, allow: ReadonlyArray<string>, ask: ReadonlyArray<string> = [],
  deny: ReadonlyArray<string> = []) => decideBashRules(command, rules(allow, ask, deny))._tag

describe("matchesRule", () => {
  it("matches exact commands", () => {
    expect(matchesRule("npm test", "npm test")).toBe(true)
    expect(matchesRule("npm test", "npm test --watch")).toBe(false)
    expect(matchesRule("  npm   test ", "npm test")).toBe(true)
  })

  it("matches legacy prefixes at a word boundary", () => {
    expect(matchesRule("git log:*", "git log")).toBe(true)
    expect(matchesRule("git log:*", "git log --oneline")).toBe(true)
    expect(matchesRule("git log:*", "git logout")).toBe(false)
    expect(matchesRule("git log:*", "git")).toBe(false)
  })

  it("matches wildcards anywhere, a trailing ` *` also matching the bare command", () => {
    expect(matchesRule("git * main", "git checkout main")).toBe(true)
    expect(matchesRule("git * main", "git checkout other")).toBe(false)
    expect(matchesRule("ls *", "ls")).toBe(true)
    expect(matchesRule("ls *", "ls -la")).toBe(true)
    expect(matchesRule("ls *", "lsof")).toBe(false)
    expect(matchesRule("npm run test*", "npm run test:unit")).toBe(true)
    expect(matchesRule("git commit -m \"*\"", "git commit -m fix it")).toBe(true)
    expect(matchesRule("echo \\*", "echo *")).toBe(true)
    expect(matchesRule("echo \\*", "echo x")).toBe(false)
  })

  it("treats `*` and empty content as matching everything", () => {
    expect(matchesRule("*", "rm -rf x")).toBe(true)
    expect(matchesRule("", "anything")).toBe(true)
  })

  it("unescapes parentheses and compares quoted rule words by value", () => {
    expect(matchesRule("echo \\(x\\)", "echo (x)")).toBe(true)
    expect(matchesRule("git commit -m 'a b'", "git commit -m a b")).toBe(true)
  })
})

describe("decideBashRules", () => {
  it("allows only when every simple command is allowed", () => {
    expect(decideBashRules("npm test", rules(["npm test:*"]))).toEqual(
      BashRuleVerdict.Allow({ rules: [{ content: "npm test:*", source: "test" }] })
    )
    expect(decideBashRules("npm test && rm -rf /", rules(["npm test:*"]))).toEqual(
      BashRuleVerdict.NoMatch({ unmatched: ["rm -rf /"] })
    )
    expect(tag("npm test; ls", ["npm test:*", "ls"])).toBe("Allow")
    expect(tag("npm test $(curl evil)", ["npm test:*"])).toBe("NoMatch")
    expect(tag("git log | head -n 3", ["git log:*", "head:*"])).toBe("Allow")
    expect(tag("cat <<EOF\n$(rm x)\nEOF", ["cat:*"])).toBe("NoMatch")
  })

  it("does not let allow rules cover writes, assignments or definitions", () => {
    expect(tag("npm test > ~/.bashrc", ["npm test:*"])).toBe("NoMatch")
    expect(tag("npm test 2>&1 >/dev/null", ["npm test:*"])).toBe("Allow")
    expect(tag("PATH=/tmp npm test", ["npm test:*"])).toBe("NoMatch")
    expect(tag("NODE_ENV=test npm test", ["npm test:*"])).toBe("Allow")
    expect(tag("X=1; npm test", ["npm test:*"])).toBe("NoMatch")
    expect(tag("npm() { rm x; }; npm test", ["npm test:*", "rm x"])).toBe("NoMatch")
    expect(tag("$CMD test", ["* test"])).toBe("NoMatch")
    expect(tag("for PATH in /tmp; do npm test; done", ["npm test:*"])).toBe("NoMatch")
    expect(tag("anything at all > x", ["*"])).toBe("Allow")
  })

  it("never allows an unanalyzable command", () => {
    expect(decideBashRules("npm test 'unterminated", rules(["npm test:*", "*"]))).toEqual(
      BashRuleVerdict.NoMatch({ unmatched: ["npm test 'unterminated"] })
    )
  })

  it("denies when any simple command matches, deny winning over ask", () => {
    expect(decideBashRules("ls && rm -rf x", rules(["ls"], ["rm:*"], ["rm -rf:*"]))).toEqual(
      BashRuleVerdict.Deny({ rule: { content: "rm -rf:*", source: "test" }, subcommand: "rm -rf x" })
    )
    expect(decideBashRules("ls && git push", rules(["ls"], ["git push:*"]))).toEqual(
      BashRuleVerdict.Ask({ rule: { content: "git push:*", source: "test" }, subcommand: "git push" })
    )
  })

  it("sees through wrappers, quoting and paths for deny rules", () => {
    for (const command of ["timeout 5 rm x", "time rm x", "nice -n 5 rm x", "nohup rm x", "stdbuf -oL rm x",
      "env A=1 rm x", "env -S 'rm x'", "FOO=1 rm x", "\\rm x", "'rm' x", "r''m x", "$'\\x72m' x", "/bin/rm x",
      "sudo -u root rm x", "xargs -0 rm", "command rm x", "eval 'rm x'", "bash -c 'ls; rm x'",
      "find . -exec rm {} \\;", "echo $(rm x)", "timeout -s KILL 5 nice rm x"]) {
      expect(tag(command, [], [], ["rm:*"]), command).toBe("Deny")
    }
    expect(tag("command -v rm", [], [], ["rm:*"])).toBe("NoMatch")
  })

  it("checks deny rules best-effort on unanalyzable commands", () => {
    expect(tag("ls; rm -rf x 'unterminated", [], [], ["rm:*"])).toBe("Deny")
    expect(tag("echo $(rm x", [], [], ["rm:*"])).toBe("Deny")
    expect(tag("x".repeat(20_000) + "; rm y", [], [], ["rm:*"])).toBe("Deny")
  })
})

describe("suggestRule", () => {
  it("suggests a prefix rule for the command and its subcommand", () => {
    expect(suggestRule("npm run build --watch")).toEqual(Option.some("npm run build:*"))
    expect(suggestRule("git log --oneline")).toEqual(Option.some("git log:*"))
    expect(suggestRule("ls -la")).toEqual(Option.some("ls:*"))
    expect(suggestRule("cargo test -p foo")).toEqual(Option.some("cargo test:*"))
  })

  it("suggests the exact command where a prefix would grant too much", () => {
    expect(suggestRule("python3 script.py")).toEqual(Option.some("python3 script.py"))
    expect(suggestRule("git -c a=b log")).toEqual(Option.some("git -c a=b log"))
    expect(suggestRule("find . -name x")).toEqual(Option.some("find . -name x"))
  })

  it("suggests nothing for unanalyzable, compound or non-literal commands", () => {
    expect(suggestRule("echo 'x")).toEqual(Option.none())
    expect(suggestRule("ls; rm x")).toEqual(Option.none())
    expect(suggestRule("echo $(id)")).toEqual(Option.none())
    expect(suggestRule("$CMD x")).toEqual(Option.none())
    expect(suggestRule("ls > out")).toEqual(Option.none())
    expect(suggestRule("")).toEqual(Option.none())
  })
})
