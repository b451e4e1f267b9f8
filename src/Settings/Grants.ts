/**
 * The person's own record of what "always allow" wrote for them: Claude Code writes such a rule into the project's
 * `.claude/settings.local.json`, and so does this runtime; but that file lives in the project, and a project may
 * come with one (committed, or copied in), whose allow rules must wait for the person's trust. So each rule this
 * runtime writes there is also recorded here, outside every project, under the absolute path of the file it went
 * into. On the next run the rules of a `settings.local.json` that this record lists for that file apply without
 * `--trust-project`; everything else in the file (other allow rules, hooks, modes, directories) still waits for
 * trust.
 *
 * The record is a JSON file in the person's config directory, `~/.config/effect-tool-runtime/grants.json` (0600, in
 * a 0700 directory), or wherever {@link grantsPathVariable} names; loaders and policies also take a path option
 * (tests use a temp file). Rules are stored as printed (`Bash(npm test:*)`), the way they are written to the settings
 * file. Writes are atomic (temporary file, then rename); concurrent writers of one record are not locked against each
 * other.
 *
 * Owns: the record's format, its location, reading and adding. Imports only effect and @effect/platform.
 *
 * @since 0.3.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Random from "effect/Random"
import * as Schema from "effect/Schema"
import * as Path from "node:path"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * The environment variable naming the record's file (an absolute path), over the default location.
 *
 * @since 0.3.0
 * @category models
 */
export const grantsPathVariable = "EFFECT_TOOL_RUNTIME_GRANTS"

/**
 * The record: for each settings file (absolute path), the allow rules this runtime wrote into it for the person.
 *
 * @since 0.3.0
 * @category models
 */
export const GrantsRecord = Schema.Struct({
  version: Schema.Literal(1),
  files: Schema.Record({ key: Schema.String, value: Schema.Struct({ allow: Schema.Array(Schema.String) }) })
})

/**
 * @since 0.3.0
 * @category models
 */
export type GrantsRecord = typeof GrantsRecord.Type

/**
 * The record could not be read or written.
 *
 * @since 0.3.0
 * @category errors
 */
export class GrantsError extends Schema.TaggedError<GrantsError>("effect-tool-runtime/GrantsError")("GrantsError", {
  file: Schema.String,
  detail: Schema.String
}) {
  override get message(): string {
    return `The record of rules you allowed always (${this.file}) cannot be used: ${this.detail}`
  }
}

/**
 * Where the record lives: {@link grantsPathVariable} when set, else
 * `<home>/.config/effect-tool-runtime/grants.json`.
 *
 * @since 0.3.0
 * @category models
 */
export const defaultGrantsPath = (
  home: string,
  env: Readonly<Record<string, string | undefined>> = process.env
): string => {
  const named = env[grantsPathVariable]
  return named !== undefined && named !== ""
    ? Path.resolve(named)
    : Path.join(home, ".config", "effect-tool-runtime", "grants.json")
}

// -----------------------------------------------------------------------------
// reading and adding
// -----------------------------------------------------------------------------

const empty: GrantsRecord = { version: 1, files: {} }
const decodeRecord = Schema.decodeUnknownEither(Schema.parseJson(GrantsRecord))

const readRecord = (fs: FileSystem.FileSystem, file: string): Effect.Effect<GrantsRecord, GrantsError> =>
  fs.readFileString(file).pipe(
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed("")
    ),
    Effect.mapError((error) => new GrantsError({ file, detail: error.message })),
    Effect.flatMap((text) =>
      text.trim() === "" ? Effect.succeed(empty) : Either.mapLeft(decodeRecord(text), (error) =>
        new GrantsError({
          file,
          detail: ParseResult.TreeFormatter.formatErrorSync(error).replace(/\s*\n\s*/g, " ")
        }))
    )
  )

/**
 * The allow rules (as printed) this runtime recorded for a settings file; none when there is no record.
 *
 * @since 0.3.0
 * @category reading
 */
export const grantedRules = (
  recordPath: string,
  settingsFile: string
): Effect.Effect<ReadonlySet<string>, GrantsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const record = yield* readRecord(fs, recordPath)
    return new Set(record.files[Path.resolve(settingsFile)]?.allow ?? [])
  })

/**
 * Records allow rules (as printed) written into a settings file for the person. Rules already there are kept once.
 *
 * @since 0.3.0
 * @category adding
 */
export const recordGrants = (
  recordPath: string,
  settingsFile: string,
  rules: ReadonlyArray<string>
): Effect.Effect<void, GrantsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const unwritable = (error: { readonly message: string }) =>
      new GrantsError({ file: recordPath, detail: error.message })
    const record = yield* readRecord(fs, recordPath)
    const key = Path.resolve(settingsFile)
    const before = record.files[key]?.allow ?? []
    const added = rules.filter((rule, i) => !before.includes(rule) && rules.indexOf(rule) === i)
    if (added.length === 0) return
    const updated: GrantsRecord = { ...record, files: { ...record.files, [key]: { allow: [...before, ...added] } } }
    const directory = Path.dirname(recordPath)
    const suffix = (yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)
    const temporary = Path.join(directory, `.${Path.basename(recordPath)}.${suffix}.tmp`)
    yield* fs.makeDirectory(directory, { recursive: true, mode: 0o700 }).pipe(Effect.mapError(unwritable))
    yield* fs.writeFileString(temporary, `${JSON.stringify(updated, null, 2)}\n`, { flag: "wx", mode: 0o600 }).pipe(
      Effect.zipRight(fs.rename(temporary, recordPath)),
      Effect.mapError(unwritable),
      // On interruption too (a run cancelled as "allow always" saved): no temporary file is left.
      Effect.onError(() => fs.remove(temporary).pipe(Effect.ignore))
    )
  }).pipe(Effect.withSpan("Grants.recordGrants", { attributes: { recordPath, settingsFile } }))
