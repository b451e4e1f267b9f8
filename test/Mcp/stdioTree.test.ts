/**
 * A stdio MCP server dies whole: the server's launcher forks the real server and a helper that never exits by
 * itself (`fixtures/forking.mjs`, as an `npx`-launched server is several processes). Closing the servers' scope
 * leaves no process carrying the test's marker (scanned in /proc, the marker set in the server's `env`), the helper
 * included; so does a server whose launcher was killed while running. On Linux the server stays in our session, its
 * tree found by marker and parentage.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Scope } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { processesWithMarker, readPids } from "../support/index.js"
import { awaitStatus, config, pollFor, resultText, runtimeLayer, tempDir, use } from "./helpers.js"

const FORKING = path.join(import.meta.dirname, "fixtures/forking.mjs")

/** A process's session id (field 6 of `/proc/<pid>/stat`, counted after the command name). */
const sessionOf = (pid: number): number => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "latin1")
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[3])
}

/** The pid of the forking server's launcher, once it is connected. */
const connectedPid = awaitStatus((all) => {
  const state = all.find((s) => s.name === "forky")?.state
  return state?._tag === "Connected" ? state.pid : undefined
})

const forkingServer = (marker: string, pidFile: string) =>
  config({
    forky: {
      command: process.execPath,
      args: [FORKING],
      env: { ETR_MCP_TREE_TEST: marker, HELPER_PID_FILE: pidFile }
    }
  })

describe("stdio servers die whole", () => {
  it.live("closing the scope ends the launcher, the server and the helper it forked", () =>
    Effect.gen(function*() {
      const marker = randomBytes(6).toString("hex")
      const pidFile = path.join(tempDir("mcp-tree"), "helper.pid")
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(runtimeLayer(forkingServer(marker, pidFile)), scope)
      const [outcome] = yield* ToolRuntime.execute([use("mcp__forky__strict", { mode: "fast" })]).pipe(
        Effect.provide(context)
      )
      expect(resultText(outcome?.result.content)).not.toMatch(/not connected|No such tool/)
      yield* pollFor(() => readPids(pidFile, 1), 10_000)
      // The launcher, the real server and the helper.
      expect(processesWithMarker(`ETR_MCP_TREE_TEST=${marker}`).length).toBe(3)
      yield* Scope.close(scope, Exit.void)
      expect(processesWithMarker(`ETR_MCP_TREE_TEST=${marker}`)).toEqual([])
    }), 30_000)

  it.live.runIf(process.platform === "linux")(
    "on Linux a stdio server stays in our session (a session of its own is a scheduler autogroup of its own)",
    () =>
      Effect.gen(function*() {
        const marker = randomBytes(6).toString("hex")
        const pidFile = path.join(tempDir("mcp-tree"), "helper.pid")
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(runtimeLayer(forkingServer(marker, pidFile)), scope)
        const launcher = yield* connectedPid.pipe(Effect.provide(context))
        expect(sessionOf(launcher!)).toBe(sessionOf(process.pid))
        yield* Scope.close(scope, Exit.void)
        expect(processesWithMarker(`ETR_MCP_TREE_TEST=${marker}`)).toEqual([])
      }),
    30_000
  )

  it.live(
    "a launcher killed while running: its server and helper are ended when the scope closes",
    () =>
      Effect.gen(function*() {
        const marker = randomBytes(6).toString("hex")
        const pidFile = path.join(tempDir("mcp-tree"), "helper.pid")
        const scope = yield* Scope.make()
        const context = yield* Layer.buildWithScope(runtimeLayer(forkingServer(marker, pidFile)), scope)
        const launcher = yield* connectedPid.pipe(Effect.provide(context))
        yield* pollFor(() => readPids(pidFile, 1), 10_000)
        process.kill(launcher!, "SIGKILL")
        yield* Scope.close(scope, Exit.void)
        expect(processesWithMarker(`ETR_MCP_TREE_TEST=${marker}`)).toEqual([])
      }),
    30_000
  )
})
