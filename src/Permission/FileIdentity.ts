/**
 * File identity for path rules: a rule that names one file (`Read(./secret.env)`, `Edit(~/.bashrc)`) covers every
 * name of that file, so a hard link (`ln secret.env notes.txt`) does not dodge it. Two names are the same file when
 * their device and inode are equal; only a file with more than one link can have another name, so a file with one
 * link costs a single `stat`.
 *
 * Rules with wildcards (`Read(./secrets/**)`) are matched by path only: finding every file they could name would
 * mean walking their directories on every check.
 *
 * The policy uses it for `deniesRead` (Grep and Glob leaving protected files out), the file tools for their own
 * `matchesRule`.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import { pathPatternPrefix } from "./PathPattern.js"
import type { PathPatternContext } from "./PathPattern.js"

/**
 * The one absolute path a rule's content names, when it has no wildcard: `./secret.env`, `~/.bashrc`,
 * `//etc/hosts`, and a bare name (`.env`) the one in the working directory. `undefined` for a pattern with a
 * wildcard or one that names a directory (`src/`).
 *
 * @since 0.2.0
 * @category identity
 */
export const literalRulePath = (content: string, context: PathPatternContext): string | undefined => {
  if (/[*?[\]\\]/.test(content)) return undefined
  const prefix = pathPatternPrefix(content, context)
  if (prefix === "") return undefined
  if (!prefix.endsWith("/")) return prefix
  return content.includes("/") ? undefined : prefix + content
}

/**
 * Whether the file at `realPath` is, under another name (a hard link), one of `files`.
 *
 * @since 0.2.0
 * @category identity
 */
export const isAnotherNameOf = (realPath: string, files: ReadonlyArray<string>): boolean => {
  if (files.length === 0) return false
  const stat = fs.statSync(realPath, { throwIfNoEntry: false })
  if (stat === undefined || !stat.isFile() || stat.nlink < 2) return false
  return files.some((file) => {
    const other = fs.statSync(file, { throwIfNoEntry: false })
    return other !== undefined && other.dev === stat.dev && other.ino === stat.ino
  })
}
