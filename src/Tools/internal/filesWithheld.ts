/**
 * Keeping files that permission rules forbid reading out of search results (Grep, Glob): a deny rule such as
 * `Read(./.env)` must hold inside a search of `.` too. The model learns how many files were withheld, never which.
 *
 * @since 0.1.0
 * @internal
 */
import * as nodePath from "node:path"
import type { ResolvedPath } from "../../Session/Workspace.js"
import type { CallContext } from "../../Tool/Tool.js"

/**
 * The denied-file filter of one search.
 *
 * @internal
 */
export interface Withholding {
  /** Whether a result file may be shown (asked once per file; a denied file counts once). */
  readonly allows: (absolutePath: string) => boolean
  /** Whether the rules deny showing a path, without counting it (for a path named in a message, not a result). */
  readonly denies: (absolutePath: string) => boolean
  /** Withholds a file the rules allow but the caller must not show (counted once, as a denied file is). */
  readonly withhold: (absolutePath: string) => void
  /** How many distinct files were withheld so far. */
  readonly count: () => number
}

/**
 * A filter for the results of a search run under `searched.real`. Each result is checked as found and, when the
 * search root was reached through a symlink, as the model would spell it (under `searched.absolute`); the policy
 * also checks each path's real target.
 *
 * @internal
 */
export const withholding = (context: CallContext, searched: ResolvedPath): Withholding => {
  // One answer per file: content mode asks once per line.
  const answers = new Map<string, boolean>()
  let withheld = 0
  const respelled = searched.absolute === searched.real
    ? undefined
    : (file: string) => nodePath.join(searched.absolute, nodePath.relative(searched.real, file))
  const isDenied = (absolutePath: string) =>
    context.isReadDenied(absolutePath) || (respelled !== undefined && context.isReadDenied(respelled(absolutePath)))
  return {
    allows: (absolutePath) => {
      const known = answers.get(absolutePath)
      if (known !== undefined) return known
      const denied = isDenied(absolutePath)
      answers.set(absolutePath, !denied)
      if (denied) withheld++
      return !denied
    },
    denies: (absolutePath) => answers.get(absolutePath) === false || isDenied(absolutePath),
    withhold: (absolutePath) => {
      if (answers.get(absolutePath) === false) return
      answers.set(absolutePath, false)
      withheld++
    },
    count: () => withheld
  }
}

/**
 * The model-facing note for withheld files, or undefined when none were.
 *
 * @internal
 */
export const withheldNote = (count: number | undefined): string | undefined =>
  count === undefined || count === 0 ? undefined : `(${count} file${count === 1 ? "" : "s"} hidden by permission rules)`
