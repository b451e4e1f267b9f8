/**
 * Hooks as Claude Code documents them: unanchored matchers, `if` conditions, `args`, HTTP hooks against a real
 * server on 127.0.0.1, prompt hooks through a scripted LanguageModel, the output cap, and the load-time reports.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../src/Hooks/Hooks.js"
import type { HooksOptions } from "../../src/Hooks/Hooks.js"
import type { HooksSettings } from "../../src/Settings/Settings.js"
import { allToolLayers, allTools, makeSandbox } from "../Permission/fixtures.js"

const box = makeSandbox()
const scripts = fs.mkdtempSync(path.join(os.tmpdir(), "etr-hooks-doc-"))
let count = 0
const script = (body: string): string => {
  const file = path.join(scripts, `hook-${count++}.sh`)
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return file
}

const registry = ToolRegistry.layer(allTools).pipe(Layer.provide(allToolLayers))

const hooksWith = (options: Omit<HooksOptions, "cwd">, withRegistry = true) =>
  Hooks.make({ cwd: box.root, sessionId: "s", ...options }).pipe(
    Effect.provide(withRegistry ? Layer.merge(NodeContext.layer, registry) : NodeContext.layer)
  )

const preToolUse = (options: Omit<HooksOptions, "cwd">, toolName: string, input: unknown) =>
  Effect.flatMap(hooksWith(options), (hooks) => hooks.preToolUse({ toolUseId: "toolu_1", toolName, input }))

const file = (hooks: HooksSettings) => ({ settingsFiles: [{ path: "/proj/.claude/settings.json", hooks }] })

const blocker = (message: string) => script(`cat > /dev/null; echo '${message}' >&2; exit 2`)

describe("matchers with Claude Code's semantics", () => {
  const matches = (matcher: string | undefined, name: string) => Either.getOrThrow(Hooks.compileMatcher(matcher))(name)

  it("a regular expression is tested unanchored against the tool name", () => {
    expect(matches("mcp__serena__*", "mcp__serena__find_symbol")).toBe(true)
    expect(matches("mcp__srv__.*", "mcp__srv__lookup")).toBe(true)
    expect(matches("Notebook.*", "NotebookEdit")).toBe(true)
    expect(matches("^Bash$", "BashOutput")).toBe(false)
  })

  it("a plain list still matches exact names only", () => {
    expect([matches("Edit|Write", "Write"), matches("Edit", "MultiEdit"), matches("Bash", "BashOutput")]).toEqual([
      true,
      false,
      false
    ])
  })

  it.effect("an invalid regular expression is one line naming the file and the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        hooksWith(file({ PreToolUse: [{ matcher: "Bash", hooks: [] }, { matcher: "mcp__(x", hooks: [] }] }))
      )
      expect(error.message).toMatch(
        /^\/proj\/\.claude\/settings\.json: hooks\.PreToolUse\[1\]\.matcher: Invalid hook matcher "mcp__\(x": .+$/
      )
      expect(error.message).not.toContain("\n")
    }))
})

describe("if conditions", () => {
  const guarded = (condition: string) =>
    file({
      PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", if: condition, command: blocker("no commits") }] }]
    })

  it.live("a hook meant for git commit blocks git commit and not ls", () =>
    Effect.gen(function*() {
      const options = guarded("Bash(git commit *)")
      expect((yield* preToolUse(options, "Bash", { command: "git commit -m x" })).opinion?.message).toBe("no commits")
      expect((yield* preToolUse(options, "Bash", { command: "ls" })).opinion).toBeUndefined()
    }))

  it.live("a condition matches any part of a compound command, as a deny rule does", () =>
    Effect.gen(function*() {
      expect(
        (yield* preToolUse(guarded("Bash(git commit *)"), "Bash", { command: "ls && git commit -m x" })).opinion
          ?.behavior
      ).toBe("deny")
    }))

  it.live("a path condition is matched by the tool's own rule matching", () =>
    Effect.gen(function*() {
      const options = file({
        PreToolUse: [{
          matcher: "Edit|Read",
          hooks: [{ type: "command", if: "Edit(./secrets/**)", command: blocker("not the secrets") }]
        }]
      })
      expect((yield* preToolUse(options, "Edit", { path: "secrets/key.txt" })).opinion?.message).toBe("not the secrets")
      expect((yield* preToolUse(options, "Edit", { path: "src/a.ts" })).opinion).toBeUndefined()
      // A condition for another tool never holds.
      expect((yield* preToolUse(options, "Read", { path: "secrets/key.txt" })).opinion).toBeUndefined()
    }))

  it.live("without a registry, a content condition runs the hook for every call its matcher selects", () =>
    Effect.gen(function*() {
      const hooks = yield* hooksWith(guarded("Bash(git commit *)"), false)
      expect(
        (yield* hooks.preToolUse({ toolUseId: "t", toolName: "Bash", input: { command: "ls" } })).opinion?.behavior
      ).toBe("deny")
    }))

  it.effect("a condition that is not a rule is one line naming the file and the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(hooksWith(guarded("Bash(git commit")))
      expect(error.message).toBe(
        "/proj/.claude/settings.json: hooks.PreToolUse[0].hooks[0].if: Invalid hook condition \"Bash(git commit\": missing \")\" to close the \"(\" opened here"
      )
    }))
})

describe("command hooks with args", () => {
  it.live("run the program with the arguments and no shell", () =>
    Effect.gen(function*() {
      const out = path.join(scripts, "args.json")
      const program = path.join(scripts, "args.js")
      fs.writeFileSync(
        program,
        `
        let input = ""
        process.stdin.on("data", (c) => input += c).on("end", () => {
          require("node:fs").writeFileSync(process.argv[2], JSON.stringify({ argv: process.argv.slice(2), input: JSON.parse(input) }))
          process.stdout.write(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "from node" } }))
        })`
      )
      const options = file({
        PreToolUse: [{
          matcher: "Bash",
          hooks: [{ type: "command", command: "node", args: [program.replace(/\.js$/, ".cjs"), out, "$HOME", "a b"] }]
        }]
      })
      fs.renameSync(program, program.replace(/\.js$/, ".cjs"))
      const result = yield* preToolUse(options, "Bash", { command: "ls" })
      expect(result.opinion).toMatchObject({ behavior: "ask", message: "from node" })
      const seen = JSON.parse(fs.readFileSync(out, "utf8"))
      // No shell: "$HOME" and "a b" arrive as written.
      expect(seen.argv).toEqual([out, "$HOME", "a b"])
      expect(seen.input).toMatchObject({
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "ls" }
      })
    }))
})

describe("bounded hook output", () => {
  it.live("a PreToolUse hook that prints past the cap is killed and denies, saying why", () =>
    Effect.gen(function*() {
      const options = {
        ...file({
          PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: script("cat > /dev/null; yes") }] }]
        }),
        maxOutputBytes: 64 * 1024
      }
      const result = yield* preToolUse(options, "Bash", { command: "ls" })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("printed more than 64 KiB on stdout; the call is denied")
    }))

  it.live("the default cap is 1 MiB, on stderr too", () =>
    Effect.gen(function*() {
      const options = file({
        PreToolUse: [{
          matcher: "Bash",
          hooks: [{ type: "command", command: script("cat > /dev/null; head -c 1100000 /dev/zero >&2; exit 2") }]
        }]
      })
      const result = yield* preToolUse(options, "Bash", { command: "ls" })
      expect(result.opinion?.message).toContain("printed more than 1 MiB on stderr")
    }))
})

/** A real HTTP server on 127.0.0.1 that answers each request with `respond` and records what it got. */
const server = (respond: (body: string, request: http.IncomingMessage, response: http.ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.async<
      {
        readonly url: string
        readonly requests: Array<{ body: string; headers: http.IncomingHttpHeaders; method: string }>
      }
    >((resume) => {
      const requests: Array<{ body: string; headers: http.IncomingHttpHeaders; method: string }> = []
      const instance = http.createServer((request, response) => {
        let body = ""
        request.on("data", (chunk) => body += chunk).on("end", () => {
          requests.push({ body, headers: request.headers, method: request.method ?? "" })
          respond(body, request, response)
        })
      })
      instance.listen(
        0,
        "127.0.0.1",
        () =>
          resume(
            Effect.succeed({
              url: `http://127.0.0.1:${(instance.address() as AddressInfo).port}/hook`,
              requests,
              instance
            })
          )
      )
    }).pipe(Effect.map((s) => s as typeof s & { instance?: http.Server })),
    (s) =>
      Effect.async<void>((resume) => {
        const instance = (s as { instance?: http.Server }).instance
        if (instance === undefined) return resume(Effect.void)
        instance.closeAllConnections()
        instance.close(() => resume(Effect.void))
      })
  )

describe("http hooks", () => {
  const httpHook = (url: string, extra: Record<string, unknown> = {}) =>
    file({ PreToolUse: [{ matcher: "Bash", hooks: [{ type: "http", url, timeout: 2, ...extra } as never] }] })

  it.scopedLive("POST the hook JSON and read the answer as a command hook's stdout", () =>
    Effect.gen(function*() {
      const s = yield* server((_, __, response) => {
        response.setHeader("content-type", "application/json")
        response.end(
          JSON.stringify({
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: "deny",
              permissionDecisionReason: "the server says no"
            }
          })
        )
      })
      const options = {
        ...httpHook(s.url, {
          headers: { authorization: "Bearer $TOKEN", "x-other": "${SECRET}" },
          allowedEnvVars: ["TOKEN"]
        }),
        env: { TOKEN: "t0k", SECRET: "not for you" }
      }
      const result = yield* preToolUse(options, "Bash", { command: "rm -rf build" })
      expect(result.opinion).toEqual({ behavior: "deny", hook: s.url, message: "the server says no" })
      expect(s.requests).toHaveLength(1)
      expect(s.requests[0]!.method).toBe("POST")
      expect(JSON.parse(s.requests[0]!.body)).toMatchObject({
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "rm -rf build" },
        tool_use_id: "toolu_1"
      })
      expect(s.requests[0]!.headers.authorization).toBe("Bearer t0k")
      // A variable that is not in allowedEnvVars is replaced by nothing.
      expect(s.requests[0]!.headers["x-other"]).toBe("")
    }))

  it.scopedLive("allowedHttpHookUrls and httpHookAllowedEnvVars restrict every HTTP hook", () =>
    Effect.gen(function*() {
      const s = yield* server((_, __, response) => response.end())
      const headers = { headers: { authorization: "Bearer $TOKEN" }, allowedEnvVars: ["TOKEN"] }
      yield* preToolUse(
        {
          ...httpHook(s.url, headers),
          env: { TOKEN: "t0k" },
          httpHookAllowedEnvVars: ["OTHER"],
          allowedHttpHookUrls: ["http://127.0.0.1:*"]
        },
        "Bash",
        { command: "ls" }
      )
      expect(s.requests[0]!.headers.authorization).toBe("Bearer")
      const refused = yield* preToolUse(
        { ...httpHook(s.url), allowedHttpHookUrls: ["https://hooks.example.com/*"] },
        "Bash",
        { command: "ls" }
      )
      expect(refused.opinion?.message).toContain("its URL matches none of allowedHttpHookUrls; the call is denied")
      expect(s.requests).toHaveLength(1)
    }))

  it.scopedLive("an empty 2xx answer is no opinion", () =>
    Effect.gen(function*() {
      const s = yield* server((_, __, response) => response.end())
      expect((yield* preToolUse(httpHook(s.url), "Bash", { command: "ls" })).opinion).toBeUndefined()
    }))

  it.scopedLive("another status, a refused connection and a timeout fail closed", () =>
    Effect.gen(function*() {
      const failing = yield* server((_, __, response) => {
        response.statusCode = 500
        response.end("oops")
      })
      const status = yield* preToolUse(httpHook(failing.url), "Bash", { command: "ls" })
      expect(status.opinion?.behavior).toBe("deny")
      expect(status.opinion?.message).toContain("answered HTTP 500; the call is denied")

      const refused = yield* preToolUse(httpHook("http://127.0.0.1:9/hook"), "Bash", { command: "ls" })
      expect(refused.opinion?.behavior).toBe("deny")
      expect(refused.opinion?.message).toContain("could not be reached")

      const silent = yield* server(() => undefined)
      const timedOut = yield* preToolUse(httpHook(silent.url, { timeout: 0.3 }), "Bash", { command: "ls" })
      expect(timedOut.opinion?.message).toContain("timed out after")
    }))

  it.scopedLive("an answer past the output cap fails closed", () =>
    Effect.gen(function*() {
      const s = yield* server((_, __, response) => response.end("x".repeat(200_000)))
      const result = yield* preToolUse({ ...httpHook(s.url), maxOutputBytes: 100_000 }, "Bash", { command: "ls" })
      expect(result.opinion?.message).toContain("answered with more than")
    }))
})

/** A LanguageModel that answers every prompt with `answer`, recording the prompts. */
const scriptedModel = (answer: string, prompts: Array<string>) =>
  LanguageModel.make({
    generateText: (options) => {
      prompts.push(JSON.stringify(options.prompt))
      return Effect.succeed([{ type: "text", text: answer }])
    },
    streamText: () => Stream.empty
  })

describe("prompt and agent hooks", () => {
  const promptHook = (type: "prompt" | "agent", prompt: string) =>
    file({ PreToolUse: [{ matcher: "Bash", hooks: [{ type, prompt }] }] })

  it.live("ok: false blocks with the model's reason; $ARGUMENTS is the hook JSON", () =>
    Effect.gen(function*() {
      const prompts: Array<string> = []
      const languageModel = yield* scriptedModel("{\"ok\": false, \"reason\": \"pushes to main\"}", prompts)
      const result = yield* preToolUse({ ...promptHook("prompt", "Is this safe? $ARGUMENTS"), languageModel }, "Bash", {
        command: "git push origin main"
      })
      expect(result.opinion).toMatchObject({ behavior: "deny", message: "pushes to main" })
      expect(prompts[0]).toContain("git push origin main")
      expect(prompts[0]).not.toContain("$ARGUMENTS")
    }))

  it.live("ok: true lets the call go on to the policy; an agent hook is run the same way", () =>
    Effect.gen(function*() {
      const languageModel = yield* scriptedModel("{\"ok\": true}", [])
      expect(
        (yield* preToolUse({ ...promptHook("agent", "Check it"), languageModel }, "Bash", { command: "ls" })).opinion
      ).toBeUndefined()
    }))

  it.live("an answer that is not {ok} fails closed", () =>
    Effect.gen(function*() {
      const languageModel = yield* scriptedModel("sure, go ahead", [])
      const result = yield* preToolUse({ ...promptHook("prompt", "Check it"), languageModel }, "Bash", {
        command: "ls"
      })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("not {\"ok\": boolean")
    }))

  it.live("without a language model a PreToolUse prompt hook denies, and the load says so once", () =>
    Effect.gen(function*() {
      const options = promptHook("prompt", "Check it")
      const hooks = yield* hooksWith(options)
      expect(hooks.warnings).toEqual([
        "/proj/.claude/settings.json: hooks.PreToolUse[0].hooks[0]: prompt hook needs a language model and none is configured; it denies every call it matches"
      ])
      const result = yield* hooks.preToolUse({ toolUseId: "t", toolName: "Bash", input: { command: "ls" } })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("no language model is configured")
    }))
})

describe("every hook event loads", () => {
  it.effect("hooks for events the runtime does not raise are reported once as unused", () =>
    Effect.gen(function*() {
      const noop = { hooks: [{ type: "command" as const, command: "true" }] }
      const hooks = yield* hooksWith(
        file({ Stop: [noop, noop], SessionStart: [noop], UserPromptSubmit: [noop], PreToolUse: [noop] })
      )
      expect(hooks.warnings).toEqual([
        "/proj/.claude/settings.json: hooks.UserPromptSubmit: 1 hook for UserPromptSubmit, an event this runtime does not raise; unused",
        "/proj/.claude/settings.json: hooks.Stop: 2 hooks for Stop, an event this runtime does not raise; unused",
        "/proj/.claude/settings.json: hooks.SessionStart: 1 hook for SessionStart, an event this runtime does not raise; unused"
      ])
    }))
})
