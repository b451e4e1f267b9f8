import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as LoopExample from "../examples/doc/AgentLoop.run.js"
import * as PolicyExample from "../examples/doc/RulePolicy.layer.js"
import * as SessionExample from "../examples/doc/Session.layer.js"
import * as ToolExample from "../examples/doc/Tool.make.js"
import * as RegistryExample from "../examples/doc/ToolRegistry.layer.js"
import * as RuntimeExample from "../examples/doc/ToolRuntime.layer.js"

// Every `@example` of the public API (a block that imports from "effect-tool-runtime") is a file of examples/doc,
// shown verbatim: tsc type-checks the file (examples/ is in tsconfig.json) and the tests below run it.
const root = path.join(__dirname, "..")
const docDir = path.join(root, "examples", "doc")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith(".ts") ? [full] : []
  })

/** The code of each `@example` block, with the doc comment's ` * ` taken off. */
const exampleBlocks = (text: string): Array<string> =>
  [...text.matchAll(/^[ \t]*\* @example\n[ \t]*\* ```ts\n([\s\S]*?)^[ \t]*\* ```$/gm)].map((match) =>
    match[1]!.split("\n").map((line) => line.replace(/^[ \t]*\*( |$)/, "")).join("\n")
  )

const blocks = sourceFiles(path.join(root, "src")).flatMap((file) =>
  exampleBlocks(fs.readFileSync(file, "utf8")).map((code) => ({ file: path.relative(root, file), code }))
)
const publicBlocks = blocks.filter((block) => /from "effect-tool-runtime(\/[a-z]+)?"/.test(block.code))
const docFiles = fs.readdirSync(docDir).filter((name) => name.endsWith(".ts"))
const docText = (name: string) => fs.readFileSync(path.join(docDir, name), "utf8")

describe("@example blocks", () => {
  it("the main constructors have one: tool, registry, runtime, loop, policy, session", () => {
    expect(docFiles.sort()).toEqual(
      [
        "AgentLoop.run.ts",
        "RulePolicy.layer.ts",
        "Session.layer.ts",
        "Tool.make.ts",
        "ToolRegistry.layer.ts",
        "ToolRuntime.layer.ts"
      ]
    )
  })

  it("every public @example is a file of examples/doc, verbatim, and every such file is shown", () => {
    for (const block of publicBlocks) {
      expect(docFiles.map(docText), `${block.file}: an @example that is not in examples/doc`).toContain(block.code)
    }
    for (const name of docFiles) {
      expect(publicBlocks.map((block) => block.code), `examples/doc/${name} is shown by no @example`).toContain(
        docText(name)
      )
    }
  })

  it("finds the blocks it checks (the extraction reads a doc comment)", () => {
    expect(exampleBlocks("/**\n * x\n *\n * @example\n * ```ts\n * const a = 1\n *\n * a\n * ```\n */")).toEqual([
      "const a = 1\n\na\n"
    ])
  })
})

describe("examples/doc run and answer what their comments say", () => {
  it.effect("ToolRegistry.layer: lookup by alias", () =>
    Effect.gen(function*() {
      const { program } = RegistryExample
      expect(yield* program).toEqual(Option.some("Echo"))
    }))

  it.effect("ToolRuntime.layer: one outcome per tool_use, in model order", () =>
    Effect.gen(function*() {
      const { program } = RuntimeExample
      expect(yield* program).toEqual(["success", "error"])
    }))

  it.effect("RulePolicy.layer: the deny rule denies", () =>
    Effect.gen(function*() {
      const { program } = PolicyExample
      expect(yield* program).toEqual(["denied"])
    }))

  it.effect("AgentLoop.run: the model calls Echo, then ends its turn", () =>
    Effect.gen(function*() {
      const { program } = LoopExample
      expect(yield* program).toEqual(["end_turn", 2, "Done."])
    }))

  it.effect("Session.layer: state restored from the last checkpoint", () =>
    Effect.gen(function*() {
      const { program } = SessionExample
      const directory = fs.mkdtempSync(path.join(os.tmpdir(), "etr-doc-session-"))
      try {
        expect(yield* program(path.join(directory, "session"))).toEqual([1, 2])
      } finally {
        fs.rmSync(directory, { recursive: true, force: true })
      }
    }))

  it("Tool.make: the tool's definition and its implementation", () => {
    const { Echo, EchoLive } = ToolExample
    expect(Echo.definition.name).toBe("Echo")
    expect(EchoLive).toBeDefined()
  })
})
