/**
 * `McpServe.connection` as a library, over the SDK's in-memory transport with a registry of the test's own: the
 * static hints of a pure tool, `notifications/tools/list_changed` when a tool appears, and a cancel that stops one
 * call (its Scope closed) while a sibling running beside it still answers.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { CallToolResultSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Effect, Exit, Fiber, Layer, Schema, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeDynamicRegistry, ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import type { RegisteredTool } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import * as McpServe from "../../src/Mcp/McpServe.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import * as Tool from "../../src/Tool/Tool.js"

const Echo = Tool.make("Echo", {
  description: "Echoes its text.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const Wait = Tool.make("Wait", {
  description: "Waits until its gate opens.",
  input: Schema.Struct({ label: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

const until = async (what: string, check: () => boolean): Promise<void> => {
  for (let i = 0; i < 2_000 && !check(); i++) await new Promise((resolve) => setImmediate(resolve))
  if (!check()) throw new Error(`gave up waiting for ${what}`)
}

const setup = Effect.gen(function*() {
  const started: Array<string> = []
  const closed: Array<string> = []
  const gate = yield* Deferred.make<void>()
  const implementations = Layer.mergeAll(
    Echo.implement({
      traits: () => ({ readOnly: true, concurrencySafe: true }),
      call: ({ text }) => Effect.succeed(text)
    }),
    Wait.implement({
      traits: () => ({ readOnly: true, concurrencySafe: true }),
      call: ({ label }) =>
        Effect.zipRight(
          Effect.addFinalizer(() => Effect.sync(() => void closed.push(label))),
          Effect.zipRight(Effect.sync(() => void started.push(label)), Effect.as(Deferred.await(gate), label))
        )
    })
  )
  const base = yield* ToolRegistry.pipe(
    Effect.provide(ToolRegistry.layer([Echo, Wait]).pipe(Layer.provide(implementations)))
  )
  let tools: ReadonlyArray<RegisteredTool> = base.tools
  const registry = makeDynamicRegistry(() => tools)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const services = Layer.mergeAll(
    Layer.succeed(ToolRegistry, registry),
    PermissionPolicy.toolOnly,
    ToolHooks.none,
    Approver.denyAll,
    ResultStore.layerMemory()
  )
  const scope = yield* Scope.make()
  const served = yield* McpServe.connection(serverSide, { listCheckMs: 10 }).pipe(
    Effect.provide(services),
    Effect.provideService(Scope.Scope, scope),
    Effect.forkDaemon
  )
  const client = new Client({ name: "test", version: "1.0.0" })
  yield* Effect.promise(() => client.connect(clientSide))
  const close = Effect.zipRight(Effect.promise(() => client.close()), Scope.close(scope, Exit.void)).pipe(
    Effect.zipRight(Fiber.interrupt(served))
  )
  return {
    client,
    started,
    closed,
    gate,
    close,
    addTool: (tool: RegisteredTool) => void (tools = [...tools, tool]),
    echo: base.tools[0]!
  }
})

describe("McpServe.connection", () => {
  it("lists a pure tool as read-only, idempotent and closed-world", async () => {
    const { client, close } = await Effect.runPromise(setup)
    try {
      const { tools } = await client.listTools()
      expect(tools.map((tool) => tool.name)).toEqual(["Echo", "Wait"])
      expect(tools[0]!.annotations).toEqual({
        title: "Echo",
        readOnlyHint: true,
        destructiveHint: false,
        idempotentHint: true,
        openWorldHint: false
      })
      expect(tools[0]!.inputSchema).toMatchObject({ type: "object", required: ["text"] })
    } finally {
      await Effect.runPromise(close)
    }
  })

  it("tells the client when the tool set changes", async () => {
    const { addTool, client, close, echo } = await Effect.runPromise(setup)
    try {
      await client.listTools()
      const changed = new Promise<void>((resolve) =>
        client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve())
      )
      const Extra = Tool.make("Extra", { description: "More.", input: Schema.Struct({}), touchesEnvironment: false })
      addTool({ definition: Extra.definition, service: echo.service })
      await changed
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["Echo", "Wait", "Extra"])
    } finally {
      await Effect.runPromise(close)
    }
  })

  it("a cancel stops its call (scope closed) and a sibling running beside it still answers", async () => {
    const { client, close, closed, gate, started } = await Effect.runPromise(setup)
    try {
      const controller = new AbortController()
      const cancelled = client.callTool({ name: "Wait", arguments: { label: "a" } }, CallToolResultSchema, {
        signal: controller.signal
      })
      const sibling = client.callTool({ name: "Wait", arguments: { label: "b" } })
      // Both are running (parallel: read-only, concurrency-safe) before the cancel.
      await until("both calls to start", () => started.length === 2)
      controller.abort("no longer needed")
      await expect(cancelled).rejects.toThrow()
      await until("the cancelled call's scope to close", () => closed.length === 1)
      expect(closed).toEqual(["a"])
      const echo = await client.callTool({ name: "Echo", arguments: { text: "still here" } })
      expect(echo.content).toEqual([{ type: "text", text: "still here" }])
      await Effect.runPromise(Deferred.succeed(gate, undefined))
      expect((await sibling).content).toEqual([{ type: "text", text: "b" }])
      expect(closed).toEqual(["a", "b"])
    } finally {
      await Effect.runPromise(close)
    }
  })
})
