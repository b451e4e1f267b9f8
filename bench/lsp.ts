/**
 * A hover and a findReferences on `typescript-language-server` (the repository's TypeScript) over the LSP fixture
 * project: through the runtime (the LSP tool: decode, Read's rules, the scheduler's one-call path, document sync, the
 * request, compact text) beside the same requests on a bare `vscode-jsonrpc` client. Each side talks to its own
 * server process; requests interleaved one at a time after warm-up. Median wall time: the server's own work is most
 * of it, and it is what a person waits for.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node"
import { ToolRegistry } from "../dist/Catalog/ToolRegistry.js"
import { ToolHooks } from "../dist/Hooks/ToolHooks.js"
import * as LspConfig from "../dist/Lsp/Config.js"
import { LspClients } from "../dist/Lsp/LspClients.js"
import { Approver } from "../dist/Permission/Approver.js"
import * as RulePolicy from "../dist/Permission/RulePolicy.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { FileState } from "../dist/Session/FileState.js"
import { ResultStore } from "../dist/Session/ResultStore.js"
import { Workspace } from "../dist/Session/Workspace.js"
import { layer as LspToolLayer, LspTool } from "../dist/Tools/Lsp.js"
import { median, report } from "./stats.js"

const ROUNDS = 40
const WARMUP = 10
const repo = path.resolve(import.meta.dirname, "..")
const server = path.join(repo, "node_modules/.bin/typescript-language-server")
const initializationOptions = {
  tsserver: { path: path.join(repo, "node_modules/typescript/lib/tsserver.js"), useSyntaxServer: "never" }
}

/** 0-based line and character of the first `needle` in `text`. */
const positionOf = (text: string, needle: string) => {
  const before = text.slice(0, text.indexOf(needle)).split("\n")
  return { line: before.length - 1, character: before.at(-1)!.length }
}

const bare = async (dir: string, file: string) => {
  const child = childProcess.spawn(server, ["--stdio"], { cwd: dir, stdio: ["pipe", "pipe", "ignore"] })
  const connection = createMessageConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin)
  )
  connection.onRequest(() => null)
  connection.listen()
  const root = pathToFileURL(dir).href
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name: "bench" }],
    capabilities: {},
    initializationOptions
  })
  await connection.sendNotification("initialized", {})
  const uri = pathToFileURL(file).href
  const text = fs.readFileSync(file, "utf8")
  await connection.sendNotification("textDocument/didOpen", {
    textDocument: { uri, languageId: "typescript", version: 1, text }
  })
  const position = positionOf(text, "totalArea")
  return {
    hover: () => connection.sendRequest("textDocument/hover", { textDocument: { uri }, position }),
    references: () =>
      connection.sendRequest("textDocument/references", {
        textDocument: { uri },
        position,
        context: { includeDeclaration: true }
      }),
    close: async () => {
      await connection.sendRequest("shutdown").catch(() => undefined)
      await connection.sendNotification("exit").catch(() => undefined)
      connection.dispose()
      child.kill("SIGKILL")
    }
  }
}

const timed = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

export const run = async (): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-lsp-"))
  try {
    fs.cpSync(path.join(repo, "test/fixtures/lsp-ts"), dir, { recursive: true })
    const file = path.join(dir, "src/shapes.ts")
    const config = LspConfig.fromJson(path.join(dir, ".lsp.json"), {
      typescript: {
        command: server,
        args: ["--stdio"],
        extensionToLanguage: { ".ts": "typescript" },
        initializationOptions,
        startupTimeout: 120_000
      }
    }, { trusted: true })
    const workspace = Workspace.layer({ cwd: dir }).pipe(Layer.provide(NodeContext.layer))
    const clients = LspClients.layer(config).pipe(Layer.provide(workspace))
    const tools = LspToolLayer.pipe(Layer.provide(Layer.mergeAll(workspace, clients, FileState.layer())))
    const policy = RulePolicy.layer({ mode: "default" }).pipe(
      Layer.provide(Layer.mergeAll(workspace, NodeContext.layer))
    )
    const runtimeLayer = ToolRuntime.layer.pipe(
      Layer.provide([
        ToolRegistry.layer([LspTool]).pipe(Layer.provide(tools)),
        policy,
        Approver.allowAll,
        ToolHooks.none,
        ResultStore.layerMemory()
      ])
    )
    const at = positionOf(fs.readFileSync(file, "utf8"), "totalArea")
    const input = (operation: string) => ({ operation, filePath: file, line: at.line + 1, character: at.character + 1 })
    let id = 0
    await Effect.runPromise(Effect.scoped(
      Effect.gen(function*() {
        const runtime = yield* ToolRuntime
        const ours = (operation: string) => () =>
          Effect.runPromise(
            runtime.executeOne({ type: "tool_use", id: `b${++id}`, name: "LSP", input: input(operation) })
          )
            .then((outcome) => {
              if (outcome.status !== "success") throw new Error(`LSP ${operation}: ${JSON.stringify(outcome.result)}`)
            })
        const peer = yield* Effect.promise(() => bare(dir, file))
        yield* Effect.promise(async () => {
          try {
            for (let i = 0; i < WARMUP; i++) {
              await ours("hover")()
              await ours("findReferences")()
              await peer.hover()
              await peer.references()
            }
            const samples = {
              oursHover: [] as Array<number>,
              oursRefs: [] as Array<number>,
              bareHover: [] as Array<number>,
              bareRefs: [] as Array<number>
            }
            for (let i = 0; i < ROUNDS; i++) {
              samples.oursHover.push(await timed(ours("hover")))
              samples.bareHover.push(await timed(peer.hover))
              samples.oursRefs.push(await timed(ours("findReferences")))
              samples.bareRefs.push(await timed(peer.references))
            }
            const row = (name: string, values: ReadonlyArray<number>, peerValues: ReadonlyArray<number>) =>
              [
                name,
                `${median(values).toFixed(2)} ms`,
                `${(median(values) / median(peerValues)).toFixed(2)}x the bare client`
              ] as const
            report(`LSP on typescript-language-server 5.3 (fixture project), warm, median of ${ROUNDS}`, [
              row("hover through the runtime (LSP tool)", samples.oursHover, samples.bareHover),
              row("hover, bare vscode-jsonrpc client", samples.bareHover, samples.bareHover),
              row("findReferences through the runtime", samples.oursRefs, samples.bareRefs),
              row("findReferences, bare vscode-jsonrpc client", samples.bareRefs, samples.bareRefs)
            ])
          } finally {
            await peer.close()
          }
        })
      }).pipe(Effect.provide(runtimeLayer))
    ))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
