/**
 * The Bash tool: classification cost per command over a realistic mix, peak RSS growth while a 1 GB output
 * streams through the tool, the tool's spawn overhead for `true` against a raw `child_process.spawn`, and `true`
 * through the runtime with the sandbox (read-only and rule-allowed policies), without it, and beside a raw spawn.
 *
 * `npx tsx bench/bash.ts` (after `npm run build`)
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import { Approver } from "../dist/Permission/Approver.js"
import * as RulePolicy from "../dist/Permission/RulePolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import { Workspace } from "../dist/Session/Workspace.js"
import type { CallContext } from "../dist/Tool/Tool.js"
import { BashTool } from "../dist/Tools/Bash.js"
import { analysisCount } from "../dist/Tools/Shell/CommandPlan.js"
import { classifyReadOnly } from "../dist/Tools/Shell/ReadOnly.js"
import { benign, hostile } from "../test/Tools/Shell/corpus.js"
import { median, report } from "./stats.js"

/** What agents typically run, next to the corpus' reads and attacks. */
const everyday = [
  "npm test",
  "npm run build",
  "npx vitest run test/Tools/Bash",
  "git status && git diff --stat",
  "git add -A && git commit -m 'wip'",
  "ls -la src | head -20",
  "cat package.json | jq .scripts",
  "grep -rn \"TODO\" src --include=*.ts | wc -l",
  "cd packages/core && npm test",
  "find . -name '*.ts' -not -path './node_modules/*' | xargs wc -l | tail -1",
  "python3 -m pytest -q tests/",
  "cargo build --release 2>&1 | tail -5",
  "docker compose up -d && docker compose ps",
  "for f in src/*.ts; do echo \"$f\"; head -3 \"$f\"; done",
  "rm -rf dist && tsc -p tsconfig.build.json"
]

const classification = (): ReadonlyArray<readonly [string, string, string]> => {
  const mix = [...benign.map((e) => e.command), ...hostile.map((e) => e.command), ...everyday]
  const REPEAT = 200
  for (const command of mix) for (let i = 0; i < 50; i++) classifyReadOnly(command)
  const perCommand = mix.map((command) => {
    const start = performance.now()
    for (let i = 0; i < REPEAT; i++) classifyReadOnly(command)
    return ((performance.now() - start) / REPEAT) * 1000
  })
  return [
    [
      "median per command",
      `${median(perCommand).toFixed(1)} us`,
      `analyze + classifyReadOnly, ${mix.length} commands (target <= 30 us)`
    ],
    [
      "p90 per command",
      `${[...perCommand].sort((a, b) => a - b)[Math.floor(perCommand.length * 0.9)]!.toFixed(1)} us`,
      ""
    ]
  ]
}

const context: CallContext = {
  toolUseId: "bench",
  toolName: "Bash",
  progress: () => Effect.void,
  isReadDenied: () => false
}

const toolRuns = (cwd: string, store: string) =>
  Effect.gen(function*() {
    const bash = yield* BashTool
    const call = (command: string) => Effect.scoped(bash.plan({ command, timeout: 600_000 }).call(context))

    // Spawn overhead: medians of single calls, the tool against raw child_process, interleaved.
    const raw = () =>
      new Promise<void>((resolve) =>
        childProcess.spawn("bash", ["-c", "true"], { stdio: "ignore" }).on("exit", () => resolve())
      )
    const toolMs: Array<number> = []
    const rawMs: Array<number> = []
    for (let i = 0; i < 60; i++) {
      let start = performance.now()
      yield* call("true")
      if (i >= 10) toolMs.push(performance.now() - start)
      start = performance.now()
      yield* Effect.promise(raw)
      if (i >= 10) rawMs.push(performance.now() - start)
    }

    // 1 GB through the tool, sampling RSS every 10 ms; the baseline is taken after the warm-up calls above.
    const baseline = process.memoryUsage().rss
    let peak = baseline
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10)
    const start = performance.now()
    const out = yield* call("head -c 1G /dev/zero | tr '\\0' 'a'")
    const seconds = (performance.now() - start) / 1000
    clearInterval(sampler)
    const stored = fs.statSync(out.fullOutputPath!).size
    fs.rmSync(store, { recursive: true, force: true })
    return [
      [
        "tool call `true`",
        `${median(toolMs).toFixed(1)} ms`,
        `median, spawn to result, tree cleanup included; ${
          (median(toolMs) / median(rawMs)).toFixed(2)
        }x raw (target <= 1.5x)`
      ],
      ["raw spawn bash -c true", `${median(rawMs).toFixed(1)} ms`, "median, child_process.spawn to exit"],
      ["1 GB output: peak RSS growth", `${((peak - baseline) / 1024 / 1024).toFixed(1)} MB`, "target <= 64 MB"],
      [
        "1 GB output: time",
        `${seconds.toFixed(1)} s`,
        `${(1024 / seconds).toFixed(0)} MB/s; stored ${stored} bytes (${
          stored === 1024 ** 3 ? "complete" : "INCOMPLETE"
        })`
      ]
    ] as const
  }).pipe(
    Effect.provide(
      BashTool.layer({ maxOutputBytes: 2 * 1024 ** 3, sandbox: "off" }).pipe(
        Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layer(store))),
        Layer.provide(NodeContext.layer)
      )
    )
  )

/**
 * Calls through the whole runtime (plan, rules, read-only auto-allow, call): how many times each call parses its
 * command, and the medians of `true` with the sandbox off, with it as a read-only call (auto-allowed) and as a call a
 * rule allowed (`Bash(true)`: workspace writable, settings and .git internals protected), beside a raw spawn of the
 * same command, interleaved.
 */
const runtimeRuns = (cwd: string, store: string) =>
  Effect.gen(function*() {
    const use = (id: number, command: string) => ({
      type: "tool_use" as const,
      id: `b${id}`,
      name: "Bash",
      input: { command }
    })
    const runtime = (sandbox: "off" | "bubblewrap", allow: ReadonlyArray<string>) =>
      ToolRuntime.pipe(
        Effect.provide(
          ToolRuntime.layer.pipe(
            Layer.provide(ToolRegistry.layer([BashTool])),
            Layer.provide(BashTool.layer({ sandbox })),
            Layer.provide(
              Layer.mergeAll(
                RulePolicy.layer({ cliRules: { allow, deny: [], ask: [] } }),
                Approver.denyAll,
                ToolHooks.none
              )
            ),
            Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), ResultStore.layer(store))),
            Layer.provide(NodeContext.layer)
          )
        )
      )
    const off = yield* runtime("off", [])
    const readOnly = yield* runtime("bubblewrap", [])
    const ruled = yield* runtime("bubblewrap", ["Bash(true)"])
    const before = analysisCount()
    const commands = [
      "true",
      "ls -la",
      "git status && git log --oneline | head -5",
      "grep -rn TODO src | wc -l",
      "echo $((1 + 2))"
    ]
    for (const [i, command] of commands.entries()) yield* off.executeOne(use(i, command))
    const parses = (analysisCount() - before) / commands.length
    const raw = () =>
      new Promise<void>((resolve) =>
        childProcess.spawn("bash", ["-c", "true"], { stdio: "ignore" }).on("exit", () => resolve())
      )
    const timed = <A, E>(effect: Effect.Effect<A, E>, into: Array<number>, keep: boolean) =>
      Effect.suspend(() => {
        const start = performance.now()
        return effect.pipe(Effect.tap(() => Effect.sync(() => keep && into.push(performance.now() - start))))
      })
    const offMs: Array<number> = []
    const readOnlyMs: Array<number> = []
    const ruledMs: Array<number> = []
    const rawMs: Array<number> = []
    for (let i = 0; i < 40; i++) {
      const keep = i >= 5
      yield* timed(off.executeOne(use(100 + i, "true")), offMs, keep)
      yield* timed(readOnly.executeOne(use(200 + i, "true")), readOnlyMs, keep)
      yield* timed(ruled.executeOne(use(300 + i, "true")), ruledMs, keep)
      yield* timed(Effect.promise(raw), rawMs, keep)
    }
    const ratio = (values: ReadonlyArray<number>) => `${(median(values) / median(rawMs)).toFixed(2)}x raw`
    return [
      ["parses per call", parses.toFixed(2), `${commands.length} commands through the runtime (target 1)`],
      ["raw spawn bash -c true", `${median(rawMs).toFixed(1)} ms`, "median, child_process.spawn to exit"],
      [
        "runtime `true`, no sandbox",
        `${median(offMs).toFixed(1)} ms`,
        `median: plan, rules, auto-allow, spawn, tree cleanup; ${ratio(offMs)} (target <= 1.5x)`
      ],
      [
        "runtime `true`, sandbox (read-only)",
        `${median(readOnlyMs).toFixed(1)} ms`,
        `median, auto-allowed as read-only: nothing writable, no network; ${ratio(readOnlyMs)}`
      ],
      [
        "runtime `true`, sandbox (rule)",
        `${median(ruledMs).toFixed(1)} ms`,
        `median, allowed by Bash(true): workspace writable, protected paths; ${ratio(ruledMs)}`
      ]
    ] as const
  }).pipe(Effect.scoped)

/** Runs the Bash benchmarks and prints the numbers. */
export const run = async (): Promise<void> => {
  report("Bash: classification", classification())
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "bench-bash-"))
  const store = fs.mkdtempSync(path.join(os.tmpdir(), "bench-bash-store-"))
  report("Bash: through the runtime", await Effect.runPromise(runtimeRuns(cwd, store)))
  report("Bash: process", await Effect.runPromise(toolRuns(cwd, store)))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
