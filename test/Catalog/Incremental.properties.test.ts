/**
 * The catalogue keeps what it knows of its tools between requests and updates it for the tools that arrive and leave
 * (and the registry under it its name index). Whatever the sequence of arrivals, departures, moves, discoveries and
 * disabled tools, each request must be the one computed from scratch: the oracle below says, in plain words, what a
 * request is for a list of tools, a discovered set and what is enabled.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Option, Schema } from "effect"
import * as Definitions from "../../src/Catalog/Definitions.js"
import { DiscoveredTools, ToolCatalog } from "../../src/Catalog/ToolCatalog.js"
import type { CatalogOptions, CatalogRequest, SearchMode } from "../../src/Catalog/ToolCatalog.js"
import { makeDynamicRegistry, ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import type { RegisteredTool } from "../../src/Catalog/ToolRegistry.js"
import * as Tool from "../../src/Tool/Tool.js"

// ---------------------------------------------------------------------------------------------------------------
// the tools
// ---------------------------------------------------------------------------------------------------------------

const tool = (
  name: string,
  loading: Tool.Loading,
  input: Schema.Schema.AnyNoContext = Schema.Struct({ path: Schema.String }),
  aliases: ReadonlyArray<string> = []
): RegisteredTool => {
  const definition = Tool.make(name, { description: `The ${name} tool.`, input, loading, aliases }).definition
  return {
    definition,
    service: Tool.serviceFrom(name, {
      checkPermissions: () => Effect.succeed({ _tag: "Passthrough" }),
      call: () => Effect.void
    })
  }
}

/** Names as the catalogue meets them: servers' tools under their prefixes, plain names, odd prefixes, aliases. */
const pool: ReadonlyArray<RegisteredTool> = [
  tool("ToolSearch", "always"),
  tool("Alpha", "eager", undefined, ["A"]),
  tool("Gamma", "always"),
  tool("Delta", "deferred", undefined, ["D"]),
  tool("mcp__a__x", "deferred"),
  tool("mcp__a__y", "deferred", Schema.Struct({ path: Schema.String, depth: Schema.optional(Schema.Number) })),
  tool("mcp__a__z", "deferred"),
  tool("mcp__b__x", "deferred", Schema.Struct({ query: Schema.String, limit: Schema.optional(Schema.Int) })),
  tool("mcp__b__w", "eager"),
  tool("mcp__odd__", "deferred"),
  tool("mcp____q", "deferred"),
  tool("mcp__c__only", "deferred"),
  tool("Epsilon", "deferred")
]
const names = pool.map((t) => t.definition.name)

// ---------------------------------------------------------------------------------------------------------------
// the oracle
// ---------------------------------------------------------------------------------------------------------------

const estimate = (value: unknown) => Math.ceil((typeof value === "string" ? value : JSON.stringify(value)).length / 4)

const header = (searchTool: string, grouped: boolean) =>
  `The following deferred tools are available but not loaded yet: their definitions are not in your tool list. ` +
  `Before calling one, load it with ${searchTool}: query "select:<name>" loads tools by name (comma-separated), ` +
  `"mcp__<server>" lists a server's tools, and keywords search names and descriptions.` +
  (grouped ? ` A line "mcp__<server>__: a, b" lists the tools mcp__<server>__a and mcp__<server>__b.` : "")

/** An MCP tool's names are listed once under its server's prefix; other names on lines of their own. */
const announce = (waiting: ReadonlyArray<string>, searchTool: string): string => {
  const lines: Array<{ readonly prefix: string | undefined; readonly names: Array<string> }> = []
  for (const name of waiting) {
    const mcp = /^(mcp__.*?__)(.+)$/.exec(name)
    const line = mcp === null ? undefined : lines.find((l) => l.prefix === mcp[1])
    if (mcp === null) lines.push({ prefix: undefined, names: [name] })
    else if (line === undefined) lines.push({ prefix: mcp[1], names: [mcp[2]!] })
    else line.names.push(mcp[2]!)
  }
  const text = lines.map(({ names, prefix }) =>
    prefix === undefined ? names[0] : names.length === 1 ? `${prefix}${names[0]}` : `${prefix}: ${names.join(", ")}`
  )
  const grouped = lines.some((line) => line.prefix !== undefined && line.names.length > 1)
  return ["<system-reminder>", header(searchTool, grouped), ...text, "</system-reminder>"].join("\n")
}

interface Settings {
  readonly mode: SearchMode
  readonly denied: ReadonlySet<string>
}

const contextWindow = 2_000

/** Which tools the rules keep, which of them are deferred by their definitions, and whether they are held back. */
const deferral = (settings: Settings, tools: ReadonlyArray<RegisteredTool>) => {
  const kept = tools.map((t) => t.definition).filter((definition) => !settings.denied.has(definition.name))
  const candidates = kept.filter((definition) => definition.loading === "deferred" && definition.name !== "ToolSearch")
  const candidateTokens = candidates.reduce((sum, definition) => sum + estimate(Definitions.anthropic(definition)), 0)
  const { mode } = settings
  const deferring = candidates.length > 0 &&
    (mode === "on" || (mode !== "off" && candidateTokens > (mode.auto / 100) * contextWindow))
  return { kept, candidates, deferring }
}

/** The request for these tools, from scratch. */
const expected = (
  settings: Settings,
  tools: ReadonlyArray<RegisteredTool>,
  found: ReadonlySet<string>,
  enabled: ReadonlySet<string>,
  provider: Definitions.Provider,
  strict: boolean | undefined
): CatalogRequest => {
  const searchTool = "ToolSearch"
  const { candidates, deferring, kept } = deferral(settings, tools)
  const deferred = (definition: Tool.Definition.Any) => deferring && candidates.includes(definition)
  const available = kept
    .filter((definition) => deferring || definition.name !== searchTool)
    .filter((definition) => enabled.has(definition.name))
  const findable = available.some(deferred)
  const sent = available.filter((definition) =>
    deferred(definition) ? found.has(definition.name) : findable || definition.name !== searchTool
  )
  const waiting = available.filter((definition) => deferred(definition) && !found.has(definition.name))
    .map((definition) => definition.name)
  const definitions = Definitions.forProvider(provider, sent, {
    ...(strict === undefined ? {} : { strict }),
    deferLoading: new Set(sent.filter(deferred).map((definition) => definition.name))
  })
  const announcement = waiting.length === 0 ? undefined : announce(waiting, searchTool)
  return {
    tools: definitions,
    included: sent.map((definition) => definition.name),
    deferred: waiting,
    announcement,
    estimatedTokens: estimate(definitions) + (announcement === undefined ? 0 : estimate(announcement))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// the steps
// ---------------------------------------------------------------------------------------------------------------

type Step =
  | { readonly _tag: "Arrive"; readonly tool: number; readonly at: number }
  | { readonly _tag: "Leave"; readonly tool: number }
  | { readonly _tag: "Move"; readonly tool: number; readonly at: number }
  | { readonly _tag: "Replace"; readonly tools: ReadonlyArray<number> }
  | { readonly _tag: "Discover"; readonly tool: number }
  | {
    readonly _tag: "Request"
    readonly provider: Definitions.Provider
    readonly strict: boolean | undefined
    /** Tools that cannot work now; undefined: whatever the last request said. */
    readonly disabled: ReadonlyArray<number> | undefined
  }

const index = fc.nat({ max: pool.length - 1 })
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Arrive" as const), tool: index, at: fc.nat({ max: 20 }) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Leave" as const), tool: index }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Move" as const), tool: index, at: fc.nat({ max: 20 }) }) },
  {
    weight: 1,
    arbitrary: fc.record({ _tag: fc.constant("Replace" as const), tools: fc.uniqueArray(index, { maxLength: 8 }) })
  },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Discover" as const), tool: index }) },
  {
    weight: 4,
    arbitrary: fc.record({
      _tag: fc.constant("Request" as const),
      provider: fc.constantFrom(...Definitions.providers),
      strict: fc.constantFrom(undefined, true, false),
      disabled: fc.option(fc.uniqueArray(index, { maxLength: 3 }), { nil: undefined })
    })
  }
)

const settings: fc.Arbitrary<Settings> = fc.record({
  mode: fc.constantFrom<SearchMode>("on", "off", { auto: 1 }, { auto: 10 }, { auto: 100 }),
  denied: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 3 }).map((denied) => new Set(denied))
})

/** The tools after a step (the order the registry lists them in). */
const apply = (tools: ReadonlyArray<RegisteredTool>, step: Step): ReadonlyArray<RegisteredTool> => {
  const without = (t: RegisteredTool) => tools.filter((other) => other !== t)
  const insert = (list: ReadonlyArray<RegisteredTool>, t: RegisteredTool, at: number) => {
    const place = Math.min(at, list.length)
    return [...list.slice(0, place), t, ...list.slice(place)]
  }
  switch (step._tag) {
    case "Arrive":
      return tools.includes(pool[step.tool]!) ? tools : insert(tools, pool[step.tool]!, step.at)
    case "Leave":
      return tools.includes(pool[step.tool]!) ? without(pool[step.tool]!) : tools
    case "Move":
      return tools.includes(pool[step.tool]!) ? insert(without(pool[step.tool]!), pool[step.tool]!, step.at) : tools
    case "Replace":
      return step.tools.map((i) => pool[i]!)
    default:
      return tools
  }
}

/** Runs the steps against one catalogue over a changing registry; every request is checked against the oracle. */
const run = (setup: Settings, initial: ReadonlyArray<number>, steps: ReadonlyArray<Step>) => {
  let tools: ReadonlyArray<RegisteredTool> = initial.map((i) => pool[i]!)
  const registry = makeDynamicRegistry(() => tools)
  const options: CatalogOptions = {
    mode: setup.mode,
    contextWindow,
    denies: (definition) => setup.denied.has(definition.name)
  }
  const layer = ToolCatalog.layerFromRegistry(options).pipe(
    Layer.provideMerge(Layer.succeed(ToolRegistry, registry)),
    Layer.provideMerge(DiscoveredTools.layer())
  )
  return Effect.gen(function*() {
    const catalog = yield* ToolCatalog
    let enabled: ReadonlySet<string> = new Set(names)
    for (const s of steps) {
      tools = apply(tools, s)
      if (s._tag === "Discover") yield* catalog.discovered.add([names[s.tool]!])
      if (s._tag !== "Request") continue
      if (s.disabled !== undefined) {
        const disabled = new Set(s.disabled.map((i) => names[i]!))
        enabled = new Set(names.filter((name) => !disabled.has(name)))
      }
      const now = enabled
      const request = yield* catalog.request(s.provider, {
        strict: s.strict,
        ...(s.disabled === undefined ? {} : { enabled: (name: string) => now.has(name) })
      })
      const found = yield* catalog.discovered.get
      expect(request).toEqual(expected(setup, tools, found, enabled, s.provider, s.strict))
      // The registry's index follows the same changes: every tool and alias listed is found, nothing else is.
      for (const t of pool) {
        const listed = tools.includes(t)
        for (const name of [t.definition.name, ...t.definition.aliases]) {
          expect(Option.getOrUndefined(registry.lookup(name))).toBe(listed ? t : undefined)
        }
      }
      const { candidates, deferring } = deferral(setup, tools)
      // Names of tools that left are forgotten; those listed are deferred or removed as the oracle says.
      for (const t of pool) {
        const listed = tools.includes(t)
        expect(catalog.isDeferred(t.definition.name)).toBe(listed && deferring && candidates.includes(t.definition))
        expect(catalog.isDenied(t.definition.name)).toBe(listed && setup.denied.has(t.definition.name))
      }
    }
  }).pipe(Effect.provide(layer))
}

const deferredByDefinition = (name: string) =>
  pool.find((t) => t.definition.name === name)?.definition.loading === "deferred"

const scenario = fc.tuple(
  settings,
  fc.uniqueArray(index, { maxLength: pool.length }),
  fc.array(step, { minLength: 8, maxLength: 40, size: "medium" })
)

describe("the catalogue between requests", () => {
  it.effect.prop(
    "after any arrivals, departures, moves, discoveries and disabled tools, a request is the one made from scratch",
    [scenario],
    ([[setup, initial, steps]]) => run(setup, initial, steps),
    { fastCheck: { numRuns: 200 }, timeout: 60_000 }
  )

  it("the steps reach the interesting cases: tools arriving between requests, groups, defer_loading, auto deferring", () => {
    const samples = fc.sample(scenario, { numRuns: 300, seed: 7 })
    let changedBetweenRequests = 0
    let grouped = 0
    let discoveredSent = 0
    let autoDeferring = 0
    let autoNot = 0
    for (const [setup, initial, steps] of samples) {
      let tools: ReadonlyArray<RegisteredTool> = initial.map((i) => pool[i]!)
      const found = new Set<string>()
      let changed = false
      let requested = false
      for (const s of steps) {
        const next = apply(tools, s)
        if (next !== tools && requested) changed = true
        tools = next
        if (s._tag === "Discover") found.add(names[s.tool]!)
        if (s._tag !== "Request") continue
        requested = true
        if (changed) changedBetweenRequests++
        changed = false
        const request = expected(setup, tools, found, new Set(names), s.provider, s.strict)
        if (request.announcement?.includes("__: ")) grouped++
        if (
          request.included.some((name) => request.tools.length > 0 && found.has(name) && deferredByDefinition(name))
        ) {
          discoveredSent++
        }
        if (typeof setup.mode === "object") {
          if (request.deferred.length > 0) autoDeferring++
          else if (tools.some((t) => t.definition.loading === "deferred")) autoNot++
        }
      }
    }
    expect(changedBetweenRequests).toBeGreaterThan(300)
    expect(grouped).toBeGreaterThan(100)
    expect(discoveredSent).toBeGreaterThan(100)
    expect(autoDeferring).toBeGreaterThan(100)
    expect(autoNot).toBeGreaterThan(100)
  })
})
