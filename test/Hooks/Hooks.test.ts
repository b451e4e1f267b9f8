import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Ref } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as Hooks from "../../src/Hooks/Hooks.js"
import type { FunctionHook, HooksOptions } from "../../src/Hooks/Hooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import type { ApprovalRequest } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import type { RulePolicyOptions } from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { describeReason } from "../../src/Tool/Permission.js"
import { allToolLayers, allTools, makeSandbox, settingsFrom, workspaceLayer } from "../Permission/fixtures.js"

const box = makeSandbox()
const scripts = fs.mkdtempSync(path.join(os.tmpdir(), "etr-hooks-"))
let scriptCount = 0

/** An executable shell script in a temp directory; returns its path (the hook's command). */
const script = (body: string): string => {
  const file = path.join(scripts, `hook-${scriptCount++}.sh`)
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  return file
}

const pre = (command: string, matcher?: string, timeout?: number) => ({
  PreToolUse: [{
    ...(matcher === undefined ? {} : { matcher }),
    hooks: [{ type: "command" as const, command, ...(timeout === undefined ? {} : { timeout }) }]
  }]
})

const hooksWith = (options: Omit<HooksOptions, "cwd">) =>
  Effect.flatMap(Hooks.make({ cwd: box.root, sessionId: "session-1", ...options }), (hooks) => Effect.succeed(hooks))
    .pipe(Effect.provide(NodeContext.layer))

const preToolUse = (options: Omit<HooksOptions, "cwd">, toolName = "Bash", input: unknown = { command: "ls" }) =>
  Effect.flatMap(hooksWith(options), (hooks) => hooks.preToolUse({ toolUseId: "toolu_9", toolName, input }))

/** Whether a process runs (a zombie waiting for a reaper that may never come, in a container, does not). */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/** Signals are delivered asynchronously: give the kernel a moment before calling a process alive. */
const eventuallyDead = (pids: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    for (let i = 0; i < 50 && pids.some(alive); i++) yield* Effect.sleep("40 millis")
    return pids.map(alive)
  })

const json = (value: unknown) => `cat > /dev/null; printf '%s' '${JSON.stringify(value)}'`

describe("hook matchers", () => {
  const matches = (matcher: string | undefined, name: string) => Either.getOrThrow(Hooks.compileMatcher(matcher))(name)

  it("absent, empty and * match every tool", () => {
    expect([matches(undefined, "Bash"), matches("", "Edit"), matches("*", "mcp__x__y")]).toEqual([true, true, true])
  })
  it("a list matches exact names only", () => {
    expect([matches("Bash|Edit", "Edit"), matches("Bash|Edit", "BashOutput"), matches("Edit", "MultiEdit")]).toEqual([
      true,
      false,
      false
    ])
  })
  it("a regular expression is unanchored, as in Claude Code", () => {
    expect([
      matches("mcp__srv__.*", "mcp__srv__lookup"),
      matches("mcp__srv__.*", "x_mcp__srv__a"),
      matches("Notebook.*", "NotebookEdit")
    ]).toEqual([true, true, true])
  })
  it.effect("an invalid matcher fails the layer, naming the matcher", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(hooksWith({ settingsHooks: [pre("true", "Bash(")] }))
      expect(error.message).toContain("Invalid hook matcher \"Bash(\"")
    }))
})

describe("command hooks: PreToolUse", () => {
  it.live("gets Claude Code's hook JSON on stdin, in the working directory", () =>
    Effect.gen(function*() {
      const out = path.join(scripts, "stdin.json")
      const command = script(`cat > ${out}; pwd >> ${out}.cwd; echo "$CLAUDE_PROJECT_DIR" >> ${out}.cwd`)
      const result = yield* preToolUse({ settingsHooks: [pre(command, "Bash")] }, "Bash", { command: "npm test" })
      expect(result.opinion).toBeUndefined()
      expect(JSON.parse(fs.readFileSync(out, "utf8"))).toEqual({
        session_id: "session-1",
        cwd: box.root,
        hook_event_name: "PreToolUse",
        tool_name: "Bash",
        tool_input: { command: "npm test" },
        tool_use_id: "toolu_9"
      })
      expect(fs.readFileSync(`${out}.cwd`, "utf8")).toBe(`${box.root}\n${box.root}\n`)
    }))

  it.live("does not run for tools its matcher does not name", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: [pre(script("exit 2"), "Edit|Write")] }, "Bash")
      expect(result.opinion).toBeUndefined()
    }))

  it.live("a permissionDecision deny denies with its reason, naming the hook", () =>
    Effect.gen(function*() {
      const command = script(
        json({
          hookSpecificOutput: {
            hookEventName: "PreToolUse",
            permissionDecision: "deny",
            permissionDecisionReason: "no rm here"
          }
        })
      )
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.opinion).toEqual({ behavior: "deny", hook: command, message: "no rm here" })
    }))

  it.live("exit 2 blocks with stderr as the message", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: [pre(script("echo 'dangerous command' >&2; exit 2"))] })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toBe("dangerous command")
    }))

  it.live("another non-zero exit is a notice, not a block", () =>
    Effect.gen(function*() {
      const command = script("echo 'lint config missing' >&2; exit 1")
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.opinion).toBeUndefined()
      expect(result.notices).toEqual([`hook ${command} failed with exit code 1: lint config missing`])
    }))

  it.live("a hook that cannot run (exit 127) fails closed", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: [pre(path.join(scripts, "does-not-exist.sh"))] })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toMatch(/crashed with exit code 127.*the call is denied/)
    }))

  it.live("a hook killed by a signal fails closed", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: [pre(script("kill -9 $$"))] })
      expect(result.opinion?.behavior).toBe("deny")
    }))

  it.live("invalid JSON fails closed", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: [pre(script("echo '{\"hookSpecificOutput\": '"))] })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("printed invalid JSON")
    }))

  it.live("JSON of the wrong shape fails closed, naming the field", () =>
    Effect.gen(function*() {
      const command = script(json({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "maybe" } }))
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("permissionDecision")
    }))

  it.live("output for another event fails closed", () =>
    Effect.gen(function*() {
      const command = script(json({ hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "x" } }))
      expect((yield* preToolUse({ settingsHooks: [pre(command)] })).opinion?.behavior).toBe("deny")
    }))

  it.live("plain text on stdout is a notice", () =>
    Effect.gen(function*() {
      const command = script("echo checking...")
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.opinion).toBeUndefined()
      expect(result.notices).toEqual([`hook ${command}: checking...`])
    }))

  it.live("continue: false denies with the stop reason", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({
        settingsHooks: [pre(script(json({ continue: false, stopReason: "budget exhausted" })))]
      })
      expect(result.opinion).toMatchObject({ behavior: "deny", message: "budget exhausted" })
    }))

  it.live("the legacy decision field still works", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({
        settingsHooks: [pre(script(json({ decision: "block", reason: "old style" })))]
      })
      expect(result.opinion).toMatchObject({ behavior: "deny", message: "old style" })
    }))

  it.live("additionalContext and systemMessage are passed on", () =>
    Effect.gen(function*() {
      const command = script(
        json({
          systemMessage: "for you",
          hookSpecificOutput: { hookEventName: "PreToolUse", additionalContext: "for the model" }
        })
      )
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.additionalContext).toEqual(["for the model"])
      expect(result.notices).toEqual(["for you"])
    }))

  it.live("a hook that times out is killed with everything it started, and the call is denied", () =>
    Effect.gen(function*() {
      const pids = path.join(scripts, "timeout.pids")
      const command = script(`sleep 30 & echo $! > ${pids}; echo $$ >> ${pids}; wait`)
      const started = Date.now()
      const result = yield* preToolUse({ settingsHooks: [pre(command, undefined, 0.5)], killGrace: "200 millis" })
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("timed out after 500ms")
      const [child, shell] = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      expect(yield* eventuallyDead([child!, shell!])).toEqual([false, false])
    }))

  it.live("a timed-out hook leaves nothing behind: a background child, and one that left its process group with setsid", () =>
    Effect.gen(function*() {
      const pids = path.join(scripts, "escapee.pids")
      const command = script(
        `sleep 30 & echo $! > ${pids}; setsid sleep 30 & echo $! >> ${pids}; echo $$ >> ${pids}; wait`
      )
      const result = yield* preToolUse({ settingsHooks: [pre(command, undefined, 0.3)], killGrace: "200 millis" })
      expect(result.opinion?.message).toContain("timed out after 300ms")
      const [child, escapee, shell] = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      // The hook returns once its teardown found nothing running: checked at once, no waiting.
      expect([child!, escapee!, shell!].map(alive)).toEqual([false, false, false])
    }))

  it.live("a hook that exits by itself keeps what it started in the background (as before)", () =>
    Effect.gen(function*() {
      const pids = path.join(scripts, "daemon.pids")
      const command = script(`setsid sleep 30 >/dev/null 2>&1 & echo $! > ${pids}; echo ok`)
      const result = yield* preToolUse({ settingsHooks: [pre(command)] })
      expect(result.opinion).toBeUndefined()
      const daemon = Number(fs.readFileSync(pids, "utf8").trim())
      expect(alive(daemon)).toBe(true)
      process.kill(daemon, "SIGKILL")
    }))

  it.live("a timed-out hook that ignores SIGTERM is killed after the grace period", () =>
    Effect.gen(function*() {
      const pids = path.join(scripts, "stubborn.pids")
      const command = script(`trap '' TERM; sleep 30 & echo $! > ${pids}; echo $$ >> ${pids}; wait`)
      const started = Date.now()
      const result = yield* preToolUse({ settingsHooks: [pre(command, undefined, 0.3)], killGrace: "200 millis" })
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(result.opinion?.behavior).toBe("deny")
      const [child, shell] = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      expect(yield* eventuallyDead([child!, shell!])).toEqual([false, false])
    }))

  it.live("the default timeout applies to hooks without their own", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({
        settingsHooks: [pre(script("sleep 30"))],
        defaultTimeout: "300 millis",
        killGrace: "100 millis"
      })
      expect(result.opinion?.message).toContain("timed out after 300ms")
    }))
})

describe("combining PreToolUse hooks", () => {
  const decide = (behavior: string, extra: Record<string, unknown> = {}) =>
    script(
      json({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: behavior,
          permissionDecisionReason: `said ${behavior}`,
          ...extra
        }
      })
    )
  const rewrite = (input: unknown, behavior?: string) =>
    script(
      json({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          updatedInput: input,
          ...(behavior === undefined ? {} : { permissionDecision: behavior })
        }
      })
    )
  const all = (
    ...commands: Array<string>
  ) => [{ PreToolUse: [{ hooks: commands.map((command) => ({ type: "command" as const, command })) }] }]

  it.live("deny beats ask beats allow", () =>
    Effect.gen(function*() {
      expect(
        (yield* preToolUse({ settingsHooks: all(decide("allow"), decide("ask"), decide("deny")) })).opinion?.message
      ).toBe("said deny")
      expect((yield* preToolUse({ settingsHooks: all(decide("allow"), decide("ask")) })).opinion?.message).toBe(
        "said ask"
      )
      expect((yield* preToolUse({ settingsHooks: all(decide("allow"), script("true")) })).opinion?.message).toBe(
        "said allow"
      )
    }))

  it.live("a rewrite with an allow, or alone, is passed on", () =>
    Effect.gen(function*() {
      const withAllow = yield* preToolUse({ settingsHooks: all(rewrite({ command: "ls -la" }, "allow")) })
      expect(withAllow.updatedInput).toEqual({ command: "ls -la" })
      expect(withAllow.opinion?.behavior).toBe("allow")
      const alone = yield* preToolUse({ settingsHooks: all(rewrite({ command: "ls -1" })) })
      expect(alone).toMatchObject({ opinion: undefined, updatedInput: { command: "ls -1" } })
    }))

  it.live("a rewrite is dropped when the call is denied", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: all(rewrite({ command: "ls -la" }, "allow"), decide("deny")) })
      expect(result).toMatchObject({ opinion: { behavior: "deny" }, updatedInput: undefined })
    }))

  it.live("two rewrites deny the call", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({ settingsHooks: all(rewrite({ command: "a" }), rewrite({ command: "b" })) })
      expect(result.opinion?.behavior).toBe("deny")
      expect(result.opinion?.message).toContain("each rewrote the input")
    }))
})

describe("function hooks", () => {
  const fn = (
    run: Extract<FunctionHook, { event: "PreToolUse" }>["run"],
    timeout: "100 millis" | "1 minute" = "1 minute"
  ): FunctionHook => ({ event: "PreToolUse", name: "policy-fn", matcher: "Bash", run, timeout })

  it.live("answer like command hooks", () =>
    Effect.gen(function*() {
      const result = yield* preToolUse({
        functionHooks: [
          fn(() => Effect.succeed({ permissionDecision: "ask", reason: "looks odd", additionalContext: "ctx" }))
        ]
      })
      expect(result).toMatchObject({
        opinion: { behavior: "ask", hook: "policy-fn", message: "looks odd" },
        additionalContext: ["ctx"]
      })
    }))

  it.live("a failure, a defect or a timeout denies", () =>
    Effect.gen(function*() {
      for (const run of [() => Effect.fail("nope"), () => Effect.die(new Error("boom")), () => Effect.never]) {
        const result = yield* preToolUse({ functionHooks: [fn(run, "100 millis")] })
        expect(result.opinion?.behavior).toBe("deny")
        expect(result.opinion?.message).toContain("the call is denied")
      }
    }))
})

describe("command hooks: PostToolUse and PostToolUseFailure", () => {
  const post = (event: "PostToolUse" | "PostToolUseFailure", command: string) => ({
    [event]: [{ matcher: "Bash", hooks: [{ type: "command" as const, command }] }]
  })
  const postToolUse = (options: Omit<HooksOptions, "cwd">, failed: boolean) =>
    Effect.flatMap(
      hooksWith(options),
      (hooks) =>
        hooks.postToolUse({
          toolUseId: "toolu_9",
          toolName: "Bash",
          input: { command: "ls" },
          response: "a\nb",
          failed
        })
    )

  it.live("PostToolUse gets the response and may add context for the model", () =>
    Effect.gen(function*() {
      const out = path.join(scripts, "post.json")
      const command = script(
        `cat > ${out}; printf '%s' '${
          JSON.stringify({
            hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "remember to lint" }
          })
        }'`
      )
      const result = yield* postToolUse({ settingsHooks: [post("PostToolUse", command)] }, false)
      expect(result.additionalContext).toEqual(["remember to lint"])
      expect(JSON.parse(fs.readFileSync(out, "utf8"))).toMatchObject({
        hook_event_name: "PostToolUse",
        tool_response: "a\nb"
      })
    }))

  it.live("exit 2 after the call sends stderr to the model; other failures are notices", () =>
    Effect.gen(function*() {
      const blocked = yield* postToolUse({
        settingsHooks: [post("PostToolUse", script("echo 'format the file' >&2; exit 2"))]
      }, false)
      expect(blocked.additionalContext).toEqual(["format the file"])
      const broken = yield* postToolUse({ settingsHooks: [post("PostToolUse", script("echo '{bad'"))] }, false)
      expect(broken.additionalContext).toEqual([])
      expect(broken.notices[0]).toContain("printed invalid JSON")
    }))

  it.live("a failed call runs PostToolUseFailure hooks only, with the error", () =>
    Effect.gen(function*() {
      const out = path.join(scripts, "failure.json")
      const settingsHooks = [{
        ...post("PostToolUse", script("echo '{\"systemMessage\": \"success hook ran\"}'")),
        ...post("PostToolUseFailure", script(`cat > ${out}`))
      }]
      const failed = yield* postToolUse({ settingsHooks }, true)
      expect(failed.notices).toEqual([])
      expect(JSON.parse(fs.readFileSync(out, "utf8"))).toMatchObject({
        hook_event_name: "PostToolUseFailure",
        error: "a\nb"
      })
      const succeeded = yield* postToolUse({ settingsHooks }, false)
      expect(succeeded.notices).toEqual([expect.stringContaining("success hook ran")])
    }))
})

describe("hooks and the permission policy, through the runtime", () => {
  const runtime = (
    policy: RulePolicyOptions,
    hooks: Omit<HooksOptions, "cwd">,
    asked: Ref.Ref<ReadonlyArray<ApprovalRequest>>
  ) =>
    ToolRuntime.layer.pipe(
      Layer.provide(Layer.provide(ToolRegistry.layer(allTools), allToolLayers)),
      Layer.provide([
        RulePolicy.layer(policy).pipe(Layer.provide(workspaceLayer(box))),
        Hooks.layer({ cwd: box.root, ...hooks }).pipe(Layer.provide(NodeContext.layer)),
        Approver.scripted(() => Effect.succeed({ _tag: "AllowOnce" }), asked),
        ResultStore.layerMemory()
      ])
    )
  const project = (permissions: Record<string, unknown>): RulePolicyOptions => ({
    settings: [settingsFrom({ permissions }, path.join(box.root, ".claude/settings.json"))]
  })
  const hookSays = (behavior: string, extra: Record<string, unknown> = {}) => ({
    settingsHooks: [
      pre(
        script(
          json({
            hookSpecificOutput: {
              hookEventName: "PreToolUse",
              permissionDecision: behavior,
              permissionDecisionReason: `hook says ${behavior}`,
              ...extra
            }
          })
        ),
        "Bash"
      )
    ]
  })
  const run = (policy: RulePolicyOptions, hooks: Omit<HooksOptions, "cwd">, input: unknown) =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const outcome = yield* Effect.flatMap(ToolRuntime, (rt) =>
        rt.executeOne({ type: "tool_use", id: "toolu_1", name: "Bash", input })).pipe(
          Effect.provide(runtime(policy, hooks, asked))
        )
      return { outcome, asked: yield* Ref.get(asked) }
    })

  it.live("continue: false denies the call and stops the rest of the run", () =>
    Effect.gen(function*() {
      const asked = yield* Ref.make<ReadonlyArray<ApprovalRequest>>([])
      const stopper = script(
        `if grep -q STOPHERE; then printf '%s' '${
          JSON.stringify({ continue: false, stopReason: "enough for today" })
        }'; fi`
      )
      const outcomes = yield* Effect.flatMap(ToolRuntime, (rt) =>
        rt.execute([
          { type: "tool_use", id: "toolu_stop", name: "Bash", input: { command: "echo STOPHERE" } },
          { type: "tool_use", id: "toolu_next", name: "Bash", input: { command: "make" } }
        ])).pipe(Effect.provide(runtime({}, { settingsHooks: [pre(stopper, "Bash")] }, asked)))
      expect(outcomes.map((o) => o.status)).toEqual(["denied", "interrupted"])
      expect(outcomes[0]!.result.content).toContain("enough for today")
      expect(outcomes[1]!.result.content).toContain("never ran")
      expect(yield* Ref.get(asked)).toEqual([])
    }))

  it.live("a hook's ask never skips a deny rule: denied without asking", () =>
    Effect.gen(function*() {
      const { asked, outcome } = yield* run(project({ deny: ["Bash(rm:*)"] }), hookSays("ask"), {
        command: "rm -rf build"
      })
      expect(outcome.status).toBe("denied")
      expect(asked).toEqual([])
      expect(outcome.decision?._tag === "Deny" && describeReason(outcome.decision.reason)).toContain(
        "deny rule `Bash(rm:*)`"
      )
    }))

  it.live("a hook's allow never bypasses a deny rule", () =>
    Effect.gen(function*() {
      const { outcome } = yield* run(project({ deny: ["Bash(rm:*)"] }), hookSays("allow"), { command: "rm -rf build" })
      expect(outcome.status).toBe("denied")
    }))

  it.live("a hook's allow never bypasses an ask rule: the person is asked", () =>
    Effect.gen(function*() {
      const { asked, outcome } = yield* run(project({ ask: ["Bash(git push:*)"] }), hookSays("allow"), {
        command: "git push"
      })
      expect(outcome.status).toBe("success")
      expect(asked.map((request) => request.message)).toEqual([expect.stringContaining("ask rule `Bash(git push:*)`")])
    }))

  it.live("a hook's allow runs a call no rule covers, without asking", () =>
    Effect.gen(function*() {
      const { asked, outcome } = yield* run({}, hookSays("allow"), { command: "make" })
      expect(outcome.status).toBe("success")
      expect(asked).toEqual([])
      expect(outcome.decision?._tag === "Allow" && outcome.decision.reason._tag).toBe("Hook")
    }))

  it.live("a hook's deny reaches the model with its message", () =>
    Effect.gen(function*() {
      const { outcome } = yield* run({}, hookSays("deny"), { command: "make" })
      expect(outcome.status).toBe("denied")
      expect(JSON.stringify(outcome.result.content)).toContain("hook says deny")
    }))

  it.live("a rewritten input is checked against the deny rules", () =>
    Effect.gen(function*() {
      const { outcome } = yield* run(
        project({ deny: ["Bash(rm:*)"], allow: ["Bash(ls:*)"] }),
        hookSays("allow", { updatedInput: { command: "rm -rf /" } }),
        { command: "ls" }
      )
      expect(outcome.status).toBe("denied")
      expect(outcome.executedInput).toEqual({ command: "rm -rf /" })
    }))

  it.live("a crashing hook denies the call (fail closed)", () =>
    Effect.gen(function*() {
      const { outcome } = yield* run(project({ allow: ["Bash"] }), {
        settingsHooks: [pre(script("kill -9 $$"), "Bash")]
      }, { command: "ls" })
      expect(outcome.status).toBe("denied")
    }))
})
