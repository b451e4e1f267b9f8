/**
 * Editing settings files atomically: "always allow" adds a rule to `permissions`, "trust this project" adds a path to
 * `trustedProjects`. Every other key is kept; a reader never sees half a file.
 *
 * @since 0.3.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Random from "effect/Random"
import * as Path from "node:path"
import { parseRule, printRule } from "../Tool/Rule.js"
import type { PermissionRule, RuleBehavior } from "../Tool/Rule.js"
import { isPlainObject, readJson } from "./internal/files.js"
import { SettingsError } from "./SettingsSchema.js"

// -----------------------------------------------------------------------------
// editing
// -----------------------------------------------------------------------------

const sameRule = (text: unknown, printed: string): boolean => {
  if (typeof text !== "string") return false
  const parsed = parseRule(text)
  return Either.isRight(parsed) ? printRule(parsed.right) === printed : text === printed
}

/**
 * Rewrites a settings file's JSON with `edit` (which answers the new content, `undefined` for "nothing to change", or
 * why the file cannot be edited), keeping every other key. The file (and its directory) is created if missing. The
 * new content is written to a temporary file in the same directory and renamed over the old one, so a reader never
 * sees half a file. Read-modify-write is not locked: callers serialise concurrent edits of one file.
 */
const editSettingsFile = (
  path: string,
  edit: (json: Record<string, unknown>) => Either.Either<Record<string, unknown> | undefined, string>
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const invalid = (detail: string) => new SettingsError({ file: path, reason: "InvalidSettings", detail })
    const unwritable = (error: { readonly message: string }) =>
      new SettingsError({ file: path, reason: "Unwritable", detail: error.message })

    const json = Option.getOrElse(yield* readJson(fs, path), (): unknown => ({}))
    if (!isPlainObject(json)) {
      return yield* invalid(`expected object, got ${Array.isArray(json) ? "array" : typeof json}`)
    }
    const edited = edit(json)
    if (Either.isLeft(edited)) return yield* invalid(edited.left)
    const updated = edited.right
    if (updated === undefined) return false

    const directory = Path.dirname(path)
    const suffix = (yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)
    const temporary = Path.join(directory, `.${Path.basename(path)}.${suffix}.tmp`)

    yield* fs.makeDirectory(directory, { recursive: true }).pipe(Effect.mapError(unwritable))
    yield* fs.writeFileString(temporary, `${JSON.stringify(updated, null, 2)}\n`, { flag: "wx" }).pipe(
      Effect.zipRight(fs.rename(temporary, path)),
      Effect.mapError(unwritable),
      // On interruption too (a run cancelled as "allow always" saved): no temporary file is left.
      Effect.onError(() => fs.remove(temporary).pipe(Effect.ignore))
    )
    return true
  })

/**
 * Adds `rule` to `permissions[behavior]` of a settings file unless an equal rule is already there, keeping
 * every other key. The file (and its directory) is created if missing. The new content is written to a
 * temporary file in the same directory and renamed over the old one, so a reader never sees half a file.
 * Succeeds with `true` when the rule was added, `false` when it was already present.
 *
 * Read-modify-write is not locked: callers that may add rules concurrently to the same file serialise the
 * calls (one `Semaphore` per file).
 *
 * @since 0.1.0
 * @category editing
 */
export const addRuleToSettingsFile = (
  path: string,
  behavior: RuleBehavior,
  rule: PermissionRule
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  editSettingsFile(path, (json) => {
    const permissions = json.permissions ?? {}
    if (!isPlainObject(permissions)) return Either.left("permissions: expected object")
    const list = permissions[behavior] ?? []
    if (!Array.isArray(list)) return Either.left(`permissions.${behavior}: expected array`)
    const printed = printRule(rule)
    if (list.some((text) => sameRule(text, printed))) return Either.right(undefined)
    return Either.right({ ...json, permissions: { ...permissions, [behavior]: [...list, printed] } })
  }).pipe(Effect.withSpan("Settings.addRuleToSettingsFile", { attributes: { path, behavior } }))

/**
 * Records that the person trusts a project: adds its absolute path to `trustedProjects` of the user's settings file
 * (atomically, as {@link addRuleToSettingsFile} does). Succeeds with `false` when it was already there.
 *
 * @since 0.2.0
 * @category editing
 */
export const addTrustedProject = (
  userSettingsPath: string,
  project: string
): Effect.Effect<boolean, SettingsError, FileSystem.FileSystem> =>
  editSettingsFile(userSettingsPath, (json) => {
    const list = json.trustedProjects ?? []
    if (!Array.isArray(list)) return Either.left("trustedProjects: expected array")
    const absolute = Path.resolve(project)
    if (list.includes(absolute)) return Either.right(undefined)
    return Either.right({ ...json, trustedProjects: [...list, absolute] })
  }).pipe(Effect.withSpan("Settings.addTrustedProject", { attributes: { path: userSettingsPath, project } }))
