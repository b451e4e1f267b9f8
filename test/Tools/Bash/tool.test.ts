import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { toText } from "../../../src/Tool/Presentation.js"
import type { ContentRule } from "../../../src/Tool/Tool.js"
import { BashTool, outputText } from "../../../src/Tools/Bash.js"
import {
  claimsOf,
  exitOneMeaning,
  matchRules,
  permissionCheckOf,
  traitsOf
} from "../../../src/Tools/Shell/CommandPlan.js"
import { bashLayer, recordingContext, tempDir } from "./helpers.js"

const cwd = tempDir("bash-tool")
/** The claims without the reads of named files below the working directory (the plan adds them for Read deny rules). */
const rootClaims = (claims: ReadonlyArray<{ resource: string; access: string }>) =>
  claims.filter((claim) => !(claim.access === "read" && claim.resource.startsWith(`file:${cwd}/`)))
fs.writeFileSync(path.join(cwd, "notes.txt"), "alpha\nbeta\n")
const place = { cwd, home: "/root", roots: [cwd] }

const run = (command: string) =>
  Effect.flatMap(BashTool, (bash) => Effect.exit(Effect.scoped(bash.plan({ command }).call(recordingContext()))))

describe("Bash results", () => {
  it.live("exit code 1 of grep is an answer: success, with the meaning for the model", () =>
    Effect.gen(function*() {
      const bash = yield* BashTool
      const exit = yield* run("grep nomatch notes.txt")
      expect(Exit.isSuccess(exit)).toBe(true)
      if (Exit.isFailure(exit)) return
      expect(exit.value.exitCode).toBe(1)
      expect(bash.plan({ command: "grep nomatch notes.txt" }).toModel(exit.value)).toBe("(exit code 1: no matches)")
    }).pipe(Effect.provide(bashLayer(cwd))))

  it.live("`false` fails, naming exit code 1; other codes and the output are in the message", () =>
    Effect.gen(function*() {
      const bash = yield* BashTool
      const exit = yield* run("false")
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return
      expect(exit.cause.error.exitCode).toBe(1)
      expect(bash.plan({ command: "false" }).renderFailure(exit.cause.error)).toContain("exit code 1")
      const other = yield* run("echo partial; exit 3")
      if (Exit.isSuccess(other) || other.cause._tag !== "Fail") throw new Error("expected a failure")
      expect(other.cause.error.message).toBe("Command failed with exit code 3. Output:\npartial")
      // grep's exit code 2 is an error.
      const missing = yield* run("grep x no-such-file")
      expect(Exit.isFailure(missing)).toBe(true)
    }).pipe(Effect.provide(bashLayer(cwd))))

  it.live("a command killed by a signal fails with the signal", () =>
    Effect.gen(function*() {
      const exit = yield* run("kill -9 $$")
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a failure")
      expect(exit.cause.error.reason).toBe("signal")
      expect(exit.cause.error.message).toContain("SIGKILL (exit code 137)")
    }).pipe(Effect.provide(bashLayer(cwd))))

  it.live("renders the command with its description, and the result with exit code and duration", () =>
    Effect.gen(function*() {
      const bash = yield* BashTool
      const input = { command: "cat notes.txt", description: "Show the notes" }
      expect(toText(bash.plan(input).renderUse())).toBe("Bash: Show the notes\ncat notes.txt")
      const exit = yield* run("cat notes.txt")
      if (Exit.isFailure(exit)) throw new Error("expected success")
      const ui = bash.plan(input).renderResult(exit.value)
      expect(ui[0]).toMatchObject({ _tag: "Code", text: "alpha\nbeta\n" })
      expect(ui[1]?._tag).toBe("Fields")
      expect(toText(ui)).toMatch(/exit code: 0\nduration: \d+ ms\noutput: 11 B/)
    }).pipe(Effect.provide(bashLayer(cwd))))

  it.live("an empty command is rejected before anything runs", () =>
    Effect.gen(function*() {
      const bash = yield* BashTool
      const exit = yield* Effect.exit(bash.plan({ command: "  " }).validate(recordingContext()))
      expect(Exit.isFailure(exit)).toBe(true)
    }).pipe(Effect.provide(bashLayer(cwd))))
})

describe("Bash classification", () => {
  it("exit code 1 is an answer only when the last top-level command is grep, rg, diff, cmp, test or [", () => {
    expect(exitOneMeaning("grep x f")).toBe("no matches")
    expect(exitOneMeaning("cat f | grep x")).toBe("no matches")
    expect(exitOneMeaning("ls; rg x")).toBe("no matches")
    expect(exitOneMeaning("diff a b")).toBe("the inputs differ")
    expect(exitOneMeaning("[ -f x ]")).toBe("the condition is false")
    expect(exitOneMeaning("test -d x")).toBe("the condition is false")
    expect(exitOneMeaning("grep x f | wc -l")).toBeUndefined()
    expect(exitOneMeaning("test -f x && cat x")).toBeUndefined()
    expect(exitOneMeaning("echo $(grep x f)")).toBeUndefined()
    expect(exitOneMeaning("grep x $(")).toBeUndefined()
  })

  it("read-only commands inside the workspace claim a read of it; reaching outside claims every file; others the world", () => {
    expect(rootClaims(claimsOf("cat notes.txt", place))).toEqual([{ resource: `file:${cwd}`, access: "read" }])
    expect(rootClaims(claimsOf("for f in *.txt; do head -n 1 \"$f\"; done", place))).toEqual([{
      resource: `file:${cwd}`,
      access: "read"
    }])
    expect(rootClaims(claimsOf("basename \"$PWD\"", place))).toEqual([{ resource: `file:${cwd}`, access: "read" }])
    for (
      const outside of [
        "cat /etc/passwd",
        "ls ..",
        "cat $HOME/.ssh/id_rsa",
        "grep -r x ~/",
        "grep --file=/etc/shadow x",
        "tr a b < /etc/hosts",
        "for f in /etc/*; do cat \"$f\"; done"
      ]
    ) {
      expect(rootClaims(claimsOf(outside, place)), outside).toEqual([{ resource: "file:/", access: "read" }])
    }
    // Found in review: tildes bash expands elsewhere, brace expansions, `..` behind a glob or a symlink.
    for (
      const outside of [
        "cat ~root/../tmp/x",
        "cat ~+/../x",
        "cat ~-/x",
        "cat < ~root/x",
        "cat .gi[t]/../../x",
        "cat {..,.}/x",
        "cat {.,x}{.,y}/x",
        "cat sub/../notes.txt"
      ]
    ) {
      expect(rootClaims(claimsOf(outside, place)), outside).toEqual([{ resource: "file:/", access: "read" }])
    }
    expect(rootClaims(claimsOf("rm notes.txt", place))).toEqual([{ resource: "*", access: "write" }])
    // A simple file command inside the workspace claims exactly what it writes (acceptEdits accepts it).
    expect(rootClaims(claimsOf("touch notes.txt", place))).toEqual([{
      resource: `file:${cwd}/notes.txt`,
      access: "write"
    }])
    fs.symlinkSync("/etc/hostname", path.join(cwd, "link"))
    expect(rootClaims(claimsOf("cat link", place))).toEqual([{ resource: "file:/", access: "read" }])
    // A glob is checked by what it matches, through symlinks: `li*` and `lin[k]` reach /etc/hostname.
    for (const outside of ["cat li*", "cat lin[k]", "cat *", "head -n 1 *"]) {
      expect(rootClaims(claimsOf(outside, place)), outside).toEqual([{ resource: "file:/", access: "read" }])
    }
    expect(rootClaims(claimsOf("cat *.txt", place))).toEqual([{ resource: `file:${cwd}`, access: "read" }])
    // Options that read files no argument names, or name them in a value: not read-only, or checked as paths.
    expect(rootClaims(claimsOf("printf '/etc/shadow\\0' | sort --files0-from=-", place))).toEqual([{
      resource: "*",
      access: "write"
    }])
    expect(rootClaims(claimsOf("wc --files0-from -", place))).toEqual([{ resource: "*", access: "write" }])
    expect(rootClaims(claimsOf("date -f /etc/hostname", place))).toEqual([{ resource: "file:/", access: "read" }])
    expect(rootClaims(claimsOf("date --file=/etc/hostname", place))).toEqual([{ resource: "file:/", access: "read" }])
  })

  it("traits: read-only commands are concurrency-safe; rough destructive and open-world hints", () => {
    expect(traitsOf("git status")).toEqual({
      readOnly: true,
      concurrencySafe: true,
      destructive: false,
      openWorld: false
    })
    expect(traitsOf("rm -rf build")).toMatchObject({ readOnly: false, concurrencySafe: false, destructive: true })
    expect(traitsOf("git push --force")).toMatchObject({ destructive: true, openWorld: true })
    expect(traitsOf("curl https://example.com")).toMatchObject({ readOnly: false, openWorld: true })
  })

  it("checkPermissions never allows: it asks for what it cannot analyse, else has no opinion and suggests a rule", () => {
    expect(permissionCheckOf("npm run build")).toEqual({ _tag: "Passthrough", suggestions: ["Bash(npm run build:*)"] })
    // A compound command: one rule per part, which together allow it.
    expect(permissionCheckOf("ls && rm x")).toEqual({ _tag: "Passthrough", suggestions: ["Bash(ls:*)", "Bash(rm x)"] })
    expect(permissionCheckOf("ls $(")).toMatchObject({
      _tag: "Ask",
      message: expect.stringContaining("cannot be analysed")
    })
    expect(permissionCheckOf("x".repeat(20_000))._tag).toBe("Ask")
  })

  it("rules: a compound command is allowed only when every part is covered; deny and ask match any part", () => {
    const rule = (content: string): ContentRule => ({ content, ruleDirectory: undefined })
    const allowGit = rule("git status")
    const allowLs = rule("ls:*")
    const denyRm = rule("rm:*")
    expect(matchRules("git status && ls -la", { deny: [], ask: [], allow: [allowGit, allowLs] })).toEqual({
      _tag: "Allow",
      rules: [allowGit, allowLs]
    })
    expect(matchRules("git status && touch x", { deny: [], ask: [], allow: [allowGit] })).toMatchObject({
      _tag: "NoMatch",
      detail: expect.stringContaining("touch x")
    })
    expect(matchRules("ls; timeout 5 rm -rf /", { deny: [denyRm], ask: [], allow: [allowLs] })).toMatchObject({
      _tag: "Deny",
      rule: denyRm
    })
    expect(matchRules("echo $(rm x)", { deny: [], ask: [denyRm], allow: [] })).toMatchObject({
      _tag: "Ask",
      rule: denyRm
    })
  })

  it.prop(
    "traits, claims, checkPermissions and rule matching never throw on arbitrary strings",
    [fc.oneof(
      fc.string(),
      fc.fullUnicodeString(),
      fc.stringOf(fc.constantFrom(..."$(){}[]<>|&;`'\"\\\n *?~=-!#ab/."))
    )],
    ([command]) => {
      const rules = {
        deny: [{ content: "rm:*", ruleDirectory: undefined }],
        ask: [],
        allow: [{ content: "*", ruleDirectory: undefined }]
      }
      expect(() => {
        traitsOf(command)
        claimsOf(command, place)
        permissionCheckOf(command)
        matchRules(command, rules)
        exitOneMeaning(command)
      }).not.toThrow()
    },
    { fastCheck: { numRuns: 300 }, timeout: 60_000 }
  )
})

describe("model text", () => {
  it("is the whole output when it fits, else head and tail with the path, under the tool's limit", () => {
    expect(outputText({ output: "hi\n", outputTail: "", omittedBytes: 0, totalBytes: 3 })).toBe("hi\n")
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i}`).join("\n")
    const text = outputText({
      output: lines,
      outputTail: "",
      omittedBytes: 0,
      totalBytes: lines.length,
      fullOutputPath: "/store/t.txt"
    })
    expect(text.length).toBeLessThan(30_000)
    expect(text.startsWith("line 0\nline 1\n")).toBe(true)
    expect(text.endsWith("line 9999")).toBe(true)
    expect(text).toContain("saved to: /store/t.txt")
    const split = outputText({
      output: "h".repeat(50_000),
      outputTail: "t".repeat(50_000),
      omittedBytes: 1e9,
      totalBytes: 1e9 + 1e5
    })
    expect(split.length).toBeLessThan(30_000)
    expect(split).toContain("the full output could not be saved")
  })
})
