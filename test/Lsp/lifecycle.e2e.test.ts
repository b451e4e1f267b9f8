/**
 * The life of a language server behind the runtime, on real servers: diagnostics after an Edit (inline and next-turn;
 * a fix clears them; unchanged ones are not repeated), a server killed mid-session restarts on the next call, past
 * `maxRestarts` the tool says the server is unavailable, and no server process outlives the scope (by marker).
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { LspClients } from "../../src/Lsp/LspClients.js"
import type { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { processesWithMarker } from "../support/index.js"
import type { RuntimeOptions } from "./support.js"
import { call, configOf, fixtureWorkspace, positionOf, runtimeLayer } from "./support.js"

const withRuntime = <A, E>(
  body: (dir: string) => Effect.Effect<A, E, ToolRuntime | LspClients>,
  options: RuntimeOptions & { readonly overrides?: Record<string, unknown> } = {}
) =>
  Effect.gen(function*() {
    const dir = fixtureWorkspace()
    const marker = `LSP_TEST_MARKER=${randomUUID()}`
    yield* Effect.scoped(
      Effect.provide(body(dir), runtimeLayer(dir, configOf(dir, marker, options.overrides), options))
    )
    // Everything the servers started is gone once the scope closed.
    expect(processesWithMarker(marker)).toEqual([])
    return marker
  })

const main = "ts/src/main.ts"
const edit = (dir: string, old_string: string, new_string: string) =>
  call("Edit", { file_path: `${dir}/${main}`, old_string, new_string })
const open = (dir: string) =>
  call("LSP", { operation: "documentSymbol", filePath: `${dir}/${main}`, line: 1, character: 1 })

describe.sequential("diagnostics after edits", () => {
  it.live(
    "inline: the edit that introduces a type error reports it; unchanged it is not repeated; a fix clears it",
    () =>
      withRuntime((dir) =>
        Effect.gen(function*() {
          expect((yield* open(dir)).status).toBe("success")
          expect((yield* call("Read", { file_path: `${dir}/${main}` })).status).toBe("success")
          const broken = yield* edit(dir, "const total: number", "const total: string")
          expect(broken.status).toBe("success")
          const at = positionOf(dir, main, "total: string")
          expect(broken.text).toContain("<new-diagnostics>The following new diagnostic issues were detected:")
          expect(broken.text).toContain(
            `ts/src/main.ts:\n  ✘ [Line ${at.line}:${at.character}] Type 'number' is not assignable to type 'string'. [2322] (typescript)`
          )
          // Another edit of the same file leaves the error as it was: it is not said again.
          const unrelated = yield* edit(dir, "`total ${total}`", "`sum ${total}`")
          expect(unrelated.status).toBe("success")
          expect(unrelated.text).not.toContain("<new-diagnostics>")
          const fixed = yield* edit(dir, "const total: string", "const total: number")
          expect(fixed.status).toBe("success")
          expect(fixed.text).not.toContain("<new-diagnostics>")
          // Gone and back: news again.
          const again = yield* edit(dir, "const total: number", "const total: string")
          expect(again.text).toContain("[2322]")
        }), { diagnostics: "inline" }),
    120_000
  )

  it.live(
    "next-turn: the edit's result comes back without them; the next call's result carries them, once",
    () =>
      withRuntime((dir) =>
        Effect.gen(function*() {
          yield* open(dir)
          yield* call("Read", { file_path: `${dir}/${main}` })
          const broken = yield* edit(dir, "const total: number", "const total: string")
          expect(broken.status).toBe("success")
          expect(broken.text).not.toContain("<new-diagnostics>")
          const next = yield* call("Read", { file_path: `${dir}/ts/src/shapes.ts` })
          expect(next.text).toContain("<new-diagnostics>")
          expect(next.text).toContain("[2322]")
          const later = yield* call("Read", { file_path: `${dir}/ts/src/shapes.ts` })
          expect(later.text).not.toContain("<new-diagnostics>")
        }), { diagnostics: "next-turn" }),
    120_000
  )

  it.live("off: nothing is appended", () =>
    withRuntime((dir) =>
      Effect.gen(function*() {
        yield* open(dir)
        yield* call("Read", { file_path: `${dir}/${main}` })
        const broken = yield* edit(dir, "const total: number", "const total: string")
        expect(broken.text).not.toContain("<new-diagnostics>")
      }), { diagnostics: "off" }), 120_000)
})

const hover = (dir: string) => {
  const at = positionOf(dir, "py/shapes.py", "total_area")
  return call("LSP", { operation: "hover", filePath: `${dir}/py/shapes.py`, line: at.line, character: at.character })
}

const killServer = Effect.gen(function*() {
  const status = yield* Effect.flatMap(LspClients, (clients) => clients.status)
  const pid = status.find((s) => s.server === "python")?.pid
  expect(pid).toBeTypeOf("number")
  process.kill(pid!, "SIGKILL")
  return pid!
})

describe.sequential("crashes", () => {
  it.live(
    "a server killed mid-session is restarted by the next call, which succeeds; none outlives the scope",
    () =>
      withRuntime((dir) =>
        Effect.gen(function*() {
          expect((yield* hover(dir)).text).toContain("def total_area")
          const killed = yield* killServer
          const after = yield* hover(dir)
          expect(after.status).toBe("success")
          expect(after.text).toContain("def total_area")
          const status = yield* Effect.flatMap(LspClients, (clients) => clients.status)
          expect(status[0]!.restarts).toBe(1)
          expect(status[0]!.pid).not.toBe(killed)
        })
      ),
    120_000
  )

  it.live(
    "after maxRestarts the tool says the server is unavailable",
    () =>
      withRuntime((dir) =>
        Effect.gen(function*() {
          yield* hover(dir)
          yield* killServer
          expect((yield* hover(dir)).status).toBe("success")
          yield* killServer
          const down = yield* hover(dir)
          expect(down.status).toBe("error")
          expect(down.text).toContain(
            "The python language server is unavailable: it stopped 2 times and its 1 restarts are used up."
          )
        }), { overrides: { maxRestarts: 1 } }),
    120_000
  )

  it.live("the servers run while the scope is open, and are gone when it closes", () =>
    Effect.gen(function*() {
      let seen = 0
      const marker = yield* withRuntime((dir) =>
        Effect.gen(function*() {
          yield* hover(dir)
          yield* open(dir)
          const status = yield* Effect.flatMap(LspClients, (clients) => clients.status)
          expect(status.map((s) => s.server).sort()).toEqual(["python", "typescript"])
          seen = status.length
        })
      )
      expect(seen).toBe(2)
      expect(processesWithMarker(marker)).toEqual([])
    }), 120_000)
})
