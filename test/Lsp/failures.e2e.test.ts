/**
 * How a language server fails, on small fake servers. A server whose pipe broke while its process still runs (the state a killed server is in for the moment before its
 * exit is seen): the next request's write fails. That is a crash of this incarnation, not the server's answer: the
 * call restarts it and succeeds, the old process is ended, and nothing outlives the scope.
 */
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as LspConfig from "../../src/Lsp/Config.js"
import { LspClients } from "../../src/Lsp/LspClients.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { processesWithMarker, tempDir } from "../support/index.js"
import { repo } from "./support.js"

const hover = (file: string) =>
  Effect.flatMap(
    LspClients,
    (clients) =>
      clients.withFile(file, (session) =>
        session.request<{ contents: string }>("textDocument/hover", {
          textDocument: { uri: session.uri },
          position: { line: 0, character: 0 }
        }))
  )

/**
 * A workspace with one text file, served by the fake server whose pipe breaks after its first answer, with a marker
 * in its environment (to find its processes); `options` adds to its configuration.
 */
const brokenPipeServer = (prefix: string, options: Record<string, unknown>) => {
  const dir = tempDir(prefix)
  const file = path.join(dir, "notes.txt")
  fs.writeFileSync(file, "hello\n")
  const marker = `LSP_TEST_MARKER=${randomUUID()}`
  const config = LspConfig.fromJson(path.join(dir, "lsp.json"), {
    fake: {
      command: process.execPath,
      args: [path.join(repo, "test/fixtures/lsp-fake/brokenPipe.mjs")],
      extensionToLanguage: { ".txt": "plaintext" },
      env: { LSP_TEST_MARKER: marker.slice("LSP_TEST_MARKER=".length) },
      requestTimeout: 10_000,
      ...options
    }
  }, { trusted: true })
  const clients = LspClients.layer(config).pipe(
    Layer.provide(Workspace.layer({ cwd: dir }).pipe(Layer.provide(NodeContext.layer)))
  )
  return { file, marker, clients }
}

describe("a broken pipe", () => {
  it.live(
    "is a crash: the next request restarts the server and succeeds; the old process is ended",
    () =>
      Effect.gen(function*() {
        const { clients, file, marker } = brokenPipeServer("lsp-pipe-", { maxRestarts: 3 })
        yield* Effect.scoped(
          Effect.gen(function*() {
            const first = yield* hover(file)
            const [before] = yield* Effect.flatMap(LspClients, (clients) => clients.status)
            expect(first.contents).toBe(`served by ${before!.pid}`)
            // Its stdin is closed now; the process is still there.
            const second = yield* hover(file)
            const [after] = yield* Effect.flatMap(LspClients, (clients) => clients.status)
            expect(after!.restarts).toBe(1)
            expect(after!.pid).not.toBe(before!.pid)
            expect(second.contents).toBe(`served by ${after!.pid}`)
            // The broken incarnation was ended when it was replaced, not left running beside the new one.
            expect(processesWithMarker(marker)).toEqual([after!.pid])
          }).pipe(Effect.provide(clients))
        )
        expect(processesWithMarker(marker)).toEqual([])
      }),
    60_000
  )
})

describe("a server that dies at start", () => {
  it.live("fails the call with its exit and its last words on stderr", () =>
    Effect.gen(function*() {
      const dir = tempDir("lsp-dies-")
      const file = path.join(dir, "notes.txt")
      fs.writeFileSync(file, "hello\n")
      const config = LspConfig.fromJson(path.join(dir, "lsp.json"), {
        fake: {
          command: process.execPath,
          args: ["-e", "console.error('no licence for this workspace'); process.exit(3)"],
          extensionToLanguage: { ".txt": "plaintext" },
          restartOnCrash: false
        }
      }, { trusted: true })
      const workspace = Workspace.layer({ cwd: dir }).pipe(Layer.provide(NodeContext.layer))
      const error = yield* Effect.flip(hover(file)).pipe(
        Effect.provide(LspClients.layer(config).pipe(Layer.provide(workspace))),
        Effect.scoped
      )
      expect(error.reason).toBe("Start")
      expect(error.message).toContain("the fake language server did not start")
      expect(error.message).toContain("(stderr: no licence for this workspace)")
    }), 60_000)
})

describe("a call interrupted while its server starts", () => {
  it.live(
    "is not a crash: the next call starts the server again, with no restart counted",
    () =>
      Effect.gen(function*() {
        // A crash would make it unavailable for good: an interrupted start must not count as one.
        const { clients, file, marker } = brokenPipeServer("lsp-interrupted-start-", { restartOnCrash: false })
        yield* Effect.scoped(
          Effect.gen(function*() {
            // A node process takes tens of ms to start and answer initialize: interrupted in the middle of that.
            const first = yield* Effect.fork(hover(file))
            yield* Effect.sleep("10 millis")
            // Still starting then: the first call was interrupted, not answered.
            expect(Exit.isInterrupted(yield* Fiber.interrupt(first))).toBe(true)
            const second = yield* hover(file)
            const [status] = yield* Effect.flatMap(LspClients, (clients) => clients.status)
            expect(second.contents).toBe(`served by ${status!.pid}`)
            expect(status!.restarts).toBe(0)
            // The interrupted start's process was ended, not left beside the new one.
            expect(processesWithMarker(marker)).toEqual([status!.pid])
          }).pipe(Effect.provide(clients))
        )
        expect(processesWithMarker(marker)).toEqual([])
      }),
    60_000
  )
})
