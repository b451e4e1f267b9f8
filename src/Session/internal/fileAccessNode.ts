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

/** An error with the errno-style code that `toError` reports as the reason. */
const coded = (message: string, code: string): Error => Object.assign(new Error(message), { code })

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
    throw coded(`${path} changed while opening`, "ECHANGED")
  }
  return real
}

/**
 * A file of at most this many bytes is read synchronously from open to close: on a local disk each call takes
 * microseconds, where a trip through libuv's thread pool (what every `fs.promises` call is) waits some 100 µs on a
 * small VM, and a Read of a small file made nine of them. A larger file is read through a FileHandle of the same open
 * file, asynchronously (a FileHandle counts the operations in flight on its descriptor, so closing it never lets a
 * pending read reach a descriptor number reused meanwhile); reads of at most this many bytes are synchronous there too.
 * The price, as with the Glob and Grep batches (`fileAccessNodeBatch`): a stalled mount (NFS, FUSE) stalls the whole
 * process rather than one pool thread. Provide a FileAccess of your own for such a workspace.
 */
const SYNC_READ_BYTES = 64 * 1024

/** A descriptor opened synchronously; -1 once its scope closed it, as a closed FileHandle's `fd` is. */
interface OpenFile {
  fd: number
}

/**
 * Up to `length` bytes from `position` of a descriptor, synchronously, in a buffer of their own (never Node's shared
 * pool: what is returned is all that can be reached through it). A closed one (-1) fails rather than reading whatever
 * reuses its number.
 */
const readSyncAt = (fd: number, path: string, position: number, length: number): Uint8Array => {
  if (fd < 0) throw coded(`${path} was read after its handle was closed`, "EBADF")
  const buffer = Buffer.alloc(length)
  return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, position))
}

/** A macrotask's pause: timers, I/O and interruption get their turn. */
const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * The handle of a small file: every read synchronous, the descriptor never touched by the thread pool. What the file
 * grew by since its stat is read on to its end, a macrotask apart per chunk (so a file that keeps growing cannot
 * hold the event loop, and the call's timeout and interruption still reach it).
 */
const syncHandle = (file: OpenFile, path: string, info: FileInfo, realPath: string): ReadHandle => ({
  info,
  realPath,
  read: (position, length) =>
    Effect.try({ try: () => readSyncAt(file.fd, path, position, length), catch: toError(path) }),
  chunks: (chunkBytes) => ({
    async *[Symbol.asyncIterator]() {
      for (let position = 0;;) {
        const grown = position >= info.size
        if (grown) await yieldToEventLoop()
        const chunk = readSyncAt(
          file.fd,
          path,
          position,
          grown ? chunkBytes : Math.min(chunkBytes, info.size - position)
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
      ? Effect.try({ try: () => readSyncAt(handle.fd, path, position, length), catch: toError(path) })
      : Effect.tryPromise({
        try: async () => {
          const buffer = Buffer.alloc(length)
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
  if (info.type !== "File") throw coded(`${path} is not a regular file`, "EINVAL")
  return info
}

/**
 * A FileHandle on the file an open descriptor points to. On Linux through `/proc/self/fd`, which reaches the open file
 * itself even when its path was renamed over or removed since (an editor's atomic save); elsewhere through the path.
 * Either way it must be the same file (device and inode), else ECHANGED.
 */
const reopen = async (fd: number, path: string, info: FileInfo): Promise<fs.promises.FileHandle> => {
  const viaProc = `/proc/self/fd/${fd}`
  const handle = fs.existsSync(viaProc)
    ? await fs.promises.open(viaProc, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0))
    : await fs.promises.open(path, readFlags)
  try {
    const again = infoOf(await handle.stat())
    if (again.dev !== info.dev || again.ino !== info.ino) {
      throw coded(`${path} changed while opening`, "ECHANGED")
    }
    return handle
  } catch (error) {
    await handle.close().catch(() => undefined)
    throw error
  }
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
      Effect.try({ try: (): OpenFile => ({ fd: fs.openSync(path, readFlags) }), catch: toError(path) }),
      (file) =>
        Effect.sync(() => {
          const fd = file.fd
          file.fd = -1
          try {
            fs.closeSync(fd)
          } catch {
            // Closed already.
          }
        })
    ).pipe(
      Effect.flatMap((file) =>
        Effect.flatMap(
          Effect.try({
            try: () => {
              const info = regularFile(file.fd, path)
              return { info, realPath: descriptorPath(file.fd, path, info) }
            },
            catch: toError(path)
          }),
          ({ info, realPath }) =>
            info.size <= SYNC_READ_BYTES
              ? Effect.succeed(syncHandle(file, path, info, realPath))
              : Effect.map(
                Effect.acquireRelease(
                  Effect.tryPromise({ try: () => reopen(file.fd, path, info), catch: toError(path) }),
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
