/**
 * Shared set-up for the language-server tests: the fixture projects copied to a temporary directory (the tests edit
 * them), a configuration of the real servers (typescript-language-server over the repository's TypeScript, pyright),
 * a runtime with the LSP tool and the file tools, and positions computed from the fixture text.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import * as LspConfig from "../../src/Lsp/Config.js"
import * as Diagnostics from "../../src/Lsp/Diagnostics.js"
import type { LspClientsOptions } from "../../src/Lsp/LspClients.js"
import { LspClients } from "../../src/Lsp/LspClients.js"
import { Approver } from "../../src/Permission/Approver.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../src/Session/FileState.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import type { Outcome } from "../../src/Tool/Outcome.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import * as FileTools from "../../src/Tools/FileTools.js"
import { layer as LspToolLayer, LspTool } from "../../src/Tools/Lsp.js"
import { tempDir } from "../support/index.js"

export const repo = path.resolve(__dirname, "../..")

/** The two fixture projects, copied into a fresh directory: `ts/` and `py/`. */
export const fixtureWorkspace = (): string => {
  const dir = tempDir("lsp-")
  fs.cpSync(path.join(repo, "test/fixtures/lsp-ts"), path.join(dir, "ts"), { recursive: true })
  fs.cpSync(path.join(repo, "test/fixtures/lsp-py"), path.join(dir, "py"), { recursive: true })
  return dir
}

/** The servers' entries as a person writes them in a `.lsp.json`; `env` carries a marker to find their processes. */
export const serverEntries = (marker: string, overrides: Record<string, unknown> = {}) => ({
  typescript: {
    command: path.join(repo, "node_modules/.bin/typescript-language-server"),
    args: ["--stdio"],
    extensionToLanguage: { ".ts": "typescript" },
    env: { LSP_TEST_MARKER: marker },
    initializationOptions: {
      tsserver: { path: path.join(repo, "node_modules/typescript/lib/tsserver.js"), useSyntaxServer: "never" }
    },
    startupTimeout: 60_000,
    ...overrides
  },
  python: {
    command: path.join(repo, "node_modules/.bin/pyright-langserver"),
    args: ["--stdio"],
    extensionToLanguage: { ".py": "python" },
    env: { LSP_TEST_MARKER: marker },
    startupTimeout: 60_000,
    ...overrides
  }
})

export const configOf = (dir: string, marker: string, overrides: Record<string, unknown> = {}) =>
  LspConfig.fromJson(path.join(dir, "lsp.json"), serverEntries(marker, overrides), { trusted: true })

export interface RuntimeOptions {
  readonly deny?: ReadonlyArray<string>
  readonly diagnostics?: Diagnostics.DiagnosticsMode
  readonly clients?: LspClientsOptions
}

/**
 * A runtime over the LSP tool and the file tools with real servers, a policy (default mode, every ask allowed),
 * the diagnostics decorator, and the LspClients in the output for inspection.
 */
export const runtimeLayer = (dir: string, config: LspConfig.LoadedConfig, options: RuntimeOptions = {}) => {
  const workspace = Workspace.layer({ cwd: dir }).pipe(Layer.provide(NodeContext.layer))
  const clients = LspClients.layer(config, options.clients).pipe(Layer.provide(workspace))
  const base = Layer.mergeAll(workspace, clients, FileState.layer())
  const tools = Layer.mergeAll(FileTools.layer, LspToolLayer).pipe(Layer.provide(base))
  const registry = ToolRegistry.layer([...FileTools.tools, LspTool]).pipe(Layer.provide(tools))
  const policy = RulePolicy.layer({ mode: "default", cliRules: { deny: options.deny ?? [] } }).pipe(
    Layer.provide(Layer.mergeAll(workspace, NodeContext.layer))
  )
  const hooks = Diagnostics.layer({ mode: options.diagnostics ?? "off" }).pipe(
    Layer.provide(Layer.mergeAll(ToolHooks.none, clients, workspace))
  )
  return ToolRuntime.layer.pipe(
    Layer.provide([registry, policy, Approver.allowAll, hooks, ResultStore.layerMemory()]),
    Layer.provideMerge(clients)
  )
}

let counter = 0
export const use = (name: string, input: unknown): ToolUseBlock => ({
  type: "tool_use",
  id: `toolu_lsp_${++counter}`,
  name,
  input
})

export const text = (outcome: Outcome): string => {
  const content = outcome.result.content
  return typeof content === "string" ? content : content.map((b) => (b.type === "text" ? b.text : "")).join("\n")
}

/** Runs one call; its status and model text. */
export const call = (name: string, input: Record<string, unknown>) =>
  Effect.flatMap(ToolRuntime, (runtime) => runtime.executeOne(use(name, input))).pipe(
    Effect.map((outcome) => ({ status: outcome.status, text: text(outcome) }))
  )

/**
 * Where `needle` (its `occurrence`-th appearance, 0-based) starts in a file, 1-based: `{line, character}` for a tool
 * input, and `rel:line:character` as results write it.
 */
export const positionOf = (dir: string, rel: string, needle: string, occurrence = 0) => {
  const content = fs.readFileSync(path.join(dir, rel), "utf8")
  let index = -1
  for (let i = 0; i <= occurrence; i++) {
    index = content.indexOf(needle, index + 1)
    if (index === -1) throw new Error(`${needle} (#${occurrence}) is not in ${rel}`)
  }
  const before = content.slice(0, index).split("\n")
  const line = before.length
  const character = before[before.length - 1]!.length + 1
  return { line, character, at: `${rel}:${line}:${character}` }
}

/** Every `path:line:column` a result lists (its indented entries; not the position asked about), in order. */
export const locationsIn = (result: string): ReadonlyArray<string> =>
  [...result.matchAll(/^ +(?:\S.* )?([\w./-]+\.(?:ts|py)):(\d+):(\d+)/gm)].map((m) => `${m[1]}:${m[2]}:${m[3]}`)
