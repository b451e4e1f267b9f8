/**
 * `effect-tool-runtime tools --format anthropic|openai-chat|openai-responses|gemini`: prints, as JSON on standard
 * output, the `tools` value the current settings would send with a request: the built-in tools, the tools of the MCP
 * servers `exec` would start (the project's `.mcp.json` once trusted, `--mcp-config` files), and ToolSearch while
 * tools are deferred. Deny rules that remove a whole tool (from settings files or `--deny`) remove it here too.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as os from "node:os"
import * as nodePath from "node:path"
import { parseArgs } from "node:util"
import * as Definitions from "../Catalog/Definitions.js"
import { DiscoveredTools, ToolCatalog } from "../Catalog/ToolCatalog.js"
import type { CatalogRequest, SearchMode } from "../Catalog/ToolCatalog.js"
import { McpServers } from "../Mcp/McpServers.js"
import * as ResourceTools from "../Mcp/ResourceTools.js"
import { wholeToolDenial } from "../Permission/RulePolicy.js"
import { loadSettings } from "../Settings/Settings.js"
import { BashTool } from "../Tools/Bash.js"
import { builtinTools } from "../Tools/index.js"
import { withTaskTools } from "../Tools/Tasks.js"
import { ToolSearch } from "../Tools/ToolSearch.js"
import { parseToolSearch } from "./args.js"
import { UsageError } from "./input.js"
import { loadMcpConfig } from "./mcp.js"

/** The usage text of `tools`. */
export const TOOLS_USAGE = `Usage: effect-tool-runtime tools [options]

Prints the tool definitions a request would carry, as JSON, in the shape of one provider's API.

Options:
  --format FORMAT        anthropic (default) | openai-chat | openai-responses | gemini
  --strict               OpenAI strict mode (default: the API's own: off for Chat Completions, on for Responses)
  --no-strict            OpenAI non-strict definitions
  --tool-search MODE     on (default, or $ENABLE_TOOL_SEARCH) | off | auto | auto:N (defer when deferred tools
                         exceed N% of the context window)
  --context-window N     tokens, for auto (default 200000)
  --with-announcement    print {"tools": [...], "announcement": "...", "estimated_tokens": N} instead
  --cwd DIR              working directory (default: the current directory)
  --settings FILE        a settings file in Claude Code's format (repeatable)
  --claude-settings      also load ~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json
  --deny RULE            a deny rule (repeatable); a rule for a whole tool removes it
  --mcp-config FILE      MCP servers in .mcp.json format (repeatable): their tools are listed (deferred by default)
  --trust-project        also start the project's .mcp.json servers
  --mcp-trust SERVER     let this MCP server's annotations count (repeatable)
  --help                 this text`

/** What `tools` was told. */
export interface ToolsOptions {
  readonly format: Definitions.Provider
  readonly strict: boolean | undefined
  readonly mode: SearchMode
  readonly contextWindow: number
  readonly withAnnouncement: boolean
  readonly cwd: string
  readonly settingsFiles: ReadonlyArray<string>
  readonly claudeSettings: boolean
  readonly deny: ReadonlyArray<string>
  readonly mcpConfigFiles: ReadonlyArray<string>
  readonly trustProject: boolean
  readonly mcpTrust: ReadonlyArray<string>
}

/** Parses the arguments after `tools`; a UsageError for anything unusable. */
export const parseToolsArgs = (argv: ReadonlyArray<string>): ToolsOptions | "help" => {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      format: { type: "string" },
      strict: { type: "boolean" },
      "no-strict": { type: "boolean" },
      "tool-search": { type: "string" },
      "context-window": { type: "string" },
      "with-announcement": { type: "boolean" },
      cwd: { type: "string" },
      settings: { type: "string", multiple: true },
      "claude-settings": { type: "boolean" },
      deny: { type: "string", multiple: true },
      "mcp-config": { type: "string", multiple: true },
      "trust-project": { type: "boolean" },
      "mcp-trust": { type: "string", multiple: true },
      help: { type: "boolean" }
    }
  })
  if (values.help === true) return "help"
  const format = values.format ?? "anthropic"
  if (!(Definitions.providers as ReadonlyArray<string>).includes(format)) {
    throw new UsageError({ message: `--format must be one of ${Definitions.providers.join(", ")}, got ${format}` })
  }
  const search = parseToolSearch(values["tool-search"], values["context-window"])
  if (Either.isLeft(search)) throw search.left
  return {
    format: format as Definitions.Provider,
    strict: values.strict === true ? true : values["no-strict"] === true ? false : undefined,
    mode: search.right.mode,
    contextWindow: search.right.contextWindow,
    withAnnouncement: values["with-announcement"] === true,
    cwd: values.cwd ?? process.cwd(),
    settingsFiles: values.settings ?? [],
    claudeSettings: values["claude-settings"] === true,
    deny: values.deny ?? [],
    mcpConfigFiles: values["mcp-config"] ?? [],
    trustProject: values["trust-project"] === true,
    mcpTrust: values["mcp-trust"] ?? []
  }
}

/**
 * The request the settings describe: the built-in tools, ToolSearch, and the tools of the MCP servers (started, given
 * their start-up time, and stopped again).
 */
export const toolsRequest = (options: ToolsOptions) =>
  Effect.gen(function*() {
    const cwd = nodePath.resolve(options.cwd)
    const settings = yield* loadSettings({
      claudeSettings: options.claudeSettings,
      files: options.settingsFiles,
      cwd,
      home: os.homedir()
    })
    const denies = withTaskTools(wholeToolDenial({ settings, cliRules: { deny: options.deny } }), BashTool.definition)
    const mcp = yield* loadMcpConfig({ ...options, cwd })
    for (const error of mcp.errors) {
      process.stderr.write(`effect-tool-runtime: warning: MCP configuration: ${error.message}\n`)
    }
    return yield* Effect.gen(function*() {
      const servers = yield* McpServers
      // The LSP tool is enabled only with configured language servers, which `tools` does not load: left out.
      const shown = builtinTools.filter((tool) => tool.definition.name !== "LSP")
      const mcpTools = servers.tools().filter((tool) =>
        !builtinTools.some((builtin) => builtin.definition.name === tool.definition.name)
      )
      // The resource tools are enabled while a server offers resources.
      const resourceTools = servers.resourceServers().length > 0 ? ResourceTools.tools : []
      const catalog = ToolCatalog.layer([...shown, ...resourceTools, ...mcpTools, ToolSearch], {
        mode: options.mode,
        contextWindow: options.contextWindow,
        denies,
        searchToolName: ToolSearch.definition.name
      }).pipe(Layer.provide(DiscoveredTools.layer()))
      return yield* ToolCatalog.request(options.format, options.strict === undefined ? {} : { strict: options.strict })
        .pipe(Effect.provide(catalog))
    }).pipe(Effect.provide(McpServers.layer(mcp)), Effect.scoped)
  }).pipe(Effect.withSpan("cli.tools"), Effect.provide(NodeContext.layer))

/** The JSON `tools` prints. */
export const render = (options: ToolsOptions, request: CatalogRequest): string =>
  JSON.stringify(
    options.withAnnouncement
      ? { tools: request.tools, announcement: request.announcement ?? null, estimated_tokens: request.estimatedTokens }
      : request.tools,
    null,
    2
  )
