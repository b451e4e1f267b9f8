/**
 * The ResultStore keeps tool output that is too large for the model's context: the full text goes to
 * `<store dir>/<tool_use_id>.txt` (created exclusively, never overwritten) and the model gets a preview and the
 * path. Producers of large output (Bash, MCP) can stream into the store while they run ({@link ResultSink}), so
 * memory stays bounded whatever the output size.
 *
 * The store is private: its directory is created 0700 and its files 0600, and an existing directory is used only
 * when it is a real directory (not a symlink) owned by this user that nobody else can enter, so a directory or
 * symlink planted by someone else never receives a session's output. Files are created with `O_CREAT|O_EXCL`,
 * which never follows a symlink. The store remembers what it saved for each tool_use ({@link ResultStore.saved}),
 * however it was written, and whether a path lies in its directory ({@link ResultStore.owns}): the model may read
 * back what was saved for it.
 *
 * A store in a directory stays bounded ({@link ResultLimits}): after every save, files older than `maxAge` (on the
 * Clock) go, then the oldest until at most `maxFiles` remain and their sizes add up to at most `maxTotalBytes`.
 * Files being written are never removed. The store indexes its directory once, when it is first used, so the cost of
 * a save does not grow with the session.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as nodeFs from "node:fs"
import * as os from "node:os"
import * as nodePath from "node:path"

/**
 * The store could not write.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultStoreError extends Data.TaggedError("ResultStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * The bounds of a store in a directory. The defaults keep a long day of work: a week, 1 GiB, 5,000 files.
 *
 * @since 0.3.0
 * @category models
 */
export interface ResultLimits {
  /** Files saved longer ago than this (on the Clock) are removed. Default 7 days. */
  readonly maxAge?: Duration.DurationInput
  /** The most bytes the saved files may add up to; the oldest go first. Default 1 GiB. */
  readonly maxTotalBytes?: number
  /** The most files kept; the oldest go first. Default 5,000. */
  readonly maxFiles?: number
}

/**
 * The default {@link ResultLimits}.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaultResultLimits = {
  maxAge: Duration.days(7),
  maxTotalBytes: 1024 * 1024 * 1024,
  maxFiles: 5_000
} as const

/**
 * A file in the store being written while a tool runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResultSink {
  readonly path: string
  readonly write: (chunk: Uint8Array) => Effect.Effect<void, ResultStoreError>
}

/**
 * The ResultStore service.
 *
 * @since 0.1.0
 * @category tags
 */
export class ResultStore extends Context.Tag("effect-tool-runtime/ResultStore")<
  ResultStore,
  {
    /** Writes a whole result; returns its path. */
    readonly persist: (toolUseId: string, text: string) => Effect.Effect<string, ResultStoreError>
    /** Opens a file to stream a result into; it is closed (and synced) with the Scope. */
    readonly open: (toolUseId: string) => Effect.Effect<ResultSink, ResultStoreError, Scope.Scope>
    /**
     * The file most recently saved for a tool_use by this store (whole or streamed), taken: a second call answers
     * None, so a tool_use id that comes again in a later turn does not inherit the path. The runtime asks once per
     * Outcome and runs the answer at once; the stores here take it when asked, and answer an Exit.
     */
    readonly saved: (toolUseId: string) => Effect.Effect<string | undefined>
    /** Whether an absolute path (symlinks resolved) names a file directly inside the store's directory. */
    readonly owns: (realPath: string) => boolean
  }
>() {
  /**
   * Stores results as files in `directory` (created 0700 when missing, on the first write; refused when it exists
   * but is a symlink, belongs to someone else or is open to others), pruned to `limits`.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = (
    directory: string,
    limits: ResultLimits = {}
  ): Layer.Layer<ResultStore, never, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(ResultStore, ResultStore.make(directory, limits))

  /**
   * The store {@link ResultStore.layer} provides, as an Effect: for a program that builds its services in one Layer
   * (each Layer costs a cold start its own construction; see the CLI's `servicesLayer`).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly make = (
    directory: string,
    limits: ResultLimits = {}
  ): Effect.Effect<ResultStore["Type"], never, FileSystem.FileSystem | Path.Path> =>
    makeFileStore(Effect.succeed(nodePath.resolve(directory)), limits)

  /**
   * Stores results in a fresh directory of its own (`mkdtemp`) under a per-user directory of the system's temporary
   * directory (`$TMPDIR/effect-tool-runtime-<uid>`, 0700), removed when the layer's scope closes.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerTemp: Layer.Layer<ResultStore, never, FileSystem.FileSystem | Path.Path> = Layer.scoped(
    ResultStore,
    Effect.gen(function*() {
      const directory = yield* Effect.acquireRelease(
        Effect.suspend(() => privateTempDirectory("results-")).pipe(Effect.either),
        (made) =>
          made._tag === "Right"
            ? Effect.sync(() => nodeFs.rmSync(made.right, { recursive: true, force: true }))
            : Effect.void
      )
      return yield* makeFileStore(directory, {})
    })
  )

  /**
   * Keeps results in memory under `memory://` paths; for tests. The map of stored texts is exposed.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerMemory = (stored?: Ref.Ref<ReadonlyMap<string, string>>): Layer.Layer<ResultStore> =>
    Layer.effect(
      ResultStore,
      Effect.gen(function*() {
        const files = stored ?? (yield* Ref.make<ReadonlyMap<string, string>>(new Map()))
        const put = (toolUseId: string, text: string) =>
          Ref.modify(files, (map): [string, ReadonlyMap<string, string>] => {
            const path = freeName(`memory://${safeFileStem(toolUseId)}`, (candidate) => map.has(candidate))
            return [path, new Map(map).set(path, text)]
          })
        const saved = new Map<string, string>()
        const record = (toolUseId: string) => (path: string) => Effect.sync(() => void saved.set(toolUseId, path))
        return {
          persist: (toolUseId, text) => Effect.tap(put(toolUseId, text), record(toolUseId)),
          open: (toolUseId) =>
            Effect.map(Effect.tap(put(toolUseId, ""), record(toolUseId)), (path) => ({
              path,
              write: (chunk: Uint8Array) =>
                Ref.update(files, (map) =>
                  new Map(map).set(path, (map.get(path) ?? "") + new TextDecoder().decode(chunk)))
            })),
          saved: (toolUseId) => takeSaved(saved, toolUseId),
          owns: (realPath) => realPath.startsWith("memory://")
        }
      })
    )
}

/**
 * A file name stem from a tool_use id: ids come from the model, so anything but `[A-Za-z0-9_-]` is replaced and the
 * name can never leave the store's directory.
 *
 * @since 0.1.0
 * @category utilities
 */
export const safeFileStem = (toolUseId: string): string => {
  const stem = toolUseId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 128)
  return stem === "" ? "tool_use" : stem
}

const freeName = (base: string, taken: (candidate: string) => boolean): string => {
  let candidate = `${base}.txt`
  for (let n = 1; taken(candidate); n++) candidate = `${base}-${n}.txt`
  return candidate
}

/**
 * Taken when asked, and answered as an Exit: every call's Outcome asks, and an Effect to run would cost a scheduled
 * call a fiber of its own (a call whose stages are all Exits completes where it was launched).
 */
const takeSaved = (saved: Map<string, string>, toolUseId: string): Effect.Effect<string | undefined> => {
  const path = saved.get(toolUseId)
  saved.delete(toolUseId)
  return Exit.succeed(path)
}

const describe = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause))

/**
 * Makes `directory` (0700) when missing, or checks that the existing one is private: a real directory (not a
 * symlink), owned by this user, closed to group and others. Synchronous, so nothing can swap it in between.
 *
 * @since 0.2.0
 * @category utilities
 */
export const ensurePrivateDirectory = (directory: string): Effect.Effect<void, ResultStoreError> =>
  Effect.try({
    try: () => {
      nodeFs.mkdirSync(nodePath.dirname(directory), { recursive: true, mode: 0o700 })
      try {
        nodeFs.mkdirSync(directory, { mode: 0o700 })
        return
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      const stat = nodeFs.lstatSync(directory)
      if (stat.isSymbolicLink()) throw new Error(`${directory} is a symlink, not a directory of its own`)
      if (!stat.isDirectory()) throw new Error(`${directory} is not a directory`)
      const uid = process.getuid?.()
      if (uid !== undefined && stat.uid !== uid) {
        throw new Error(`${directory} belongs to another user (uid ${stat.uid})`)
      }
      if ((stat.mode & 0o077) !== 0) {
        throw new Error(
          `${directory} is open to other users (mode ${(stat.mode & 0o777).toString(8)}); it must be 0700`
        )
      }
    },
    catch: (cause) =>
      new ResultStoreError({
        message: `cannot create the result directory ${directory} (it must be private to this user): ${
          describe(cause)
        }`,
        cause
      })
  })

/**
 * A fresh private directory (`mkdtemp`, 0700) under `$TMPDIR/effect-tool-runtime-<uid>` (0700, checked).
 *
 * @since 0.2.0
 * @category utilities
 */
export const privateTempDirectory = (prefix: string): Effect.Effect<string, ResultStoreError> =>
  Effect.gen(function*() {
    const parent = nodePath.join(os.tmpdir(), `effect-tool-runtime-${process.getuid?.() ?? "user"}`)
    yield* ensurePrivateDirectory(parent)
    return yield* Effect.try({
      try: () => nodeFs.mkdtempSync(nodePath.join(parent, prefix)),
      catch: (cause) =>
        new ResultStoreError({ message: `cannot create a directory in ${parent}: ${describe(cause)}`, cause })
    })
  })

/** One saved file, as the pruning index knows it. */
interface Indexed {
  readonly size: number
  /** When it was saved (Clock millis). */
  readonly at: number
}

/**
 * The pruning index of a store's directory: the saved files, oldest first. Built from one scan of the directory, then
 * kept up to date by the store's own saves, so pruning costs what it removes, whatever the session's length.
 */
const makePruner = (limits: ResultLimits) => {
  const maxAge = Duration.toMillis(Duration.decode(limits.maxAge ?? defaultResultLimits.maxAge))
  const maxTotalBytes = limits.maxTotalBytes ?? defaultResultLimits.maxTotalBytes
  const maxFiles = Math.max(1, limits.maxFiles ?? defaultResultLimits.maxFiles)
  let index: Map<string, Indexed> | undefined
  let total = 0
  const writing = new Set<string>()
  const load = (directory: string): Map<string, Indexed> => {
    if (index !== undefined) return index
    const found: Array<[string, Indexed]> = []
    for (const name of safeReaddir(directory)) {
      if (!name.endsWith(".txt")) continue
      try {
        const stat = nodeFs.lstatSync(nodePath.join(directory, name))
        if (stat.isFile()) found.push([nodePath.join(directory, name), { size: stat.size, at: stat.mtimeMs }])
      } catch {
        // Gone meanwhile.
      }
    }
    found.sort((a, b) => a[1].at - b[1].at)
    index = new Map(found)
    total = found.reduce((sum, [, entry]) => sum + entry.size, 0)
    return index
  }
  const remove = (entries: Map<string, Indexed>, file: string) => {
    const entry = entries.get(file)
    if (entry === undefined) return
    entries.delete(file)
    total -= entry.size
    try {
      nodeFs.rmSync(file, { force: true })
    } catch {
      // Not ours to remove after all (permissions changed): it no longer counts.
    }
  }
  return {
    started: (file: string) => void writing.add(file),
    /** A file was written to its end: index it (stamped with the Clock's time), then prune. */
    finished: (directory: string, file: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.sync(() => {
          writing.delete(file)
          const entries = load(directory)
          let size = 0
          try {
            size = nodeFs.statSync(file).size
            // The file's time is the Clock's, so its age survives a restart on the same Clock.
            nodeFs.utimesSync(file, now / 1000, now / 1000)
          } catch {
            return
          }
          const previous = entries.get(file)
          if (previous !== undefined) {
            entries.delete(file)
            total -= previous.size
          }
          entries.set(file, { size, at: now })
          total += size
          for (const [name, entry] of entries) {
            const tooOld = now - entry.at > maxAge
            if (!tooOld && entries.size <= maxFiles && total <= maxTotalBytes) break
            if (name === file || writing.has(name)) continue
            remove(entries, name)
          }
        })),
    /** What the index holds now (for tests and `mcp list`-like reports). */
    size: () => ({ files: index?.size ?? 0, bytes: total })
  }
}

const safeReaddir = (directory: string): ReadonlyArray<string> => {
  try {
    return nodeFs.readdirSync(directory)
  } catch {
    return []
  }
}

const makeFileStore = (directoryOrError: Effect.Effect<string, ResultStoreError>, limits: ResultLimits) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    // A store whose directory could not be made still builds: every write then fails with the reason.
    const made = yield* Effect.either(directoryOrError)
    const root = made._tag === "Right" ? made.right : undefined
    const realRoot = root === undefined ? undefined : realOrSelf(root)
    let checked = false
    const ensureRoot: Effect.Effect<string, ResultStoreError> = Effect.suspend(() => {
      if (made._tag === "Left") return Effect.fail(made.left)
      if (checked) return Effect.succeed(made.right)
      return Effect.as(Effect.tap(ensurePrivateDirectory(made.right), () => (checked = true)), made.right)
    })
    const fail = (what: string) => (cause: unknown) =>
      new ResultStoreError({ message: `${what}: ${describe(cause)}`, cause })
    const saved = new Map<string, string>()
    const pruner = makePruner(limits)

    /** Opens `<id>.txt` exclusively, taking `<id>-N.txt` when the name exists: a stored result is never overwritten. */
    const openExclusive = (toolUseId: string) =>
      Effect.gen(function*() {
        const directory = yield* ensureRoot
        const stem = path.join(directory, safeFileStem(toolUseId))
        for (let n = 0; n < 1000; n++) {
          const candidate = n === 0 ? `${stem}.txt` : `${stem}-${n}.txt`
          // "wx" is O_CREAT|O_EXCL: an existing name, a planted symlink included, is never opened.
          const opened = yield* fs.open(candidate, { flag: "wx", mode: 0o600 }).pipe(
            Effect.map((file) => ({ file, path: candidate })),
            Effect.catchIf(
              (e) => e._tag === "SystemError" && e.reason === "AlreadyExists",
              () => Effect.succeed(undefined)
            ),
            Effect.mapError(fail(`cannot create ${candidate}`))
          )
          if (opened !== undefined) {
            saved.set(toolUseId, candidate)
            pruner.started(candidate)
            return { ...opened, directory }
          }
        }
        return yield* new ResultStoreError({ message: `no free file name for ${toolUseId} in ${directory}` })
      })

    const open = (toolUseId: string) =>
      Effect.gen(function*() {
        const { directory, file, path: filePath } = yield* openExclusive(toolUseId)
        yield* Effect.addFinalizer(() =>
          Effect.zipRight(Effect.ignore(file.sync), Effect.ignore(pruner.finished(directory, filePath)))
        )
        return {
          path: filePath,
          write: (chunk: Uint8Array) => file.writeAll(chunk).pipe(Effect.mapError(fail(`cannot write ${filePath}`)))
        } satisfies ResultSink
      })

    return {
      open,
      persist: (toolUseId: string, text: string) =>
        Effect.scoped(
          Effect.flatMap(open(toolUseId), (sink) => Effect.as(sink.write(new TextEncoder().encode(text)), sink.path))
        ),
      saved: (toolUseId: string) => takeSaved(saved, toolUseId),
      owns: (realPath: string) =>
        realRoot !== undefined && nodePath.dirname(realPath) === realRoot && realPath.endsWith(".txt")
    }
  })

const realOrSelf = (directory: string): string => {
  try {
    return nodeFs.realpathSync.native(directory)
  } catch {
    // Not made yet: made later at this path, a real directory (a symlink there is refused).
    try {
      return nodePath.join(nodeFs.realpathSync.native(nodePath.dirname(directory)), nodePath.basename(directory))
    } catch {
      return directory
    }
  }
}
