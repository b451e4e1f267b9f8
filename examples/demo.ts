/**
 * `npm start`: a scripted model turn through the runtime — no network, no API key. It makes a small project in a
 * temporary directory, then plays two assistant turns of tool_use blocks against the built-in tools under the
 * default permission mode, with a scripted person answering permission questions. For each call it prints what a
 * person would see, and then what the model gets back. One call goes to an MCP server (the reference server-everything,
 * started over stdio from node_modules), through the same rules as the built-in tools.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Stream } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { createRequire } from "node:module"
import { ApprovalAnswer, Approver, renderEvent } from "../src/index.js"
import * as McpConfig from "../src/Mcp/Config.js"
import { McpServers } from "../src/Mcp/McpServers.js"
import * as RulePolicy from "../src/Permission/RulePolicy.js"
import { ResultStore } from "../src/Runtime/ResultStore.js"
import { ToolHooks } from "../src/Runtime/ToolHooks.js"
import { ToolRegistry } from "../src/Runtime/ToolRegistry.js"
import { ToolRuntime } from "../src/Runtime/ToolRuntime.js"
import { contentText } from "../src/Tool/Wire.js"
import type { ToolUseBlock } from "../src/Tool/Wire.js"
import { builtinLayer, builtinTools } from "../src/Tools/index.js"
import { Workspace } from "../src/Runtime/Workspace.js"

const project = fs.mkdtempSync(path.join(os.tmpdir(), "etr-demo-"))
fs.mkdirSync(path.join(project, "src"))
fs.writeFileSync(path.join(project, "README.md"), "# greeter\n\nSays hello. TODO: say goodbye too.\n")
fs.writeFileSync(
  path.join(project, "src", "greet.ts"),
  'export const greet = (name: string): string => {\n  return "Hello, " + name\n}\n'
)
execFileSync("git", ["init", "-q"], { cwd: project })
execFileSync("git", ["-c", "user.name=demo", "-c", "user.email=demo@example.com", "add", "."], { cwd: project })
execFileSync("git", ["-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-qm", "initial"], { cwd: project })

const use = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({ type: "tool_use", id, name, input })

/** What the scripted model asks for, turn by turn (Claude Code's tool names and parameters). */
const turns: ReadonlyArray<{ readonly say: string; readonly toolUses: ReadonlyArray<ToolUseBlock> }> = [
  {
    say: "Let me look around the project.",
    toolUses: [
      use("toolu_01", "Read", { file_path: "src/greet.ts" }),
      use("toolu_02", "Grep", { pattern: "TODO", output_mode: "content", "-n": true }),
      use("toolu_03", "Bash", { command: "git status --short && git log --oneline -n 1", description: "Show repository state" }),
      use("toolu_04", "Read", { file_path: "/etc/hostname" }),
      use("toolu_05", "Reed", { file_path: "README.md" }),
      use("toolu_05b", "mcp__everything__echo", { message: "hello from an MCP server" })
    ]
  },
  {
    say: "Now I'll make the greeting friendlier and try the tests.",
    toolUses: [
      use("toolu_06", "Edit", { file_path: "src/greet.ts", old_string: '"Hello, " + name', new_string: "`Hello, ${name}!`" }),
      use("toolu_07", "Bash", { command: "npm test", description: "Run the tests" }),
      use("toolu_08", "Edit", { file_path: "src/greet.ts", old_string: "greet", new_string: "welcome" })
    ]
  }
]

/**
 * The person at the keyboard: allows edits inside the project, refuses everything else. The question and the answer
 * are printed from the run's events (`PermissionRequested`, then `PermissionAnswered`), in the order they happen.
 */
const person = Approver.scripted((request) =>
  Effect.succeed(
    request.toolName === "Edit" || request.toolName === "Write"
      ? ApprovalAnswer.AllowOnce()
      : ApprovalAnswer.Deny({ message: "Not now, please.", cancelRun: false })
  )
)

/** One MCP server, as a `.mcp.json` would configure it; its echo tool is allowed by rule. */
const mcp = McpConfig.fromJson("demo .mcp.json", {
  mcpServers: { everything: { command: process.execPath, args: [path.join(path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")), "dist/index.js"), "stdio"] } }
}, { trusted: true })

const runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.mergeAll(
    McpServers.extendRegistry.pipe(Layer.provide(ToolRegistry.layer(builtinTools).pipe(Layer.provide(builtinLayer()))), Layer.provide(McpServers.layer(mcp))),
    RulePolicy.layer({ mode: "default", cliRules: { allow: ["mcp__everything__echo"], deny: [], ask: [] } }),
    person,
    ToolHooks.none
  )),
  Layer.provide(ResultStore.layer(path.join(project, ".session"))),
  Layer.provide(Workspace.layer({ cwd: project })),
  Layer.provide(NodeContext.layer)
)

const clip = (text: string, max = 600) => (text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`)

const program = Effect.gen(function*() {
  const rt = yield* ToolRuntime
  console.log(`effect-tool-runtime demo — workspace ${project}\n`)
  for (const [n, turn] of turns.entries()) {
    console.log(`━━ assistant turn ${n + 1}: "${turn.say}" (${turn.toolUses.length} tool_use blocks)\n`)
    const outcomes = yield* Effect.scoped(
      Effect.gen(function*() {
        const handle = yield* rt.start(turn.toolUses)
        yield* Effect.forkScoped(Stream.runForEach(handle.events, (event) => Effect.sync(() => {
          const text = renderEvent(event)
          if (text !== undefined) console.log(text)
        })))
        return yield* handle.await
      })
    )
    console.log(`\n── what the model gets back (tool_result blocks, in tool_use order)\n`)
    for (const outcome of outcomes) {
      console.log(`[${outcome.toolUseId}] ${outcome.result.is_error === true ? "is_error " : ""}${clip(contentText(outcome.result.content))}\n`)
    }
  }
  console.log(`Final src/greet.ts:\n${fs.readFileSync(path.join(project, "src", "greet.ts"), "utf8")}`)
})

Effect.runPromise(program.pipe(Effect.provide(runtime))).finally(() => fs.rmSync(project, { recursive: true, force: true }))
