/**
 * The built-in tools (`effect-tool-runtime/tools`): Read, Write, Edit, Glob, Grep and Bash, with what they share
 * (Workspace, FileState), and {@link builtinLayer}, which provides all of them. ToolSearch needs a session's
 * catalogue, so it is not among them: `Search.catalogLayer(tools)` adds it.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import type { ResultStore } from "../Runtime/ResultStore.js"
import type * as Tool from "../Tool/Tool.js"
import { BashTool } from "./Bash.js"
import type { BashOptions } from "./Bash.js"
import * as FileTools from "./FileTools.js"
import { FileState } from "./FileState.js"
import type { FileStateOptions } from "./FileState.js"
import type { SandboxUnavailable } from "./Shell/Sandbox.js"
import type { Workspace } from "./Workspace.js"

/** @since 0.1.0 */
export { BashTool } from "./Bash.js"
/** @since 0.1.0 */
export type { BashOptions } from "./Bash.js"
/** @since 0.1.0 */
export { Edit, Glob, Grep, Read, Write } from "./FileTools.js"
/** @since 0.1.0 */
export { FileState } from "./FileState.js"
/** @since 0.1.0 */
export { Workspace } from "./Workspace.js"
/** @since 0.1.0 */
export type { ResolvedPath, WorkspaceOptions } from "./Workspace.js"
/** @since 0.1.0 */
export { analyze } from "./Shell/Analysis.js"
/** @since 0.1.0 */
export { classifyReadOnly } from "./Shell/ReadOnly.js"
/** @since 0.2.0 */
export { ToolSearch } from "./ToolSearch.js"
/**
 * ToolSearch's index, queries and layers (`Search.catalogLayer(tools)`: a session's registry and catalogue with
 * deferral and search).
 *
 * @since 0.2.0
 */
export * as Search from "./ToolSearch.js"

/**
 * Every built-in tool, in the order the model is shown them.
 *
 * @since 0.1.0
 * @category tools
 */
export const builtinTools = [...FileTools.tools, BashTool] as const

/**
 * The Context identifiers of the built-in tools.
 *
 * @since 0.1.0
 * @category models
 */
export type BuiltinTools = Tool.Tool.IdentifierOf<(typeof builtinTools)[number]>

/**
 * Options of {@link builtinLayer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuiltinOptions {
  readonly bash?: BashOptions
  readonly fileState?: FileStateOptions
}

/**
 * All built-in tools, with a FileState of their own; they need the Workspace, the ResultStore and a command
 * executor (`NodeContext.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const builtinLayer = (
  options: BuiltinOptions = {}
): Layer.Layer<BuiltinTools, SandboxUnavailable, Workspace | ResultStore | CommandExecutor.CommandExecutor> =>
  Layer.mergeAll(FileTools.layer.pipe(Layer.provide(FileState.layer(options.fileState))), BashTool.layer(options.bash))
