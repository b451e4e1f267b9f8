/**
 * The Workspace: the directories the agent works in (the working directory plus additional directories), and the
 * one way paths from the model are resolved before anything checks them: made absolute, normalised, and resolved
 * through symlinks (for a path that does not exist yet, through its nearest existing ancestor).
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"
import { realPathOfMissing, realPathOfMissingEffect } from "../Shared/realPath.js"
import type { LinkReader, LinkReaderEffect } from "../Shared/realPath.js"
import { current as currentFileAccess, FileAccess } from "./FileAccess.js"

/**
 * A path from the model, resolved.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedPath {
  /** As the model wrote it. */
  readonly requested: string
  /** Absolute and normalised, symlinks not resolved. */
  readonly absolute: string
  /** Symlinks resolved (through the nearest existing ancestor when the path does not exist). */
  readonly real: string
  readonly exists: boolean
  /** Whether `real` (and `absolute`) lie inside one of the workspace roots. */
  readonly inside: boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface WorkspaceOptions {
  readonly cwd: string
  readonly additionalDirectories?: ReadonlyArray<string> | undefined
  readonly home?: string | undefined
}

/**
 * The Workspace service.
 *
 * @since 0.1.0
 * @category tags
 */
export class Workspace extends Context.Tag("effect-tool-runtime/Workspace")<
  Workspace,
  {
    /** The working directory, symlinks resolved. */
    readonly cwd: string
    readonly home: string
    /** The working directory and the additional directories, symlinks resolved. */
    readonly roots: ReadonlyArray<string>
    /** Resolves a path from the model (relative paths against the working directory; `~/` against home). */
    readonly resolve: (path: string) => Effect.Effect<ResolvedPath>
    /** Whether an absolute, already resolved path lies inside a root. */
    readonly contains: (absolutePath: string) => boolean
  }
>() {
  /**
   * A workspace over real directories; roots are resolved through symlinks once, at construction. Paths resolve
   * through the {@link FileAccess} in context, else through `node:fs` (see {@link make}): give it the FileAccess the
   * file tools read (`Layer.provide`), or use {@link Workspace.layerFileAccess}, which requires one. A FileAccess
   * merged beside this layer is not in its context, and its paths resolve on disk.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = (options: WorkspaceOptions): Layer.Layer<Workspace> => Layer.effect(Workspace, make(options))

  /**
   * A workspace whose paths resolve through the {@link FileAccess} in context (the memory one in tests), so nothing
   * touches the disk when the file system is in memory.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerFileAccess = (options: WorkspaceOptions): Layer.Layer<Workspace, never, FileAccess> =>
    Layer.effect(Workspace, Effect.flatMap(FileAccess, (access) => makeWith(options, linksOf(access))))
}

/**
 * Whether `child` is `parent` or lies below it (both absolute and normalised).
 *
 * @since 0.1.0
 * @category utilities
 */
export const isWithin = (parent: string, child: string): boolean => {
  const relative = nodePath.relative(parent, child)
  // `..cache` is a name inside; only `..` itself or `../...` leaves.
  return relative === "" ||
    (relative !== ".." && !relative.startsWith(`..${nodePath.sep}`) && !nodePath.isAbsolute(relative))
}

/**
 * Builds a workspace whose paths resolve through the {@link FileAccess} in context, else through `node:fs`: the
 * file system the file tools read is the one their paths are resolved on.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: WorkspaceOptions): Effect.Effect<Workspace["Type"]> =>
  Effect.flatMap(currentFileAccess, (access) => makeWith(options, linksOf(access)))

/**
 * Links read through a FileAccess, synchronously: a native `realpath` is one system call, where an asynchronous one
 * is a trip through libuv's thread pool (and `@effect/platform`'s Node `realPath` is Node's JavaScript `realpath`,
 * one such trip per path component).
 */
const linksOf = (access: FileAccess["Type"]): LinkReaderEffect => ({
  realPath: (path) => Effect.sync(() => access.realPathSync(path)),
  readLink: (path) => Effect.sync(() => access.readLinkSync(path))
})

const makeWith = (options: WorkspaceOptions, reader: LinkReaderEffect) =>
  Effect.gen(function*() {
    const home = options.home ?? os.homedir()
    const realOrSelf = (p: string) => Effect.map(reader.realPath(p), (real) => real ?? p)

    /**
     * Resolves symlinks through the nearest existing ancestor, a dangling symlink to its target (`Shared/realPath`);
     * the missing tail is appended as written.
     */
    const realOf = (absolute: string): Effect.Effect<{ readonly real: string; readonly exists: boolean }> =>
      realPathOfMissingEffect(absolute, reader)

    const given = [
      nodePath.resolve(options.cwd),
      ...(options.additionalDirectories ?? []).map((dir) => nodePath.resolve(options.cwd, dir))
    ]
    const [cwd, ...additional] = yield* Effect.forEach(given, realOrSelf)
    const roots = [cwd!, ...additional]
    const contains = (absolutePath: string) => roots.some((root) => isWithin(root, absolutePath))
    // The roots as written too, so `/tmp/w/x` counts as inside when `/tmp` is a link and the root is `/private/tmp/w`.
    const containsAsWritten = (absolutePath: string) =>
      contains(absolutePath) || given.some((root) => isWithin(root, absolutePath))

    const resolve = (requested: string): Effect.Effect<ResolvedPath> => {
      const expanded = requested === "~"
        ? home
        : requested.startsWith("~/")
        ? nodePath.join(home, requested.slice(2))
        : requested
      const absolute = nodePath.resolve(cwd!, expanded)
      return Effect.map(realOf(absolute), ({ exists, real }) => ({
        requested,
        absolute,
        real,
        exists,
        // Both must be inside: a symlink inside pointing out is outside, and so is a path that only its link makes look
        // inside.
        inside: contains(real) && containsAsWritten(absolute)
      }))
    }
    return { cwd: cwd!, home, roots, resolve, contains }
  })

/**
 * Symlinks resolved through the nearest existing ancestor (a dangling one to its target), synchronously: the same answer as
 * `Workspace.resolve(...).real`, for the synchronous stages.
 *
 * @since 0.2.0
 * @category utils
 */
export const realPathSync = (absolute: string): string => realPathOfMissing(absolute, nodeLinks)

/** `node:fs` as a {@link LinkReader}. */
const nodeLinks: LinkReader = {
  realPath: (path) => {
    try {
      return fs.realpathSync.native(path)
    } catch {
      return undefined
    }
  },
  readLink: (path) => {
    try {
      return fs.readlinkSync(path)
    } catch {
      return undefined
    }
  }
}
