/**
 * `ListMcpResourcesTool` (`server?`) and `ReadMcpResourceTool` (`server`, `uri`), Claude Code's tools over the
 * resources of the configured MCP servers (`resources/list`, `resources/read`).
 *
 * Governed by the server's rules: each call is governed as `mcp__<server>__resources` too, so `mcp__<server>` and
 * `mcp__<server>__*` deny and ask rules apply to its resources as to its tools (a listing of every server is denied
 * when any listed server is); `ReadMcpResourceTool(<server>)` rules name one server. Both are read-only: without a
 * rule that says otherwise they run, as Claude Code runs them, plan mode included. A server the person has not
 * enabled (an untrusted project's) has no connection, so nothing of it is listed or read. Both are deferred (found
 * through ToolSearch, as MCP tools are) and enabled only while some connected server offers resources.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { PermissionCheck } from "../Tool/Permission.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import type { ImageBlock, TextBlock, ToolResultContent } from "../Tool/Wire.js"
import { McpError } from "./Errors.js"
import { serverResource } from "./internal/adapt.js"
import { base64Bytes, IMAGE_TYPES } from "./internal/results.js"
import { McpServers } from "./McpServers.js"
import type { ResourceContents, ServerResource } from "./McpServers.js"

// ---------------------------------------------------------------------------------------------------------------
// definitions
// ---------------------------------------------------------------------------------------------------------------

const Resource = Schema.Struct({
  server: Schema.String,
  uri: Schema.String,
  name: Schema.String,
  mimeType: Schema.optional(Schema.String),
  description: Schema.optional(Schema.String)
})

const Contents = Schema.Union(
  Schema.Struct({ uri: Schema.String, mimeType: Schema.optional(Schema.String), text: Schema.String }),
  Schema.Struct({ uri: Schema.String, mimeType: Schema.optional(Schema.String), blob: Schema.String })
)

/**
 * ListMcpResourcesTool's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const ListMcpResourcesInput = Schema.Struct({
  server: Schema.optional(Schema.String.annotations({ description: "Optional server name to filter resources by" }))
})

/**
 * ReadMcpResourceTool's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const ReadMcpResourceInput = Schema.Struct({
  server: Schema.String.annotations({ description: "The MCP server name" }),
  uri: Schema.String.annotations({ description: "The resource URI to read" })
})

/**
 * The ListMcpResourcesTool tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const ListMcpResourcesTool = Tool.make("ListMcpResourcesTool", {
  description: "Lists available resources from configured MCP servers.\n" +
    "Each resource object includes a 'server' field indicating which server it's from.\n\n" +
    "Usage examples:\n- List all resources from all servers: `listMcpResources`\n" +
    "- List resources from a specific server: `listMcpResources({ server: \"myserver\" })`",
  input: ListMcpResourcesInput,
  output: Schema.Array(Resource),
  failure: Schema.instanceOf(McpError),
  loading: "deferred",
  searchHint: "mcp resources list servers"
})

/**
 * The ReadMcpResourceTool tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const ReadMcpResourceTool = Tool.make("ReadMcpResourceTool", {
  description: "Reads a specific resource from an MCP server, identified by server name and resource URI.\n\n" +
    "Parameters:\n- server (required): The name of the MCP server from which to read the resource\n" +
    "- uri (required): The URI of the resource to read",
  input: ReadMcpResourceInput,
  output: Schema.Array(Contents),
  failure: Schema.instanceOf(McpError),
  loading: "deferred",
  searchHint: "mcp resource read uri"
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const listingText = (resources: ReadonlyArray<ServerResource>): string =>
  resources.length === 0
    ? "No resources found. MCP servers may still provide tools even if they have no resources."
    : JSON.stringify(resources)

/** A resource's contents for the model: text as text, images as image blocks, other binary data described. */
const contentsToModel = (contents: ReadonlyArray<ResourceContents>): ToolResultContent => {
  if (contents.length === 0) return "The resource has no contents."
  const blocks = contents.map((part): TextBlock | ImageBlock => {
    const mime = part.mimeType === undefined ? "" : ` (${part.mimeType})`
    if ("text" in part) return { type: "text", text: `[resource ${part.uri}${mime}]\n${part.text}` }
    if (part.mimeType !== undefined && IMAGE_TYPES.has(part.mimeType)) {
      return {
        type: "image",
        source: { type: "base64", media_type: part.mimeType as ImageBlock["source"]["media_type"], data: part.blob }
      }
    }
    return { type: "text", text: `[binary resource ${part.uri}${mime}, ${base64Bytes(part.blob)} bytes, not shown]` }
  })
  return blocks.every((block) => block.type === "text") ? blocks.map((block) => block.text).join("\n") : blocks
}

const enabledWhileOffered = (servers: McpServers["Type"]) =>
  Effect.sync(() =>
    servers.resourceServers().length > 0
      ? Tool.Availability.enabled
      : Tool.Availability.disabled("no connected MCP server offers resources")
  )

/** ListMcpResourcesTool's service over the servers. */
const listing = (servers: McpServers["Type"]) =>
  ListMcpResourcesTool.service({
    isEnabled: enabledWhileOffered(servers),
    traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
    claims: (input) =>
      (input.server === undefined ? servers.resourceServers() : [input.server]).map((server) =>
        Tool.Claim.read(serverResource(server))
      ),
    governedAs: (input) =>
      (input.server === undefined ? servers.resourceServers() : [input.server]).map(servers.ruleSubject),
    checkPermissions: () => Effect.succeed(PermissionCheck.allow({ reason: "listing resources changes nothing" })),
    call: (input) => servers.listResources(input.server),
    activity: (input) => input.server === undefined ? "Listing MCP resources" : `Listing ${input.server}'s resources`,
    renderUse: (input) => [
      UiBlock.Title({ text: `ListMcpResourcesTool(${input.server ?? "every server"})` })
    ],
    renderResult: (output) => [
      UiBlock.Text({
        text: output.length === 0
          ? "No resources"
          : output.map((resource) => `${resource.server}: ${resource.uri} (${resource.name})`).join("\n")
      })
    ],
    toModel: listingText,
    renderFailure: (failure) => failure.message
  })

/** ReadMcpResourceTool's service over the servers. */
const reading = (servers: McpServers["Type"]) =>
  ReadMcpResourceTool.service({
    isEnabled: enabledWhileOffered(servers),
    // The contents come from another party: open-world, never low-risk.
    traits: () => ({ readOnly: true, concurrencySafe: true, openWorld: true, idempotent: true }),
    claims: (input) => [Tool.Claim.read(serverResource(input.server))],
    governedAs: (input) => [servers.ruleSubject(input.server)],
    matchesRule: (content, input) => content === input.server,
    checkPermissions: () =>
      Effect.succeed(PermissionCheck.allow({
        reason: "reading a resource of a server the person enabled changes nothing"
      })),
    call: (input) => servers.readResource(input.server, input.uri),
    activity: (input) => `Reading ${input.uri} from ${input.server}`,
    classifierInput: (input) => `${input.server} ${input.uri}`,
    renderUse: (input) => [UiBlock.Title({ text: `ReadMcpResourceTool(${input.server}, ${input.uri})` })],
    renderResult: (output) => [
      UiBlock.Text({
        text: output.map((part) =>
          "text" in part ? part.text : `[${part.mimeType ?? "binary"}, ${base64Bytes(part.blob)} bytes]`
        ).join("\n")
      })
    ],
    toModel: contentsToModel,
    renderFailure: (failure) => failure.message
  })

/**
 * Both tools' services, over the {@link McpServers} in context.
 *
 * @since 0.3.0
 * @category constructors
 */
export const make: Effect.Effect<
  Context.Context<Tool.IdentifierOf<typeof ListMcpResourcesTool> | Tool.IdentifierOf<typeof ReadMcpResourceTool>>,
  never,
  McpServers
> = Effect.map(
  McpServers,
  (servers) =>
    Context.make(ListMcpResourcesTool, listing(servers)).pipe(Context.add(ReadMcpResourceTool, reading(servers)))
)

/**
 * Both tools, over the {@link McpServers} in context.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer: Layer.Layer<
  Tool.IdentifierOf<typeof ListMcpResourcesTool> | Tool.IdentifierOf<typeof ReadMcpResourceTool>,
  never,
  McpServers
> = Layer.effectContext(make)

/**
 * The two tools, for a registry.
 *
 * @since 0.3.0
 * @category tools
 */
export const tools = [ListMcpResourcesTool, ReadMcpResourceTool] as const
