import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Ref, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Definitions from "../../src/Catalog/Definitions.js"
import {
  announcement,
  DiscoveredTools,
  notLoadedMessage,
  parseSearchMode,
  ToolCatalog
} from "../../src/Catalog/ToolCatalog.js"
import type { CatalogOptions } from "../../src/Catalog/ToolCatalog.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { Workspace } from "../../src/Session/Workspace.js"
import * as Tool from "../../src/Tool/Tool.js"
import { ToolResultContent } from "../../src/Tool/Wire.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"
import { Edit } from "../../src/Tools/FileTools.js"
import { catalogLayer } from "../../src/Tools/ToolSearch.js"

const use = (name: string, input: unknown, id = "toolu_1"): ToolUseBlock => ({ type: "tool_use", id, name, input })

const Clock = Tool.make("Clock", {
  description: "The current time.",
  input: Schema.Struct({}),
  output: Schema.String,
  touchesEnvironment: false
})
const Forecast = Tool.make("mcp__weather__get_forecast", {
  description: "Weather forecast for a city, for the next days.",
  input: Schema.Struct({ city: Schema.String, days: Schema.Int.pipe(Schema.between(1, 7)) }),
  output: Schema.String,
  loading: "deferred",
  touchesEnvironment: false
})
const Alerts = Tool.make("mcp__weather__list_alerts", {
  description: "Severe weather alerts in a region.",
  input: Schema.Struct({ region: Schema.String }),
  output: Schema.String,
  loading: "deferred",
  touchesEnvironment: false
})
const Deploy = Tool.make("mcp__ops__deploy", {
  description: "Deploys a service to production.",
  input: Schema.Struct({ service: Schema.String }),
  output: Schema.String,
  loading: "deferred",
  touchesEnvironment: true
})

const tools = [Clock, Forecast, Alerts, Deploy] as const

/** The tools' behaviour; every call is logged, so a test can show what ran. */
const toolLayers = (ran: Ref.Ref<ReadonlyArray<string>>) =>
  Layer.mergeAll(
    Clock.implement({ call: () => Effect.as(Ref.update(ran, (names) => [...names, "Clock"]), "12:00") }),
    Forecast.implement({
      call: ({ city, days }) =>
        Effect.as(Ref.update(ran, (names) => [...names, "Forecast"]), `${city}: sunny for ${days} days`)
    }),
    Alerts.implement({ call: () => Effect.as(Ref.update(ran, (names) => [...names, "Alerts"]), "none") }),
    Deploy.implement({
      checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
      call: () => Effect.as(Ref.update(ran, (names) => [...names, "Deploy"]), "deployed")
    })
  )

/** A session: the gated registry, the catalogue and the runtime, over a discovered set the test keeps. */
const session = (
  ran: Ref.Ref<ReadonlyArray<string>>,
  discovered: Ref.Ref<ReadonlySet<string>>,
  options: CatalogOptions = {},
  policy: Layer.Layer<PermissionPolicy> = PermissionPolicy.toolOnly,
  approver: Layer.Layer<Approver> = Approver.denyAll
) => {
  const catalog = catalogLayer(tools, options).pipe(
    Layer.provide([toolLayers(ran), Layer.succeed(DiscoveredTools, DiscoveredTools.fromRef(discovered))])
  )
  return ToolRuntime.layer.pipe(
    Layer.provideMerge(catalog),
    Layer.provide([policy, approver, ToolHooks.none, ResultStore.layerMemory()])
  )
}

const withSession = <A, E>(
  body: (
    refs: { ran: Ref.Ref<ReadonlyArray<string>>; discovered: Ref.Ref<ReadonlySet<string>> }
  ) => Effect.Effect<A, E, ToolRuntime | ToolCatalog>,
  options: CatalogOptions = {}
) =>
  Effect.gen(function*() {
    const ran = yield* Ref.make<ReadonlyArray<string>>([])
    const discovered = yield* Ref.make<ReadonlySet<string>>(new Set())
    return yield* body({ ran, discovered }).pipe(Effect.provide(session(ran, discovered, options)))
  })

describe("ToolCatalog: what the model sees", () => {
  it.effect("mode on: eager and always tools in full, deferred ones only announced by name", () =>
    withSession(() =>
      Effect.gen(function*() {
        const request = yield* ToolCatalog.request("anthropic")
        expect(request.included).toEqual(["Clock", "ToolSearch"])
        expect(request.deferred).toEqual([
          "mcp__weather__get_forecast",
          "mcp__weather__list_alerts",
          "mcp__ops__deploy"
        ])
        expect(request.announcement).toBe([
          "<system-reminder>",
          "The following deferred tools are available but not loaded yet: their definitions are not in your tool list. Before calling one, load it with ToolSearch: query \"select:<name>\" loads tools by name (comma-separated), \"mcp__<server>\" lists a server's tools, and keywords search names and descriptions. A line \"mcp__<server>__: a, b\" lists the tools mcp__<server>__a and mcp__<server>__b.",
          "mcp__weather__: get_forecast, list_alerts",
          "mcp__ops__deploy",
          "</system-reminder>"
        ].join("\n"))
        expect(request.estimatedTokens).toBe(
          Definitions.estimateTokens(request.tools) + Definitions.estimateTokens(request.announcement!)
        )
        const catalog = yield* ToolCatalog
        expect(catalog.deferring).toBe(true)
      })
    ))

  it.effect("mode off: every tool in full, nothing announced, no ToolSearch, and deferred tools can be called", () =>
    withSession(({ ran }) =>
      Effect.gen(function*() {
        const request = yield* ToolCatalog.request("openai-responses")
        // Nothing waits behind the search tool, so it is not sent (as Claude Code does).
        expect(request.included).toEqual([
          "Clock",
          "mcp__weather__get_forecast",
          "mcp__weather__list_alerts",
          "mcp__ops__deploy"
        ])
        expect(request.announcement).toBeUndefined()
        const [outcome] = yield* ToolRuntime.execute([use("mcp__weather__get_forecast", { city: "Oslo", days: 2 })])
        expect(outcome!.status).toBe("success")
        expect(yield* Ref.get(ran)).toEqual(["Forecast"])
      }), { mode: "off" }))

  it.effect("mode auto:N defers only when the deferred definitions exceed N% of the context window", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const discovered = yield* Ref.make<ReadonlySet<string>>(new Set())
      const deferredTokens = [Forecast, Alerts, Deploy].reduce(
        (sum, tool) => sum + Definitions.estimateTokens(Definitions.anthropic(tool.definition)),
        0
      )
      // 10% of a window just above / below ten times the deferred tokens.
      const under = yield* Effect.provide(
        ToolCatalog,
        session(ran, discovered, { mode: { auto: 10 }, contextWindow: deferredTokens * 10 + 10 })
      )
      const over = yield* Effect.provide(
        ToolCatalog,
        session(ran, discovered, { mode: { auto: 10 }, contextWindow: deferredTokens * 10 - 10 })
      )
      expect(under.deferredTokens).toBe(deferredTokens)
      expect(under.deferring).toBe(false)
      expect((yield* under.request("anthropic")).deferred).toEqual([])
      expect(over.deferring).toBe(true)
      expect((yield* over.request("anthropic")).deferred).toHaveLength(3)
    }))

  it("parses the search mode as ENABLE_TOOL_SEARCH spells it", () => {
    expect(parseSearchMode("")).toEqual(Either.right("on"))
    expect(parseSearchMode("true")).toEqual(Either.right("on"))
    expect(parseSearchMode("off")).toEqual(Either.right("off"))
    expect(parseSearchMode("false")).toEqual(Either.right("off"))
    expect(parseSearchMode("auto")).toEqual(Either.right({ auto: 10 }))
    expect(parseSearchMode("auto:25")).toEqual(Either.right({ auto: 25 }))
    expect(Either.isLeft(parseSearchMode("auto:150"))).toBe(true)
    expect(Either.isLeft(parseSearchMode("sometimes"))).toBe(true)
  })
})

describe("requests between changes", () => {
  it.effect("an unchanged request is the same answer; a discovery or another provider makes a new one", () =>
    withSession(() =>
      Effect.gen(function*() {
        const first = yield* ToolCatalog.request("anthropic")
        expect(yield* ToolCatalog.request("anthropic")).toBe(first)
        const openai = yield* ToolCatalog.request("openai-chat")
        expect(openai).not.toBe(first)
        yield* ToolRuntime.execute([use("ToolSearch", { query: "select:mcp__ops__deploy" })])
        const after = yield* ToolCatalog.request("anthropic")
        expect(after).not.toBe(first)
        expect(after.included).toContain("mcp__ops__deploy")
        expect(first.included).not.toContain("mcp__ops__deploy")
      })
    ))
})

describe("the discovered set across turns", () => {
  it.effect("turn 1 searches, turn 2 sees the tool's definition and calls it", () =>
    withSession(({ discovered, ran }) =>
      Effect.gen(function*() {
        // Turn 1: the model asks for the forecast tool.
        const [search] = yield* ToolRuntime.execute([use("ToolSearch", { query: "weather forecast" })])
        expect(search!.status).toBe("success")
        const content = search!.result.content
        expect(Schema.is(ToolResultContent)(content)).toBe(true)
        expect(content).toEqual([
          { type: "tool_reference", tool_name: "mcp__weather__get_forecast" },
          { type: "tool_reference", tool_name: "mcp__weather__list_alerts" }
        ])
        expect([...(yield* Ref.get(discovered))]).toEqual(["mcp__weather__get_forecast", "mcp__weather__list_alerts"])
        // Turn 2's request: the found tools are in `tools` (Anthropic: defer_loading, expanded by the reference).
        const anthropic = yield* ToolCatalog.request("anthropic")
        expect(anthropic.included).toEqual([
          "Clock",
          "mcp__weather__get_forecast",
          "mcp__weather__list_alerts",
          "ToolSearch"
        ])
        expect(anthropic.deferred).toEqual(["mcp__ops__deploy"])
        const forecast = (anthropic.tools as ReadonlyArray<Definitions.AnthropicTool>).find((tool) =>
          tool.name === "mcp__weather__get_forecast"
        )
        expect(forecast?.defer_loading).toBe(true)
        const openai = yield* ToolCatalog.request("openai-chat")
        expect((openai.tools as ReadonlyArray<Definitions.OpenAiChatTool>).map((tool) => tool.function.name)).toEqual(
          anthropic.included
        )
        const [call] = yield* ToolRuntime.execute([
          use("mcp__weather__get_forecast", { city: "Oslo", days: 3 }, "toolu_2")
        ])
        expect(call!.result.content).toBe("Oslo: sunny for 3 days")
        expect(yield* Ref.get(ran)).toEqual(["Forecast"])
      })
    ))

  it.effect("the set belongs to the session: a restored set carries over to a new runtime", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const discovered = yield* Ref.make<ReadonlySet<string>>(new Set())
      yield* ToolRuntime.execute([use("ToolSearch", { query: "select:mcp__ops__deploy" })]).pipe(
        Effect.provide(session(ran, discovered))
      )
      const saved = [...(yield* Ref.get(discovered))]
      expect(saved).toEqual(["mcp__ops__deploy"])
      // A new process restores the saved names.
      const request = yield* ToolCatalog.request("gemini").pipe(
        Effect.provide(catalogLayer(tools).pipe(Layer.provide([toolLayers(ran), DiscoveredTools.layer(saved)])))
      )
      expect(request.included).toContain("mcp__ops__deploy")
    }))
})

describe("a deferred tool that was never loaded", () => {
  it.effect("gets a model-readable error telling it to load the tool first, and never runs", () =>
    withSession(({ ran }) =>
      Effect.gen(function*() {
        const [valid, invalid] = yield* ToolRuntime.execute([
          use("mcp__weather__get_forecast", { city: "Oslo", days: 2 }, "t1"),
          // The model has not seen the schema: the load-first error comes before any input error.
          use("mcp__weather__get_forecast", { town: "Oslo" }, "t2")
        ])
        const text = `<tool_use_error>${notLoadedMessage("mcp__weather__get_forecast")}</tool_use_error>`
        expect(valid!.status).toBe("error")
        expect(valid!.result).toEqual({ type: "tool_result", tool_use_id: "t1", content: text, is_error: true })
        expect(invalid!.result.content).toBe(text)
        expect(text).toContain("query \"select:mcp__weather__get_forecast\"")
        expect(yield* Ref.get(ran)).toEqual([])
      })
    ))
})

describe("deny rules and permissions", () => {
  const workspaceDir = fs.mkdtempSync(path.join(os.tmpdir(), "catalog-"))
  const rules = { deny: ["mcp__weather"], ask: ["mcp__ops__deploy"] }
  const denies = RulePolicy.wholeToolDenial({ cliRules: rules })
  const policy = RulePolicy.layer({ cliRules: rules }).pipe(
    Layer.provide(Workspace.layer({ cwd: workspaceDir, home: workspaceDir })),
    Layer.provide(NodeContext.layer),
    Layer.orDie
  )

  it("wholeToolDenial follows the policy: a server-wide deny removes its tools; content rules and asks remove nothing", () => {
    expect(denies(Forecast.definition)).toBe(true)
    expect(denies(Alerts.definition)).toBe(true)
    expect(denies(Deploy.definition)).toBe(false)
    expect(denies(Clock.definition)).toBe(false)
    expect(RulePolicy.wholeToolDenial({ cliRules: { deny: ["Clock(12:00)"] } })(Clock.definition)).toBe(false)
    expect(RulePolicy.wholeToolDenial({ cliRules: { deny: ["Clock(*)"] } })(Clock.definition)).toBe(true)
  })

  it.effect("a denied tool is never sent, announced or found; a call to it is denied by the policy with the rule", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const discovered = yield* Ref.make<ReadonlySet<string>>(new Set())
      yield* Effect.gen(function*() {
        const request = yield* ToolCatalog.request("anthropic")
        expect(request.included).toEqual(["Clock", "ToolSearch"])
        expect(request.deferred).toEqual(["mcp__ops__deploy"])
        expect(request.announcement).not.toContain("weather")
        const [bySelect, byWords, byPrefix] = yield* ToolRuntime.execute([
          use("ToolSearch", { query: "select:mcp__weather__get_forecast" }, "s1"),
          use("ToolSearch", { query: "weather forecast city" }, "s2"),
          use("ToolSearch", { query: "mcp__weather" }, "s3")
        ])
        for (const outcome of [bySelect, byWords, byPrefix]) {
          expect(JSON.stringify(outcome!.result.content)).not.toContain("tool_reference")
          expect(outcome!.result.content).toMatch(/^No tools matched/)
        }
        expect((yield* Ref.get(discovered)).size).toBe(0)
        const [direct] = yield* ToolRuntime.execute([
          use("mcp__weather__get_forecast", { city: "Oslo", days: 1 }, "c1")
        ])
        expect(direct!.status).toBe("denied")
        expect(direct!.result.content).toContain("mcp__weather")
        expect(yield* Ref.get(ran)).toEqual([])
      }).pipe(Effect.provide(session(ran, discovered, { denies }, policy)))
    }))

  it.effect("deferral is not a permission boundary: a found tool still meets its ask rule and the approver", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const discovered = yield* Ref.make<ReadonlySet<string>>(new Set())
      yield* Effect.gen(function*() {
        const [found] = yield* ToolRuntime.execute([use("ToolSearch", { query: "deploy production" }, "s1")])
        expect(found!.result.content).toEqual([{ type: "tool_reference", tool_name: "mcp__ops__deploy" }])
        const [call] = yield* ToolRuntime.execute([use("mcp__ops__deploy", { service: "api" }, "c1")])
        // The ask rule sent it to the approver, which (denyAll) said no.
        expect(call!.status).toBe("denied")
        expect(call!.decision?._tag).toBe("Deny")
        expect(call!.decision?.reason._tag).toBe("User")
        expect(yield* Ref.get(ran)).toEqual([])
      }).pipe(Effect.provide(session(ran, discovered, { denies }, policy, Approver.denyAll)))
    }))
})

describe("strict OpenAI inputs", () => {
  it.effect("restoreOmitted turns a strict model's nulls for optional parameters back into absent ones", () =>
    Effect.gen(function*() {
      const catalog = yield* ToolCatalog
      const strict = (yield* catalog.request("openai-responses")).tools as ReadonlyArray<
        Definitions.OpenAiResponsesTool
      >
      expect(strict[0]!.parameters["required"]).toEqual(["file_path", "old_string", "new_string", "replace_all"])
      const toolUse = use("Edit", { file_path: "/a", old_string: "x", new_string: "y", replace_all: null })
      expect(catalog.restoreOmitted(toolUse)).toEqual(
        use("Edit", { file_path: "/a", old_string: "x", new_string: "y" })
      )
      expect(catalog.restoreOmitted(use("Nope", { a: null }))).toEqual(use("Nope", { a: null }))
    }).pipe(Effect.provide(ToolCatalog.layer([Edit]).pipe(Layer.provide(DiscoveredTools.layer())))))
})

describe("announcement", () => {
  it("lists plain names in full and an MCP server's tools once under its prefix, in first-seen order", () => {
    expect(announcement(["Alpha", "mcp__a_b__x", "mcp__c__y", "mcp__a_b__z-1", "mcp__odd__"]).split("\n").slice(2, -1))
      .toEqual([
        "Alpha",
        "mcp__a_b__: x, z-1",
        "mcp__c__y",
        "mcp__odd__"
      ])
    // Without a group of two, the explanation of the grouped form is left out.
    expect(announcement(["Alpha", "mcp__c__y"])).not.toContain("A line")
  })

  it("names the search tool it was given", () => {
    expect(announcement(["a"], "FindTools")).toContain("load it with FindTools")
    expect(notLoadedMessage("a", "FindTools")).toBe(
      "a is a deferred tool that has not been loaded: its definition is not in your tool list yet. Load it first by calling FindTools with query \"select:a\", then call a again."
    )
  })
})
