/**
 * Bad input to a built-in tool is an input error, never a defect: inputs generated from each tool's own input
 * Schema, with hostile strings (NUL bytes, over-long values, control and bidi characters, odd unicode, `..` paths,
 * device files, substitutions) put in their string fields, go through the real runtime (full policy in default
 * mode, a denying approver) in a temp git repository. No outcome is a Defect, and nothing was written.
 */
import { NodeContext } from "@effect/platform-node"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as fc from "fast-check"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import { Approver } from "../../../src/Permission/Approver.js"
import * as RulePolicy from "../../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../../src/Session/FileState.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { BashInput, BashTool } from "../../../src/Tools/Bash.js"
import { EditInput } from "../../../src/Tools/Edit.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { GlobInput } from "../../../src/Tools/Glob.js"
import { GrepInput } from "../../../src/Tools/Grep.js"
import { ReadInput } from "../../../src/Tools/Read.js"
import { WriteInput } from "../../../src/Tools/Write.js"
import { tempDir, writeTree } from "./helpers.js"

const workspace = tempDir("fuzz-")
writeTree(workspace, { "a.txt": "alpha\nbeta\n", "sub/b.ts": "export const b = 1\n", ".env": "SECRET=1\n" })
fs.symlinkSync("/etc", path.join(workspace, "etc-link"))
childProcess.execFileSync("git", ["init", "-q"], { cwd: workspace })
const before = fs.readdirSync(workspace).sort()

const layer = (() => {
  const ws = Workspace.layer({ cwd: workspace })
  const tools = Layer.merge(FileTools.layer, BashTool.layer({ killGrace: "200 millis" })).pipe(
    Layer.provide(Layer.mergeAll(ws, FileState.layer(), ResultStore.layer(tempDir("fuzz-store"))))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([...FileTools.tools, BashTool]), tools)),
    Layer.provide([
      RulePolicy.layer({ mode: "default" }).pipe(Layer.provide(ws)),
      Approver.denyAll,
      ToolHooks.none,
      ResultStore.layer(tempDir("fuzz-results"))
    ]),
    Layer.provide(NodeContext.layer)
  )
})()
const runtime = ManagedRuntime.make(layer)
afterAll(() => runtime.dispose())

/** Strings a hostile model would try, and strings no program or path can take. */
const hostile: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\0",
    "a\0b",
    "a.txt\0",
    "..",
    "../../../etc/passwd",
    "sub/../../x",
    "/",
    "~",
    "~/.ssh/id_rsa",
    "/dev/zero",
    "/dev/stdin",
    "/proc/self/mem",
    "/proc/self/fd/0",
    "etc-link/passwd",
    ".env",
    "\r\x1b[2Kok",
    "\u202e\u2066txt",
    "\ufeff\u200b",
    "*",
    "**/*",
    "{a,b}",
    "[",
    "(",
    "\\",
    "-rf",
    "echo hi",
    "cat a.txt",
    "ls -la sub",
    "grep -rn alpha .",
    "head -c 5 /dev/zero",
    "wc -l *.txt",
    "--output=PWNED",
    "$(touch PWNED)",
    "`touch PWNED`",
    "a.txt",
    "sub",
    "%s%n",
    "",
    " ",
    "\n"
  ),
  fc.string({
    unit: fc.constantFrom("\0", "\n", "\r", "\t", "\x1b", "\u202e", "\u0085", "a", "/", ".", "*", "é", "😀")
  }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constant("x".repeat(200_000)),
  fc.constant("é".repeat(70_000)),
  fc.constant(`${"a/".repeat(3_000)}b`),
  fc.constant("n".repeat(300))
)

/** A generated input with some of its string fields replaced by hostile strings (and, now and then, junk). */
const inputs = <A extends Record<string, unknown>, I>(schema: Schema.Schema<A, I>) =>
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(
        Arbitrary.make(schema),
        fc.array(fc.option(hostile, { freq: 2 }), { minLength: 6, maxLength: 6 })
      ).map(([value, swaps]) => {
        const out: Record<string, unknown> = { ...value }
        Object.keys(out).forEach((key, i) => {
          const swap = swaps[i % swaps.length]
          if (typeof out[key] === "string" && swap !== null && swap !== undefined) out[key] = swap
        })
        // Keep runs fast: a generated timeout is at most two seconds.
        if (typeof out.timeout === "number") out.timeout = Math.min(out.timeout, 2_000)
        return out as unknown
      })
    },
    { weight: 1, arbitrary: fc.anything() }
  )

const tools = [
  ["Read", inputs(ReadInput)],
  ["Write", inputs(WriteInput)],
  ["Edit", inputs(Schema.encodedSchema(EditInput))],
  ["Glob", inputs(GlobInput)],
  ["Grep", inputs(GrepInput)],
  ["Bash", inputs(BashInput)]
] as const

let counter = 0

describe("every built-in tool answers bad input with an input error", () => {
  for (const [name, arbitrary] of tools) {
    it.live.prop(
      `${name}: no generated or hostile input ends in a Defect`,
      [arbitrary],
      ([input]) =>
        Effect.gen(function*() {
          const rt = yield* ToolRuntime
          const outcome = yield* rt.executeOne({ type: "tool_use", id: `toolu_fuzz_${++counter}`, name, input })
          // The status and message are what the model would see; a Defect says "internal error".
          expect(
            outcome.error?._tag,
            `${name} ${String(JSON.stringify(input)).slice(0, 300)}: ${
              JSON.stringify(outcome.result.content).slice(0, 300)
            }`
          )
            .not.toBe("Defect")
          expect(fs.existsSync(path.join(workspace, "PWNED"))).toBe(false)
          expect(fs.readdirSync(workspace).sort()).toEqual(before)
        }).pipe(Effect.provide(runtime)),
      { timeout: 120_000, fastCheck: { numRuns: 40 } }
    )
  }

  it.live(
    "the hostile strings reach the tools: NUL paths, NUL and over-long patterns are InvalidInput, naming the parameter",
    () =>
      Effect.gen(function*() {
        const rt = yield* ToolRuntime
        const cases = [
          ["Read", { file_path: "a.txt\0" }, "file_path"],
          ["Grep", { pattern: "a\0b" }, "pattern"],
          ["Grep", { pattern: "x".repeat(200_000) }, "pattern"],
          ["Grep", { pattern: "x", glob: "*.ts\0" }, "glob"],
          ["Glob", { pattern: "*", path: "sub\0" }, "path"],
          ["Bash", { command: "echo a\0b" }, "command"],
          ["Bash", { command: `echo ${"y".repeat(140_000)}` }, "command"],
          ["Write", { file_path: `${"a/".repeat(3_000)}b`, content: "" }, "file_path"]
        ] as const
        for (const [name, input, parameter] of cases) {
          const outcome = yield* rt.executeOne({ type: "tool_use", id: `toolu_fuzz_${++counter}`, name, input })
          expect(outcome.error?._tag).toBe("InvalidInput")
          expect(JSON.stringify(outcome.result.content)).toContain(`The parameter \`${parameter}\` is invalid`)
        }
        const grep = yield* rt.executeOne({
          type: "tool_use",
          id: `toolu_fuzz_${++counter}`,
          name: "Grep",
          input: { pattern: "a\0b" }
        })
        expect(JSON.stringify(grep.result.content)).toContain(
          "contains a NUL byte (\\\\0), which no program argument can hold (to match a NUL byte, write \\\\x00)"
        )
        const glob = yield* rt.executeOne({
          type: "tool_use",
          id: `toolu_fuzz_${++counter}`,
          name: "Glob",
          input: { pattern: "a\0" }
        })
        expect(glob.error?._tag).toBe("ValidationFailed")
      }).pipe(Effect.provide(runtime)),
    60_000
  )
})
