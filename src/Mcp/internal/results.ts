/**
 * MCP tool results as tool_result content: `structuredContent` as JSON text when present, otherwise every content
 * block converted (text; image; audio, embedded resources and resource links described in text).
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js"
import type { ImageBlock, TextBlock, ToolResultContent } from "../../Tool/Wire.js"

/** The image types a tool_result can carry as image blocks. */
export const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"])

/** A base64 payload's decoded size, for descriptions of what was left out. */
export const base64Bytes = (data: string): number =>
  Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0)

const text = (value: string): TextBlock => ({ type: "text", text: value })

const convertBlock = (block: ContentBlock): TextBlock | ImageBlock => {
  switch (block.type) {
    case "text":
      return text(block.text)
    case "image":
      return IMAGE_TYPES.has(block.mimeType)
        ? {
          type: "image",
          source: { type: "base64", media_type: block.mimeType as ImageBlock["source"]["media_type"], data: block.data }
        }
        : text(`[image of type ${block.mimeType} (${base64Bytes(block.data)} bytes) not shown: unsupported image type]`)
    case "audio":
      return text(`[audio of type ${block.mimeType} (${base64Bytes(block.data)} bytes) not shown]`)
    case "resource": {
      const resource = block.resource
      const mime = resource.mimeType === undefined ? "" : ` (${resource.mimeType})`
      if ("text" in resource && typeof resource.text === "string") {
        return text(`[resource ${resource.uri}${mime}]\n${resource.text}`)
      }
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : ""
      if (resource.mimeType !== undefined && IMAGE_TYPES.has(resource.mimeType)) {
        return {
          type: "image",
          source: { type: "base64", media_type: resource.mimeType as ImageBlock["source"]["media_type"], data: blob }
        }
      }
      return text(`[binary resource ${resource.uri}${mime}, ${base64Bytes(blob)} bytes, not shown]`)
    }
    case "resource_link": {
      const mime = block.mimeType === undefined ? "" : ` (${block.mimeType})`
      const description = block.description === undefined ? "" : `: ${block.description}`
      return text(`[resource link ${block.name} ${block.uri}${mime}${description}]`)
    }
  }
}

/** The tool_result content of a result. */
export const toContent = (result: CallToolResult): ToolResultContent => {
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent)
  const blocks = (result.content ?? []).map(convertBlock)
  return blocks.every((block) => block.type === "text") ? blocks.map((block) => block.text).join("\n") : blocks
}

/** The text of a result, for error messages and the UI. */
export const textOf = (result: CallToolResult): string =>
  (result.content ?? []).flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")
