/**
 * Shared set-up for the file tool tests: real temp directories, the five tools over a Workspace and a FileState,
 * and a ToolRuntime wired with them.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Approver } from "../../../src/Permission/Approver.js"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { FileState } from "../../../src/Session/FileState.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { testRuntime } from "../../../src/testing/index.js"
import type { Outcome } from "../../../src/Tool/Outcome.js"
import type { CallContext } from "../../../src/Tool/Tool.js"
import type { ToolUseBlock } from "../../../src/Tool/Wire.js"
import * as FileTools from "../../../src/Tools/FileTools.js"

/** A fresh real directory (symlinks resolved, so paths compare as the tools print them). */
export { tempDir } from "../../support/index.js"

/** Writes files (creating parents) under a directory. */
export const writeTree = (root: string, files: Record<string, string | Uint8Array>): void => {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(root, name)
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
  }
}

/** The five tools plus the Workspace and FileState they share (both also in the output, for inspection). */
export const toolsLayer = (
  cwd: string,
  options: { readonly additional?: ReadonlyArray<string>; readonly fileState?: Layer.Layer<FileState> } = {}
) =>
  FileTools.layer.pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        Workspace.layer({ cwd, additionalDirectories: options.additional ?? [] }),
        options.fileState ?? FileState.layer()
      )
    ),
    Layer.provide(NodeContext.layer)
  )

/** A ToolRuntime over the file tools (approver allows everything unless told otherwise). */
export const runtimeLayer = (
  cwd: string,
  options: { readonly approver?: Layer.Layer<Approver>; readonly fileState?: Layer.Layer<FileState> } = {}
) => {
  const tools = toolsLayer(cwd, options.fileState === undefined ? {} : { fileState: options.fileState })
  return Layer.merge(testRuntime(FileTools.tools, tools, options.approver ?? Approver.allowAll), tools)
}

let counter = 0
/** A tool_use block with a unique id. */
export const use = (name: string, input: unknown, id = `toolu_${++counter}`): ToolUseBlock => ({
  type: "tool_use",
  id,
  name,
  input
})

/** Runs tool_use blocks as one turn. */
export const execute = (...uses: ReadonlyArray<ToolUseBlock>) => Effect.flatMap(ToolRuntime, (rt) => rt.execute(uses))

/** Runs one tool_use. */
export const executeOne = (toolUse: ToolUseBlock) => Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(toolUse))

/** An outcome's model-facing text. */
export const text = (outcome: Outcome): string => {
  const content = outcome.result.content
  return typeof content === "string" ? content : content.map((b) => (b.type === "text" ? b.text : "[image]")).join("\n")
}

/** A call context for invoking a tool's stages directly. */
export const context: CallContext = {
  toolUseId: "toolu_direct",
  toolName: "direct",
  progress: () => Effect.void,
  isReadDenied: () => false
}
