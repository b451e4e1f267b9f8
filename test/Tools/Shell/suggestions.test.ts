/**
 * Suggested rules are never broader than the call: the exact command when a prefix would also allow dangerous
 * forms (`git config`, `rm`, interpreters, package runners, programs named by path), a prefix only for commands
 * whose other forms are the same kind of thing (`npm run build:*`, `git log:*`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Option } from "effect"
import * as fc from "fast-check"
import { suggestRule } from "../../../src/Tools/Shell/BashRule.js"

const suggestion = (command: string) => Option.getOrUndefined(suggestRule(command))

describe("suggested rules are never broader than the call", () => {
  it("`git config user.name` is suggested exactly, never as `git config:*`", () => {
    expect(suggestion("git config user.name")).toBe("git config user.name")
    expect(suggestion("git config --get user.email")).toBe("git config --get user.email")
  })

  it.each([
    "rm -rf dist",
    "rm build.log",
    "rmdir out",
    "chmod +x run.sh",
    "ln -s a b",
    "dd if=a of=b",
    "python3 script.py",
    "python2 x.py",
    "node build.js",
    "ruby x.rb",
    "perl -e 1",
    "ksh x",
    "busybox ls",
    "lua x.lua",
    "npm exec prettier",
    "npx --yes x",
    "pnpm dlx create-app",
    "yarn dlx x",
    "docker run alpine",
    "docker exec c ls",
    "kubectl exec pod -- ls",
    "pip install requests",
    "cargo install ripgrep",
    "uv run x.py",
    "git submodule update",
    "bin/tool run",
    "node_modules/.bin/rm x"
  ])("%s is suggested exactly", (command) => {
    expect(suggestion(command)).toBe(command)
  })

  it.each([
    ["git log --oneline", "git log:*"],
    ["git status", "git status:*"],
    ["npm run build --watch", "npm run build:*"],
    ["cargo test -p foo", "cargo test:*"],
    ["ls -la", "ls:*"]
  ])("%s keeps its useful prefix %s", (command, rule) => {
    expect(suggestion(command)).toBe(rule)
  })

  it.each(["/usr/bin/rm -rf x", "/usr/bin/git status", "./script.sh --fast"])(
    "%s, named by an absolute or ./ path, gets no suggestion",
    (command) => {
      expect(suggestion(command)).toBeUndefined()
    }
  )

  const dangerous = ["rm", "git config", "python3", "node", "docker run", "npm exec", "bin/rm", "tools/python3"]
  it.prop("for these commands with any plain arguments, the suggestion is the command itself", [
    fc.constantFrom(...dangerous),
    fc.array(fc.stringMatching(/^[a-z0-9._=-]{1,8}$/), { minLength: 1, maxLength: 4 })
  ], ([program, args]) => {
    const command = `${program} ${args.join(" ")}`
    const suggested = suggestion(command)
    // A prefix rule ends in `:*` or ` *`; none may be offered. (No suggestion at all is fine too.)
    if (suggested !== undefined) {
      expect(suggested.endsWith(":*") || suggested.endsWith(" *")).toBe(false)
      expect(suggested).toBe(command)
    }
  })
})
