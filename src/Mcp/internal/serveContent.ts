/**
 * What the MCP server says about a tool and a call: a tool's MCP listing (JSON Schema, annotations from its
 * definition), an Outcome as a `tools/call` result, and the approval form.
 *
 * @internal
 */
import type { CallToolResult, Tool as McpTool, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import * as Definitions from "../../Catalog/Definitions.js"
import type { ApprovalRequest } from "../../Permission/Approver.js"
import type { Outcome } from "../../Tool/Outcome.js"
import { toText } from "../../Tool/Presentation.js"
import type { Definition } from "../../Tool/Tool.js"

/** The JSON Schema dialect of the canonical input schemas (see `Catalog/internal/jsonSchema.ts`). */
export const JSON_SCHEMA_2020_12 = "https://json-schema.org/draft/2020-12/schema"

/**
 * The static hints of a tool. Traits depend on the input (Bash's `ls` is read-only, its `rm` is not), and a listing
 * has no input, so a hint claims only what holds for every input: a tool that does not touch the environment
 * is read-only, idempotent and closed-world; a file tool that only reads (`fileAccess: "read"`) is read-only,
 * idempotent and closed-world (the workspace); a file tool that edits is destructive and closed-world; any other
 * tool (Bash, WebFetch, an MCP server's tool) gets the spec's pessimistic values: not read-only, destructive, not
 * idempotent, open-world. Hints never decide anything here: every call is governed by the rules.
 */
export const annotationsOf = (definition: Definition.Any): ToolAnnotations => {
  if (!definition.touchesEnvironment || definition.fileAccess === "read") {
    return {
      title: definition.name,
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false
    }
  }
  if (definition.fileAccess === "edit") {
    return {
      title: definition.name,
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false
    }
  }
  return {
    title: definition.name,
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true
  }
}

/** A tool as `tools/list` shows it. */
export const listingOf = (definition: Definition.Any): McpTool => ({
  name: definition.name,
  title: definition.name,
  description: definition.description,
  // The provider-neutral shape (what Anthropic gets): an object at the root, as MCP requires.
  inputSchema: {
    $schema: JSON_SCHEMA_2020_12,
    ...Definitions.anthropic(definition).input_schema,
    type: "object"
  } as unknown as McpTool["inputSchema"],
  annotations: annotationsOf(definition),
  ...(definition.loading === "deferred" ? { _meta: { "effect-tool-runtime/loading": "deferred" } } : {})
})

/** An Outcome as the result of `tools/call`: its tool_result content, `isError`, and how it ended in `_meta`. */
export const resultOf = (outcome: Outcome): CallToolResult => {
  const { content } = outcome.result
  const blocks: CallToolResult["content"] = typeof content === "string"
    ? [{ type: "text", text: content }]
    : content.map((block) => {
      switch (block.type) {
        case "text":
          return { type: "text" as const, text: block.text }
        case "image":
          return { type: "image" as const, data: block.source.data, mimeType: block.source.media_type }
        case "tool_reference":
          return { type: "text" as const, text: `Tool reference: ${block.tool_name}` }
      }
    })
  return {
    content: blocks.length === 0 ? [{ type: "text", text: "" }] : blocks,
    ...(outcome.result.is_error === true ? { isError: true } : {}),
    _meta: {
      "effect-tool-runtime/status": outcome.status,
      ...(outcome.persistedPath === undefined ? {} : { "effect-tool-runtime/persistedPath": outcome.persistedPath })
    }
  }
}

/** The answers the approval form offers (never a free-text field: nothing secret is ever asked for). */
export type FormDecision = "allow_once" | "allow_session" | "deny"

/** The `elicitation/create` form of an approval request. */
export const approvalForm = (request: ApprovalRequest) => {
  const shown = toText(request.ui).trim()
  const choices: Array<{ const: FormDecision; title: string }> = [{ const: "allow_once", title: "Allow once" }]
  if (request.suggestions.length > 0) {
    choices.push({ const: "allow_session", title: `Allow for this session (${request.suggestions.join(", ")})` })
  }
  choices.push({ const: "deny", title: "Deny" })
  return {
    message: `${request.toolName} needs your approval: ${request.message}${shown === "" ? "" : `\n\n${shown}`}`,
    requestedSchema: {
      type: "object" as const,
      properties: {
        decision: {
          type: "string" as const,
          title: "Decision",
          description: "Whether this call may run",
          oneOf: choices,
          default: "deny"
        }
      },
      required: ["decision"]
    }
  }
}
