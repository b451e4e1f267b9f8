/**
 * Atomic replacement of a file: write a temp file next to the target (exclusive create, so two writers never share
 * one), fsync it, then rename it over the target. A reader, or a crash at any point, sees the old content or the new
 * content, never a mix. The temp file is removed on every failure and on interruption. A SIGKILL can still leave
 * one behind (a dot-file named after the target, ending in `.tmp`, up to the size of the content): the next write of
 * that file removes it. A writer in another process writing the same file at the same moment loses its temp file
 * that way and fails (its rename finds nothing); the target is never mixed.
 *
 * Plain promises, so the same function serves the tools (wrapped in Effect) and the crash test's child process.
 *
 * @since 0.1.0
 * @internal
 */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as nodePath from "node:path"

/** Options of {@link writeFileAtomic}. */
export interface AtomicWriteOptions {
  /** Runs after the temp file is complete and synced, right before the rename; throwing aborts the write. */
  readonly beforeRename?: () => Promise<void>
  /** Called with the temp file's path once it exists (tests use it to know when a write is under way). */
  readonly onTempCreated?: (tempPath: string) => void
  /** Once aborted, the write stops before the rename and removes its temp file (the target is left untouched). */
  readonly signal?: AbortSignal
}

/** The temp file's name for a target: hidden, unique, recognisable. */
export const tempPathFor = (target: string): string =>
  nodePath.join(nodePath.dirname(target), `.${nodePath.basename(target)}.${crypto.randomBytes(6).toString("hex")}.tmp`)

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Whether a directory entry is a temp file {@link tempPathFor} made for `target`. */
export const isTempFor = (target: string): (name: string) => boolean => {
  const pattern = new RegExp(`^\\.${escapeRegExp(nodePath.basename(target))}\\.[0-9a-f]{12}\\.tmp$`)
  return (name) => pattern.test(name)
}

/** Removes the temp files an earlier, killed write of `target` left behind (regular files only); best effort. */
export const removeLeftovers = async (target: string): Promise<void> => {
  const directory = nodePath.dirname(target)
  const names = await fs.promises.readdir(directory).catch(() => [] as Array<string>)
  const ours = isTempFor(target)
  for (const name of names) {
    if (!ours(name)) continue
    const path = nodePath.join(directory, name)
    const stat = await fs.promises.lstat(path).catch(() => undefined)
    if (stat?.isFile() === true) await fs.promises.rm(path, { force: true }).catch(() => undefined)
  }
}

/**
 * Replaces (or creates) `target` with `content` atomically. An existing file's permission bits are kept; missing
 * parent directories are created. `target` should be a real path: a symlink at `target` is replaced, not followed.
 */
export const writeFileAtomic = async (
  target: string,
  content: string | Uint8Array,
  options: AtomicWriteOptions = {}
): Promise<void> => {
  const directory = nodePath.dirname(target)
  // The metadata calls are synchronous (one system call each, where a trip through libuv's thread pool waits some
  // 100 µs on a small VM); the writes, the syncs and the rename are not.
  fs.mkdirSync(directory, { recursive: true })
  await removeLeftovers(target)
  const existingMode = modeOf(target)
  const temp = tempPathFor(target)
  const handle = await fs.promises.open(temp, "wx", existingMode ?? 0o666)
  let renamed = false
  try {
    options.onTempCreated?.(temp)
    // `open`'s mode is filtered by the umask; an existing file's mode is restored exactly.
    if (existingMode !== undefined) fs.fchmodSync(handle.fd, existingMode)
    await handle.writeFile(content)
    await handle.sync()
    await handle.close()
    await options.beforeRename?.()
    options.signal?.throwIfAborted()
    await fs.promises.rename(temp, target)
    renamed = true
    await syncDirectory(directory)
  } finally {
    if (!renamed) {
      await handle.close().catch(() => undefined)
      await fs.promises.rm(temp, { force: true }).catch(() => undefined)
    }
  }
}

/** The permission bits of an existing regular file; undefined for anything else, or nothing. */
const modeOf = (path: string): number | undefined => {
  try {
    const stat = fs.statSync(path)
    return stat.isFile() ? stat.mode & 0o7777 : undefined
  } catch {
    return undefined
  }
}

/** Makes the rename itself durable; best effort (not every platform lets a directory be opened). */
const syncDirectory = async (directory: string): Promise<void> => {
  const handle = await fs.promises.open(directory, "r").catch(() => undefined)
  if (handle === undefined) return
  await handle.sync().catch(() => undefined)
  await handle.close().catch(() => undefined)
}
