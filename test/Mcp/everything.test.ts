/**
 * MCP tools from the real reference server (server-everything over stdio) through the whole runtime: listing,
 * calls, progress, structured content, images, input errors, annotations and claims.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { McpServers } from "../../src/Mcp/McpServers.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { config, everythingEntry, resultText, runtimeLayer, use } from "./helpers.js"

const ECHO = "mcp__everything__echo"

describe("server-everything over stdio", () => {
  const layer = runtimeLayer(config({ everything: everythingEntry() }), { allow: ["mcp__everything"] })

  it.live("lists the server's tools as deferred tools named mcp__<server>__<tool>", () =>
    Effect.gen(function*() {
      const registry = yield* ToolRegistry
      const names = registry.tools.map((tool) => tool.definition.name)
      expect(names).toContain(ECHO)
      expect(names).toContain("mcp__everything__trigger-long-running-operation")
      const echo = registry.lookup(ECHO)
      expect(echo._tag).toBe("Some")
      if (echo._tag === "Some") {
        expect(echo.value.definition.loading).toBe("deferred")
        expect(echo.value.definition.description).toBe("Echoes back the input string")
      }
      const status = yield* (yield* McpServers).status
      expect(status[0]?.state._tag).toBe("Connected")
    }).pipe(Effect.provide(layer)), 30_000)

  it.live("echo runs through the runtime and answers with the server's text", () =>
    Effect.gen(function*() {
      const [outcome] = yield* ToolRuntime.execute([use(ECHO, { message: "hello mcp" })])
      expect(outcome?.status).toBe("success")
      expect(resultText(outcome?.result.content)).toBe("Echo: hello mcp")
      expect(outcome?.decision?._tag).toBe("Allow")
    }).pipe(Effect.provide(layer)), 30_000)

  it.live(
    "a wrong input is refused before the server sees it, in the built-in tools' words",
    () =>
      Effect.gen(function*() {
        const [missing, wrongType, unexpected] = yield* ToolRuntime.execute([
          use(ECHO, {}),
          use(ECHO, { message: 42 }),
          use("mcp__everything__get-sum", { a: 1, b: 2, c: 3 })
        ])
        expect(missing?.result.content).toBe(
          "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe required parameter `message` is missing</tool_use_error>"
        )
        expect(wrongType?.result.content).toBe(
          "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe parameter `message` type is expected as `string` but provided as `number`</tool_use_error>"
        )
        // server-everything's zod schemas do not forbid extra keys: a third parameter passes through to the server.
        expect(unexpected?.status).toBe("success")
      }).pipe(Effect.provide(layer)),
    30_000
  )

  it.live("structured content is sent as JSON text", () =>
    Effect.gen(function*() {
      const [outcome] = yield* ToolRuntime.execute([
        use("mcp__everything__get-structured-content", { location: "New York" })
      ])
      expect(outcome?.status).toBe("success")
      const parsed = JSON.parse(resultText(outcome?.result.content)) as Record<string, unknown>
      expect(Object.keys(parsed).sort()).toEqual(["conditions", "humidity", "temperature"])
    }).pipe(Effect.provide(layer)), 30_000)

  it.live("an image becomes an image block of the tool_result", () =>
    Effect.gen(function*() {
      const [outcome] = yield* ToolRuntime.execute([use("mcp__everything__get-tiny-image", {})])
      expect(outcome?.status).toBe("success")
      const content = outcome?.result.content
      expect(Array.isArray(content)).toBe(true)
      const image = (content as ReadonlyArray<{ type: string; source?: { media_type: string; data: string } }>).find((
        b
      ) => b.type === "image")
      expect(image?.source?.media_type).toBe("image/png")
      expect(Buffer.from(image!.source!.data, "base64").subarray(1, 4).toString("latin1")).toBe("PNG")
    }).pipe(Effect.provide(layer)), 30_000)

  it.live("resource links are described in text", () =>
    Effect.gen(function*() {
      const [outcome] = yield* ToolRuntime.execute([use("mcp__everything__get-resource-links", { count: 2 })])
      expect(outcome?.status).toBe("success")
      expect(resultText(outcome?.result.content)).toMatch(/\[resource link .+ demo:\/\/resource\//)
    }).pipe(Effect.provide(layer)), 30_000)

  it.live("a long-running operation reports progress events while it runs", () =>
    Effect.gen(function*() {
      const handle = yield* ToolRuntime.start([
        use("mcp__everything__trigger-long-running-operation", { duration: 0.6, steps: 3 })
      ])
      const events = yield* Stream.runCollect(handle.events)
      const outcomes = yield* handle.await
      expect(outcomes[0]?.status).toBe("success")
      const progress = [...events].flatMap((event) => (event._tag === "Progress" ? [event.progress] : []))
      // The last notification may be lost over stdio (the result is the completion): at least the first two arrive.
      expect(progress.length).toBeGreaterThanOrEqual(2)
      expect(progress[0]?.fraction).toBeCloseTo(1 / 3)
      expect(progress[0]?.message).toBe("1/3")
    }).pipe(Effect.scoped, Effect.provide(layer)), 30_000)
})

describe("annotations", () => {
  const claimsAndTraits = Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const echo = registry.lookup(ECHO)
    if (echo._tag === "None") return yield* Effect.die("no echo")
    return {
      traits: echo.value.service.plan({ message: "x" }).traits,
      claims: echo.value.service.plan({ message: "x" }).claims
    }
  })
  const registryOf = (trusted: boolean) => {
    return runtimeLayer(config({ everything: everythingEntry() }, trusted ? { trustAnnotations: ["everything"] } : {}))
  }

  it.live(
    "an untrusted server's readOnlyHint is ignored: not read-only, and its calls claim the server exclusively",
    () =>
      Effect.gen(function*() {
        const { claims, traits } = yield* claimsAndTraits
        expect(traits).toEqual({
          readOnly: false,
          concurrencySafe: false,
          destructive: true,
          openWorld: true,
          idempotent: false
        })
        expect(claims).toEqual([{ resource: "mcp:everything", access: "write" }])
      }).pipe(Effect.provide(registryOf(false))),
    30_000
  )

  it.live("a trusted server's read-only tool claims the server for reading", () =>
    Effect.gen(function*() {
      const { claims, traits } = yield* claimsAndTraits
      // Trusted, its idempotentHint counts too (a durable turn may run its call again).
      expect(traits).toEqual({
        readOnly: true,
        concurrencySafe: true,
        destructive: false,
        openWorld: false,
        idempotent: true
      })
      expect(claims).toEqual([{ resource: "mcp:everything", access: "read" }])
    }).pipe(Effect.provide(registryOf(true))), 30_000)

  it.live(
    "a trusted read-only annotation never grants permission: without a rule the person is asked, with the tool's rule suggested",
    () =>
      Effect.gen(function*() {
        const [outcome] = yield* ToolRuntime.execute([use(ECHO, { message: "ask me" })])
        expect(outcome?.status).toBe("success")
        expect(outcome?.decision?.reason._tag).toBe("User")
      }).pipe(
        Effect.provide(runtimeLayer(config({ everything: everythingEntry() }, { trustAnnotations: ["everything"] }), {
          approver: Approver.scripted((request) =>
            Effect.succeed(
              request.suggestions.includes(ECHO)
                ? ApprovalAnswer.AllowOnce()
                : ApprovalAnswer.Deny({ message: "no suggestion", cancelRun: false })
            )
          )
        }))
      ),
    30_000
  )
})
