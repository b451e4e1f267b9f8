/**
 * The file tools together: {@link Read}, {@link Write}, {@link Edit}, {@link Glob} and {@link Grep}, under Claude
 * Code's names and parameters, and one Layer providing all five.
 *
 * ```ts
 * const session = FileTools.layer.pipe(
 *   Layer.provide([Workspace.layer({ cwd: process.cwd() }), FileState.layer()]),
 *   Layer.provide(NodeContext.layer)
 * )
 * ```
 *
 * The layer needs a {@link Workspace} (the roots every path is checked against) and a {@link FileState} (what this
 * session has read): provide one FileState per session.
 *
 * @since 0.1.0
 */
import * as Layer from "effect/Layer"
import type { FileState } from "../Session/FileState.js"
import type { Workspace } from "../Session/Workspace.js"
import type * as Tool from "../Tool/Tool.js"
import { Edit, layer as EditLayer } from "./Edit.js"
import { Glob, layer as GlobLayer } from "./Glob.js"
import { Grep, layer as GrepLayer } from "./Grep.js"
import { layer as ReadLayer, Read } from "./Read.js"
import { layer as WriteLayer, Write } from "./Write.js"

export {
  /** The Edit tool. @since 0.1.0 @category tools */
  Edit,
  /** The Glob tool. @since 0.1.0 @category tools */
  Glob,
  /** The Grep tool. @since 0.1.0 @category tools */
  Grep,
  /** The Read tool. @since 0.1.0 @category tools */
  Read,
  /** The Write tool. @since 0.1.0 @category tools */
  Write
}

/**
 * The five tools, for a `ToolRegistry`.
 *
 * @since 0.1.0
 * @category tools
 */
export const tools = [Read, Write, Edit, Glob, Grep] as const

/**
 * The services of the five tools.
 *
 * @since 0.1.0
 * @category models
 */
export type FileTools = Tool.IdentifierOf<(typeof tools)[number]>

/**
 * All five tools' behaviour, sharing the session's Workspace and FileState.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileTools, never, Workspace | FileState> = Layer.mergeAll(
  ReadLayer,
  WriteLayer,
  EditLayer,
  GlobLayer,
  GrepLayer
)
