/**
 * `npm start`: the agent loop with a scripted model — no API key. The model is a scripted server on 127.0.0.1 that
 * speaks the Anthropic Messages API (`MessagesServer`); the loop talks to it through the real Messages backend.
 * It makes a small project in a temporary directory; the model asks for tools over three requests, the runtime
 * governs every call (built-in tools under the default permission mode, a scripted person answering permission
 * questions, one call to an MCP server — the reference server-everything over stdio — under the same rules), the
 * model gets the results back in its next request, and answers. It prints what a person would see, and what the
 * model gets back.
 */
import { FetchHttpClient } from "@effect/platform"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Console, Effect, Layer, Redacted } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../src/Hooks/ToolHooks.js"
import { AgentLoop, AnthropicMessages, ApprovalAnswer, Approver, renderEvent } from "../src/index.js"
import * as McpConfig from "../src/Mcp/Config.js"
import { McpServers } from "../src/Mcp/McpServers.js"
import * as RulePolicy from "../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../src/Session/ResultStore.js"
import { Workspace } from "../src/Session/Workspace.js"
import * as MessagesServer from "../src/testing/MessagesServer.js"
import { contentText } from "../src/Tool/Wire.js"
import { builtinLayer, builtinTools } from "../src/Tools/index.js"

const project = fs.mkdtempSync(path.join(os.tmpdir(), "etr-demo-"))
fs.mkdirSync(path.join(project, "src"))
fs.writeFileSync(path.join(project, "README.md"), "# greeter\n\nSays hello. TODO: say goodbye too.\n")
fs.writeFileSync(
  path.join(project, "src", "greet.ts"),
  "export const greet = (name: string): string => {\n  return \"Hello, \" + name\n}\n"
)
execFileSync("git", ["init", "-q"], { cwd: project })
execFileSync("git", ["-c", "user.name=demo", "-c", "user.email=demo@example.com", "add", "."], { cwd: project })
execFileSync("git", ["-c", "user.name=demo", "-c", "user.email=demo@example.com", "commit", "-qm", "initial"], {
  cwd: project
})

const use = MessagesServer.toolUse

/** What the scripted model says, request by request (Claude Code's tool names and parameters). */
const script = [
  MessagesServer.Reply.Message({
    content: [
      MessagesServer.text("Let me look around the project."),
      use("toolu_01", "Read", { file_path: "src/greet.ts" }),
      use("toolu_02", "Grep", { pattern: "TODO", output_mode: "content", "-n": true }),
      use("toolu_03", "Bash", {
        command: "git status --short && git log --oneline -n 1",
        description: "Show repository state"
      }),
      use("toolu_04", "Read", { file_path: "/etc/hostname" }),
      use("toolu_05", "Reed", { file_path: "README.md" }),
      use("toolu_05b", "mcp__everything__echo", { message: "hello from an MCP server" })
    ]
  }),
  MessagesServer.Reply.Message({
    content: [
      MessagesServer.text("Now I'll make the greeting friendlier and try the tests."),
      use("toolu_06", "Edit", {
        file_path: "src/greet.ts",
        old_string: "\"Hello, \" + name",
        new_string: "`Hello, ${name}!`"
      }),
      use("toolu_07", "Bash", { command: "npm test", description: "Run the tests" }),
      use("toolu_08", "Edit", { file_path: "src/greet.ts", old_string: "greet", new_string: "welcome" })
    ]
  }),
  MessagesServer.Reply.Message({
    content: [
      MessagesServer.text(
        "The greeting now ends with an exclamation mark, and the function is called welcome. I could not run the tests: you declined."
      )
    ]
  })
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
  mcpServers: {
    everything: {
      command: process.execPath,
      args: [
        path.join(
          path.dirname(createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/package.json")),
          "dist/index.js"
        ),
        "stdio"
      ]
    }
  }
}, { trusted: true })

const runtime = ToolRuntime.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(
    McpServers.extendRegistry.pipe(
      Layer.provide(ToolRegistry.layer(builtinTools).pipe(Layer.provide(builtinLayer()))),
      Layer.provide(McpServers.layer(mcp))
    ),
    RulePolicy.layer({ mode: "default", cliRules: { allow: ["mcp__everything__echo"], deny: [], ask: [] } }),
    person,
    ToolHooks.none
  )),
  Layer.provide(ResultStore.layer(path.join(project, ".session"))),
  Layer.provide(Workspace.layer({ cwd: project })),
  Layer.provide(NodeContext.layer)
)

const clip = (
  text: string,
  max = 600
) => (text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`)

/** What a person sees, and (after each turn) what the model gets back. */
const show = (event: AgentLoop.LoopEvent): Effect.Effect<void> => {
  switch (event._tag) {
    case "Requested":
      return Console.log(
        `\n━━ request ${event.turn} to the model, with ${event.tools.length} tool definitions (${
          event.tools.slice(0, 8).join(", ")
        }, …)\n`
      )
    case "Text":
      return Effect.sync(() => void process.stdout.write(event.text))
    case "Retrying":
      return Console.log(`\n(the model API answered ${event.status}: retrying in ${event.delayMillis} ms)`)
    case "TaskNotified":
      return Console.log(
        `\n(background task ${event.taskId} ${event.kind}: the model is told in request ${event.turn})`
      )
    case "Tool": {
      const text = renderEvent(event.event)
      return text === undefined ? Effect.void : Console.log(`\n${text}`)
    }
    case "Replied": {
      if (event.results === undefined || typeof event.results.content === "string") return Effect.void
      const lines = event.results.content.flatMap((block) =>
        block.type === "tool_result"
          ? [
            `[${block.tool_use_id}] ${block.is_error === true ? "is_error " : ""}${clip(contentText(block.content))}\n`
          ]
          : []
      )
      return Console.log(
        `\n── what the model gets back in its next request (tool_result blocks, in tool_use order)\n\n${
          lines.join("\n")
        }`
      )
    }
    case "Finished":
      return Console.log(
        `\n\n━━ the model ended its turn (${event.result.stopReason}) after ${event.result.turns} requests`
      )
  }
}

const program = Effect.gen(function*() {
  console.log(`effect-tool-runtime demo — workspace ${project}`)
  const server = yield* MessagesServer.make(script)
  const model = AnthropicMessages.layer({ model: "scripted", baseUrl: server.url, apiKey: Redacted.make("scripted") })
  yield* AgentLoop.run({
    system: "You are a coding agent working in the user's project.",
    messages: [{ role: "user", content: "Make the greeting friendlier, and check the tests still pass." }],
    onEvent: show
  }).pipe(Effect.provide(model.pipe(Layer.provide(FetchHttpClient.layer))))
  console.log(`\nFinal src/greet.ts:\n${fs.readFileSync(path.join(project, "src", "greet.ts"), "utf8")}`)
})

Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(runtime))).finally(() =>
  fs.rmSync(project, { recursive: true, force: true })
)
