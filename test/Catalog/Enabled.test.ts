/**
 * `isEnabled`: a tool says whether it can work now. A call to a disabled tool gets a model-readable error saying
 * why, without being decoded or run; the check is read once per run (it may look at live state); `filterEnabled`
 * is what the model-facing catalog filters on.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Ref, Schema } from "effect"
import { DiscoveredTools, requestEnabled, ToolCatalog } from "../../src/Catalog/ToolCatalog.js"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import * as Tool from "../../src/Tool/Tool.js"
import * as Search from "../../src/Tools/ToolSearch.js"

const Lookup = Tool.make("Lookup", {
  description: "test",
  input: Schema.Struct({ key: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})
const Echo = Tool.make("Echo", {
  description: "test",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

/** A tool whose server may be down: `up` is the live state, `checks` counts how often it was read. */
const setup = Effect.gen(function*() {
  const up = yield* Ref.make(false)
  const checks = yield* Ref.make(0)
  const ran = yield* Ref.make(0)
  const tools = Layer.mergeAll(
    Lookup.implement({
      isEnabled: Effect.zipRight(
        Ref.update(checks, (n) => n + 1),
        Effect.map(
          Ref.get(up),
          (isUp) => (isUp ? Tool.Availability.enabled : Tool.Availability.disabled("the lookup server is down"))
        )
      ),
      call: ({ key }) => Effect.as(Ref.update(ran, (n) => n + 1), `value of ${key}`)
    }),
    Echo.implement({ call: ({ text }) => Effect.succeed(text) })
  )
  const layer = ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Lookup, Echo]), tools)),
    Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
  )
  return { up, checks, ran, layer, tools }
})

const lookup = (id: string, input: unknown = { key: "k" }) => ({ type: "tool_use" as const, id, name: "Lookup", input })

describe("isEnabled", () => {
  it.effect("a call to a disabled tool gets an error saying why, and nothing runs (not even decoding)", () =>
    Effect.gen(function*() {
      const { layer, ran } = yield* setup
      // The input is invalid too: a disabled tool's call is refused before decoding.
      const [outcome] = yield* ToolRuntime.execute([lookup("a", { nope: 1 })]).pipe(Effect.provide(layer))
      expect(outcome!.status).toBe("error")
      expect(outcome!.error?._tag).toBe("ToolDisabled")
      expect(outcome!.result.content).toBe(
        "<tool_use_error>Lookup is not available right now: the lookup server is down. Do not call it again in this turn; use another tool or tell the user.</tool_use_error>"
      )
      expect(outcome!.result.is_error).toBe(true)
      expect(yield* Ref.get(ran)).toBe(0)
    }))

  it.effect("the check reads live state, once per run: a later run sees the server back", () =>
    Effect.gen(function*() {
      const { checks, layer, ran, up } = yield* setup
      yield* Effect.gen(function*() {
        const first = yield* ToolRuntime.execute([lookup("a"), lookup("b"), lookup("c")])
        expect(first.map((o) => o.status)).toEqual(["error", "error", "error"])
        expect(yield* Ref.get(checks)).toBe(1)
        yield* Ref.set(up, true)
        const second = yield* ToolRuntime.execute([lookup("d"), lookup("e")])
        expect(second.map((o) => o.status)).toEqual(["success", "success"])
        expect(yield* Ref.get(checks)).toBe(2)
        const one = yield* Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(lookup("f")))
        expect(one.output).toBe("value of k")
        expect(yield* Ref.get(checks)).toBe(3)
        expect(yield* Ref.get(ran)).toBe(3)
      }).pipe(Effect.provide(layer))
    }))

  it.effect("a check that dies counts as disabled", () =>
    Effect.gen(function*() {
      const Flaky = Tool.make("Flaky", { description: "test", input: Schema.Struct({}), touchesEnvironment: false })
      const layer = ToolRuntime.layer.pipe(
        Layer.provide(
          Layer.provide(
            ToolRegistry.layer([Flaky]),
            Flaky.implement({ isEnabled: Effect.die("boom"), call: () => Effect.succeed("ran") })
          )
        ),
        Layer.provide([PermissionPolicy.toolOnly, Approver.denyAll, ToolHooks.none, ResultStore.layerMemory()])
      )
      const [outcome] = yield* ToolRuntime.execute([{ type: "tool_use", id: "x", name: "Flaky", input: {} }]).pipe(
        Effect.provide(layer)
      )
      expect(outcome!.error?._tag).toBe("ToolDisabled")
      expect(outcome!.error?.message).toContain("its availability check failed")
    }))

  it("tools that say nothing are always enabled, and their check is never run", () => {
    expect(Echo.service({ call: ({ text }) => Effect.succeed(text) }).isEnabled).toBe(Tool.alwaysEnabled)
  })

  it.effect("filterEnabled: what the model is shown leaves disabled tools out, in order, and follows live state", () =>
    Effect.gen(function*() {
      const { tools, up } = yield* setup
      const registry = yield* ToolRegistry.pipe(
        Effect.provide(Layer.provide(ToolRegistry.layer([Lookup, Echo]), tools))
      )
      expect((yield* Tool.filterEnabled(registry.tools)).map((t) => t.definition.name)).toEqual(["Echo"])
      yield* Ref.set(up, true)
      expect((yield* Tool.filterEnabled(registry.tools)).map((t) => t.definition.name)).toEqual(["Lookup", "Echo"])
    }))
})

/** A tool that works, and one whose server is down until `up` is set; `Down` deferred when asked. */
const upAndDown = (loading: Tool.Loading) =>
  Effect.gen(function*() {
    const Up = Tool.make("Up", { description: "works", input: Schema.Struct({}), touchesEnvironment: false })
    const Down = Tool.make("Down", {
      description: "its server is down",
      input: Schema.Struct({}),
      touchesEnvironment: false,
      loading
    })
    const up = yield* Ref.make(false)
    const tools = Layer.mergeAll(
      Up.implement({ call: () => Effect.succeed("up") }),
      Down.implement({
        isEnabled: Effect.map(
          Ref.get(up),
          (isUp) => (isUp ? Tool.Availability.enabled : Tool.Availability.disabled("the server is down"))
        ),
        call: () => Effect.succeed("down")
      })
    )
    return { Up, Down, up, tools }
  })

describe("disabled tools are left out of the definitions", () => {
  it.effect("requestEnabled sends and announces only the tools whose isEnabled says so, and follows live state", () =>
    Effect.gen(function*() {
      const { Down, tools, Up, up } = yield* upAndDown("eager")
      const names = Effect.map(requestEnabled("anthropic"), (request) => request.included)
      const layer = Layer.mergeAll(ToolRegistry.layer([Up, Down]), ToolCatalog.layer([Up, Down])).pipe(
        Layer.provide(tools),
        Layer.provide(DiscoveredTools.layer())
      )
      const [before, after] = yield* Effect.gen(function*() {
        const before = yield* names
        yield* Ref.set(up, true)
        return [before, yield* names] as const
      }).pipe(Effect.provide(layer))
      expect(before).toEqual(["Up"])
      expect(after).toEqual(["Up", "Down"])
    }))
})

describe("ToolSearch is sent only while a deferred tool could be found", () => {
  it.effect("the only deferred tool disabled: no ToolSearch and no announcement; enabled again: both", () =>
    Effect.gen(function*() {
      const { Down, tools, Up, up } = yield* upAndDown("deferred")
      const layer = Search.catalogLayer([Up, Down]).pipe(Layer.provide([tools, DiscoveredTools.layer()]))
      const [down, back] = yield* Effect.gen(function*() {
        const down = yield* requestEnabled("anthropic")
        yield* Ref.set(up, true)
        return [down, yield* requestEnabled("anthropic")] as const
      }).pipe(Effect.provide(layer))
      expect(down.included).toEqual(["Up"])
      expect(down.deferred).toEqual([])
      expect(down.announcement).toBeUndefined()
      expect(back.included).toEqual(["Up", "ToolSearch"])
      expect(back.deferred).toEqual(["Down"])
    }))

  it.effect("every deferred tool disabled: ToolSearch is not sent and nothing is announced", () =>
    Effect.gen(function*() {
      const { Down, tools, up } = yield* upAndDown("deferred")
      const layer = Search.catalogLayer([Down]).pipe(Layer.provide([tools, DiscoveredTools.layer()]))
      const [down, back] = yield* Effect.gen(function*() {
        const down = yield* requestEnabled("anthropic")
        yield* Ref.set(up, true)
        return [down, yield* requestEnabled("anthropic")] as const
      }).pipe(Effect.provide(layer))
      expect(down.included).toEqual([])
      expect(down.announcement).toBeUndefined()
      expect(back.included).toEqual(["ToolSearch"])
      expect(back.deferred).toEqual(["Down"])
    }))
})

describe("disabled tools are not found by ToolSearch", () => {
  it.effect("after a request that left a tool out, searching for it finds nothing; once it is back, it is found", () =>
    Effect.gen(function*() {
      const { Down, tools, Up, up } = yield* upAndDown("deferred")
      const layer = Search.catalogLayer([Up, Down]).pipe(Layer.provide([tools, DiscoveredTools.layer()]))
      const found = yield* Effect.gen(function*() {
        const registry = yield* ToolRegistry
        const searchTool = Option.getOrThrow(registry.lookup("ToolSearch")).service
        const context = {
          toolUseId: "s",
          toolName: "ToolSearch",
          progress: () => Effect.void,
          isReadDenied: () => false
        }
        const select = Effect.scoped(
          searchTool.plan({ query: "select:Down", max_results: 5 }).call(context)
        ) as Effect.Effect<{ readonly found: ReadonlyArray<string> }>
        yield* requestEnabled("anthropic")
        const whileDown = (yield* select).found
        yield* Ref.set(up, true)
        yield* requestEnabled("anthropic")
        return [whileDown, (yield* select).found] as const
      }).pipe(Effect.provide(layer))
      expect(found).toEqual([[], ["Down"]])
    }))
})
