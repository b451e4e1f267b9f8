/**
 * The built-in tools' {@link FileState}, kept in a {@link Session}: restored from the session's last checkpoint and
 * saved at every checkpoint, so an Edit in one turn (or one process) works on a file Read in an earlier one, and a
 * file changed since is still caught (the record holds the hash, mtime and size of what the model saw).
 *
 * @since 0.2.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { FileState, make as makeFileState } from "./FileState.js"
import type { FileRecord, FileStateOptions } from "./FileState.js"
import { Session } from "./Session.js"
import type { SessionError } from "./Session.js"

/** The name of the piece in the session's state. */
const PIECE = "fileState"

const FileRecordSchema: Schema.Schema<FileRecord, {
  readonly contentHash: string | null
  readonly mtimeMs: number
  readonly size: number
  readonly partial: boolean
}> = Schema.Struct({
  // JSON has no undefined: a ranged read's missing hash is stored as null.
  contentHash: Schema.transform(Schema.NullOr(Schema.String), Schema.UndefinedOr(Schema.String), {
    strict: true,
    decode: (hash) => hash ?? undefined,
    encode: (hash) => hash ?? null
  }),
  mtimeMs: Schema.Number,
  size: Schema.Number,
  partial: Schema.Boolean
})

/**
 * What the session keeps: `[realPath, record]` pairs, least recently used first.
 *
 * @since 0.2.0
 * @category models
 */
export const FileEntries = Schema.Array(Schema.Tuple(Schema.String, FileRecordSchema))

/**
 * A FileState restored from the session and saved with it (what {@link layer} provides, as an Effect).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = (options: FileStateOptions = {}): Effect.Effect<FileState["Type"], SessionError, Session> =>
  Effect.gen(function*() {
    const session = yield* Session
    const state = makeFileState(options)
    const restored = yield* session.restore(PIECE, FileEntries)
    // Least recently used first: recording in that order rebuilds the same order.
    if (Option.isSome(restored)) {
      yield* Effect.forEach(restored.value, ([path, record]) => state.record(path, record), { discard: true })
    }
    const snapshot = Effect.flatMap(state.paths, (paths) =>
      Effect.map(
        Effect.forEach(paths, (path) => Effect.map(state.get(path), Option.map((record) => [path, record] as const))),
        (entries) => entries.flatMap(Option.toArray)
      ))
    yield* session.track(PIECE, FileEntries, snapshot)
    return state
  })

/**
 * A FileState restored from the session and saved with it. Provide it to the file tools in place of
 * `FileState.layer()`.
 *
 * @since 0.2.0
 * @category layers
 */
export const layer = (options: FileStateOptions = {}): Layer.Layer<FileState, SessionError, Session> =>
  Layer.effect(FileState, make(options))
