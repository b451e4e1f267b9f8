/**
 * A configuration file read as JSON (`.mcp.json`, `.lsp.json`): absent, unusable (with the reason, for the file's
 * error), or its value.
 *
 * @internal
 */
import type * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"

/** What reading one JSON file gave. */
export type JsonFile =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Unusable"; readonly reason: string }
  | { readonly _tag: "Json"; readonly json: unknown }

/**
 * Reads `path` as JSON; a file that is not there, or is empty, is `Missing` (an empty file configures nothing; the
 * Bash sandbox leaves empty placeholders of protected files such as `.mcp.json` while a sandboxed task runs), one
 * that cannot be read or parsed `Unusable`.
 */
export const readJsonFile = (files: FileSystem.FileSystem, path: string): Effect.Effect<JsonFile> =>
  Effect.gen(function*() {
    const exists = yield* Effect.orElseSucceed(files.exists(path), () => false)
    if (!exists) return { _tag: "Missing" } as const
    const text = yield* Effect.either(files.readFileString(path))
    if (text._tag === "Left") return { _tag: "Unusable", reason: `cannot be read: ${text.left.message}` } as const
    if (text.right.trim() === "") return { _tag: "Missing" } as const
    try {
      return { _tag: "Json", json: JSON.parse(text.right) as unknown } as const
    } catch (error) {
      return {
        _tag: "Unusable",
        reason: `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`
      } as const
    }
  })
