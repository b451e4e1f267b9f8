/**
 * Decision time of the full permission policy with 200 rules from 3 sources (user settings, project settings,
 * command line): the median time per `evaluate` over batches of calls, for a mix of tools (a file tool matched
 * through its claims, a tool with its own `matchesRule`, an MCP tool). Target: <= 5 us per call.
 *
 * Run: `npx tsx bench/permissions.ts`
 */
import { NodeFileSystem } from "@effect/platform-node"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { performance } from "node:perf_hooks"
import type { PolicyRequest } from "../dist/Permission/PermissionPolicy.js"
import * as RulePolicy from "../dist/Permission/RulePolicy.js"
import { isWithin, Workspace } from "../dist/Session/Workspace.js"
import { decodeSettingsJson } from "../dist/Settings/Settings.js"
import { PermissionCheck } from "../dist/Tool/Permission.js"
import * as Tool from "../dist/Tool/Tool.js"

const cwd = "/work/bench-project"
const home = "/home/bench"

const FileInput = Schema.Struct({ path: Schema.String })
const Write = Tool.make("Write", { description: "Writes a file.", input: FileInput, fileAccess: "edit" })
const WriteLive = Write.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  claims: (input) => [Tool.Claim.write(`file:${cwd}/${input.path}`)],
  call: () => Effect.succeed("ok")
})
const Run = Tool.make("Run", { description: "Runs a script.", input: Schema.Struct({ script: Schema.String }) })
const RunLive = Run.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  matchesRule: (
    content,
    input
  ) => (content.endsWith(":*") ? input.script.startsWith(content.slice(0, -2)) : input.script === content),
  call: () => Effect.succeed("ok")
})
const Mcp = Tool.make("mcp__tracker__create_issue", {
  description: "Creates an issue.",
  input: Schema.Struct({ title: Schema.String })
})
const McpLive = Mcp.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  call: () => Effect.succeed("ok")
})

const rules = (prefix: string, n: number): Array<string> =>
  Array.from({ length: n }, (_, i) => {
    switch (i % 8) {
      case 0:
        return `Bash(${prefix}-cmd-${i}:*)`
      case 1:
        return `Edit(./${prefix}/dir-${i}/**)`
      case 2:
        return `Read(~/${prefix}-${i}/**)`
      case 3:
        return `Run(${prefix}-script-${i}:*)`
      case 4:
        return `WebFetch(domain:${prefix}-${i}.example.com)`
      case 5:
        return `mcp__server${i}`
      case 6:
        return `Write(./${prefix}/gen-${i}/*.ts)`
      default:
        return `Grep(./${prefix}-${i}/**)`
    }
  })

const loaded = (kind: "userSettings" | "projectSettings", path: string, prefix: string, n: number) =>
  Either.getOrThrow(decodeSettingsJson(
    {
      permissions: {
        allow: rules(`${prefix}a`, Math.ceil(n / 2)),
        deny: rules(`${prefix}d`, Math.floor(n / 4)),
        ask: rules(`${prefix}q`, n - Math.ceil(n / 2) - Math.floor(n / 4))
      }
    },
    { kind, path }
  ))

const context = (toolName: string): Tool.CallContext => ({
  toolUseId: "toolu_bench",
  toolName,
  progress: () => Effect.void,
  isReadDenied: () => false
})

const requestFor = <I, O, F>(tool: Tool.Any, service: Tool.Service<I, O, F>, input: I): PolicyRequest => ({
  definition: tool.definition,
  invocation: (service as Tool.AnyService).plan(input),
  toolCheck: PermissionCheck.passthrough(),
  hook: undefined,
  context: context(tool.definition.name)
})

/**
 * Runs the benchmark and prints the median decision time per call.
 *
 * @since 0.1.0
 */
export const run = async (): Promise<void> => {
  const workspace = Layer.succeed(Workspace, {
    cwd,
    home,
    roots: [cwd],
    resolve: () => Effect.die("unused"),
    contains: (p: string) => isWithin(cwd, p)
  })
  const policy = Effect.runSync(
    RulePolicy.make({
      settings: [
        loaded("userSettings", `${home}/.claude/settings.json`, "u", 80),
        loaded("projectSettings", `${cwd}/.claude/settings.json`, "p", 80)
      ],
      cliRules: { allow: rules("ca", 20), deny: rules("cd", 10), ask: rules("cq", 10) }
    }).pipe(Effect.provide(Layer.merge(workspace, NodeFileSystem.layer)))
  )
  const requests = [
    requestFor(Write, WriteLive, { path: "src/index.ts" }),
    requestFor(Write, WriteLive, { path: "ua/dir-1/x.ts" }),
    requestFor(Run, RunLive, { script: "build" }),
    requestFor(Run, RunLive, { script: "ua-script-3 --fast" }),
    requestFor(Mcp, McpLive, { title: "bug" })
  ]
  const batch = 100
  const batches = 2_000
  const samples: Array<number> = []
  const loop = Effect.gen(function*() {
    for (let b = 0; b < batches; b++) {
      const started = performance.now()
      for (let i = 0; i < batch; i++) yield* policy.evaluate(requests[i % requests.length]!)
      samples.push(((performance.now() - started) * 1000) / batch)
    }
  })
  Effect.runSync(loop) // warm-up: caches, JIT
  samples.length = 0
  Effect.runSync(loop)
  samples.sort((a, b) => a - b)
  const median = samples[Math.floor(samples.length / 2)]!
  const p95 = samples[Math.floor(samples.length * 0.95)]!
  // A yardstick for the machine's speed right now: one trivial Effect step, timed the same way.
  const baseline: Array<number> = []
  Effect.runSync(Effect.gen(function*() {
    for (let b = 0; b < 500; b++) {
      const started = performance.now()
      for (let i = 0; i < batch; i++) yield* Effect.map(Effect.succeed(i), (n) => n + 1)
      baseline.push(((performance.now() - started) * 1000) / batch)
    }
  }))
  baseline.sort((a, b) => a - b)
  console.log(
    `permissions: 200 rules from 3 sources, ${requests.length} call shapes: median ${median.toFixed(2)} us/call ` +
      `(p95 ${p95.toFixed(2)} us), target <= 5 us; a trivial Effect step: ${
        baseline[Math.floor(baseline.length / 2)]!.toFixed(2)
      } us`
  )
}

if (import.meta.url === `file://${process.argv[1]}`) {
  run().catch((error: unknown) => {
    console.error(error)
    process.exitCode = 1
  })
}
