/**
 * The package as a user gets it: `npm pack`, the tarball installed into a fresh project with its peers (from the
 * npm cache when it has them, else the registry), every entry point imported, the `bin` run, and the published
 * `.d.ts` compiled under `exactOptionalPropertyTypes` (with library checking on) together with README's examples
 * and a consumer file.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ensureBuilt } from "./cli/helpers.js"

const run = promisify(execFile)
const root = path.resolve(__dirname, "..")
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  readonly version: string
  readonly exports: Record<string, unknown>
  readonly peerDependencies: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, unknown>
  readonly devDependencies: Record<string, string>
}
const installed = (name: string): string =>
  (JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string })
    .version

let project = ""

beforeAll(async () => {
  await ensureBuilt()
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "etr-pack-"))
  // The build is current (ensureBuilt): packing need not build again.
  await run("npm", ["pack", "--ignore-scripts", "--pack-destination", base], { cwd: root })
  const tarball = path.join(base, `effect-tool-runtime-${pkg.version}.tgz`)
  project = path.join(base, "consumer")
  fs.mkdirSync(project)
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "consumer", private: true, type: "module" })
  )
  // README's install line (the required peers) at the versions this repository tests with, and the tools a consumer
  // tests with; the optional peer (@effect/ai) comes later, in its own step.
  const peers = [...REQUIRED_PEERS, "typescript", "@types/node", "vitest", "@effect/vitest"].map((name) =>
    `${name}@${installed(name)}`
  )
  await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball, ...peers], {
    cwd: project,
    timeout: 240_000
  })
}, 300_000)

afterAll(() => {
  if (project !== "") fs.rmSync(path.dirname(project), { recursive: true, force: true })
})

describe("the packed package", () => {
  it("ships LICENSE, README, dist and the bundled bin, and declares @effect/platform-node as a peer", () => {
    const dir = path.join(project, "node_modules", "effect-tool-runtime")
    for (
      const file of [
        "LICENSE",
        "README.md",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/bin/effect-tool-runtime.js",
        "dist/bin/cli.cjs",
        "dist/bin/cli.cache"
      ]
    ) {
      expect(fs.existsSync(path.join(dir, file)), file).toBe(true)
    }
    expect(pkg.peerDependencies["@effect/platform-node"]).toBeDefined()
  })

  it("README's install line brings every required peer (and @effect/experimental through @effect/platform-node)", () => {
    const required = Object.keys(pkg.peerDependencies).filter((name) => !OPTIONAL_PEERS.includes(name))
    for (const name of required) expect(fs.existsSync(path.join(project, "node_modules", name)), name).toBe(true)
    expect(Object.keys(pkg.peerDependenciesMeta ?? {})).toEqual(OPTIONAL_PEERS)
  })

  it("with the required peers only: every entry but /ai imports, and /ai names the missing optional peer", async () => {
    expect(fs.existsSync(path.join(project, "node_modules", "@effect/ai"))).toBe(false)
    const script =
      `for (const e of ["effect-tool-runtime", "effect-tool-runtime/tools", "effect-tool-runtime/testing"]) {
      await import(e) }
    try { await import("effect-tool-runtime/ai"); console.log("imported") } catch (e) { console.log(e.code, e.message) }`
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project })
    expect(stdout).toMatch(/^ERR_MODULE_NOT_FOUND .*'@effect\/ai'/)
  })

  it(
    "with the required peers only: the consumer type test compiles against the published types, library checking on",
    async () => {
      fs.copyFileSync(path.join(root, "test/consumer/types.ts"), path.join(project, "types.ts"))
      fs.writeFileSync(path.join(project, "tsconfig.json"), tsconfigOf(["types.ts"]))
      expect(await ourErrors(project)).toEqual([])
    },
    180_000
  )

  it(
    "README's property test and a turn of a user's own tool run under vitest's default timeout, conflicts reached",
    async () => {
      fs.copyFileSync(path.join(root, "test/testing/notes.ts"), path.join(project, "notes.ts"))
      fs.copyFileSync(path.join(root, "test/testing/kit.test.ts"), path.join(project, "readme-kit.test.ts"))
      fs.writeFileSync(path.join(project, "turn.test.ts"), TURN_TEST)
      // No vitest config: vitest's defaults, as a new project has them (5 s a test).
      const result = await run(path.join(project, "node_modules", ".bin", "vitest"), ["run", "--reporter=verbose"], {
        cwd: project,
        env: { ...process.env, CI: "1", NO_COLOR: "1" }
      }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: `${error.stdout}${error.stderr}` }))
      expect(result.stdout).toMatch(/Tests\s+3 passed/)
    },
    120_000
  )

  it("then with the optional peer installed, every entry point imports", async () => {
    await run("npm", [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--ignore-scripts",
      ...OPTIONAL_PEERS.map((name) => `${name}@${installed(name)}`)
    ], { cwd: project, timeout: 240_000 })
  }, 300_000)

  it("every entry point imports in a fresh project", async () => {
    const entries = Object.keys(pkg.exports).map((entry) =>
      entry === "." ? "effect-tool-runtime" : `effect-tool-runtime/${entry.slice(2)}`
    )
    expect(entries).toEqual([
      "effect-tool-runtime",
      "effect-tool-runtime/tools",
      "effect-tool-runtime/testing",
      "effect-tool-runtime/ai",
      "effect-tool-runtime/durable"
    ])
    const script = `const names = {}; for (const e of ${
      JSON.stringify(entries)
    }) names[e] = Object.keys(await import(e)).sort(); console.log(JSON.stringify(names))`
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: project })
    const names = JSON.parse(stdout) as Record<string, ReadonlyArray<string>>
    expect(names["effect-tool-runtime"]).toEqual(
      expect.arrayContaining(["ToolRuntime", "Session", "ApprovalAnswer", "renderEvent", "ResultStore"])
    )
    expect(names["effect-tool-runtime/tools"]).toEqual(
      expect.arrayContaining(["builtinLayer", "builtinTools", "SessionFileState", "Read"])
    )
    expect(names["effect-tool-runtime/testing"]).toEqual(expect.arrayContaining(["testRuntime", "arbitraryTurn"]))
  })

  it("the bin runs exec from the installed package", async () => {
    fs.writeFileSync(path.join(project, "a.txt"), "hello\n")
    const child = execFile(path.join(project, "node_modules", ".bin", "effect-tool-runtime"), [
      "exec",
      "--no-claude-settings"
    ], { cwd: project })
    child.stdin!.end(JSON.stringify([{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.txt" } }]))
    const stdout = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout!.on("data", (chunk: string) => (out += chunk))
      child.on("error", reject)
      child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))))
    })
    expect(JSON.parse(stdout)).toMatchObject({ outcomes: [{ tool_use_id: "t1", status: "success" }] })
  }, 30_000)

  it(
    "README's examples and a consumer file compile against the published types with exactOptionalPropertyTypes",
    async () => {
      const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
      const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
      expect(blocks.length).toBeGreaterThan(0)
      // The first example is examples/readme.ts (test/readme.test.ts pins it), which the session example imports.
      blocks.forEach((block, i) =>
        fs.writeFileSync(path.join(project, i === 0 ? "readme.ts" : `readme-${i}.ts`), block)
      )
      fs.writeFileSync(path.join(project, "consumer.ts"), CONSUMER)
      fs.writeFileSync(path.join(project, "tsconfig.json"), tsconfigOf(["*.ts"]))
      expect(await ourErrors(project)).toEqual([])
    },
    180_000
  )
})

/** The peers README's install line names; the optional ones are installed in a later step. */
const REQUIRED_PEERS = ["effect", "@effect/platform", "@effect/platform-node"]
const OPTIONAL_PEERS = [
  "@effect/ai",
  "@effect/cluster",
  "@effect/rpc",
  "@effect/sql",
  "@effect/sql-pg",
  "@effect/sql-sqlite-node",
  "@effect/workflow"
]

/** A consumer's tsconfig: strict, exactOptionalPropertyTypes, NodeNext, and library checking on. */
const tsconfigOf = (include: ReadonlyArray<string>): string =>
  JSON.stringify({
    compilerOptions: {
      target: "ES2022",
      lib: ["ES2022"],
      module: "NodeNext",
      moduleResolution: "NodeNext",
      types: ["node"],
      strict: true,
      exactOptionalPropertyTypes: true,
      skipLibCheck: false,
      noEmit: true
    },
    include
  })

/**
 * tsc's errors in the consumer's files and in this package's .d.ts files. Library checking is on, so our .d.ts files
 * are checked; other packages' own declarations (which want the DOM lib or @types/ws) are not this package's to fix.
 */
const ourErrors = async (cwd: string): Promise<ReadonlyArray<string>> => {
  const result = await run(path.join(cwd, "node_modules", ".bin", "tsc"), ["-p", "."], { cwd }).catch((
    error: { stdout?: string }
  ) => ({ stdout: error.stdout ?? String(error) }))
  return result.stdout.split("\n").filter((line) => /^\S+\(\d+,\d+\): error/.test(line))
    .filter((line) => !line.startsWith("node_modules/") || line.startsWith("node_modules/effect-tool-runtime/"))
}

/**
 * A user's own tools in a consumer's test: a turn of them runs, and generated turns reach conflicting pairs (the
 * oracle: two calls on one note, one of them a write).
 */
const TURN_TEST = `
import { expect, it } from "@effect/vitest"
import { Effect, FastCheck, Layer } from "effect"
import { ToolRuntime } from "effect-tool-runtime"
import { arbitraryTurnOf, fileAccessMemory, runTurn, testRuntime } from "effect-tool-runtime/testing"
import { FileState, FileTools, Workspace } from "effect-tool-runtime/tools"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { NotesLive, ReadNote, WriteNote } from "./notes.js"

const tools = [ReadNote, WriteNote] as const

it.effect("a turn of my own tools runs", () =>
  Effect.gen(function*() {
    const turn = [
      { type: "tool_use" as const, id: "w", name: "WriteNote", input: { name: "todo", text: "milk" } },
      { type: "tool_use" as const, id: "r", name: "ReadNote", input: { name: "todo" } }
    ]
    const { outcomes } = yield* runTurn(turn, { tools, layer: NotesLive })
    expect(outcomes.map((outcome) => outcome.status)).toEqual(["success", "success"])
    expect(outcomes[1]!.result.content).toEqual("milk")

    // The built-in file tools over the in-memory file system, in a workspace that is not on disk: every tool answers
    // from memory (a fallback to the disk or to ripgrep would find nothing there), and nothing is created.
    const cwd = path.join(os.tmpdir(), \`not-on-disk-\${process.pid}-\${Date.now()}\`, "work")
    const files = FileTools.layer.pipe(
      Layer.provideMerge(Layer.mergeAll(Workspace.layerFileAccess({ cwd }), FileState.layer())),
      Layer.provideMerge(fileAccessMemory({ files: { [path.join(cwd, "list.txt")]: "milk\\neggs\\n" } }))
    )
    const use = (id: string, name: string, input: Record<string, unknown>) => ({ type: "tool_use" as const, id, name, input })
    const fileTurn = Effect.gen(function*() {
      const first = yield* ToolRuntime.execute([
        use("g", "Glob", { pattern: "*.txt" }),
        use("s", "Grep", { pattern: "eg+s", output_mode: "content" }),
        use("r", "Read", { file_path: "list.txt" }),
        use("w", "Write", { file_path: "new/todo.txt", content: "bread\\n" })
      ])
      const second = yield* ToolRuntime.execute([
        use("e", "Edit", { file_path: "list.txt", old_string: "milk", new_string: "oat milk" }),
        use("r2", "Read", { file_path: "list.txt" }),
        use("g2", "Glob", { pattern: "**/*.txt" })
      ])
      return [...first, ...second]
    }).pipe(Effect.provide(testRuntime(FileTools.tools, files)))
    const fileOutcomes = yield* fileTurn
    expect(fileOutcomes.map((outcome) => outcome.status)).toEqual(Array(7).fill("success"))
    const texts = fileOutcomes.map((outcome) => outcome.result.content)
    expect(texts[0]).toBe("list.txt")
    expect(texts[1]).toBe("list.txt:2:eggs")
    expect(texts[2]).toBe("     1\\tmilk\\n     2\\teggs")
    expect(texts[5]).toBe("     1\\toat milk\\n     2\\teggs")
    expect(String(texts[6]).split("\\n").sort()).toEqual(["list.txt", "new/todo.txt"])
    expect(fs.existsSync(path.dirname(cwd))).toBe(false)
  }))

it("generated turns hold conflicting pairs in at least 30% of runs", () => {
  const turns = FastCheck.sample(arbitraryTurnOf(tools, { maxLength: 8 }), { numRuns: 200, seed: 7 })
  const note = (input: unknown) => (input as { name: string }).name
  const conflicting = turns.filter((turn) =>
    turn.some((a, i) =>
      turn.slice(i + 1).some((b) =>
        note(a.input) === note(b.input) && (a.name === "WriteNote" || b.name === "WriteNote")
      )
    )
  )
  expect(conflicting.length / turns.length).toBeGreaterThanOrEqual(0.3)
})
`

/** What a user writes: optional fields passed through as `T | undefined`, the layers a session needs. */
const CONSUMER = `
import { Effect, Layer } from "effect"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ApprovalAnswer, Approver, renderEvent, Session, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"
import type { ApprovalRequest, RunOptions } from "effect-tool-runtime"
import { builtinSessionLayer, builtinTools, SessionFileState, Workspace } from "effect-tool-runtime/tools"
import { testRuntime } from "effect-tool-runtime/testing"

const reason: string | undefined = process.env.REASON
export const deny: ApprovalAnswer = ApprovalAnswer.Deny({ message: reason, cancelRun: false })
export const ask = (request: ApprovalRequest): ApprovalAnswer =>
  request.suggestions.length > 0 ? ApprovalAnswer.AllowSession({ rules: request.suggestions }) : deny
const maxConcurrency: number | undefined = undefined
export const options: RunOptions = { mode: "batched", maxConcurrency }
export const approver = Layer.succeed(Approver, { ask: (request) => Effect.succeed(ask(request)) })
export const render = renderEvent
export const session = Session.layer({ directory: ".session" })
export const files = SessionFileState.layer()
export const tools = builtinTools
export const file = builtinSessionLayer()
export const workspace = Workspace.layer({ cwd: "." })
export const runtimeOf = testRuntime
export const context = NodeContext.layer
export const hooks = ToolHooks.none
export const registry = ToolRegistry
export const runtime = ToolRuntime
`
