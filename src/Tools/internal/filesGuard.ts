/**
 * The checks Write and Edit share: what is at a path (and whether it may be touched at all), and whether the model's
 * last read of a file is still current.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import type { FileAccess, FileInfo } from "../../Session/FileAccess.js"
import type { FileRecord } from "../../Session/FileState.js"
import type { ResolvedPath, Workspace } from "../../Session/Workspace.js"
import { ToolError } from "../../Tool/Tool.js"
import { specialFileReason } from "./filesPaths.js"

/** A path from the model, resolved and inspected (never opened). */
export interface Target {
  readonly resolved: ResolvedPath
  /** Of the real path; undefined when nothing is there. */
  readonly stat: FileInfo | undefined
  /** Why the path must not be touched (a device, FIFO, socket...), if so. */
  readonly refusal: string | undefined
}

/** Resolves a path through the workspace and stats its real target (stat only: opening a FIFO would block). */
export const inspect = (
  access: FileAccess["Type"],
  workspace: Workspace["Type"],
  path: string
): Effect.Effect<Target> =>
  Effect.flatMap(
    workspace.resolve(path),
    (resolved) =>
      Effect.map(
        access.stat(resolved.real),
        (stat) => ({ resolved, stat, refusal: specialFileReason(resolved, stat) })
      )
  )

/** sha256 of a file's bytes, streamed. */
export const hashFile = (path: string): Promise<string> =>
  new Promise((resolve, reject) => {
    const hash = crypto.createHash("sha256")
    fs.createReadStream(path)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")))
  })

/** The model-facing message for a file that was never read. */
export const notReadMessage = (path: string): string =>
  `File has not been read yet: ${path}. Read it first before writing to it.`

/** Whether the read-file memory dropped this file (a FileState that does not say: no). */
export const wasEvicted = (
  fileState: { readonly wasEvicted?: ((realPath: string) => Effect.Effect<boolean>) | undefined },
  realPath: string
): Effect.Effect<boolean> => fileState.wasEvicted?.(realPath) ?? Effect.succeed(false)

/** The model-facing message for a file read so long ago that the read-file memory dropped it. */
export const evictedMessage = (path: string): string =>
  `File was read earlier, but so many files have been read since that this read is no longer remembered: ${path}. ` +
  "Read it again before writing to it."

/** The model-facing message for a file that changed after it was read. */
export const staleMessage = (path: string): string =>
  `File has been modified since it was last read, either by the user or by a linter: ${path}. Read it again before ` +
  `attempting to write it.`

/** What a file is now. */
export interface Current {
  readonly mtimeMs: number
  readonly size: number
  readonly contentHash: string
}

/**
 * Whether the model's read is still current, as a model-facing problem or undefined. With a known hash the content
 * decides (a file touched but unchanged is still current); after a ranged read that stopped early (no hash), mtime
 * and size must both be unchanged. `requireFull` (Write over an existing file) refuses partial reads.
 */
export const staleness = (
  path: string,
  record: Option.Option<FileRecord>,
  current: Current,
  requireFull: boolean,
  evicted = false
): string | undefined => {
  if (Option.isNone(record)) return evicted ? evictedMessage(path) : notReadMessage(path)
  const seen = record.value
  if (requireFull && seen.partial) {
    return `File has only been partially read: ${path}. Read the whole file (without offset/limit) before ` +
      `overwriting it with Write, or change it with Edit.`
  }
  const fresh = seen.contentHash !== undefined
    ? seen.contentHash === current.contentHash
    : seen.mtimeMs === current.mtimeMs && seen.size === current.size
  return fresh ? undefined : staleMessage(path)
}

/** Reads a regular file and describes it, for the staleness check (from one descriptor, opened no-follow). */
export const readCurrent = (
  access: FileAccess["Type"],
  path: string
): Promise<{ readonly bytes: Buffer; readonly current: Current }> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const handle = yield* access.openRead(path)
    const bytes = Buffer.from(yield* handle.read(0, handle.info.size))
    return {
      bytes,
      current: {
        mtimeMs: handle.info.mtimeMs,
        size: handle.info.size,
        contentHash: crypto.createHash("sha256").update(bytes).digest("hex")
      }
    }
  })))

/**
 * Describes a file for the staleness check, keeping its bytes only when it is at most `keepBytes` long (else streamed).
 */
export const describeCurrent = (
  access: FileAccess["Type"],
  path: string,
  keepBytes: number
): Promise<{ readonly bytes: Buffer | undefined; readonly current: Current }> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const handle = yield* access.openRead(path)
    const info = handle.info
    if (info.size <= keepBytes) {
      const bytes = Buffer.from(yield* handle.read(0, info.size))
      return {
        bytes,
        current: {
          mtimeMs: info.mtimeMs,
          size: info.size,
          contentHash: crypto.createHash("sha256").update(bytes).digest("hex")
        }
      }
    }
    const contentHash = yield* Effect.promise(async () => {
      const hash = crypto.createHash("sha256")
      for await (const chunk of handle.chunks(64 * 1024)) hash.update(chunk)
      return hash.digest("hex")
    })
    return { bytes: undefined, current: { mtimeMs: info.mtimeMs, size: info.size, contentHash } }
  })))

/**
 * A `beforeRename` guard for the atomic write: fails when the target's mtime or size moved since it was read, so a
 * change made while the new content was being written is not clobbered.
 */
export const unchangedSince =
  (access: FileAccess["Type"], path: string, current: Current | undefined, message: string) =>
  async (): Promise<void> => {
    const now = await Effect.runPromise(access.stat(path))
    const same = current === undefined
      ? now === undefined
      : now !== undefined && now.mtimeMs === current.mtimeMs && now.size === current.size
    if (!same) throw new Error(message)
  }

/**
 * The checked write of Write and Edit: `bytes` replace the file at `resolved.real` atomically, unless the file moved
 * since `current` was read (checked just before the rename); answers what is there afterwards. `path` is the path as
 * the model is shown it; every failure is a message for the model.
 */
export const writeChecked = (
  access: FileAccess["Type"],
  resolved: ResolvedPath,
  path: string,
  bytes: Uint8Array,
  current: Current | undefined
): Effect.Effect<FileInfo, ToolError> =>
  Effect.gen(function*() {
    yield* access.writeFileAtomic(resolved.real, bytes, {
      beforeRename: unchangedSince(access, resolved.real, current, staleMessage(resolved.absolute))
    }).pipe(
      Effect.mapError((e) =>
        new ToolError({
          message: e.reason === "Refused" ? e.message : `Could not write ${path}: ${e.message}`
        })
      )
    )
    const after = yield* access.stat(resolved.real)
    if (after === undefined) {
      return yield* new ToolError({ message: `${path} disappeared right after it was written.` })
    }
    return after
  })

/**
 * Opens the file a call was decided on, in one step with the check: `planned` is the real path the permission
 * decision saw (bound when the call was planned). The path is resolved again; when it now leads elsewhere (a symlink
 * swapped in between) the call is refused, and the open itself refuses a symlink as the last component and checks
 * that the descriptor is the planned file, so nothing swapped in later can redirect the read either.
 */
export const openDecided = (
  access: FileAccess["Type"],
  workspace: Workspace["Type"],
  requested: string,
  planned: string
) =>
  Effect.gen(function*() {
    const resolved = yield* workspace.resolve(requested)
    const changed = `${resolved.absolute} changed after permission was decided (it resolved to ${planned}, now to ` +
      `${resolved.real}); ` +
      "the call was refused. Try again."
    if (resolved.real !== planned) return yield* Effect.fail(changed)
    const handle = yield* access.openRead(planned).pipe(
      Effect.mapError((e) =>
        e.reason === "ELOOP" ? changed : e.reason === "EINVAL" ?
          `${resolved.absolute} is no longer a regular file.`
          : `Could not read ${resolved.absolute}: ${e.message}`
      )
    )
    if (handle.realPath !== planned) return yield* Effect.fail(changed)
    return { resolved, handle }
  })
