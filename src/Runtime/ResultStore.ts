/**
 * The ResultStore keeps tool output that is too large for the model's context: the full text goes to
 * `<session dir>/<tool_use_id>.txt` (created exclusively, never overwritten) and the model gets a preview and the
 * path. Producers of large output (Bash, MCP) can stream into the store while they run ({@link ResultSink}), so
 * memory stays bounded whatever the output size.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import { randomUUID } from "node:crypto"
import * as os from "node:os"

/**
 * The store could not write.
 *
 * @since 0.1.0
 * @category errors
 */
export class ResultStoreError extends Data.TaggedError("effect-tool-runtime/ResultStoreError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

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
  }
>() {
  /**
   * Stores results as files in `directory` (created if missing).
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layer = (directory: string): Layer.Layer<ResultStore, never, FileSystem.FileSystem | Path.Path> =>
    Layer.effect(ResultStore, makeFileStore(directory))

  /**
   * Stores results in a fresh directory under the system's temporary directory, one per session.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly layerTemp: Layer.Layer<ResultStore, never, FileSystem.FileSystem | Path.Path> = Layer.effect(
    ResultStore,
    Effect.suspend(() => makeFileStore(`${os.tmpdir()}/effect-tool-runtime/session-${randomUUID()}`))
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
        return {
          persist: put,
          open: (toolUseId) =>
            Effect.map(put(toolUseId, ""), (path) => ({
              path,
              write: (chunk: Uint8Array) =>
                Ref.update(files, (map) => new Map(map).set(path, (map.get(path) ?? "") + new TextDecoder().decode(chunk)))
            }))
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

const makeFileStore = (directory: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = path.resolve(directory)
    const ensureRoot = fs.makeDirectory(root, { recursive: true })
    const fail = (what: string) => (cause: unknown) =>
      new ResultStoreError({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })

    /** Opens `<id>.txt` exclusively, taking `<id>-N.txt` when the name exists: a stored result is never overwritten. */
    const openExclusive = (toolUseId: string) =>
      Effect.gen(function*() {
        yield* ensureRoot.pipe(Effect.mapError(fail(`cannot create the result directory ${root}`)))
        const stem = path.join(root, safeFileStem(toolUseId))
        for (let n = 0; n < 1000; n++) {
          const candidate = n === 0 ? `${stem}.txt` : `${stem}-${n}.txt`
          const opened = yield* fs.open(candidate, { flag: "wx" }).pipe(
            Effect.map((file) => ({ file, path: candidate })),
            Effect.catchIf((e) => e._tag === "SystemError" && e.reason === "AlreadyExists", () => Effect.succeed(undefined)),
            Effect.mapError(fail(`cannot create ${candidate}`))
          )
          if (opened !== undefined) return opened
        }
        return yield* new ResultStoreError({ message: `no free file name for ${toolUseId} in ${root}` })
      })

    const open = (toolUseId: string) =>
      Effect.gen(function*() {
        const { file, path: filePath } = yield* openExclusive(toolUseId)
        yield* Effect.addFinalizer(() => Effect.ignore(file.sync))
        return {
          path: filePath,
          write: (chunk: Uint8Array) => file.writeAll(chunk).pipe(Effect.mapError(fail(`cannot write ${filePath}`)))
        } satisfies ResultSink
      })

    return {
      open,
      persist: (toolUseId: string, text: string) =>
        Effect.scoped(Effect.flatMap(open(toolUseId), (sink) => Effect.as(sink.write(new TextEncoder().encode(text)), sink.path)))
    }
  })
