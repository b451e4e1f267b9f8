/**
 * FileAccess in memory: files, directories and symlinks in a map keyed by absolute path. Never touches the disk.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"
import type { DirectoryEntry, FileAccess, FileInfo, ReadHandle } from "../FileAccess.js"
import { FileAccessError } from "../FileAccess.js"

/** The seed of a memory file system. */
export interface MemoryTree {
  /** Absolute path to content (a string is UTF-8); parents are created. */
  readonly files?: Readonly<Record<string, string | Uint8Array>>
  /** Absolute path to the link's target (relative targets resolve against the link's directory). */
  readonly symlinks?: Readonly<Record<string, string>>
  /** Extra empty directories. */
  readonly directories?: ReadonlyArray<string>
}

type Entry =
  | { readonly type: "File"; bytes: Uint8Array; mtimeMs: number; mode: number; readonly ino: number }
  | { readonly type: "Directory"; readonly ino: number; mtimeMs: number }
  | { readonly type: "SymbolicLink"; readonly target: string; readonly ino: number; mtimeMs: number }

const fail = (path: string, reason: string, what: string) =>
  new FileAccessError({ path, reason, message: `${reason}: ${what}, '${path}'` })

/** @internal */
export const makeMemory = (tree: MemoryTree): FileAccess["Type"] => {
  const entries = new Map<string, Entry>()
  /** The names in each directory, kept with `entries` (see `put`). */
  const children = new Map<string, Set<string>>()
  const put = (path: string, entry: Entry): void => {
    entries.set(path, entry)
    if (path === "/") return
    const parent = nodePath.dirname(path)
    const names = children.get(parent)
    if (names === undefined) children.set(parent, new Set([nodePath.basename(path)]))
    else names.add(nodePath.basename(path))
  }
  let inode = 1
  let clock = 1_700_000_000_000
  const tick = () => ++clock
  put("/", { type: "Directory", ino: inode++, mtimeMs: tick() })

  const ensureDirectory = (path: string): void => {
    if (entries.has(path)) return
    ensureDirectory(nodePath.dirname(path))
    put(path, { type: "Directory", ino: inode++, mtimeMs: tick() })
  }
  const encode = (content: string | Uint8Array) =>
    typeof content === "string" ? new TextEncoder().encode(content) : content
  for (const directory of tree.directories ?? []) ensureDirectory(nodePath.resolve(directory))
  for (const [path, content] of Object.entries(tree.files ?? {})) {
    const absolute = nodePath.resolve(path)
    ensureDirectory(nodePath.dirname(absolute))
    put(absolute, { type: "File", bytes: encode(content), mtimeMs: tick(), mode: 0o644, ino: inode++ })
  }
  for (const [path, target] of Object.entries(tree.symlinks ?? {})) {
    const absolute = nodePath.resolve(path)
    ensureDirectory(nodePath.dirname(absolute))
    put(absolute, { type: "SymbolicLink", target, ino: inode++, mtimeMs: tick() })
  }

  /** The real path of `path` (every symlink followed; the last one too unless `followLast` is off), if it exists. */
  const resolve = (path: string, followLast = true): string | undefined => {
    let hops = 0
    const walk = (absolute: string, last: boolean): string | undefined => {
      const parts = nodePath.resolve(absolute).split("/").filter((part) => part !== "")
      let current = "/"
      for (let i = 0; i < parts.length; i++) {
        const next = nodePath.join(current, parts[i]!)
        const entry = entries.get(next)
        if (entry === undefined) return undefined
        const isLast = i === parts.length - 1
        if (entry.type === "SymbolicLink" && (!isLast || last)) {
          if (++hops > 40) return undefined
          const followed = walk(nodePath.resolve(current, entry.target), true)
          if (followed === undefined) return undefined
          current = followed
        } else {
          if (!isLast && entry.type !== "Directory") return undefined
          current = next
        }
      }
      return current
    }
    return walk(path, followLast)
  }

  const infoOf = (entry: Entry): FileInfo => ({
    type: entry.type,
    size: entry.type === "File" ? entry.bytes.length : entry.type === "SymbolicLink" ? entry.target.length : 4096,
    mtimeMs: entry.mtimeMs,
    mode: entry.type === "File" ? entry.mode : 0o755,
    dev: 1,
    ino: entry.ino,
    nlink: 1
  })
  const statSync = (path: string): FileInfo | undefined => {
    const real = resolve(path)
    const entry = real === undefined ? undefined : entries.get(real)
    return entry === undefined ? undefined : infoOf(entry)
  }
  const lstatSync = (path: string): FileInfo | undefined => {
    const real = resolve(path, false)
    const entry = real === undefined ? undefined : entries.get(real)
    return entry === undefined ? undefined : infoOf(entry)
  }

  const readDirectoryEntries = (path: string): Effect.Effect<ReadonlyArray<DirectoryEntry>, FileAccessError> =>
    Effect.suspend(() => {
      const real = resolve(path)
      const entry = real === undefined ? undefined : entries.get(real)
      if (real === undefined || entry === undefined) {
        return Effect.fail(fail(path, "ENOENT", "no such file or directory"))
      }
      if (entry.type !== "Directory") return Effect.fail(fail(path, "ENOTDIR", "not a directory"))
      const listed = [...(children.get(real) ?? [])].sort().map((name): DirectoryEntry => ({
        name,
        type: entries.get(nodePath.join(real, name))!.type
      }))
      return Effect.succeed(listed)
    })

  return {
    realPath: (path) =>
      Effect.suspend(() => {
        const real = resolve(path)
        return real === undefined
          ? Effect.fail(fail(path, "ENOENT", "no such file or directory"))
          : Effect.succeed(real)
      }),
    realPathSync: (path) => resolve(path),
    stat: (path) => Effect.sync(() => statSync(path)),
    lstat: (path) => Effect.sync(() => lstatSync(path)),
    statSync,
    readDirectory: (path) => Effect.map(readDirectoryEntries(path), (entries) => entries.map((entry) => entry.name)),
    readDirectoryEntries,
    onDisk: false,
    openRead: (path) =>
      Effect.suspend(() => {
        const real = resolve(path, false)
        const entry = real === undefined ? undefined : entries.get(real)
        if (real === undefined || entry === undefined) {
          return Effect.fail(fail(path, "ENOENT", "no such file or directory"))
        }
        if (entry.type === "SymbolicLink") return Effect.fail(fail(path, "ELOOP", "too many symbolic links"))
        if (entry.type !== "File") return Effect.fail(fail(path, "EINVAL", "not a regular file"))
        // A snapshot: what was opened is read, whatever replaces the path later (as with a descriptor).
        const bytes = entry.bytes
        const handle: ReadHandle = {
          info: infoOf(entry),
          realPath: real,
          read: (position, length) => Effect.sync(() => bytes.subarray(position, position + length)),
          chunks: (chunkBytes) => ({
            async *[Symbol.asyncIterator]() {
              for (let at = 0; at < bytes.length; at += chunkBytes) yield bytes.subarray(at, at + chunkBytes)
            }
          })
        }
        return Effect.succeed(handle)
      }),
    writeFileAtomic: (path, content, options) =>
      Effect.tryPromise({
        try: async () => {
          const absolute = nodePath.resolve(path)
          const parent = resolve(nodePath.dirname(absolute))
          if (parent === undefined) ensureDirectory(nodePath.dirname(absolute))
          const directory = parent ?? nodePath.dirname(absolute)
          if (entries.get(directory)?.type !== "Directory") throw fail(path, "ENOTDIR", "not a directory")
          const target = nodePath.join(directory, nodePath.basename(absolute))
          const existing = entries.get(target)
          if (existing?.type === "Directory") throw fail(path, "EISDIR", "illegal operation on a directory")
          await options?.beforeRename?.()
          options?.signal?.throwIfAborted()
          // Like a rename: a symlink at the target is replaced, not followed.
          put(target, {
            type: "File",
            bytes: new Uint8Array(content),
            mtimeMs: tick(),
            mode: existing?.type === "File" ? existing.mode : 0o644,
            ino: inode++
          })
        },
        catch: (cause) =>
          cause instanceof FileAccessError
            ? cause
            : new FileAccessError({
              path,
              reason: "Refused",
              message: cause instanceof Error ? cause.message : String(cause)
            })
      })
  }
}
