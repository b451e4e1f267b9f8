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

const tag = (
  command: string,
  allow: ReadonlyArray<string>,
  ask: ReadonlyArray<string> = [],
  deny: ReadonlyArray<string> = []
) => decideBashRules(command, rules(allow, ask, deny))._tag

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
    for (
      const command of [
        "timeout 5 rm x",
        "time rm x",
        "nice -n 5 rm x",
        "nohup rm x",
        "stdbuf -oL rm x",
        "env A=1 rm x",
        "env -S 'rm x'",
        "FOO=1 rm x",
        "\\rm x",
        "'rm' x",
        "r''m x",
        "$'\\x72m' x",
        "/bin/rm x",
        "sudo -u root rm x",
        "xargs -0 rm",
        "command rm x",
        "eval 'rm x'",
        "bash -c 'ls; rm x'",
        "find . -exec rm {} \\;",
        "echo $(rm x)",
        "timeout -s KILL 5 nice rm x"
      ]
    ) {
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

describe("leading assignments and wrappers when matching (issue 17.2)", () => {
  it("a rule with leading assignments matches the same assignments", () => {
    expect(tag("TZ=UTC npx vitest run x", ["TZ=UTC npx vitest run:*"])).toBe("Allow")
    expect(tag("TZ=UTC npx vitest run", ["TZ=UTC npx vitest run:*"])).toBe("Allow")
    expect(tag("PYTHONPATH=. python x.py", ["PYTHONPATH=. python:*"])).toBe("Allow")
    expect(tag("PYTHONPATH=. python -m pytest -q", ["PYTHONPATH=. python -m pytest:*"])).toBe("Allow")
    expect(tag("A=1 B=2 make test", ["A=1 B=2 make test"])).toBe("Allow")
    expect(tag("FOO=\"a b\" cmd", ["FOO=\"a b\" cmd"])).toBe("Allow")
  })

  it("other assignments, other values, or more of them do not match", () => {
    expect(tag("TZ=EST npx vitest run x", ["TZ=UTC npx vitest run:*"])).toBe("NoMatch")
    expect(tag("PYTHONPATH=/tmp python x.py", ["PYTHONPATH=. python:*"])).toBe("NoMatch")
    expect(tag("PYTHONPATH=. LD_PRELOAD=x.so python x.py", ["PYTHONPATH=. python:*"])).toBe("NoMatch")
    expect(tag("LD_PRELOAD=x.so PYTHONPATH=. python x.py", ["PYTHONPATH=. python:*"])).toBe("NoMatch")
    expect(tag("PYTHONPATH=$(id) python x.py", ["PYTHONPATH=* python:*"])).toBe("NoMatch")
    // An unsafe variable is never stripped: `python:*` does not cover `PYTHONPATH=. python`.
    expect(tag("PYTHONPATH=. python x.py", ["python:*"])).toBe("NoMatch")
  })

  it("safe environment variables are stripped for rules that do not name them", () => {
    expect(tag("NODE_ENV=test npm test", ["npm test:*"])).toBe("Allow")
    expect(tag("TZ=UTC CI=1 npx vitest run", ["npx vitest run:*"])).toBe("Allow")
    expect(tag("NODE_OPTIONS=--require=x npm test", ["npm test:*"])).toBe("NoMatch")
  })

  it("timeout, time, nice, nohup and stdbuf are looked through, by their grammar", () => {
    expect(tag("timeout 30 npm test", ["npm test:*"])).toBe("Allow")
    expect(tag("timeout -k 5 30 npm test", ["npm test:*"])).toBe("Allow")
    expect(tag("nice -n 5 nohup npm test", ["npm test:*"])).toBe("Allow")
    expect(tag("TZ=UTC timeout 30 npx vitest run", ["npx vitest run:*"])).toBe("Allow")
    expect(tag("timeout 30 npm test --script-shell=./x", ["npm test:*"])).toBe("NoMatch")
    expect(tag("timeout --bogus 30 npm test", ["npm test:*"])).toBe("NoMatch")
    expect(tag("xargs npm test", ["npm test:*"])).toBe("NoMatch")
  })

  it("a suggested rule for a command with assignments includes them, and allows the same call", () => {
    for (const command of ["PYTHONPATH=. python x.py", "TZ=UTC npx vitest run", "RUST_LOG=debug cargo test"]) {
      const suggestion = Option.getOrThrow(suggestRule(command))
      expect(suggestion, command).toMatch(/^[A-Z_]+=/)
      expect(tag(command, [suggestion]), `${command} with ${suggestion}`).toBe("Allow")
    }
  })
})

describe("deny and ask rules see through wrappers and fail closed (issue 15.3)", () => {
  const denyTouch = (command: string) => tag(command, [], [], ["touch:*"])
  it("wrappers parsed by their grammar, abbreviations included", () => {
    for (
      const command of [
        "env --split='touch x'",
        "env -S 'touch x'",
        "env -C . touch x",
        "env --ch=. touch x",
        "timeout --sig=KILL 5 touch x",
        "nice --adj=1 touch x",
        "stdbuf --out=L touch x",
        "flock . -c 'touch x'",
        "prlimit --nofile=9 touch x",
        "sudo -u root touch x",
        "/usr/bin/touch x"
      ]
    ) {
      expect(denyTouch(command), command).toBe("Deny")
    }
  })

  it("what cannot be known is denied when a deny rule could apply, asked about when an ask rule could, and only then", () => {
    for (
      const command of [
        "echo x | bash",
        "python3 -c 'print(1)'",
        "node -e 1",
        "source ./x.sh",
        "eval \"$X\"",
        "strace ls",
        "bash -s",
        "perl",
        "env --bogus touch x"
      ]
    ) {
      expect(denyTouch(command), command).toBe("Deny")
      expect(tag(command, [], ["touch:*"]), command).toBe("Ask")
    }
    // Without deny or ask rules, nothing is asked on that account.
    expect(tag("python3 -c 'print(1)'", [])).toBe("NoMatch")
    // A known prefix that no rule starts with is not asked about.
    expect(tag("echo x | xargs echo", [], [], ["touch:*"])).toBe("NoMatch")
    expect(tag("echo x | xargs git", [], [], ["git push:*"])).toBe("Deny")
  })

  it("a denied git command is recognised by its other names", () => {
    const denyPush = (command: string) => tag(command, [], [], ["git push:*"])
    for (
      const command of [
        "/usr/lib/git-core/git-push origin",
        "git-push origin",
        "git send-pack origin",
        "git --no-pager push",
        "git -C . push"
      ]
    ) {
      expect(denyPush(command), command).toBe("Deny")
    }
    for (const command of ["git psuh origin", "git pushh", "git -c core.sshCommand=x fetch", "git -c alias.p=push p"]) {
      expect(denyPush(command), command).toBe("Deny")
    }
    expect(denyPush("git status")).toBe("NoMatch")
  })
})

describe("allow rules do not grant known-dangerous forms (issue 15.4)", () => {
  it("refuses the dangerous forms the rule does not name, abbreviations included", () => {
    expect(tag("git log --output=x", ["git log:*"])).toBe("NoMatch")
    expect(tag("git log --out=x", ["git log:*"])).toBe("NoMatch")
    expect(tag("npm test --script-shell=./x", ["npm test:*"])).toBe("NoMatch")
    expect(tag("git -c core.fsmonitor=x checkout main", ["git * main"])).toBe("NoMatch")
    expect(tag("git -C /elsewhere checkout main", ["git * main"])).toBe("NoMatch")
    expect(tag("find . -delete", ["find:*"])).toBe("NoMatch")
    expect(tag("git clone -u ./x repo", ["git clone:*"])).toBe("NoMatch")
    expect(tag("git log $X", ["git log:*"])).toBe("NoMatch")
  })

  it("grants them when the rule names them, and grants everything else", () => {
    expect(tag("git log --output=x", ["git log --output=x"])).toBe("Allow")
    expect(tag("find . -name x -delete", ["find . -name x -delete"])).toBe("Allow")
    expect(tag("git log --oneline -5", ["git log:*"])).toBe("Allow")
    expect(tag("git push -u origin main", ["git push:*"])).toBe("Allow")
    expect(tag("npm test -- --output=x", ["npm test:*"])).toBe("Allow")
    // What a substitution prints could be an option (`--output=...`): not granted by a prefix rule.
    expect(tag("git log \"$(git rev-parse HEAD)\"", ["git log:*", "git rev-parse:*"])).toBe("NoMatch")
  })
})
