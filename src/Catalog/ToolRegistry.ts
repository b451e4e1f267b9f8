/**
 * The ToolRegistry knows which tools exist: it resolves names and aliases to a tool's definition and service, and
 * suggests the closest names when the model asks for one that does not exist.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import { editDistance } from "../Shared/closest.js"
import type { AnyService, Definition, Tool } from "../Tool/Tool.js"
import { changed } from "./internal/changes.js"

/** The model APIs' rule for tool names (Anthropic, OpenAI and Gemini agree on it). */
const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

/**
 * A tool as the registry holds it: its definition and its (type-erased) service.
 *
 * @since 0.1.0
 * @category models
 */
export interface RegisteredTool {
  readonly definition: Definition.Any
  readonly service: AnyService
}

/**
 * What the registry offers: the tools, lookup by name or alias, suggestions, and a fixed snapshot.
 *
 * @since 0.2.0
 * @category models
 */
export interface Registry {
  readonly tools: ReadonlyArray<RegisteredTool>
  /** The tool a name or alias refers to. */
  readonly lookup: (name: string) => Option.Option<RegisteredTool>
  /** Up to three registered names closest to `name`, best first. */
  readonly suggest: (name: string) => ReadonlyArray<string>
  /**
   * The registry as it is now, fixed: a run of the runtime takes one snapshot and works on it, whatever changes
   * meanwhile (an MCP server's tools/list_changed). A static registry is its own snapshot.
   */
  readonly snapshot: () => Registry
}

/**
 * The ToolRegistry service.
 *
 * @example
 * ```ts
 * import { Effect, Layer, Option, Schema } from "effect"
 * import { Tool, ToolRegistry } from "effect-tool-runtime"
 *
 * const Echo = Tool.make("Echo", {
 *   aliases: ["Say"],
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 *
 * // The tools a session offers, each provided by its implementation's Layer.
 * const Registry = ToolRegistry.layer([Echo]).pipe(
 *   Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))
 * )
 *
 * export const program = Effect.gen(function*() {
 *   const registry = yield* ToolRegistry
 *   const found = registry.lookup("Say") // by name or alias
 *   return Option.map(found, (tool) => tool.definition.name) // Option.some("Echo")
 * }).pipe(Effect.provide(Registry))
 * ```
 *
 * @since 0.1.0
 * @category tags
 */
export class ToolRegistry extends Context.Tag("effect-tool-runtime/ToolRegistry")<ToolRegistry, Registry>() {
  /**
   * A registry of the given tools; requires each tool's service. Duplicate names or aliases are a defect.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = <const Tools extends ReadonlyArray<Tool.Any>>(
    tools: Tools
  ): Layer.Layer<ToolRegistry, never, Tool.IdentifierOf<Tools[number]>> =>
    Layer.effect(
      ToolRegistry,
      Effect.map(Effect.context<never>(), (context) =>
        makeRegistry(
          tools.map((tool) => ({
            definition: tool.definition,
            service: Context.unsafeGet(context, tool as unknown as Context.Tag<unknown, AnyService>)
          }))
        ))
    )

  /**
   * A registry of already-built tools (e.g. tools discovered at run time from an MCP server).
   *
   * @since 0.1.0
   * @category constructors
   */
  static readonly fromRegistered = (tools: ReadonlyArray<RegisteredTool>): Layer.Layer<ToolRegistry> =>
    Layer.sync(ToolRegistry, () => makeRegistry(tools))
}

/**
 * Builds the registry value; throws on duplicate names or aliases, and on a name the model APIs refuse
 * (`^[a-zA-Z0-9_-]{1,64}$`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeRegistry = (tools: ReadonlyArray<RegisteredTool>): Registry => indexed(tools, index(tools))

/** The names and aliases of `tools`, checked as {@link makeRegistry} says. */
const index = (tools: ReadonlyArray<RegisteredTool>): HashMap.HashMap<string, RegisteredTool> => {
  const byName = HashMap.beginMutation(HashMap.empty<string, RegisteredTool>())
  for (const tool of tools) {
    checkName(tool)
    for (const name of namesOf(tool)) {
      if (HashMap.has(byName, name)) throw new Error(`Two tools are registered under the name ${name}`)
      HashMap.set(byName, name, tool)
    }
  }
  return HashMap.endMutation(byName)
}

// Checked here too: tools built at run time (MCP) do not pass through Tool.make.
const checkName = (tool: RegisteredTool): void => {
  if (!toolNamePattern.test(tool.definition.name)) {
    throw new Error(
      `Tool name ${
        JSON.stringify(tool.definition.name)
      } cannot be sent to a model: names must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -; 1 to 64 characters)`
    )
  }
}

const namesOf = (tool: RegisteredTool): ReadonlyArray<string> => [tool.definition.name, ...tool.definition.aliases]

/** The registry of `tools` whose names and aliases `byName` holds (an immutable map: a snapshot keeps its own). */
const indexed = (tools: ReadonlyArray<RegisteredTool>, byName: HashMap.HashMap<string, RegisteredTool>): Registry => {
  let names: ReadonlyArray<string> | undefined
  const registry: Registry = {
    tools,
    lookup: (name) => HashMap.get(byName, name),
    suggest: (name) => closestNames(name, names ??= tools.map((tool) => tool.definition.name)),
    snapshot: () => registry
  }
  return registry
}

/**
 * A registry whose tools change: `current` returns the tools now (the same array while nothing changed). Lookups
 * read the latest tools; {@link ToolRegistry} `snapshot` fixes them for a run. Throws, like {@link makeRegistry}, when
 * `current` returns duplicate names.
 *
 * A change is applied for the tools that arrived and left (their names are added to and removed from the previous
 * index), not by indexing every tool again: an MCP server's one new tool costs one tool's work at 2,000. A change that
 * is anything else (a tool listed twice, a name taken) is handed to {@link makeRegistry}, whose checks and messages
 * then apply.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeDynamicRegistry = (current: () => ReadonlyArray<RegisteredTool>): Registry => {
  let last: ReadonlyArray<RegisteredTool> = []
  let registry: Registry | undefined
  let byName = HashMap.empty<string, RegisteredTool>()
  const snapshot = (): Registry => {
    const tools = current()
    if (tools !== last || registry === undefined) {
      const names = (registry === undefined ? undefined : applyChange(byName, last, tools)) ?? index(tools)
      registry = indexed(tools, names)
      byName = names
      last = tools
    }
    return registry
  }
  return {
    get tools() {
      return snapshot().tools
    },
    lookup: (name) => snapshot().lookup(name),
    suggest: (name) => snapshot().suggest(name),
    snapshot
  }
}

/**
 * The index of `tools` from that of `previous`: the tools between the part both lists start with and the part both
 * end with left (their names are removed) and arrived (theirs are added). Undefined when an arriving name is taken (a
 * tool listed twice, say) or refused by the model APIs: {@link makeRegistry} then says which.
 */
const applyChange = (
  byName: HashMap.HashMap<string, RegisteredTool>,
  previous: ReadonlyArray<RegisteredTool>,
  tools: ReadonlyArray<RegisteredTool>
): HashMap.HashMap<string, RegisteredTool> | undefined => {
  const { arrived, left } = changed(previous, tools)
  if (left.length === 0 && arrived.length === 0) return byName
  if (arrived.some((tool) => !toolNamePattern.test(tool.definition.name))) return undefined
  let taken = false
  const next = HashMap.mutate(byName, (names) => {
    for (const tool of left) for (const name of namesOf(tool)) HashMap.remove(names, name)
    for (const tool of arrived) {
      for (const name of namesOf(tool)) {
        if (HashMap.has(names, name)) taken = true
        HashMap.set(names, name, tool)
      }
    }
  })
  return taken ? undefined : next
}

/**
 * Names closest to `name` by edit distance (case-insensitive), or containing it; at most three, best first.
 *
 * @since 0.1.0
 * @category utilities
 */
export const closestNames = (name: string, candidates: ReadonlyArray<string>): ReadonlyArray<string> => {
  const wanted = name.toLowerCase()
  return candidates
    .map((candidate) => {
      const lower = candidate.toLowerCase()
      const contains = wanted.length >= 3 && (lower.includes(wanted) || wanted.includes(lower))
      return { candidate, distance: contains ? 0 : editDistance(wanted, lower), contains }
    })
    .filter(({ candidate, contains, distance }) =>
      contains || distance <= Math.max(2, Math.floor(candidate.length / 3))
    )
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => candidate)
}
