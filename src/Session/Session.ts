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
import * as Duration from "effect/Duration"
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
import * as SessionLock from "./internal/lock.js"
import { privateTempDirectory, ResultStore } from "./ResultStore.js"
import type { ResultLimits } from "./ResultStore.js"

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
 * How a persistent session is kept: how long a second process waits for the lock, and the bounds that keep a long
 * session small (saved results by age, total size and count; session rules and approvals by count, the oldest
 * dropped with a warning in the log).
 *
 * @since 0.3.0
 * @category models
 */
export interface SessionOptions {
  readonly directory: string
  /** How long to wait (real time) while another live process holds the session. Default 10 seconds. */
  readonly lockWait?: Duration.DurationInput | undefined
  /** The bounds of `<directory>/results` (see {@link ResultLimits}). */
  readonly results?: ResultLimits | undefined
  /** The most session rules kept ("allow for this session" answers); the oldest go first. Default 500. */
  readonly maxSessionRules?: number | undefined
  /** The most approvals remembered; the oldest go first. Default 1,000. */
  readonly maxApprovals?: number | undefined
}

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
    /** The bounds of the session's result store (the defaults for a temporary session). */
    readonly resultLimits: ResultLimits
    /** The most session rules and approvals kept. */
    readonly limits: { readonly sessionRules: number; readonly approvals: number }
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
   * while it lives, waits (up to `lockWait`, default 10 s) while another live process holds it, then fails with one
   * line naming that process, so two processes never both run on one session. The lock is written with its owner
   * at once (pid and start time), taken over only when that owner is provably dead, and removed only by its owner.
   * A temporary state file left by a process killed while saving is removed by the next save.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layer = (options: SessionOptions): Layer.Layer<Session, SessionError> =>
    Layer.scoped(Session, Session.make(options))

  /**
   * The session {@link Session.layer} provides, as an Effect (locked for the scope): for a program that builds its
   * services in one Layer (each Layer costs a cold start its own construction; see the CLI's `exec`).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly make = (options: SessionOptions): Effect.Effect<Session["Type"], SessionError, Scope.Scope> =>
    Effect.suspend(() => {
      const directory = nodePath.resolve(options.directory)
      const wait = Duration.decode(options.lockWait ?? Duration.seconds(10))
      return Effect.zipRight(
        Effect.zipRight(
          makeDirectory(directory),
          Effect.mapError(
            SessionLock.acquire(directory, wait),
            (cause) => new SessionError({ file: directory, detail: cause.message, cause })
          )
        ),
        make(directory, true, options)
      )
    })

  /**
   * A session that lasts as long as the layer's scope: a fresh private directory under the temporary directory,
   * removed (with what the result store saved in it) when the scope closes. Checkpoints write nothing.
   *
   * @since 0.2.0
   * @category layers
   */
  static readonly layerTemp: Layer.Layer<Session, SessionError> = Layer.scoped(
    Session,
    Effect.suspend(() => Session.makeTemp)
  )

  /**
   * The session {@link Session.layerTemp} provides, as an Effect (its directory removed when the scope closes).
   *
   * @since 0.3.0
   * @category constructors
   */
  static readonly makeTemp: Effect.Effect<Session["Type"], SessionError, Scope.Scope> = Effect.gen(function*() {
    const directory = yield* Effect.acquireRelease(
      privateTempDirectory("session-").pipe(
        Effect.mapError((error) => new SessionError({ file: "(temporary session)", detail: error.message }))
      ),
      (made) => Effect.sync(() => nodeFs.rmSync(made, { recursive: true, force: true }))
    )
    return yield* make(directory, false, { directory })
  })

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
      Effect.map(Session, (session) => ResultStore.layer(session.resultsDirectory, session.resultLimits))
    )
}

// -----------------------------------------------------------------------------
// internals
// -----------------------------------------------------------------------------

/** Creates the session directory (and its parents), private to this user. */
const makeDirectory = (directory: string): Effect.Effect<void, SessionError> =>
  Effect.try({
    try: () => void nodeFs.mkdirSync(directory, { recursive: true, mode: 0o700 }),
    catch: (cause) =>
      new SessionError({
        file: directory,
        detail: `the session directory cannot be created: ${(cause as Error).message}`,
        cause
      })
  })

const STATE_VERSION = 1
const DEFAULT_MAX_APPROVALS = 1_000
const DEFAULT_MAX_SESSION_RULES = 500

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

/**
 * Removes the temporary state files a process killed while saving left behind (`session.json.<pid>.<random>.tmp`):
 * the session is locked, so no other process is writing one.
 */
const removeLeftovers = (file: string): void => {
  const directory = nodePath.dirname(file)
  const prefix = `${nodePath.basename(file)}.`
  let names: Array<string>
  try {
    names = nodeFs.readdirSync(directory)
  } catch {
    return
  }
  for (const name of names) {
    if (name.startsWith(prefix) && name.endsWith(".tmp")) nodeFs.rmSync(nodePath.join(directory, name), { force: true })
  }
}

/** Writes the state atomically: a private temporary file next to it, synced, then renamed over it. */
const writeState = (file: string, state: Readonly<Record<string, unknown>>): Effect.Effect<void, SessionError> =>
  Effect.try({
    try: () => {
      removeLeftovers(file)
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

const make = (
  directory: string,
  persistent: boolean,
  options: SessionOptions
): Effect.Effect<Session["Type"], SessionError> =>
  Effect.gen(function*() {
    const stateFile = nodePath.join(directory, "session.json")
    yield* makeDirectory(directory)
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
      resultLimits: options.results ?? {},
      limits: {
        sessionRules: Math.max(1, options.maxSessionRules ?? DEFAULT_MAX_SESSION_RULES),
        approvals: Math.max(1, options.maxApprovals ?? DEFAULT_MAX_APPROVALS)
      },
      restore,
      track,
      checkpoint
    }
  })
