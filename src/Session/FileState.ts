/**
 * What one session has read: for each file (by real path) the hash of the content the model saw, its mtime and
 * size, and whether the read was partial. Write and Edit consult it so that the model never overwrites a file it
 * has not seen, or has seen only in an older version; they update it after writing, so consecutive edits of one
 * file in one turn work without re-reading.
 *
 * The memory is bounded: least recently used entries go first, once there are more than `maxEntries` of them or
 * the sizes of the files they describe add up to more than `maxBytes` (the entries hold no content, but the bound
 * mirrors how much the model has been shown). The paths it dropped are remembered (names only, the last 1,000), so a
 * write to a file read long ago says that it must be read again, not that it was never read.
 *
 * One `FileState` layer is one session.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as crypto from "node:crypto"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * What the model saw of one file.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileRecord {
  /**
   * sha256 (hex) of the whole file as it was read; undefined when a ranged read stopped before the end of the file
   * (the rest was never looked at, so there is nothing to hash cheaply).
   */
  readonly contentHash: string | undefined
  readonly mtimeMs: number
  readonly size: number
  /** Whether the model saw less than the whole file (a range, or lines cut for length). */
  readonly partial: boolean
}

/**
 * Bounds of the memory.
 *
 * @since 0.1.0
 * @category models
 */
export interface FileStateOptions {
  /** Default 100. */
  readonly maxEntries?: number | undefined
  /** Sum of the recorded files' sizes. Default 25 MB. */
  readonly maxBytes?: number | undefined
}

/**
 * The FileState service.
 *
 * @since 0.1.0
 * @category tags
 */
export class FileState extends Context.Tag("effect-tool-runtime/Tools/FileState")<
  FileState,
  {
    /** The record of a file (by real path); marks it recently used. */
    readonly get: (realPath: string) => Effect.Effect<Option.Option<FileRecord>>
    /** Records a read or a write. */
    readonly record: (realPath: string, record: FileRecord) => Effect.Effect<void>
    /** Forgets a file. */
    readonly forget: (realPath: string) => Effect.Effect<void>
    /** The real paths currently remembered, least recently used first. */
    readonly paths: Effect.Effect<ReadonlyArray<string>>
    /**
     * Whether the file was read, then dropped from the memory to keep it bounded (not remembered now).
     *
     * @since 0.3.0
     */
    readonly wasEvicted?: ((realPath: string) => Effect.Effect<boolean>) | undefined
  }
>() {
  /**
   * A fresh, empty memory: provide one per session.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = (options: FileStateOptions = {}): Layer.Layer<FileState> =>
    Layer.sync(FileState, () => make(options))
}

// ---------------------------------------------------------------------------------------------------------------
// constructors
// ---------------------------------------------------------------------------------------------------------------

/**
 * An in-memory LRU FileState. The newest entry is always kept, even when it alone exceeds `maxBytes`.
 *
 * @since 0.1.0
 * @category constructors
 */
/** How many dropped paths are remembered, for the message. */
const MAX_EVICTED = 1_000

export const make = (options: FileStateOptions = {}): FileState["Type"] => {
  const maxEntries = Math.max(1, options.maxEntries ?? 100)
  const maxBytes = options.maxBytes ?? 25 * 1024 * 1024
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recently used.
  const entries = new Map<string, FileRecord>()
  let bytes = 0
  /** Paths dropped by the bound (not by `forget`), oldest first, at most {@link MAX_EVICTED}. */
  const evicted = new Set<string>()

  const remove = (path: string) => {
    const existing = entries.get(path)
    if (existing === undefined) return
    entries.delete(path)
    bytes -= existing.size
  }

  return {
    get: (path) =>
      Effect.sync(() => {
        const record = entries.get(path)
        if (record === undefined) return Option.none()
        entries.delete(path)
        entries.set(path, record)
        return Option.some(record)
      }),
    record: (path, record) =>
      Effect.sync(() => {
        remove(path)
        evicted.delete(path)
        entries.set(path, record)
        bytes += record.size
        for (const oldest of entries.keys()) {
          if (entries.size <= 1 || (entries.size <= maxEntries && bytes <= maxBytes)) break
          remove(oldest)
          evicted.add(oldest)
          if (evicted.size > MAX_EVICTED) evicted.delete(evicted.values().next().value!)
        }
      }),
    forget: (path) =>
      Effect.sync(() => {
        remove(path)
        evicted.delete(path)
      }),
    paths: Effect.sync(() => [...entries.keys()]),
    wasEvicted: (path) => Effect.sync(() => !entries.has(path) && evicted.has(path))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// utilities
// ---------------------------------------------------------------------------------------------------------------

/**
 * The sha256 (hex) of some content, as {@link FileRecord.contentHash} holds it.
 *
 * @since 0.1.0
 * @category utilities
 */
export const hashContent = (content: string | Uint8Array): string =>
  crypto.createHash("sha256").update(content).digest("hex")
