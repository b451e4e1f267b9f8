/**
 * FileAccess on `node:fs`.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import type { DirectoryEntry, FileAccess, FileInfo, FileType, ReadHandle } from "../FileAccess.js"
import { FileAccessError } from "../FileAccess.js"
import { writeFileAtomic } from "./atomicWrite.js"

const typeOf = (stats: fs.Stats | fs.Dirent): FileType =>
  stats.isFile()
    ? "File"
    : stats.isDirectory()
    ? "Directory"
    : stats.isSymbolicLink()
    ? "SymbolicLink"
    : stats.isFIFO()
    ? "FIFO"
    : stats.isSocket()
    ? "Socket"
    : stats.isCharacterDevice()
    ? "CharacterDevice"
    : stats.isBlockDevice()
    ? "BlockDevice"
    : "Unknown"

/** @internal */
export const infoOf = (stats: fs.Stats): FileInfo => ({
  type: typeOf(stats),
  size: stats.size,
  mtimeMs: stats.mtimeMs,
  mode: stats.mode & 0o7777,
  dev: stats.dev,
  ino: stats.ino,
  nlink: stats.nlink
})

/** @internal */
export const entryOf = (entry: fs.Dirent): DirectoryEntry => ({ name: entry.name, type: typeOf(entry) })

/** @internal */
export const toError = (path: string) => (cause: unknown): FileAccessError => {
  const code = (cause as { code?: unknown } | undefined)?.code
  return new FileAccessError({
    path,
    reason: typeof code === "string" ? code : "Unknown",
    message: cause instanceof Error ? cause.message : String(cause)
  })
}

// O_NOFOLLOW: a symlink as the last component fails with ELOOP. O_NONBLOCK: a FIFO swapped in does not hang the open.
const readFlags = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0)

/** What a descriptor points to: `/proc/self/fd` where there is one, else the path's realpath if it is that file. */
const descriptorPath = (fd: number, path: string, info: FileInfo): string => {
  let viaProc: string | undefined
  try {
    viaProc = fs.readlinkSync(`/proc/self/fd/${fd}`)
  } catch {
    viaProc = undefined
  }
  if (viaProc !== undefined && viaProc.startsWith("/")) return viaProc
  const real = fs.realpathSync.native(path)
  const now = fs.statSync(real)
  if (now.dev !== info.dev || now.ino !== info.ino) {
    throw Object.assign(new Error(`${path} changed while opening`), { code: "ECHANGED" })
  }
  return real
}

/**
 * A file of at most this many bytes is read synchronously from open to close: on a local disk each call takes
 * microseconds, where a trip through libuv's thread pool (what every `fs.promises` call is) waits some 100 µs on a
 * small VM, and a Read of a small file made nine of them. A larger file is read through a FileHandle, asynchronously
 * (a FileHandle counts the operations in flight on its descriptor, so closing it never lets a pending read reach a
 * descriptor number reused meanwhile); reads of at most this many bytes are synchronous there too.
 */
const SYNC_READ_BYTES = 64 * 1024

const closeQuietly = (fd: number): void => {
  try {
    fs.closeSync(fd)
  } catch {
    // Closed already.
  }
}

/** Up to `length` bytes of a descriptor from `position`, synchronously. */
const readSyncAt = (fd: number, position: number, length: number): Uint8Array => {
  const buffer = Buffer.allocUnsafe(length)
  return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, position))
}

/** The handle of a small file: every read synchronous, the descriptor never touched by the thread pool. */
const syncHandle = (fd: number, path: string, info: FileInfo, realPath: string): ReadHandle => ({
  info,
  realPath,
  read: (position, length) => Effect.try({ try: () => readSyncAt(fd, position, length), catch: toError(path) }),
  chunks: (chunkBytes) => ({
    async *[Symbol.asyncIterator]() {
      // The size is the stat's: a file grown since is read on to its end, as a stream would read it.
      for (let position = 0;;) {
        const chunk = readSyncAt(
          fd,
          position,
          position < info.size ? Math.min(chunkBytes, info.size - position) : chunkBytes
        )
        if (chunk.length === 0) return
        position += chunk.length
        yield chunk
      }
    }
  })
})

/** The handle of a larger file, over a FileHandle: long reads and the chunks asynchronous. */
const asyncHandle = (handle: fs.promises.FileHandle, path: string, info: FileInfo, realPath: string): ReadHandle => ({
  info,
  realPath,
  read: (position, length) =>
    length <= SYNC_READ_BYTES
      ? Effect.try({ try: () => readSyncAt(handle.fd, position, length), catch: toError(path) })
      : Effect.tryPromise({
        try: async () => {
          const buffer = Buffer.allocUnsafe(length)
          const { bytesRead } = await handle.read(buffer, 0, length, position)
          return buffer.subarray(0, bytesRead)
        },
        catch: toError(path)
      }),
  chunks: (chunkBytes) => handle.createReadStream({ start: 0, highWaterMark: chunkBytes, autoClose: false })
})

/** The descriptor's stat, refused unless it is a regular file. */
const regularFile = (fd: number, path: string): FileInfo => {
  const info = infoOf(fs.fstatSync(fd))
  if (info.type !== "File") throw Object.assign(new Error(`${path} is not a regular file`), { code: "EINVAL" })
  return info
}

/** @internal */
export const makeNode = (): FileAccess["Type"] => ({
  realPath: (path) => Effect.tryPromise({ try: () => fs.promises.realpath(path), catch: toError(path) }),
  realPathSync: (path) => {
    try {
      return fs.realpathSync.native(path)
    } catch {
      return undefined
    }
  },
  readLinkSync: (path) => {
    try {
      return fs.readlinkSync(path)
    } catch {
      return undefined
    }
  },
  // Synchronous, as a small file's open is (see SYNC_READ_BYTES): what it answers is a cached inode's.
  stat: (path) =>
    Effect.sync(() => {
      try {
        return infoOf(fs.statSync(path))
      } catch {
        return undefined
      }
    }),
  lstat: (path) => Effect.promise(() => fs.promises.lstat(path).then(infoOf, () => undefined)),
  statSync: (path) => {
    try {
      const stats = fs.statSync(path, { throwIfNoEntry: false })
      return stats === undefined ? undefined : infoOf(stats)
    } catch (error) {
      // A path through a file (ENOTDIR), a loop, a name too long: nothing is there to stat. Anything else (EACCES on
      // a directory on the way, EIO) says nothing about whether the file is there: a clear error, never "absent".
      if (["ENOTDIR", "ELOOP", "ENAMETOOLONG"].includes((error as NodeJS.ErrnoException).code ?? "")) {
        return undefined
      }
      throw toError(path)(error)
    }
  },
  readDirectory: (path) => Effect.tryPromise({ try: () => fs.promises.readdir(path), catch: toError(path) }),
  readDirectoryEntries: (path) =>
    Effect.tryPromise({
      try: async () => {
        const entries = await fs.promises.readdir(path, { withFileTypes: true })
        return entries.map(entryOf)
      },
      catch: toError(path)
    }),
  onDisk: true,
  openRead: (path) =>
    Effect.acquireRelease(
      Effect.try({ try: () => fs.openSync(path, readFlags), catch: toError(path) }),
      (fd) => Effect.sync(() => closeQuietly(fd))
    ).pipe(
      Effect.flatMap((fd) =>
        Effect.flatMap(
          Effect.try({
            try: () => {
              const info = regularFile(fd, path)
              return { info, realPath: descriptorPath(fd, path, info) }
            },
            catch: toError(path)
          }),
          ({ info, realPath }) =>
            info.size <= SYNC_READ_BYTES
              ? Effect.succeed(syncHandle(fd, path, info, realPath))
              // Opened again as a FileHandle; refused if the path now names another file.
              : Effect.map(
                Effect.acquireRelease(
                  Effect.tryPromise({
                    try: async () => {
                      const handle = await fs.promises.open(path, readFlags)
                      const again = infoOf(await handle.stat())
                      if (again.dev === info.dev && again.ino === info.ino) return handle
                      await handle.close()
                      throw Object.assign(new Error(`${path} changed while opening`), { code: "ECHANGED" })
                    },
                    catch: toError(path)
                  }),
                  (handle) => Effect.promise(() => handle.close().catch(() => undefined))
                ),
                (handle) => asyncHandle(handle, path, info, realPath)
              )
        )
      )
    ),
  writeFileAtomic: (path, content, options) =>
    Effect.tryPromise({
      try: (signal) =>
        writeFileAtomic(path, content, {
          ...options,
          signal: options?.signal ?? signal
        }),
      // A refusal from `beforeRename` keeps its message (it is written for the model).
      catch: (cause) =>
        typeof (cause as { code?: unknown }).code === "string"
          ? toError(path)(cause)
          : new FileAccessError({
            path,
            reason: "Refused",
            message: cause instanceof Error ? cause.message : String(cause)
          })
    })
})
