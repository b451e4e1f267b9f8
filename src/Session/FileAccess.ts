/**
 * FileAccess: the narrow file-system service the built-in file tools go through (realpath, stat, lstat, link counts,
 * readdir, a no-follow open that reports what it opened, atomic replacement), so a test can swap the disk for memory.
 *
 * Why not `@effect/platform`'s `FileSystem`: the checks the tools need to make "resolve, check, open" one step are not
 * in it — an open that refuses a symlink as its last component (`O_NOFOLLOW`) and does not block on a FIFO
 * (`O_NONBLOCK`), the real path of an opened descriptor, device/inode and link counts for hard-link identity, an
 * exclusive create for the atomic write's temp file. A program that provides only a `FileSystem` (a mock included)
 * does not change where the file tools read, nor how the Workspace resolves their paths: provide
 * {@link FileAccess.layerMemory} (from `effect-tool-runtime/testing`) or your own `FileAccess` for that.
 * `FileSystem` is still what the rest of the runtime (settings, sessions) uses.
 *
 * Layers: {@link FileAccess.layer} (Node, `node:fs`, the default) and {@link FileAccess.layerMemory} (a tree in memory:
 * files, directories and symlinks; it never touches the disk).
 *
 * Batches for the walks of Glob and Grep ({@link lstatAll}, {@link realPathAll}, {@link readDirectoryEntriesAll}): one
 * Effect for many paths, synchronous in short slices on the Node layer's own members (`internal/fileAccessNodeBatch`),
 * the service's member per path on any other layer.
 *
 * @since 0.3.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import { dual } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { makeMemory } from "./internal/fileAccessMemory.js"
import type { MemoryTree } from "./internal/fileAccessMemory.js"
import { makeNode } from "./internal/fileAccessNode.js"
import { lstatAllNode, readDirectoryEntriesAllNode, realPathAllNode } from "./internal/fileAccessNodeBatch.js"

/**
 * What is at a path.
 *
 * @since 0.3.0
 * @category models
 */
export type FileType =
  | "File"
  | "Directory"
  | "SymbolicLink"
  | "FIFO"
  | "Socket"
  | "CharacterDevice"
  | "BlockDevice"
  | "Unknown"

/**
 * A `stat`, as much of it as the tools use.
 *
 * @since 0.3.0
 * @category models
 */
export interface FileInfo {
  readonly type: FileType
  readonly size: number
  readonly mtimeMs: number
  /** Permission bits. */
  readonly mode: number
  /** Device and inode: two names with equal ones are one file. */
  readonly dev: number
  readonly ino: number
  /** Link count: only a file with more than one link has another name. */
  readonly nlink: number
}

/**
 * One name in a directory and what it is (not following a symlink: a link is a `SymbolicLink`).
 *
 * @since 0.3.0
 * @category models
 */
export interface DirectoryEntry {
  readonly name: string
  readonly type: FileType
}

/**
 * A file opened for reading by {@link FileAccess}: what was opened (its descriptor's own stat and real path), read
 * from the descriptor, never again by path.
 *
 * @since 0.3.0
 * @category models
 */
export interface ReadHandle {
  /** The stat of the opened descriptor. */
  readonly info: FileInfo
  /** The real path of what was opened (from the descriptor where the platform tells it). */
  readonly realPath: string
  /** Up to `length` bytes from `position`. */
  readonly read: (position: number, length: number) => Effect.Effect<Uint8Array, FileAccessError>
  /** The whole file from the start, as chunks of at most `chunkBytes`. */
  readonly chunks: (chunkBytes: number) => AsyncIterable<Uint8Array>
}

/**
 * Options of {@link FileAccess}'s `writeFileAtomic`.
 *
 * @since 0.3.0
 * @category models
 */
export interface AtomicWrite {
  /** Runs right before the new content replaces the old; throwing aborts the write (the target is untouched). */
  readonly beforeRename?: () => Promise<void>
  readonly signal?: AbortSignal
}

/**
 * A file operation failed; `reason` is the platform's code (`ENOENT`, `ELOOP`, ...) when there is one.
 *
 * @since 0.3.0
 * @category errors
 */
export class FileAccessError
  extends Schema.TaggedError<FileAccessError>("effect-tool-runtime/Session/FileAccessError")("FileAccessError", {
    path: Schema.String,
    reason: Schema.String,
    message: Schema.String
  })
{}

/**
 * The Node implementation: stateless, so one serves every program (and the batches, {@link lstatAll} and its kin,
 * can recognise its members).
 */
const nodeDefault = makeNode()

/**
 * The FileAccess service. The `...Sync` members serve the tools' synchronous stages (`plan`, `claims`,
 * `matchesRule`).
 *
 * @since 0.3.0
 * @category tags
 */
export class FileAccess extends Context.Tag("effect-tool-runtime/FileAccess")<
  FileAccess,
  {
    /** Symlinks resolved; fails when the path does not exist. */
    readonly realPath: (path: string) => Effect.Effect<string, FileAccessError>
    /** {@link realPath}, synchronously; undefined when the path does not exist. */
    readonly realPathSync: (path: string) => string | undefined
    /** The target of a symlink as stored (it may not exist: a dangling link); undefined when it is no symlink. */
    readonly readLinkSync: (path: string) => string | undefined
    /** Follows symlinks; undefined when nothing is there. */
    readonly stat: (path: string) => Effect.Effect<FileInfo | undefined>
    /** Does not follow a symlink at the path. */
    readonly lstat: (path: string) => Effect.Effect<FileInfo | undefined>
    /**
     * {@link stat}, synchronously: undefined when nothing is there (no such name, a path through a file, a loop);
     * throws a {@link FileAccessError} when something may be there but cannot be inspected (`EACCES`, `EIO`...).
     */
    readonly statSync: (path: string) => FileInfo | undefined
    /** The names in a directory. */
    readonly readDirectory: (path: string) => Effect.Effect<ReadonlyArray<string>, FileAccessError>
    /** The entries of a directory with their types (as `readdir` with file types: symlinks not followed), by name. */
    readonly readDirectoryEntries: (path: string) => Effect.Effect<ReadonlyArray<DirectoryEntry>, FileAccessError>
    /**
     * Whether paths name the host's own files, so another process (ripgrep) sees the same tree: Grep searches with
     * ripgrep only then, and in JavaScript through this service otherwise.
     */
    readonly onDisk: boolean
    /**
     * Opens a regular file for reading: refuses a symlink as the last component (`ELOOP`), never blocks on a FIFO,
     * refuses anything but a regular file (`EINVAL`). The handle is closed with the Scope.
     */
    readonly openRead: (path: string) => Effect.Effect<ReadHandle, FileAccessError, Scope.Scope>
    /** Replaces (or creates) a file atomically: readers see the old or the new content, never a mix. */
    readonly writeFileAtomic: (
      path: string,
      content: Uint8Array,
      options?: AtomicWrite
    ) => Effect.Effect<void, FileAccessError>
  }
>() {
  /**
   * The Node implementation (`node:fs`): the default.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layer: Layer.Layer<FileAccess> = Layer.succeed(FileAccess, nodeDefault)

  /**
   * A file system in memory, seeded with `files` (absolute path to content; parent directories are created) and
   * `symlinks` (absolute path to target). Never touches the disk. Exported for tests from
   * `effect-tool-runtime/testing` too.
   *
   * @since 0.3.0
   * @category layers
   */
  static readonly layerMemory = (tree: MemoryTree = {}): Layer.Layer<FileAccess> =>
    Layer.sync(FileAccess, () => makeMemory(tree))
}

/**
 * The contents of {@link FileAccess.layerMemory}.
 *
 * @since 0.3.0
 * @category models
 */
export type { MemoryTree }

/**
 * The FileAccess in context, or the Node implementation when none is provided: the file tools' layers use it, so
 * existing programs keep working unchanged and a provided layer (memory, your own) is honoured.
 *
 * @since 0.3.0
 * @category accessors
 */
export const current: Effect.Effect<FileAccess["Type"]> = Effect.map(
  Effect.serviceOption(FileAccess),
  Option.getOrElse(() => nodeDefault)
)

/** Calls made at once by a layer's own member in the batches below (as Glob and the walk made them before). */
const lstatConcurrency = 32
const directoryConcurrency = 8

/**
 * The `lstat` of many paths, in order: what `Effect.forEach(paths, access.lstat)` answers. When the service's `lstat`
 * is the Node layer's own, the batch runs synchronously in slices of a few milliseconds (a stat of a cached inode
 * costs a fraction of a trip through libuv's thread pool); any other `lstat` (the memory layer, your own layer, the
 * Node one with `lstat` replaced) is called for every path.
 *
 * @since 0.3.0
 * @category utils
 */
export const lstatAll: {
  (paths: ReadonlyArray<string>): (self: FileAccess["Type"]) => Effect.Effect<ReadonlyArray<FileInfo | undefined>>
  (self: FileAccess["Type"], paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<FileInfo | undefined>>
} = dual(
  2,
  (self: FileAccess["Type"], paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<FileInfo | undefined>> =>
    self.lstat === nodeDefault.lstat
      ? lstatAllNode(paths)
      : Effect.forEach(paths, (path) => self.lstat(path), { concurrency: lstatConcurrency })
)

/**
 * The `realPath` of many paths, in order, undefined where it fails: as {@link lstatAll}, synchronously in slices on
 * the Node layer's own `realPath`, and any other `realPath` called for every path.
 *
 * @since 0.3.0
 * @category utils
 */
export const realPathAll: {
  (paths: ReadonlyArray<string>): (self: FileAccess["Type"]) => Effect.Effect<ReadonlyArray<string | undefined>>
  (self: FileAccess["Type"], paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string | undefined>>
} = dual(
  2,
  (self: FileAccess["Type"], paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string | undefined>> =>
    self.realPath === nodeDefault.realPath
      ? realPathAllNode(paths)
      : Effect.forEach(paths, (path) => Effect.orElseSucceed(self.realPath(path), () => undefined), {
        concurrency: directoryConcurrency
      })
)

/**
 * The `readDirectoryEntries` of many directories, in order, each a listing or why it could not be listed: as
 * {@link lstatAll}, synchronously in slices on the Node layer's own `readDirectoryEntries`, and any other one called
 * for every directory.
 *
 * @since 0.3.0
 * @category utils
 */
export const readDirectoryEntriesAll: {
  (paths: ReadonlyArray<string>): (
    self: FileAccess["Type"]
  ) => Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<DirectoryEntry>, FileAccessError>>>
  (
    self: FileAccess["Type"],
    paths: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<DirectoryEntry>, FileAccessError>>>
} = dual(
  2,
  (
    self: FileAccess["Type"],
    paths: ReadonlyArray<string>
  ): Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<DirectoryEntry>, FileAccessError>>> =>
    self.readDirectoryEntries === nodeDefault.readDirectoryEntries
      ? readDirectoryEntriesAllNode(paths)
      : Effect.forEach(paths, (path) => Effect.either(self.readDirectoryEntries(path)), {
        concurrency: directoryConcurrency
      })
)
