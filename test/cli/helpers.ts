/**
 * Running the built CLI (`dist/bin/effect-tool-runtime.js`, the one-file bundle the package's `bin` names) as a
 * child process, in a fresh workspace with a home and a temporary directory of its own (so the developer's
 * `~/.claude/settings.json` never leaks into a test, and temporary sessions can be counted).
 *
 * Every child is spawned `detached` (a new session, no controlling terminal): without `--approve`, `exec` would
 * otherwise ask on the developer's terminal.
 */
import { execFile, spawn } from "node:child_process"
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { promisify } from "node:util"

export const execFileAsync = promisify(execFile)

export const root = path.resolve(__dirname, "../..")
export const bin = path.join(root, "dist/bin/effect-tool-runtime.js")

const newestSource = (dir: string): number =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .reduce((newest, file) => Math.max(newest, fs.statSync(path.join(dir, file)).mtimeMs), 0)

/** `npm test` builds before vitest; a developer running vitest alone may have a missing or stale build. */
export const ensureBuilt = async (): Promise<void> => {
  const built = fs.existsSync(bin) ? fs.statSync(bin).mtimeMs : -1
  if (built >= newestSource(path.join(root, "src"))) return
  try {
    await execFileAsync("npm", ["run", "build"], { cwd: root })
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string }
    throw new Error(`building dist/ failed:\n${stdout}${stderr}`)
  }
}

export interface Finished {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

export interface Running {
  readonly child: ChildProcessWithoutNullStreams
  readonly stdout: () => string
  readonly stderr: () => string
  readonly finished: Promise<Finished>
}

const children = new Set<ChildProcessWithoutNullStreams>()
const dirs: Array<string> = []

/** A fresh directory, removed by {@link cleanUp}. */
export const tempDir = (prefix: string): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)))
  dirs.push(dir)
  return dir
}

/** A workspace with a.txt and b.txt, and a home and a TMPDIR of its own beside it. */
export const workspace = (): { readonly dir: string; readonly home: string; readonly tmp: string } => {
  const base = tempDir("etr-cli2")
  const dir = path.join(base, "ws")
  const home = path.join(base, "home")
  const tmp = path.join(base, "tmp")
  for (const d of [dir, home, tmp]) fs.mkdirSync(d)
  fs.writeFileSync(path.join(dir, "a.txt"), "hello\nworld\n")
  fs.writeFileSync(path.join(dir, "b.txt"), "foo\nbar hello\n")
  return { dir, home, tmp }
}

/** Starts the CLI: `args` include the command (`exec`, `serve`). */
export const start = (
  where: { readonly dir: string; readonly home: string; readonly tmp: string },
  args: ReadonlyArray<string>,
  stdin?: string
): Running => {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: where.dir,
    detached: true,
    stdio: ["pipe", "pipe", "pipe"],
    env: { ...process.env, HOME: where.home, TMPDIR: where.tmp }
  })
  children.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
  const finished = new Promise<Finished>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code, signal) => {
      children.delete(child)
      resolve({ code, signal, stdout, stderr })
    })
  })
  if (stdin !== undefined) child.stdin.end(stdin)
  return { child, stdout: () => stdout, stderr: () => stderr, finished }
}

export const run = (
  where: Parameters<typeof start>[0],
  args: ReadonlyArray<string>,
  stdin: unknown
): Promise<Finished> => start(where, args, typeof stdin === "string" ? stdin : JSON.stringify(stdin)).finished

export interface Summary {
  readonly tool_use_id: string
  readonly name: string
  readonly status: string
  readonly decision: { readonly behavior: string; readonly reason: string; readonly kind: string } | null
  readonly persisted_path: string | null
  readonly suggestions: ReadonlyArray<string>
}

export interface ExecOutput {
  readonly results: ReadonlyArray<{ readonly tool_use_id: string; readonly content: string; readonly is_error?: true }>
  readonly outcomes: ReadonlyArray<Summary>
}

/** An `exec` output with the background tasks' part. */
export interface WithTasks {
  readonly results: ReadonlyArray<{ readonly content: string; readonly is_error?: true }>
  readonly task_notifications?: ReadonlyArray<
    { task_id: string; kind: string; status: string; exit_code?: number; text: string }
  >
}

/** Standard output is exactly one line of JSON, and the exit code the one expected. */
export const output = (finished: Finished, code = 0): ExecOutput => {
  if (finished.code !== code) {
    throw new Error(`exited with ${finished.code ?? finished.signal}, expected ${code}; stderr:\n${finished.stderr}`)
  }
  const lines = finished.stdout.split("\n")
  if (lines.length !== 2 || lines[1] !== "") {
    throw new Error(`standard output is not one line of JSON:\n${finished.stdout.slice(0, 2000)}`)
  }
  return JSON.parse(lines[0]!) as ExecOutput
}

export const toolUse = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "tool_use",
  id,
  name,
  input
})

/** Polls until `check` holds, failing after `limitMs`. */
export const waitUntil = async (
  what: string,
  check: () => Promise<boolean> | boolean,
  limitMs = 10_000
): Promise<void> => {
  const deadline = Date.now() + limitMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${limitMs} ms waiting for ${what}`)
    await delay(5)
  }
}

/** Pids of processes whose full command line matches the pattern. */
export const processes = async (pattern: string): Promise<ReadonlyArray<string>> => {
  try {
    const { stdout } = await execFileAsync("pgrep", ["-f", pattern])
    return stdout.split("\n").filter((line) => line !== "")
  } catch (error) {
    if ((error as { code?: unknown }).code === 1) return []
    throw error
  }
}

/** Kills what a failed test left running and removes the directories. */
export const cleanUp = (): void => {
  for (const child of children) child.kill("SIGKILL")
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
}
