/**
 * `effect-tool-runtime tools --format ...`, end to end: the built binary runs as a child process and prints the
 * definitions the settings would send.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { beforeAll, describe, expect, it } from "vitest"
import {
  anthropicProblems,
  geminiToolsProblems,
  openAiChatProblems,
  openAiResponsesProblems
} from "../Catalog/Definitions/restrictions.js"

const execFileAsync = promisify(execFile)
const root = path.resolve(__dirname, "../..")
const main = path.join(root, "dist/cli/main.js")

const newestSource = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .reduce((newest, file) => Math.max(newest, fs.statSync(path.join(dir, file)).mtimeMs), 0)

beforeAll(async () => {
  const built = fs.existsSync(main) ? fs.statSync(main).mtimeMs : -1
  if (built < newestSource(path.join(root, "src"))) {
    await execFileAsync("npx", ["tsc", "-p", "tsconfig.build.json"], { cwd: root })
  }
}, 120_000)

const run = async (
  args: ReadonlyArray<string>,
  cwd: string
): Promise<{ code: number; stdout: string; stderr: string }> => {
  try {
    const { stderr, stdout } = await execFileAsync(process.execPath, [main, "tools", ...args], { cwd })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const { code, stderr = "", stdout = "" } = error as { code?: number; stdout?: string; stderr?: string }
    return { code: code ?? -1, stdout, stderr }
  }
}

type Node = { readonly [key: string]: never }
const builtinNames = [
  "Read",
  "Write",
  "Edit",
  "Glob",
  "Grep",
  "Bash",
  "WebFetch",
  "NotebookEdit",
  "TodoWrite",
  "AskUserQuestion",
  "EnterPlanMode",
  "ExitPlanMode",
  "TaskOutput",
  "TaskStop"
]

describe("effect-tool-runtime tools", () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "tools-cli-"))

  it("prints every built-in tool in each provider's shape, valid under its restrictions", async () => {
    const anthropic = JSON.parse((await run(["--format", "anthropic"], cwd)).stdout) as Array<Node>
    expect(anthropic.map((tool) => tool["name"])).toEqual(builtinNames)
    expect(anthropic.flatMap((tool) => anthropicProblems(tool))).toEqual([])

    const chat = JSON.parse((await run(["--format", "openai-chat", "--strict"], cwd)).stdout) as Array<
      { function: { name: string; strict: boolean } }
    >
    expect(chat.map((tool) => tool.function.name)).toEqual(builtinNames)
    expect(chat.every((tool) => tool.function.strict)).toBe(true)
    expect(chat.flatMap((tool) => openAiChatProblems(tool as never))).toEqual([])

    const responses = JSON.parse((await run(["--format", "openai-responses"], cwd)).stdout) as Array<Node>
    expect(responses.flatMap((tool) => openAiResponsesProblems(tool))).toEqual([])

    const gemini = JSON.parse((await run(["--format", "gemini"], cwd)).stdout) as ReadonlyArray<unknown>
    expect(geminiToolsProblems(gemini)).toEqual([])
  }, 60_000)

  it(
    "deny rules that remove a whole tool remove it here too (settings files and --deny), Bash's with the task tools; content rules do not",
    async () => {
      const settings = path.join(cwd, "settings.json")
      fs.writeFileSync(settings, JSON.stringify({ permissions: { deny: ["Bash", "Edit(./secret/**)"] } }))
      const { code, stdout } = await run(["--settings", settings, "--deny", "Write"], cwd)
      expect(code).toBe(0)
      expect((JSON.parse(stdout) as Array<{ name: string }>).map((tool) => tool.name)).toEqual([
        "Read",
        "Edit",
        "Glob",
        "Grep",
        "WebFetch",
        "NotebookEdit",
        "TodoWrite",
        "AskUserQuestion",
        "EnterPlanMode",
        "ExitPlanMode"
        // Bash denied: no task can start, so TaskOutput and TaskStop are left out with it.
      ])
    },
    60_000
  )

  it("--with-announcement prints the tools, the announcement and the estimate", async () => {
    const { stdout } = await run(["--with-announcement"], cwd)
    const parsed = JSON.parse(stdout) as {
      tools: Array<unknown>
      announcement: string | null
      estimated_tokens: number
    }
    expect(parsed.tools).toHaveLength(builtinNames.length)
    expect(parsed.announcement).toBeNull()
    expect(parsed.estimated_tokens).toBe(Math.ceil(JSON.stringify(parsed.tools).length / 4))
  }, 60_000)

  it("an unknown format is a usage error (exit 2, one line on stderr)", async () => {
    const { code, stderr, stdout } = await run(["--format", "claude"], cwd)
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr).toBe(
      "effect-tool-runtime: --format must be one of anthropic, openai-chat, openai-responses, gemini, got claude (see tools --help)\n"
    )
  }, 60_000)
})
