/**
 * Bypasses found in review, pinned: each was allowed (read-only, or past a deny rule) before it was fixed.
 */
import { describe, expect, it } from "@effect/vitest"
import { decideBashRules } from "../../../src/Tools/Shell/BashRule.js"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"

describe("review findings", () => {
  it("git config is read-only only in an explicit read form with the right operands", () => {
    for (
      const command of [
        "git config --get core.bare",
        "git config --list",
        "git config -l",
        "git config get user.name",
        "git config list"
      ]
    ) {
      expect(classifyReadOnly(command), command).toEqual({ readOnly: true })
    }
    for (
      const command of [
        "git config core.fsmonitor 'touch PWNED' list",
        "git config --global core.fsmonitor x get",
        "git config --get core.fsmonitor x y",
        "git config --list core.pager x",
        "git config --repl core.x y",
        "git config get a b c",
        "git -P config alias.y list",
        // The person's own files, outside the workspace: asked, as Claude Code asks.
        "git config --global --get-regexp alias",
        "git config --system --list",
        "git config --file ../x --list"
      ]
    ) {
      expect(classifyReadOnly(command).readOnly, command).toBe(false)
    }
  })

  it("deny rules see through git's global options", () => {
    const rules = { allow: [], ask: [], deny: [{ content: "git commit:*" }, { content: "git config:*" }] }
    for (
      const command of [
        "git --no-pager commit -m x",
        "git -C . commit -m x",
        "git -c a=b commit",
        "git --git-dir=.git commit",
        "git -P config alias.y list"
      ]
    ) {
      expect(decideBashRules(command, rules)._tag, command).toBe("Deny")
    }
    expect(decideBashRules("git log", rules)._tag).toBe("NoMatch")
  })

  it("deny rules fail closed on commands only known at run time, and on git aliases defined on the command line", () => {
    const rules = { allow: [], ask: [], deny: [{ content: "git push:*" }] }
    for (
      const command of [
        "g=git; $g push",
        "x=push; git $x",
        "git `echo push`",
        "git -c alias.p=push p origin",
        "git -c alias.p='!git push' p",
        "$(echo git) push"
      ]
    ) {
      expect(decideBashRules(command, rules)._tag, command).not.toBe("NoMatch")
      expect(decideBashRules(command, rules)._tag, command).not.toBe("Allow")
    }
    // Unrelated commands with expansions are not caught by an unrelated rule.
    expect(decideBashRules("ls $HOME", rules)._tag).toBe("NoMatch")
    expect(decideBashRules("echo \"$(date)\"", rules)._tag).toBe("NoMatch")
  })
})
