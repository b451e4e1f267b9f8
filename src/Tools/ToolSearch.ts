/**
 * ToolSearch: the built-in tool a model uses to load deferred tools (Claude Code's `ToolSearch(query,
 * max_results)`). Its result is `tool_reference` blocks naming the tools found; every found tool joins the
 * session's discovered set, so the next request carries its full definition.
 *
 * Queries:
 * - `select:A,B`: those tools, by name or alias;
 * - an exact tool name: that tool;
 * - `mcp__server` (optionally followed by words): that server's tools (ranked by the words);
 * - `+term`: a term every result must match;
 * - other words: ranked with MiniSearch (BM25, prefix and fuzzy matching) over the name's parts (split on `__`,
 *   `_`, `-` and camelCase, and query words split the same way), the `searchHint`, the description, and the parameters'
 *   names and descriptions. Words are lightly stemmed ("files" meets "file"), and a small list of synonyms common in
 *   tool names ("remove" / "delete", "folder" / "directory") also searches the other words, weighted below the word the
 *   model wrote.
 *
 * Nothing found gives a plain text with the closest names. A tool removed by a deny rule is never found (the
 * catalogue leaves it out). Finding a tool grants nothing: its calls go through the whole pipeline.
 *
 * @since 0.2.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import MiniSearch from "minisearch"
import * as Definitions from "../Catalog/Definitions.js"
import type { DiscoveredTools } from "../Catalog/ToolCatalog.js"
import { ToolCatalog } from "../Catalog/ToolCatalog.js"
import type { CatalogOptions } from "../Catalog/ToolCatalog.js"
import { closestNames, makeDynamicRegistry, ToolRegistry } from "../Catalog/ToolRegistry.js"
import type { RegisteredTool } from "../Catalog/ToolRegistry.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import type { AnyService, Definition } from "../Tool/Tool.js"
import type { ToolResultContent } from "../Tool/Wire.js"
import { WholeNumberBetween } from "./internal/numbers.js"

// ---------------------------------------------------------------------------------------------------------------
// words
// ---------------------------------------------------------------------------------------------------------------

/**
 * The words of a name or text: split on anything not a letter or digit (`__`, `_`, `-`, spaces, dots) and on
 * camelCase, lower-cased. `mcp__github__createIssue` -> `["mcp", "github", "create", "issue"]`.
 *
 * @since 0.2.0
 * @category words
 */
export const splitWords = (text: string): ReadonlyArray<string> =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase())

/** Words that say nothing about which tool is wanted. */
const stopWords: ReadonlySet<string> = new Set([
  "a",
  "an",
  "the",
  "and",
  "or",
  "of",
  "to",
  "in",
  "on",
  "for",
  "with",
  "by",
  "from",
  "at",
  "as",
  "is",
  "are",
  "be",
  "it",
  "its",
  "this",
  "that",
  "these",
  "those",
  "my",
  "me",
  "i",
  "we",
  "our",
  "you",
  "your",
  "can",
  "could",
  "would",
  "should",
  "will",
  "do",
  "does",
  "want",
  "need",
  "please",
  "some",
  "any",
  "all",
  "into",
  "about",
  "which",
  "what",
  "tool",
  "tools",
  "use",
  "using",
  "via",
  "there",
  "here",
  "so",
  "if",
  "then",
  "than",
  "not",
  "no",
  "up",
  // Every MCP tool's name starts with it: it tells nothing apart, and matching it costs a pass over them all.
  "mcp"
])

/** A light stem: plural and common verb endings, so "files", "reading" and "created" meet "file", "read", "create". */
const stem = (word: string): string => {
  if (word.length > 4 && word.endsWith("ies")) return `${word.slice(0, -3)}y`
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3)
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith("es") && /(?:ch|sh|x|ss)es$/.test(word)) return word.slice(0, -2)
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss")) return word.slice(0, -1)
  return word
}

const processTerm = (term: string): string | null => (stopWords.has(term) ? null : stem(term))

/**
 * Words a model uses for the same thing in tool land. A query word also searches its group's other words, at a
 * lower weight ({@link synonymWeight}), so "remove a folder" meets `delete_directory`.
 */
const synonymGroups: ReadonlyArray<ReadonlyArray<string>> = [
  ["delete", "remove", "erase", "drop", "destroy", "forget", "rm"],
  ["create", "make", "new", "add", "mkdir"],
  ["get", "fetch", "retrieve", "obtain", "lookup"],
  ["list", "show", "enumerate", "ls"],
  ["search", "find", "look", "query", "grep", "locate"],
  ["update", "modify", "change", "edit", "patch", "set"],
  ["read", "view", "open", "cat", "load", "inspect"],
  ["write", "save", "store", "overwrite"],
  ["move", "rename", "relocate", "mv"],
  ["directory", "folder", "dir", "mkdir"],
  ["run", "execute", "exec", "launch", "invoke", "shell", "command", "terminal"],
  ["message", "msg", "chat"],
  ["image", "picture", "photo", "screenshot", "png"],
  ["issue", "bug", "ticket"],
  ["compress", "zip", "gzip"],
  ["sum", "total", "plus", "calculate"],
  ["environment", "env"],
  ["send", "post"],
  ["memory", "remember", "recall", "knowledge"],
  ["event", "meeting", "appointment"],
  ["refund", "chargeback"],
  ["repository", "repo"],
  ["metadata", "info", "stat", "size"]
].map((group) => group.map(stem))

const synonymsOf: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const map = new Map<string, Array<string>>()
  for (const group of synonymGroups) {
    for (const word of group) {
      const others = map.get(word) ?? []
      for (const other of group) if (other !== word && !others.includes(other)) others.push(other)
      map.set(word, others)
    }
  }
  return map
})()

/** The weight of a synonym against the word the model wrote. */
const synonymWeight = 0.4

/** The query's words, processed as the index processes them, and their synonyms (those not in the query). */
const expand = (text: string): { readonly terms: ReadonlyArray<string>; readonly synonyms: ReadonlySet<string> } => {
  const terms = splitWords(text).flatMap((word) => {
    const term = processTerm(word)
    return term === null ? [] : [term]
  })
  const synonyms = new Set<string>()
  for (const term of terms) {
    for (const synonym of synonymsOf.get(term) ?? []) if (!terms.includes(synonym)) synonyms.add(synonym)
  }
  return { terms, synonyms }
}

// ---------------------------------------------------------------------------------------------------------------
// the index
// ---------------------------------------------------------------------------------------------------------------

interface Document {
  readonly id: number
  readonly name: string
  readonly hint: string
  readonly description: string
  readonly parameters: string
}

/**
 * A search index over tool definitions.
 *
 * @since 0.2.0
 * @category models
 */
export interface SearchIndex {
  readonly definitions: ReadonlyArray<Definition.Any>
  readonly byName: ReadonlyMap<string, Definition.Any>
  readonly miniSearch: MiniSearch<Document>
}

/**
 * What a search found: tool names, best first; or nothing, with the closest names.
 *
 * @since 0.2.0
 * @category models
 */
export type SearchResult =
  | { readonly _tag: "Found"; readonly names: ReadonlyArray<string>; readonly missing: ReadonlyArray<string> }
  | { readonly _tag: "NotFound"; readonly closest: ReadonlyArray<string> }

const parameterText = (definition: Definition.Any): string => {
  let schema: Definitions.JsonSchema
  try {
    schema = Definitions.inputSchema(definition)
  } catch {
    return ""
  }
  const properties = schema["properties"]
  if (typeof properties !== "object" || properties === null || Array.isArray(properties)) return ""
  return Object.entries(properties as Record<string, unknown>)
    .map(([name, child]) => {
      const description = typeof child === "object" && child !== null && "description" in child
        ? String(child.description)
        : ""
      return `${name} ${description}`
    })
    .join(" ")
}

const boosts = { name: 3, hint: 2, description: 1, parameters: 0.5 } as const

/**
 * Builds the index of a set of tools.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeIndex = (definitions: ReadonlyArray<Definition.Any>): SearchIndex => {
  const miniSearch = new MiniSearch<Document>({
    fields: ["name", "hint", "description", "parameters"],
    tokenize: (text) => splitWords(text) as Array<string>,
    processTerm,
    searchOptions: {
      boost: boosts,
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      combineWith: "OR"
    }
  })
  miniSearch.addAll(definitions.map((definition, id) => ({
    id,
    name: [definition.name, ...definition.aliases].join(" "),
    hint: definition.searchHint ?? "",
    description: definition.description,
    parameters: parameterText(definition)
  })))
  const byName = new Map<string, Definition.Any>()
  for (const definition of definitions) {
    for (const name of [definition.name, ...definition.aliases]) {
      byName.set(name, definition)
      if (!byName.has(name.toLowerCase())) byName.set(name.toLowerCase(), definition)
    }
  }
  return { definitions, byName, miniSearch }
}

const lookupName = (index: SearchIndex, name: string): Definition.Any | undefined =>
  index.byName.get(name) ?? index.byName.get(name.toLowerCase())

const closest = (index: SearchIndex, query: string): ReadonlyArray<string> => {
  const names = index.definitions.map((definition) => definition.name)
  const byEdit = closestNames(query, names)
  // Closest *names*: the name field alone, with generous fuzziness (a misspelt name is the usual case).
  const byWords = index.miniSearch.search(query, { fields: ["name"], fuzzy: 0.4, prefix: true }).slice(0, 3).map((
    hit
  ) => index.definitions[hit.id as number]!.name)
  return [...new Set([...byEdit, ...byWords])].slice(0, 3)
}

/**
 * Runs a query (see the module documentation for its forms) against an index.
 *
 * @since 0.2.0
 * @category search
 */
export const search = (index: SearchIndex, query: string, maxResults = 5): SearchResult => {
  const text = query.trim()
  const limit = Math.max(1, Math.floor(maxResults))
  if (text.toLowerCase().startsWith("select:")) {
    const wanted = text.slice("select:".length).split(",").map((name) => name.trim()).filter((name) => name.length > 0)
    const found: Array<string> = []
    const missing: Array<string> = []
    for (const name of wanted) {
      const definition = lookupName(index, name)
      if (definition === undefined) missing.push(name)
      else if (!found.includes(definition.name)) found.push(definition.name)
    }
    return found.length === 0
      ? { _tag: "NotFound", closest: missing.flatMap((name) => closest(index, name)).slice(0, 3) }
      : { _tag: "Found", names: found, missing }
  }
  const exact = lookupName(index, text)
  if (exact !== undefined) return { _tag: "Found", names: [exact.name], missing: [] }

  const words = text.split(/\s+/).filter((word) => word.length > 0)
  const prefix = words[0]?.toLowerCase().startsWith("mcp__") === true ? words[0]!.replace(/_+$/, "") : undefined
  const rest = prefix === undefined ? words : words.slice(1)
  const required = rest.filter((word) => word.startsWith("+") && word.length > 1).map((word) => word.slice(1))
  const optional = rest.filter((word) => !(word.startsWith("+") && word.length > 1))

  const inServer = (definition: Definition.Any) =>
    prefix === undefined || definition.name.toLowerCase() === prefix.toLowerCase() ||
    definition.name.toLowerCase().startsWith(`${prefix.toLowerCase()}__`)
  // Each required term once: the ids of the tools that match it.
  const requiredIds = required.map((term) =>
    new Set(index.miniSearch.search(term, { prefix: true, fuzzy: false }).map((hit) => hit.id as number))
  )
  const matchesAll = (id: number) => requiredIds.every((ids) => ids.has(id))

  const { synonyms, terms } = expand([...optional, ...required].join(" "))
  const ranked = terms.length === 0
    ? index.definitions.map((_, id) => id)
    : index.miniSearch
      .search([...terms, ...synonyms].join(" "), {
        filter: (hit) => inServer(index.definitions[hit.id as number]!),
        // The terms arrive processed already.
        processTerm: (term) => term,
        boostTerm: (term) => (synonyms.has(term) ? synonymWeight : 1),
        // Synonyms match as they are: expanding them too would cost more than they bring.
        prefix: (term) => term.length >= 3 && !synonyms.has(term),
        fuzzy: (term) => (term.length >= 5 && !synonyms.has(term) ? 0.2 : false)
      })
      .map((hit) => hit.id as number)
  const names = ranked
    .filter((id) => inServer(index.definitions[id]!) && matchesAll(id))
    .slice(0, limit)
    .map((id) => index.definitions[id]!.name)
  return names.length === 0
    ? { _tag: "NotFound", closest: closest(index, text) }
    : { _tag: "Found", names, missing: [] }
}

/**
 * The tool_result content of a search: one `tool_reference` block per tool found (and a text naming any
 * `select:` names that do not exist), or a plain text when nothing was found.
 *
 * @since 0.2.0
 * @category presentation
 */
export const resultContent = (query: string, result: SearchResult): ToolResultContent => {
  if (result._tag === "NotFound") {
    const hint = result.closest.length > 0 ? ` Closest tool names: ${result.closest.join(", ")}.` : ""
    return `No tools matched "${query}".${hint} Try "select:<name>" with an exact name, "mcp__<server>" for a ` +
      `server's tools, or other keywords.`
  }
  const references = result.names.map((name) => ({ type: "tool_reference" as const, tool_name: name }))
  return result.missing.length === 0
    ? references
    : [...references, { type: "text" as const, text: `No tools named: ${result.missing.join(", ")}.` }]
}

// ---------------------------------------------------------------------------------------------------------------
// the tool
// ---------------------------------------------------------------------------------------------------------------

/**
 * The tool's input.
 *
 * @since 0.2.0
 * @category models
 */
export const ToolSearchInput = Schema.Struct({
  query: Schema.String.annotations({
    description:
      "\"select:Name1,Name2\" to load tools by name; an exact tool name; \"mcp__server\" for a server's tools; or " +
      "keywords (prefix a keyword with + to require it)"
  }),
  max_results: Schema.optionalWith(WholeNumberBetween(1, 50), { default: () => 5 }).annotations({
    description: "How many tools to return at most (default 5)"
  })
})

/**
 * The tool's output: the names found (best first), or nothing with the closest names.
 *
 * @since 0.2.0
 * @category models
 */
export const ToolSearchOutput = Schema.Struct({
  query: Schema.String,
  found: Schema.Array(Schema.String),
  missing: Schema.Array(Schema.String),
  closest: Schema.Array(Schema.String)
})

/**
 * The ToolSearch tool. Read-only and concurrency-safe; never deferred.
 *
 * @since 0.2.0
 * @category tools
 */
export const ToolSearch = Tool.make("ToolSearch", {
  description: [
    "Loads deferred tools so you can call them. Deferred tools are listed by name only (in a system reminder); their",
    "definitions are not in your tool list until this tool returns them, and calling one before that fails.",
    "- \"select:Read,mcp__github__create_issue\" loads those tools by exact name.",
    "- \"mcp__github\" lists that server's tools; add words to rank them (\"mcp__github issue\").",
    "- Keywords search tool names, descriptions and parameters (\"send slack message\"); \"+word\" requires a word.",
    "- Returns up to max_results tools (default 5). Loaded tools stay available for the rest of the session."
  ].join("\n"),
  input: ToolSearchInput,
  output: ToolSearchOutput,
  loading: "always",
  touchesEnvironment: false
})

/**
 * The ToolSearch behaviour over the catalogue in context: it searches the catalogue's searchable tools (deny-ruled
 * tools are not among them) and adds what it finds to the session's discovered set.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<Context.Tag.Service<typeof ToolSearch>, never, ToolCatalog> = Effect.gen(function*() {
  const catalog = yield* ToolCatalog
  // Built at the first search, not with the layer (a session that never searches never pays for it), and again
  // when the catalogue's tools change (an MCP server connects later).
  let indexed: ReadonlyArray<Definition.Any> | undefined
  let built: SearchIndex | undefined
  const currentIndex = (): SearchIndex => {
    const searchable = catalog.searchable
    if (built === undefined || searchable !== indexed) {
      indexed = searchable
      built = makeIndex(searchable)
    }
    return built
  }
  return ToolSearch.service({
    traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
    claims: () => [],
    call: ({ max_results, query }) =>
      Effect.gen(function*() {
        const enabled = yield* catalog.enabledNow
        const searched = search(currentIndex(), query, max_results)
        // A tool that cannot work now (its server is down...) is not found: it is not in the definitions either.
        const result: SearchResult = searched._tag === "Found" && !searched.names.every(enabled)
          ? (searched.names.some(enabled)
            ? { ...searched, names: searched.names.filter(enabled) }
            : { _tag: "NotFound", closest: [] })
          : searched
        if (result._tag === "Found") yield* catalog.discovered.add(result.names)
        return result._tag === "Found"
          ? { query, found: result.names, missing: result.missing, closest: [] }
          : { query, found: [], missing: [], closest: result.closest }
      }).pipe(Effect.withSpan("ToolSearch.search", { attributes: { query } })),
    toModel: (output) =>
      resultContent(
        output.query,
        output.found.length === 0
          ? { _tag: "NotFound", closest: output.closest }
          : { _tag: "Found", names: output.found, missing: output.missing }
      ),
    renderUse: ({ query }) => [UiBlock.Title({ text: `ToolSearch(${query})` })],
    renderResult: (output) => [
      UiBlock.Text({
        text: output.found.length === 0 ? `No tools matched "${output.query}"` : `Loaded ${output.found.join(", ")}`
      })
    ]
  })
})

/**
 * {@link make} as a Layer.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer: Layer.Layer<Tool.Tool.IdentifierOf<typeof ToolSearch>, never, ToolCatalog> = Layer.effect(
  ToolSearch,
  make
)

/**
 * A session's tools with deferral and search: the registry (the given tools plus ToolSearch, gated so that a
 * deferred tool must be loaded before it is called) and the catalogue. Needs the tools' services and the
 * session's {@link DiscoveredTools}.
 *
 * ```ts
 * const Tools = ToolSearch.catalogLayer([Weather, Forecast], { mode: "on" }).pipe(
 *   Layer.provide([WeatherLive, ForecastLive, DiscoveredTools.layer()])
 * )
 * ```
 *
 * @since 0.2.0
 * @category layers
 */
export const catalogLayer = <const Tools extends ReadonlyArray<Tool.Tool.Any>>(
  tools: Tools,
  options: CatalogOptions = {}
): Layer.Layer<ToolRegistry | ToolCatalog, never, Tool.Tool.IdentifierOf<Tools[number]> | DiscoveredTools> => {
  const all = [...tools, ToolSearch] as const
  const catalog = ToolCatalog.layer(all, { ...options, searchToolName: ToolSearch.definition.name })
  const registry = ToolRegistry.layer(all).pipe(Layer.provide(layer), Layer.provide(catalog))
  return ToolCatalog.gate.pipe(Layer.provide(registry), Layer.provideMerge(catalog)) as Layer.Layer<
    ToolRegistry | ToolCatalog,
    never,
    Tool.Tool.IdentifierOf<Tools[number]> | DiscoveredTools
  >
}

/**
 * Deferral and search over a registry whose tools may change (built-in tools plus an MCP server's, say): given the
 * plain registry, gives the registry with ToolSearch added and gated (a deferred tool must be loaded before it is
 * called) and the catalogue over both, which follows the registry's tools as they change. Needs the session's
 * {@link DiscoveredTools}.
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeCatalogFromRegistry = (
  options: CatalogOptions = {}
): Effect.Effect<Context.Context<ToolRegistry | ToolCatalog>, never, ToolRegistry | DiscoveredTools> =>
  Effect.gen(function*() {
    const base = yield* ToolRegistry
    const catalog = yield* ToolCatalog.makeFromRegistry({
      ...options,
      searchToolName: ToolSearch.definition.name,
      extra: [ToolSearch]
    })
    const search: RegisteredTool = {
      definition: ToolSearch.definition,
      service: (yield* Effect.provideService(make, ToolCatalog, catalog)) as unknown as AnyService
    }
    let last: ReadonlyArray<RegisteredTool> | undefined
    let all: ReadonlyArray<RegisteredTool> = []
    const withSearch = makeDynamicRegistry(() => {
      const tools = base.tools
      if (tools !== last) {
        last = tools
        all = [...tools.filter((tool) => tool.definition.name !== search.definition.name), search]
      }
      return all
    })
    return Context.make(ToolRegistry, ToolCatalog.gateRegistry(withSearch, catalog)).pipe(
      Context.add(ToolCatalog, catalog)
    )
  })

/**
 * {@link makeCatalogFromRegistry} as a Layer.
 *
 * ```ts
 * const Tools = ToolSearch.catalogLayerFromRegistry({ mode: "on" }).pipe(
 *   Layer.provide(McpServers.extendRegistry),
 *   Layer.provide([ToolRegistry.layer(builtinTools), McpServers.layer(config), DiscoveredTools.layer()])
 * )
 * ```
 *
 * @since 0.3.0
 * @category layers
 */
export const catalogLayerFromRegistry = (
  options: CatalogOptions = {}
): Layer.Layer<ToolRegistry | ToolCatalog, never, ToolRegistry | DiscoveredTools> =>
  Layer.effectContext(makeCatalogFromRegistry(options))
