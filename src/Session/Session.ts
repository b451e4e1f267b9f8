/**
 * A Session is what lasts across the turns of one conversation: what the model has read (FileState), the rules a
 * person allowed "for this session", the approvals given, the directory where the result store keeps large output
 * (which the model may read back), and any other named piece of state a service wants kept (the discovered tools of
 * a catalogue, say).
 *
 * In a program, build the runtime once per session and run every turn through it: the layers hold the state.
 * {@link Session.layerTemp} is a session that lives as long as its scope (its directory is removed at the end);
 * {@link Session.layer} keeps the state in a directory between processes: {@link Session.checkpoint} writes it
 * (atomically: a temporary file renamed over `session.json`), and the next process restores it. A damaged state
 * file is an error naming it, never silently reset.
 *
 * ```ts
 * const SessionLive = Session.layer({ directory: ".agent-session" })
 * const files = SessionFileState.layer()                 // FileState, restored and kept (effect-tool-runtime/tools)
 * const policy = SessionPermissions.policy({ settings }) // PermissionPolicy whose session rules are kept
 * const store = Session.resultStore                       // ResultStore in <session>/results
 * // after each turn:
 * yield* Session.checkpoint
 * ```
 *
 * A piece of state of one's own: {@link Session.ref} restores a Ref from the last checkpoint (or starts it from an
 * initial value) and saves it at every checkpoint, encoded with its Schema. This is how a service keeps what belongs
 * to the session, e.g. the tools a catalogue has discovered:
 * `Session.ref("discoveredTools", Schema.Array(Schema.String), () => [])`. A piece saved by a newer program that this
 * one does not track is kept as it was.
 *
 * @since 0.2.0
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import type * as Path from "@effect/platform/Path"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { randomBytes } from "node:crypto"
import * as nodeFs from "node:fs"
import * as nodePath from "node:path"
import { privateTempDirectory, ResultStore } from "./ResultStore.js"

// -----------------------------------------------------------------------------
// errors
// -----------------------------------------------------------------------------

/**
 * The session's state could not be read or written. `file` names the file.
 *
 * @since 0.2.0
 * @category errors
 */
export class SessionError extends Data.TaggedError("SessionError")<{
  readonly file: string
  readonly detail: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `session state ${this.file}: ${this.detail}`
  }
}

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * The Session service.
 *
 * @example
 * ```ts
 * import { Effect, Ref, Schema } from "effect"
 * import { Session } from "effect-tool-runtime"
 *
 * // A piece of state kept in the session: restored from the last checkpoint, saved at every one.
 * const countTurn = Effect.gen(function*() {
 *   const turns = yield* Session.ref("turns", Schema.Number, () => 0)
 *   yield* Ref.update(turns, (n) => n + 1)
 *   yield* Session.checkpoint
 *   return yield* Ref.get(turns)
 * })
 *
 * // Two processes, one after the other, over the same directory (`Session.layerTemp`: one that lasts a scope).
 * export const program = (directory: string) =>
 *   Effect.gen(function*() {
 *     const first = yield* countTurn.pipe(Effect.provide(Session.layer({ directory })))
 *     const second = yield* countTurn.pipe(Effect.provide(Session.layer({ directory })))
 *     return [first, second] // [1, 2]
 *   })
 * ```
 *
 * @since 0.2.0
 * @category tags
 */
export class Session extends Context.Tag("effect-tool-runtime/Session")<
  Session,
  {
    /** The session's directory (absolute). */
    readonly directory: string
    /** Whether the state outlives the process (`layer`), or only this scope (`layerTemp`). */
    readonly persistent: boolean
    /** Where the result store keeps large output: `<directory>/results`. */
    readonly resultsDirectory: string
    /** The state file: `<directory>/session.json`. */
    readonly stateFile: string
    /** A piece of state as the last checkpoint saved it, decoded with `schema`; a piece that does not decode fails. */
    readonly restore: <A, I>(name: string, schema: Schema.Schema<A, I>) => Effect.Effect<Option.Option<A>, SessionError>
    /** Saves `snapshot`'s value under `name` at every checkpoint (the latest registration of a name wins). */
    readonly track: <A, I>(name: string, schema: Schema.Schema<A, I>, snapshot: Effect.Effect<A>) => Effect.Effect<void>
    /** Writes every tracked piece (pieces restored but no longer tracked are kept as they were). */
    readonly checkpoint: Effect.Effect<void, SessionError>
  }
>() {
  /**
   * A session kept in `directory` (created 0700 when missing): its state is restored from `session.json` when
   * there is one, and saved there by {@link checkpoint}. One process at a time: the layer holds `session.lock`
   * while it lives (a lock left by a process that no longer runs is taken over), and fails naming the process that
   * holds it, so two processes never overwrite each other's state.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (options: { readonly directory: string }): Layer.Layer<Session, SessionError> =>
    Layer.scoped(
      Session,
      Effect.suspend(() => {
        const directory = nodePath.resolve(options.directory)
        return Effect.zipRight(lock(directory), make(directory, true))
      })
    )

  /**
   * A session that lasts as long as the layer's scope: a fresh private directory under the temporary directory,
   * removed (with what the result store saved in it) when the scope closes. Checkpoints write nothing.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layerTemp: Layer.Layer<Session, SessionError> = Layer.scoped(
    Session,
    Effect.gen(function*() {
      const directory = yield* Effect.acquireRelease(
        privateTempDirectory("session-").pipe(
          Effect.mapError((error) => new SessionError({ file: "(temporary session)", detail: error.message }))
        ),
        (made) => Effect.sync(() => nodeFs.rmSync(made, { recursive: true, force: true }))
      )
      return yield* make(directory, false)
    })
  )

  /**
   * Saves the session's state (with the Session in context).
   *
   * @since 0.2.0
   * @category accessors
   */
  static readonly checkpoint: Effect.Effect<void, SessionError, Session> = Effect.flatMap(
    Session,
    (session) => session.checkpoint
  )

  /**
   * A Ref restored from the last checkpoint (else `initial()`), saved at every checkpoint: the generic way for a
   * service to keep a piece of state in the session.
   *
   * @since 0.2.0
   * @category constructors
   */
  static readonly ref = <A, I>(
    name: string,
    schema: Schema.Schema<A, I>,
    initial: () => A
  ): Effect.Effect<Ref.Ref<A>, SessionError, Session> =>
    Effect.gen(function*() {
      const session = yield* Session
      const restored = yield* session.restore(name, schema)
      const ref = yield* Ref.make(Option.getOrElse(restored, initial))
      yield* session.track(name, schema, Ref.get(ref))
      return ref
    })

  /**
   * The result store in the session's directory (`<session>/results`, private).
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly resultStore: Layer.Layer<ResultStore, never, Session | FileSystem.FileSystem | Path.Path> = Layer
    .unwrapEffect(
      Effect.map(Session, (session) => ResultStore.layer(session.resultsDirectory))
    )
}

// -----------------------------------------------------------------------------
// internals
// -----------------------------------------------------------------------------

const STATE_VERSION = 1

const StateFile = Schema.Struct({
  version: Schema.Literal(STATE_VERSION),
  state: Schema.Record({ key: Schema.String, value: Schema.Unknown })
})

const firstIssue = (error: ParseResult.ParseError): string => {
  const [issue] = ParseResult.ArrayFormatter.formatErrorSync(error)
  return issue === undefined
    ? "invalid"
    : `${issue.path.length === 0 ? "" : `at ${issue.path.map(String).join(".")}: `}${issue.message}`
}

interface Tracked {
  readonly encode: Effect.Effect<unknown, SessionError>
}

/** Reads `session.json`: None when there is none; a file that is not the state this library writes is an error. */
const readState = (file: string): Either.Either<Readonly<Record<string, unknown>>, SessionError> => {
  let text: string
  try {
    text = nodeFs.readFileSync(file, "utf8")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Either.right({})
    return Either.left(new SessionError({ file, detail: `cannot be read: ${(error as Error).message}`, cause: error }))
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(
      new SessionError({
        file,
        detail: `is damaged (not JSON: ${(error as Error).message}); move it away to start afresh`,
        cause: error
      })
    )
  }
  const decoded = Schema.decodeUnknownEither(StateFile)(json)
  if (Either.isLeft(decoded)) {
    return Either.left(
      new SessionError({
        file,
        detail: `is damaged (${firstIssue(decoded.left)}); move it away to start afresh`,
        cause: decoded.left
      })
    )
  }
  return Either.right(decoded.right.state)
}

/** Writes the state atomically: a private temporary file next to it, synced, then renamed over it. */
const writeState = (file: string, state: Readonly<Record<string, unknown>>): Effect.Effect<void, SessionError> =>
  Effect.try({
    try: () => {
      const temporary = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`
      const fd = nodeFs.openSync(temporary, "wx", 0o600)
      try {
        nodeFs.writeFileSync(fd, `${JSON.stringify({ version: STATE_VERSION, state })}\n`)
        nodeFs.fsyncSync(fd)
      } finally {
        nodeFs.closeSync(fd)
      }
      try {
        nodeFs.renameSync(temporary, file)
      } catch (error) {
        nodeFs.rmSync(temporary, { force: true })
        throw error
      }
    },
    catch: (cause) => new SessionError({ file, detail: `cannot be written: ${(cause as Error).message}`, cause })
  })

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** Takes `<directory>/session.lock` (O_EXCL, holding the pid) for the scope; a stale lock is taken over. */
const lock = (directory: string): Effect.Effect<void, SessionError, Scope.Scope> => {
  const file = nodePath.join(directory, "session.lock")
  const take = Effect.try({
    try: () => {
      nodeFs.mkdirSync(directory, { recursive: true, mode: 0o700 })
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          const fd = nodeFs.openSync(file, "wx", 0o600)
          nodeFs.writeSync(fd, `${process.pid}\n`)
          nodeFs.closeSync(fd)
          return
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        }
        const holder = Number.parseInt(nodeFs.readFileSync(file, "utf8"), 10)
        if (Number.isInteger(holder) && holder !== process.pid && isRunning(holder)) {
          throw new Error(`is in use by process ${holder} (another run of this session); wait for it to end`)
        }
        nodeFs.rmSync(file, { force: true })
      }
      throw new Error("cannot be locked")
    },
    catch: (cause) => new SessionError({ file: directory, detail: (cause as Error).message, cause })
  })
  return Effect.acquireRelease(take, () => Effect.sync(() => nodeFs.rmSync(file, { force: true })))
}

const make = (directory: string, persistent: boolean): Effect.Effect<Session["Type"], SessionError> =>
  Effect.gen(function*() {
    const stateFile = nodePath.join(directory, "session.json")
    yield* Effect.try({
      try: () => nodeFs.mkdirSync(directory, { recursive: true, mode: 0o700 }),
      catch: (cause) =>
        new SessionError({
          file: directory,
          detail: `the session directory cannot be created: ${(cause as Error).message}`,
          cause
        })
    })
    const saved = persistent ? yield* readState(stateFile) : {}
    const tracked = new Map<string, Tracked>()

    const restore = <A, I>(
      name: string,
      schema: Schema.Schema<A, I>
    ): Effect.Effect<Option.Option<A>, SessionError> => {
      if (!(name in saved)) return Effect.succeed(Option.none())
      return Schema.decodeUnknown(schema)(saved[name]).pipe(
        Effect.map(Option.some),
        Effect.mapError((error) =>
          new SessionError({
            file: stateFile,
            detail: `is damaged (piece "${name}" ${firstIssue(error)}); move it away to start afresh`,
            cause: error
          })
        )
      )
    }

    const track = <A, I>(name: string, schema: Schema.Schema<A, I>, snapshot: Effect.Effect<A>): Effect.Effect<void> =>
      Effect.sync(() => {
        tracked.set(name, {
          encode: Effect.flatMap(snapshot, (value) =>
            Schema.encode(schema)(value).pipe(
              Effect.mapError((error) =>
                new SessionError({
                  file: stateFile,
                  detail: `piece "${name}" cannot be encoded: ${firstIssue(error)}`,
                  cause: error
                })
              )
            ))
        })
      })

    const checkpoint: Effect.Effect<void, SessionError> = Effect.gen(function*() {
      if (!persistent) return
      const state: Record<string, unknown> = { ...saved }
      for (const [name, piece] of tracked) state[name] = yield* piece.encode
      yield* writeState(stateFile, state)
    }).pipe(Effect.withSpan("Session.checkpoint", { attributes: { directory } }))

    return {
      directory,
      persistent,
      resultsDirectory: nodePath.join(directory, "results"),
      stateFile,
      restore,
      track,
      checkpoint
    }
  })
