/**
 * An MCP server's tool as an ordinary tool: definition (name, description, input schema, loading, timeout) and
 * service (permissions, traits, claims, call, presentation). From here on it goes through the same pipeline as a
 * built-in tool.
 */
import type { CallToolResult, Tool as McpToolDefinition } from "@modelcontextprotocol/sdk/types.js"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { RegisteredTool } from "../../Catalog/ToolRegistry.js"
import { PermissionCheck } from "../../Tool/Permission.js"
import { UiBlock } from "../../Tool/Presentation.js"
import * as Tool from "../../Tool/Tool.js"
import { contentText } from "../../Tool/Wire.js"
import type { ToolResultContent } from "../../Tool/Wire.js"
import type { ServerConfig } from "../Config.js"
import { McpError } from "../Errors.js"
import { inputSchema } from "./inputSchema.js"
import { textOf, toContent } from "./results.js"

/** Claude Code's cap on an MCP tool's description. */
export const MAX_DESCRIPTION = 2_048

/** The resource every call to a server claims: calls to one server are ordered, calls to others are not. */
export const serverResource = (server: string): string => `mcp:${server}`

/** How a tool's call reaches its server. */
export type Caller = (
  tool: string,
  args: Readonly<Record<string, unknown>>,
  options: { readonly timeout: Duration.Duration; readonly context: Tool.CallContext }
) => Effect.Effect<CallToolResult, McpError>

const capped = (
  text: string
): string => (text.length <= MAX_DESCRIPTION ? text : `${text.slice(0, MAX_DESCRIPTION - 1)}…`)

/**
 * Traits from annotations, for servers the person trusts; the spec's pessimistic defaults (not read-only,
 * destructive, open-world) for everything absent and for every server they do not.
 */
export const traitsOf = (definition: McpToolDefinition, trusted: boolean): Tool.Traits => {
  const hints = trusted ? definition.annotations ?? {} : {}
  const readOnly = hints.readOnlyHint === true
  return {
    readOnly,
    concurrencySafe: readOnly,
    destructive: !readOnly && hints.destructiveHint !== false,
    openWorld: hints.openWorldHint !== false,
    idempotent: hints.idempotentHint === true
  }
}

/**
 * A result's tool_result content, converted once for both the model and the screen: the runtime asks `toModel`, then
 * `renderResult`, of the same result, so the last conversion is kept until the screen has had it (a WeakMap entry per
 * result showed in bench/mcp's profile).
 */
const lastConversion = () => {
  let result: CallToolResult | undefined
  let content: ToolResultContent = ""
  return {
    of: (output: CallToolResult): ToolResultContent => {
      if (output !== result) {
        content = toContent(output)
        result = output
      }
      return content
    },
    /** Lets go of the last result (it may be large) once nothing will ask for it again. */
    forget: (): void => {
      result = undefined
      content = ""
    }
  }
}

/** Builds the registered tool for one of a server's tools. */
export const adapt = (
  server: ServerConfig,
  definition: McpToolDefinition,
  name: string,
  caller: Caller,
  aliases: ReadonlyArray<string> = [],
  availability: Effect.Effect<Tool.Availability> = Tool.alwaysEnabled
): RegisteredTool => {
  const meta = definition._meta ?? {}
  const searchHint = typeof meta["anthropic/searchHint"] === "string" ? meta["anthropic/searchHint"] : undefined
  const title = definition.annotations?.title ?? definition.title
  const timeout = server.toolTimeouts[definition.name] ?? server.timeout ?? Duration.infinity
  const input = inputSchema(definition.inputSchema as Readonly<Record<string, unknown>>)
  const tool = Tool.make(name, {
    description: capped(definition.description ?? title ?? `${definition.name} from the MCP server ${server.name}`),
    input: input.schema,
    aliases,
    failure: Schema.instanceOf(McpError),
    loading: meta["anthropic/alwaysLoad"] === true ? "always" : "deferred",
    ...(searchHint === undefined ? {} : { searchHint }),
    timeout
  })
  const traits = traitsOf(definition, server.trustAnnotations)
  const claims = [
    traits.readOnly ? Tool.Claim.read(serverResource(server.name)) : Tool.Claim.write(serverResource(server.name))
  ]
  const label = `${server.name} - ${title ?? definition.name} (MCP)`
  // Annotations never grant: no opinion, so the policy decides (rules, mode, or a person, with this tool's rule).
  const permission = Effect.succeed(PermissionCheck.passthrough([name]))
  const converted = lastConversion()
  const service = tool.service({
    checkPermissions: () => permission,
    // A server that is down (or not started) disables its tools until it is back.
    isEnabled: availability,
    traits: () => traits,
    claims: () => claims,
    // A request opens nothing that outlives it (interruption aborts it): no Scope per call.
    call: (args, context) =>
      Tool.unscoped(
        Effect.flatMap(caller(definition.name, args, { timeout, context }), (result) =>
          result.isError === true
            ? Effect.fail(
              new McpError({
                server: server.name,
                reason: "ToolError",
                message: textOf(result) || `${definition.name} failed (the server gave no message)`
              })
            )
            : Effect.succeed(result))
      ),
    renderUse: (
      args
    ) => [UiBlock.Title({ text: label }), UiBlock.Code({ text: JSON.stringify(args, null, 2), language: "json" })],
    toModel: (output) => converted.of(output as CallToolResult),
    renderResult: (output) => {
      const content = converted.of(output as CallToolResult)
      converted.forget()
      return [UiBlock.Text({ text: typeof content === "string" ? content : contentText(content) })]
    },
    renderFailure: (failure) => failure.message
  })
  return { definition: tool.definition, service: service as Tool.AnyService }
}
