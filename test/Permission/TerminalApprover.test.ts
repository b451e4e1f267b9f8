/**
 * The terminal approver, end to end in a pseudo-terminal (tmux): a real process runs one Edit through the runtime,
 * the prompt appears on its controlling terminal, keys answer it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PassThrough } from "node:stream"
import { fileURLToPath } from "node:url"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as TerminalApprover from "../../src/Permission/TerminalApprover.js"
import { UiBlock } from "../../src/Tool/Presentation.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repo = path.resolve(here, "../..")
const tsx = path.join(repo, "node_modules/.bin/tsx")
const askScript = path.join(here, "terminal/ask.ts")
const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"])
    return true
  } catch {
    return false
  }
})()

/** Each test gets its own tmux server (socket), killed at the end of the test. */
let socket = ""
const tmux = (...args: Array<string>) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" })
const useServer = (name: string) => {
  socket = `etr-test-${process.pid}-${name}`
}
const killServer = () => {
  try {
    tmux("kill-server")
  } catch {
    // Already gone.
  }
}

const waitFor = async <A>(what: string, probe: () => A | undefined, timeoutMs = 75_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Starts the ask script in a new tmux session; returns the session's pane reader and the result file. */
const start = (session: string, workspace: string) => {
  const result = path.join(workspace, `${session}.result.json`)
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "160",
    "-y",
    "60",
    `cd '${workspace}' && '${tsx}' '${askScript}' '${result}'; sleep 60`
  )
  const pane = () => tmux("capture-pane", "-p", "-t", session, "-S", "-200")
  const outcome = () => (fs.existsSync(result)
    ? JSON.parse(fs.readFileSync(result, "utf8")) as { status: string; reason: string; result: unknown }
    : undefined)
  return { pane, outcome }
}

const makeWorkspace = () => {
  const workspace = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-tty-")))
  fs.mkdirSync(path.join(workspace, "src"))
  fs.mkdirSync(path.join(workspace, "home"))
  fs.writeFileSync(path.join(workspace, "src/a.ts"), "a")
  return workspace
}

describe.skipIf(!hasTmux)("TerminalApprover in a pseudo-terminal", () => {
  it(
    "'always allow' writes the rule to the local settings file, and the next run honours it without asking",
    async () => {
      const workspace = makeWorkspace()
      useServer("always")
      try {
        const first = start("first", workspace)
        const prompt = await waitFor(
          "the prompt",
          () => (first.pane().includes("Choice [1-5, e]:") ? first.pane() : undefined)
        )
        expect(prompt).toContain("── Permission needed: Edit ──")
        expect(prompt).toContain("Edit needs approval: no rule allows this call.")
        const rule = `Edit(/${workspace}/src/**)`
        expect(prompt).toContain(`3) Always allow (saved to local settings)  [${rule}]`)
        tmux("send-keys", "-t", "first", "3", "Enter")
        const outcome = await waitFor("the first outcome", first.outcome)
        expect(outcome).toMatchObject({ status: "success", reason: "the user (allowed for always)" })
        const settings = JSON.parse(fs.readFileSync(path.join(workspace, ".claude/settings.local.json"), "utf8"))
        expect(settings).toEqual({ permissions: { allow: [rule] } })

        const second = start("second", workspace)
        const again = await waitFor("the second outcome", second.outcome)
        expect(again).toMatchObject({
          status: "success",
          reason: `allow rule \`${rule}\` from localSettings (${path.join(workspace, ".claude/settings.local.json")})`
        })
        expect(second.pane()).not.toContain("Permission needed")
      } finally {
        killServer()
      }
    },
    180_000
  )

  it("deny with a message sends the message to the model", async () => {
    const workspace = makeWorkspace()
    useServer("deny")
    try {
      const run = start("deny", workspace)
      await waitFor("the prompt", () => (run.pane().includes("Choice [1-5, e]:") ? true : undefined))
      tmux("send-keys", "-t", "deny", "x", "Enter")
      await waitFor(
        "the re-prompt",
        () => (run.pane().includes("Please answer 1, 2, 3, 4, 5 or e.") ? true : undefined)
      )
      tmux("send-keys", "-t", "deny", "4", "Enter")
      await waitFor("the message prompt", () => (run.pane().includes("Message for the model") ? true : undefined))
      tmux("send-keys", "-t", "deny", "use the formatter instead", "Enter")
      const outcome = await waitFor("the outcome", run.outcome)
      expect(outcome.status).toBe("denied")
      expect(JSON.stringify(outcome.result)).toContain("use the formatter instead")
      expect(fs.existsSync(path.join(workspace, ".claude/settings.local.json"))).toBe(false)
    } finally {
      killServer()
    }
  }, 180_000)
})

describe("TerminalApprover over streams", () => {
  const request: ApprovalRequest = {
    toolUseId: "toolu_1",
    toolName: "Bash",
    input: { command: "npm test" },
    ui: [UiBlock.Title({ text: "Bash(npm test)" })],
    message: "Bash needs approval.",
    suggestions: ["Bash(npm test:*)"]
  }

  /** Answers one request with the given typed lines; returns the answer and everything written. */
  const answer = (typed: ReadonlyArray<string>, req: ApprovalRequest = request) =>
    Effect.gen(function*() {
      const input = new PassThrough()
      const output = new PassThrough()
      let written = ""
      output.on("data", (chunk: Buffer) => {
        written += chunk.toString()
      })
      const approver = Context.get(yield* Layer.build(TerminalApprover.layer({ input, output })), Approver)
      const fiber = yield* Effect.fork(approver.ask(req))
      for (const line of typed) input.write(`${line}\n`)
      if (typed.includes("<EOF>")) input.end()
      const result = yield* fiber.await.pipe(Effect.flatten)
      return { result, written }
    }).pipe(Effect.scoped)

  it.live("allow for the session returns the suggested rules", () =>
    Effect.gen(function*() {
      const { result, written } = yield* answer(["2"])
      expect(result).toEqual(ApprovalAnswer.AllowSession({ rules: ["Bash(npm test:*)"] }))
      expect(written).toContain("Bash(npm test)\n\nBash needs approval.")
    }))

  it.live("edit accepts a JSON object on one line, re-asking after invalid JSON", () =>
    Effect.gen(function*() {
      const { result, written } = yield* answer(["e", "{not json", "e", "{\"command\": \"npm test -- --ci\"}"])
      expect(result).toEqual(ApprovalAnswer.Edit({ input: { command: "npm test -- --ci" } }))
      expect(written).toContain("That is not JSON")
    }))

  it.live("deny and stop cancels the run", () =>
    Effect.gen(function*() {
      const { result } = yield* answer(["5"])
      expect(result).toMatchObject({ _tag: "Deny", cancelRun: true })
    }))

  it.live("session and always are refused when there is no rule to suggest", () =>
    Effect.gen(function*() {
      const { result, written } = yield* answer(["3", "1"], { ...request, suggestions: [] })
      expect(result).toEqual(ApprovalAnswer.AllowOnce())
      expect(written).toContain("2) Allow for this session  (no rule can allow this call)")
      expect(written).toContain("No rule can allow this call (for a compound command: not every part can have a rule)")
    }))

  it.live("a closed input denies", () =>
    Effect.gen(function*() {
      const { result } = yield* answer(["<EOF>"])
      expect(result).toMatchObject({ _tag: "Deny", cancelRun: false })
    }))

  it.live("layerAuto denies at once without a controlling terminal", () =>
    Effect.gen(function*() {
      // This test process has no controlling terminal under vitest's forks when run headless; when it does, skip.
      const hasTty = Option.isSome(yield* Effect.option(Effect.scoped(Layer.build(TerminalApprover.layer()))))
      if (hasTty) return
      const approver = yield* Effect.provide(Approver, TerminalApprover.layerAuto())
      const result = yield* approver.ask(request)
      expect(result._tag).toBe("Deny")
      expect(result._tag === "Deny" && result.message).toContain("no one to ask (no terminal)")
    }))
})
