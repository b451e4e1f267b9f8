/**
 * The fast path of FileAccess's batches (`lstatAll`, `realPathAll`, `readDirectoryEntriesAll`) on the Node layer:
 * many calls in one Effect, each one the synchronous `node:fs` call, in slices of a few milliseconds with a turn of
 * the event loop between them.
 *
 * Why synchronous: the stat of a cached inode costs a few microseconds, a trip through libuv's thread pool and a
 * Promise many times that (20,000 lstats: about 35 ms of CPU synchronously, 120 ms with callbacks, 250 ms and more
 * with `fs.promises`, measured on Node 20; realpath and readdir alike). Why in slices: other fibers, timers and I/O
 * (a timeout, an interrupt) get their turn at least every {@link sliceMs}, so a slow file system delays them by one
 * call, not by the whole batch.
 *
 * The readable version, which every other layer gets: `Effect.forEach(paths, access.lstat, { concurrency })` (and
 * the same with `realPath` and `readDirectoryEntries`); each answer here is what the Node layer's own member answers
 * for that path.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fs from "node:fs"
import { nextTurn } from "../../Shared/realTime.js"
import type { DirectoryEntry, FileAccessError, FileInfo } from "../FileAccess.js"
import { entryOf, infoOf, toError } from "./fileAccessNode.js"

/** How long one slice may hold the event loop. */
const sliceMs = 4

/** `f` of each path, in order, in slices of at most {@link sliceMs} (and one call). */
const inSlices = <A>(paths: ReadonlyArray<string>, f: (path: string) => A): Effect.Effect<ReadonlyArray<A>> =>
  Effect.suspend(() => {
    const answers: Array<A> = new Array(paths.length)
    let next = 0
    const slice = Effect.sync(() => {
      const until = performance.now() + sliceMs
      do {
        answers[next] = f(paths[next]!)
        next++
      } while (next < paths.length && performance.now() < until)
    })
    return Effect.as(
      Effect.whileLoop({
        while: () => next < paths.length,
        // The first slice starts at once: a small batch never waits for a turn.
        body: () => next === 0 ? slice : Effect.zipRight(nextTurn, slice),
        step: () => undefined
      }),
      answers
    )
  })

/** The Node layer's `lstat`, synchronously: undefined for any failure. */
const lstatSync = (path: string): FileInfo | undefined => {
  try {
    const stats = fs.lstatSync(path, { throwIfNoEntry: false })
    return stats === undefined ? undefined : infoOf(stats)
  } catch {
    return undefined
  }
}

/** The Node layer's `realPath` (`fs.promises.realpath` is the native one too), synchronously: undefined on failure. */
const realPathSync = (path: string): string | undefined => {
  try {
    return fs.realpathSync.native(path)
  } catch {
    return undefined
  }
}

/** The Node layer's `readDirectoryEntries`, synchronously. */
const readDirectoryEntriesSync = (path: string): Either.Either<ReadonlyArray<DirectoryEntry>, FileAccessError> => {
  try {
    return Either.right(fs.readdirSync(path, { withFileTypes: true }).map(entryOf))
  } catch (error) {
    return Either.left(toError(path)(error))
  }
}

/** The lstat of each path, in order, as the Node layer's `lstat` answers it. */
export const lstatAllNode = (paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<FileInfo | undefined>> =>
  inSlices(paths, lstatSync)

/** The real path of each path, in order, as the Node layer's `realPath` answers it (undefined where it fails). */
export const realPathAllNode = (paths: ReadonlyArray<string>): Effect.Effect<ReadonlyArray<string | undefined>> =>
  inSlices(paths, realPathSync)

/** The entries of each directory, in order, as the Node layer's `readDirectoryEntries` answers them. */
export const readDirectoryEntriesAllNode = (
  paths: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<Either.Either<ReadonlyArray<DirectoryEntry>, FileAccessError>>> =>
  inSlices(paths, readDirectoryEntriesSync)
