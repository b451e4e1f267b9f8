/**
 * Claude Code's tool parameters (2.1.332 definitions), here: each test names what Claude Code does with a parameter
 * and what this runtime does.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Definitions from "../../src/Catalog/Definitions.js"
import { Approver } from "../../src/Permission/Approver.js"
import { testRuntime } from "../../src/testing/index.js"
import { backgroundRefusal, BashInput, BashTool, MAX_TIMEOUT_MS, sandboxEscapeRefusal } from "../../src/Tools/Bash.js"
import { builtinTools } from "../../src/Tools/index.js"
import { ToolSearch } from "../../src/Tools/ToolSearch.js"
import { bashLayer, tempDir as bashTemp } from "../Tools/Bash/helpers.js"
import { executeOne, runtimeLayer, tempDir, text, use, writeTree } from "../Tools/Files/helpers.js"

describe("Bash parameters", () => {
  const dir = bashTemp("cc-bash")
  const layer = testRuntime([BashTool], bashLayer(dir), Approver.allowAll)

  it("Claude Code clamps a timeout over the maximum (900000 ms) to the maximum; so do we", () => {
    expect(Schema.decodeUnknownSync(BashInput)({ command: "true", timeout: 900_000 }).timeout).toBe(MAX_TIMEOUT_MS)
    expect(Schema.decodeUnknownSync(BashInput)({ command: "true", timeout: 1500.5 }).timeout).toBe(1500.5)
  })

  it.effect("Claude Code runs a command whose timeout is over the maximum; so do we", () =>
    Effect.gen(function*() {
      for (const timeout of [3_600_000, "3600000"]) {
        const outcome = yield* executeOne(use("Bash", { command: "echo ran", timeout }))
        expect(outcome.status).toBe("success")
        expect(text(outcome)).toContain("ran")
      }
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code refuses a timeout of 0; so do we", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Bash", { command: "echo ran", timeout: 0 }))
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("timeout")
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code runs run_in_background: true as a background task; we refuse it, saying why, and run nothing", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "background-ran")
      const outcome = yield* executeOne(
        use("Bash", { command: `touch ${JSON.stringify(marker)}`, run_in_background: true })
      )
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain(backgroundRefusal)
      expect(fs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code runs dangerouslyDisableSandbox: true unsandboxed (after asking); we refuse it unless sandbox.allowUnsandboxedCommands, and run nothing", () =>
    Effect.gen(function*() {
      const marker = path.join(dir, "escape-ran")
      const outcome = yield* executeOne(
        use("Bash", { command: `touch ${JSON.stringify(marker)}`, dangerouslyDisableSandbox: true })
      )
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain(sandboxEscapeRefusal)
      expect(fs.existsSync(marker)).toBe(false)
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code accepts run_in_background: false and dangerouslyDisableSandbox: false; so do we", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(
        use("Bash", { command: "echo fine", run_in_background: false, dangerouslyDisableSandbox: false })
      )
      expect(outcome.status).toBe("success")
      expect(text(outcome)).toContain("fine")
    }).pipe(Effect.provide(layer)))
})

describe("Grep parameters", () => {
  const dir = tempDir("cc-grep-")
  writeTree(dir, {
    "a.txt": ["one apple", "two", "three apple pie", "four", "five apple", "six"].join("\n") + "\n",
    "b.txt": "apple\n",
    "c.txt": "apple\n"
  })
  const layer = runtimeLayer(dir)
  const grep = (input: Record<string, unknown>) => executeOne(use("Grep", { pattern: "apple", path: dir, ...input }))

  it.effect("Claude Code's -o prints only the matching parts; so does ours", () =>
    Effect.gen(function*() {
      const outcome = yield* grep({
        pattern: "t\\w+ apple",
        path: path.join(dir, "a.txt"),
        output_mode: "content",
        "-o": true
      })
      expect(text(outcome)).toBe("a.txt:3:three apple")
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code's context shows lines around each match, as -C does; so does ours", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "a.txt")
      const withContext = text(yield* grep({ pattern: "three", path: file, output_mode: "content", context: 1 }))
      const withC = text(yield* grep({ pattern: "three", path: file, output_mode: "content", "-C": 1 }))
      expect(withContext).toBe("a.txt-2-two\na.txt:3:three apple pie\na.txt-4-four")
      expect(withC).toBe(withContext)
      // Both given: `context` wins.
      expect(text(yield* grep({ pattern: "three", path: file, output_mode: "content", context: 0, "-C": 2 })))
        .toBe("a.txt:3:three apple pie")
    }).pipe(Effect.provide(layer)))

  it.effect("Claude Code's offset skips the first N entries before head_limit, in every mode; so does ours", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "a.txt")
      const all = text(yield* grep({ path: file, output_mode: "content" })).split("\n")
      expect(all).toEqual(["a.txt:1:one apple", "a.txt:3:three apple pie", "a.txt:5:five apple"])
      expect(text(yield* grep({ path: file, output_mode: "content", offset: 1, head_limit: 1 }))).toContain(
        "3:three apple pie"
      )
      expect(text(yield* grep({ path: file, output_mode: "content", offset: 1, head_limit: 1 }))).not.toContain("five")
      expect(text(yield* grep({ path: file, output_mode: "content", offset: 2 }))).toBe("a.txt:5:five apple")
      const files = text(yield* grep({ output_mode: "files_with_matches" })).split("\n").slice(1)
      expect(files).toHaveLength(3)
      const paged = text(yield* grep({ output_mode: "files_with_matches", offset: 1 })).split("\n").slice(1)
      expect(paged).toEqual(files.slice(1))
      expect(text(yield* grep({ output_mode: "count", offset: 3 }))).toContain("No files found")
    }).pipe(Effect.provide(layer)))
})

/** Claude Code 2.1.332's parameters and their JSON types, as its definitions give them. */
const claudeCode: Record<string, Record<string, string>> = {
  Read: { file_path: "string", offset: "number", limit: "number", pages: "string" },
  Write: { file_path: "string", content: "string" },
  Edit: { file_path: "string", old_string: "string", new_string: "string", replace_all: "boolean" },
  Glob: { pattern: "string", path: "string" },
  Grep: {
    pattern: "string",
    path: "string",
    glob: "string",
    type: "string",
    output_mode: "string",
    "-i": "boolean",
    "-n": "boolean",
    "-o": "boolean",
    "-A": "number",
    "-B": "number",
    "-C": "number",
    context: "number",
    multiline: "boolean",
    head_limit: "number",
    offset: "number"
  },
  Bash: {
    command: "string",
    timeout: "number",
    description: "string",
    run_in_background: "boolean",
    dangerouslyDisableSandbox: "boolean"
  },
  WebFetch: { url: "string", prompt: "string" },
  ToolSearch: { query: "string", max_results: "number" }
}

describe("the definitions", () => {
  const builtins = [...builtinTools.map((tool) => tool.definition), ToolSearch.definition]
  for (const [name, parameters] of Object.entries(claudeCode)) {
    it(`Claude Code's ${name} has ${Object.keys(parameters).join(", ")}; ours has the same, typed the same`, () => {
      const definition = builtins.find((d) => d.name === name)!
      const schema = Definitions.anthropic(definition).input_schema as {
        readonly properties: Record<string, { readonly type?: string; readonly enum?: ReadonlyArray<unknown> }>
      }
      const ours = Object.fromEntries(
        Object.entries(schema.properties).map(([key, node]) => [key, node.type ?? typeof node.enum?.[0]])
      )
      expect(ours).toEqual(parameters)
    })
  }

  it("Claude Code types every number parameter as number; no built-in of ours says integer", () => {
    const integers = builtins.flatMap((definition) =>
      [...JSON.stringify(Definitions.anthropic(definition).input_schema).matchAll(/"integer"/g)].map(() =>
        definition.name
      )
    )
    expect(integers).toEqual([])
  })
})
