/**
 * What the catalogue keeps between requests, so that a request stays cheap at thousands of tools and a change of the
 * tools costs what changed (`bench/toolsearch.ts`: a request < 1 ms at 2,000 deferred tools):
 *
 * - an {@link Entry} per definition: what the catalogue needs to know of it, found once (whether rules remove it,
 *   whether it waits behind the search tool, how the announcement lists it, its token estimate, its shapes as sent);
 * - the {@link State} of one list of definitions: the tools in order, whether the catalogue defers, the names.
 *   {@link derive} makes it from scratch; {@link update} makes it from the previous one for the definitions that
 *   arrived and left, and hands over to `derive` when names collide (two tools under one name), where its index of
 *   names would not say which one wins;
 * - the request {@link assemble}d from entries: the answer `ToolCatalog` describes, its announcement and token
 *   estimate made of per-entry parts measured once.
 *
 * @internal
 */
import type { Definition } from "../../Tool/Tool.js"
import * as Definitions from "../Definitions.js"
import type { CatalogOptions, CatalogRequest, SearchMode } from "../ToolCatalog.js"
import { changed } from "./changes.js"

// ---------------------------------------------------------------------------------------------------------------
// the announcement
// ---------------------------------------------------------------------------------------------------------------

/**
 * A name as the announcement lists it: an MCP tool under its server's prefix (`mcp__github__`, `create_issue`, and
 * the prefix's number in its {@link Announcer}), any other name whole.
 */
export interface Announced {
  readonly name: string
  readonly prefix: string | undefined
  readonly rest: string
  readonly group: number
}

/**
 * What announcements keep between them: a number per server prefix, and the last line written for each prefix (a
 * request after one discovery writes again only the line of that tool's server).
 */
export interface Announcer {
  readonly groups: Map<string, number>
  readonly lines: Array<{ readonly members: ReadonlyArray<Announced>; readonly text: string } | undefined>
}

/** An announcer with nothing kept yet. */
export const makeAnnouncer = (): Announcer => ({ groups: new Map(), lines: [] })

/** How the announcement lists a name. */
export const announced = (announcer: Announcer, name: string): Announced => {
  const end = name.startsWith("mcp__") ? name.indexOf("__", 5) : -1
  if (end === -1 || end + 2 >= name.length) return { name, prefix: undefined, rest: name, group: -1 }
  const prefix = name.slice(0, end + 2)
  let group = announcer.groups.get(prefix)
  if (group === undefined) {
    group = announcer.groups.size
    announcer.groups.set(prefix, group)
  }
  return { name, prefix, rest: name.slice(end + 2), group }
}

/**
 * The text announcing deferred tools (see `ToolCatalog.announcement`): each server's tools on one line under its
 * prefix, other names on lines of their own, lines in the order their first name comes.
 */
export const announce = (announcer: Announcer, names: ReadonlyArray<Announced>, searchTool: string): string => {
  const order: Array<Announced | number> = []
  const members: Array<Array<Announced>> = []
  for (const name of names) {
    if (name.prefix === undefined) {
      order.push(name)
      continue
    }
    const group = members[name.group]
    if (group === undefined) {
      members[name.group] = [name]
      order.push(name.group)
    } else group.push(name)
  }
  let grouped = false
  const listed = order.map((line) => {
    if (typeof line !== "number") return line.rest
    const group = members[line]!
    grouped ||= group.length > 1
    return lineOf(announcer, line, group)
  })
  return [
    "<system-reminder>",
    `The following deferred tools are available but not loaded yet: their definitions are not in your tool list. ` +
    `Before calling one, load it with ${searchTool}: query "select:<name>" loads tools by name (comma-separated), ` +
    `"mcp__<server>" lists a server's tools, and keywords search names and descriptions.` +
    (grouped ? ` A line "mcp__<server>__: a, b" lists the tools mcp__<server>__a and mcp__<server>__b.` : ""),
    ...listed,
    "</system-reminder>"
  ].join("\n")
}

/** One server's line, written again only when its names changed since the last time. */
const lineOf = (announcer: Announcer, group: number, members: ReadonlyArray<Announced>): string => {
  const last = announcer.lines[group]
  if (last !== undefined && sameItems(last.members, members)) return last.text
  const prefix = members[0]!.prefix!
  const text = members.length === 1 ?
    `${prefix}${members[0]!.rest}` :
    `${prefix}: ${members.map((member) => member.rest).join(", ")}`
  announcer.lines[group] = { members, text }
  return text
}

/** Whether two lists hold the same items, in the same order. */
export const sameItems = <A>(a: ReadonlyArray<A>, b: ReadonlyArray<A>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

// ---------------------------------------------------------------------------------------------------------------
// entries
// ---------------------------------------------------------------------------------------------------------------

/** One definition as the catalogue knows it. */
export interface Entry {
  readonly definition: Definition.Any
  readonly name: string
  /** Its name and aliases. */
  readonly names: ReadonlyArray<string>
  /** Whether the rules remove it (`CatalogOptions.denies`). */
  readonly denied: boolean
  /** Whether it waits behind the search tool while the catalogue defers: deferred, and not the search tool. */
  readonly candidate: boolean
  readonly isSearchTool: boolean
  readonly announced: Announced
  /** `Definitions.estimateTokens` of its Anthropic definition, measured when first needed. */
  tokens: number | undefined
  /** Its shapes as sent, by provider and options, each with the length of its JSON. */
  readonly shapes: Map<string, { readonly tool: unknown; readonly length: number }>
  /** The last list {@link derive} saw it in (a second sighting in one list is a definition listed twice). */
  seen: number
}

/** The catalogue's entries, one per definition it has seen, and the options they were made under. */
export interface Entries {
  readonly options: CatalogOptions
  readonly searchTool: string
  readonly byDefinition: Map<Definition.Any, Entry>
  readonly announcer: Announcer
  /** Counts the lists of definitions the entries were checked against. */
  generation: number
}

/** An empty set of entries. */
export const makeEntries = (options: CatalogOptions): Entries => ({
  options,
  searchTool: options.searchToolName ?? "ToolSearch",
  byDefinition: new Map(),
  announcer: makeAnnouncer(),
  generation: 0
})

const entryOf = (entries: Entries, definition: Definition.Any): Entry => {
  const known = entries.byDefinition.get(definition)
  if (known !== undefined) return known
  const entry: Entry = {
    definition,
    name: definition.name,
    names: [definition.name, ...definition.aliases],
    denied: entries.options.denies?.(definition) ?? false,
    candidate: definition.loading === "deferred" && definition.name !== entries.searchTool,
    isSearchTool: definition.name === entries.searchTool,
    announced: announced(entries.announcer, definition.name),
    tokens: undefined,
    shapes: new Map(),
    seen: 0
  }
  entries.byDefinition.set(definition, entry)
  return entry
}

/** The estimated tokens of an entry's definition, once per definition. */
const tokensOf = (entry: Entry): number =>
  entry.tokens ??= Definitions.estimateTokens(Definitions.anthropic(entry.definition))

// ---------------------------------------------------------------------------------------------------------------
// the state of one list
// ---------------------------------------------------------------------------------------------------------------

/** What the catalogue knows of one list of definitions. */
export interface State {
  readonly all: ReadonlyArray<Definition.Any>
  /** The entries of `all`, rules' removals included, in order. */
  readonly listed: ReadonlyArray<Entry>
  /** What may be sent, in order: the entries not removed by rules; the search tool only while deferring. */
  readonly sendable: ReadonlyArray<Entry>
  readonly tools: ReadonlyArray<Definition.Any>
  readonly searchable: ReadonlyArray<Definition.Any>
  readonly deferring: boolean
  /** The estimated tokens of the deferred candidates' definitions. */
  readonly deferredTokens: () => number
  /** The entry a name or alias refers to, among those not removed by rules. */
  readonly lookup: (name: string) => Entry | undefined
  readonly isDenied: (name: string) => boolean
  readonly isDeferred: (name: string) => boolean
  /** Whether `update` can work from this state: every name and alias is one entry's, and no entry is listed twice. */
  readonly distinct: boolean
  /** Names and aliases of the entries not removed by rules, and of those removed (kept while `distinct`). */
  readonly byName: Map<string, Entry>
  readonly deniedNames: Map<string, Entry>
}

const deferringOf = (mode: SearchMode, contextWindow: number, candidates: ReadonlyArray<Entry>): boolean =>
  candidates.length > 0 &&
  (mode === "on" || (mode !== "off" && candidates.reduce((sum, entry) => sum + tokensOf(entry), 0) >
      (mode.auto / 100) * contextWindow))

/** The lists of a state, from its entries in order (one pass). */
const lists = (entries: Entries, listed: ReadonlyArray<Entry>) => {
  const kept: Array<Entry> = []
  const candidates: Array<Entry> = []
  const searchable: Array<Definition.Any> = []
  for (const entry of listed) {
    if (entry.denied) continue
    kept.push(entry)
    if (entry.candidate) candidates.push(entry)
    if (!entry.isSearchTool) searchable.push(entry.definition)
  }
  const deferring = deferringOf(entries.options.mode ?? "on", entries.options.contextWindow ?? 200_000, candidates)
  // The search tool is sent only while something waits behind it (Claude Code does the same).
  const sendable = deferring ? kept : kept.filter((entry) => !entry.isSearchTool)
  let deferredTokens: number | undefined
  return {
    sendable,
    tools: sendable.map((entry) => entry.definition),
    searchable,
    deferring,
    deferredTokens: () => deferredTokens ??= candidates.reduce((sum, entry) => sum + tokensOf(entry), 0)
  }
}

/** A state from its list and its name index; `deferredBy` tells the deferred names once it is known whether the list defers. */
const stateOf = (
  entries: Entries,
  all: ReadonlyArray<Definition.Any>,
  listed: ReadonlyArray<Entry>,
  index: Pick<State, "byName" | "deniedNames" | "distinct">,
  deferredBy: (deferring: boolean) => (name: string) => boolean
): State => {
  const state = lists(entries, listed)
  const { byName, deniedNames } = index
  return {
    all,
    listed,
    ...state,
    ...index,
    lookup: (name) => byName.get(name),
    isDenied: (name) => deniedNames.has(name),
    isDeferred: deferredBy(state.deferring)
  }
}

/**
 * The state of a list of definitions, from scratch: every name and alias is indexed in list order (a later tool
 * under a name wins it), the removed ones' and the deferred ones' too.
 */
export const derive = (entries: Entries, all: ReadonlyArray<Definition.Any>): State => {
  const generation = ++entries.generation
  const listed = all.map((definition) => entryOf(entries, definition))
  const byName = new Map<string, Entry>()
  const deniedNames = new Map<string, Entry>()
  let distinct = true
  for (const entry of listed) {
    distinct &&= entry.seen !== generation
    entry.seen = generation
    for (const name of entry.names) {
      distinct &&= !byName.has(name) && !deniedNames.has(name)
      ;(entry.denied ? deniedNames : byName).set(name, entry)
    }
  }
  for (const [definition, entry] of entries.byDefinition) {
    if (entry.seen !== generation) entries.byDefinition.delete(definition)
  }
  return stateOf(entries, all, listed, { byName, deniedNames, distinct }, (deferring) => {
    // A deferred name is one a candidate holds; with names that collide, any candidate's (as with distinct ones).
    const deferredNames = new Set(deferring ? listed.flatMap((e) => e.candidate && !e.denied ? e.names : []) : [])
    return (name) => deferredNames.has(name)
  })
}

/**
 * The state of a new list of definitions from the previous one: what lies between the part both lists start with and
 * the part both end with left and arrived (`changed`); entries are made for the definitions that arrived, and only
 * their names and those of the definitions that left change in the index. Hands over to {@link derive} when an
 * arriving name is taken (a definition listed twice, two tools under one name).
 */
export const update = (entries: Entries, previous: State, all: ReadonlyArray<Definition.Any>): State => {
  if (!previous.distinct) return derive(entries, all)
  const { arrived, left, start } = changed(previous.all, all)
  // Made before anything changes: making an entry asks the rules, which may throw.
  const added = arrived.map((definition) => entryOf(entries, definition))
  const { byName, deniedNames } = previous
  for (const entry of previous.listed.slice(start, start + left.length)) {
    for (const name of entry.names) (entry.denied ? deniedNames : byName).delete(name)
  }
  for (const entry of added) {
    for (const name of entry.names) {
      if (byName.has(name) || deniedNames.has(name)) return derive(entries, all)
      ;(entry.denied ? deniedNames : byName).set(name, entry)
    }
  }
  const stayed = new Set(added)
  for (const definition of left) {
    if (!stayed.has(entries.byDefinition.get(definition)!)) entries.byDefinition.delete(definition)
  }
  const listed = [
    ...previous.listed.slice(0, start),
    ...added,
    ...previous.listed.slice(start + left.length)
  ]
  return stateOf(
    entries,
    all,
    listed,
    { byName, deniedNames, distinct: true },
    (deferring) => (name) => deferring && byName.get(name)?.candidate === true
  )
}

// ---------------------------------------------------------------------------------------------------------------
// the request
// ---------------------------------------------------------------------------------------------------------------

/** An entry's shape as sent to a provider (see `Definitions.toolForProvider`), made once per options. */
const shapeOf = (
  entry: Entry,
  provider: Definitions.Provider,
  strict: boolean | undefined,
  deferLoading: boolean
): { readonly tool: unknown; readonly length: number } => {
  const key = `${provider} ${strict} ${deferLoading}`
  let shape = entry.shapes.get(key)
  if (shape === undefined) {
    const tool = Definitions.toolForProvider(provider, entry.definition, {
      ...(strict === undefined ? {} : { strict }),
      deferLoading: deferLoading ? new Set([entry.name]) : undefined
    })
    shape = { tool, length: JSON.stringify(tool).length }
    entry.shapes.set(key, shape)
  }
  return shape
}

/** The length of the `tools` value's JSON (see `Definitions.providerTools`), from its tools' own. */
const toolsLength = (provider: Definitions.Provider, count: number, lengths: number): number =>
  count === 0 ? 2 : lengths + count - 1 + (provider === "gemini" ? geminiWrapping : 2)
const geminiWrapping = JSON.stringify(Definitions.providerTools("gemini", [0])).length - 1

/**
 * The answer to a request over the `available` entries: those that are not deferred in full (the search tool only
 * while a deferred one can be found), the found deferred ones in full (with `defer_loading` for Anthropic), the rest
 * announced by name.
 */
export const assemble = (
  entries: Entries,
  state: State,
  found: ReadonlySet<string>,
  available: ReadonlyArray<Entry>,
  provider: Definitions.Provider,
  strict: boolean | undefined
): CatalogRequest => {
  // With distinct names an entry is deferred by its own flag; otherwise by name, as `isDeferred` answers.
  const deferred = state.distinct
    ? (entry: Entry) => state.deferring && entry.candidate
    : (entry: Entry) => state.isDeferred(entry.name)
  // The search tool only while a deferred tool can be found (one that cannot work now is not searchable).
  const searchable = available.some(deferred)
  const tools: Array<unknown> = []
  const included: Array<string> = []
  const waiting: Array<string> = []
  const announced: Array<Announced> = []
  let lengths = 0
  for (const entry of available) {
    const held = deferred(entry)
    if (held && !found.has(entry.name)) {
      waiting.push(entry.name)
      announced.push(entry.announced)
      continue
    }
    if (!held && !searchable && entry.isSearchTool) continue
    const shape = shapeOf(entry, provider, strict, held)
    tools.push(shape.tool)
    included.push(entry.name)
    lengths += shape.length
  }
  const text = waiting.length === 0 ? undefined : announce(entries.announcer, announced, entries.searchTool)
  return {
    tools: Definitions.providerTools(provider, tools),
    included,
    deferred: waiting,
    announcement: text,
    // `Definitions.estimateTokens` of the tools' JSON (chars / 4, rounded up), counted from the parts' lengths.
    estimatedTokens: Math.ceil(toolsLength(provider, tools.length, lengths) / 4) +
      (text === undefined ? 0 : Definitions.estimateTokens(text))
  }
}
