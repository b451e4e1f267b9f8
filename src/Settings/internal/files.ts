/**
 * What the settings modules share about files: reading a settings file's JSON (missing is none, empty is `{}`), the
 * plain-object test and `~` expansion.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Path from "node:path"
import { SettingsError } from "../SettingsSchema.js"

/** A settings file's JSON: none when the file does not exist, `{}` when it is empty. */
export const readJson = (
  fs: FileSystem.FileSystem,
  file: string
): Effect.Effect<Option.Option<unknown>, SettingsError> =>
  fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchIf(
      (error) => error._tag === "SystemError" && error.reason === "NotFound",
      () => Effect.succeed(Option.none<string>())
    ),
    Effect.mapError((error) => new SettingsError({ file, reason: "Unreadable", detail: error.message })),
    Effect.flatMap(Option.match({
      onNone: () => Effect.succeed(Option.none()),
      // An empty file (freshly created) is an empty settings object, not a syntax error.
      onSome: (text) =>
        text.trim() === "" ? Effect.succeed(Option.some<unknown>({})) : Either.try({
          try: () => Option.some<unknown>(JSON.parse(text)),
          catch: (error) =>
            new SettingsError({
              file,
              reason: "InvalidJson",
              detail: (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")
            })
        })
    }))
  )

/** Whether a JSON value is an object with keys (not an array, not null). */
export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `~` and `~/x` against home. */
export const expandHome = (path: string, home: string | undefined): string =>
  home === undefined ? path : path === "~" ? home : path.startsWith("~/") ? Path.join(home, path.slice(2)) : path
