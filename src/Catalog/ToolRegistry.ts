/**
 * The ToolRegistry knows which tools exist: it resolves names and aliases to a tool's definition and service, and
 * suggests the closest names when the model asks for one that does not exist.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { editDistance } from "../Shared/closest.js"
import type { AnyService, Definition, Tool } from "../Tool/Tool.js"

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
export const makeRegistry = (tools: ReadonlyArray<RegisteredTool>): Registry => {
  const byName = new Map<string, RegisteredTool>()
  for (const tool of tools) {
    // Checked here too: tools built at run time (MCP) do not pass through Tool.make.
    if (!toolNamePattern.test(tool.definition.name)) {
      throw new Error(
        `Tool name ${
          JSON.stringify(tool.definition.name)
        } cannot be sent to a model: names must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -; 1 to 64 characters)`
      )
    }
    for (const name of [tool.definition.name, ...tool.definition.aliases]) {
      if (byName.has(name)) throw new Error(`Two tools are registered under the name ${name}`)
      byName.set(name, tool)
    }
  }
  const names = tools.map((tool) => tool.definition.name)
  const registry: Registry = {
    tools,
    lookup: (name) => Option.fromNullable(byName.get(name)),
    suggest: (name) => closestNames(name, names),
    snapshot: () => registry
  }
  return registry
}

/**
 * A registry whose tools change: `current` returns the tools now (the same array while nothing changed). Lookups
 * read the latest tools; {@link ToolRegistry} `snapshot` fixes them for a run. Throws, like {@link makeRegistry}, when
 * `current` returns duplicate names.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeDynamicRegistry = (current: () => ReadonlyArray<RegisteredTool>): Registry => {
  let last: ReadonlyArray<RegisteredTool> | undefined
  let registry: Registry | undefined
  const snapshot = (): Registry => {
    const tools = current()
    if (tools !== last || registry === undefined) {
      registry = makeRegistry(tools)
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
