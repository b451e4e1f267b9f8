/**
 * File identity for path rules: a rule that names one file (`Read(./secret.env)`, `Edit(~/.bashrc)`) covers every
 * name of that file, so a hard link (`ln secret.env notes.txt`) does not dodge it. Two names are the same file when
 * their device and inode are equal; only a file with more than one link can have another name, so a file with one
 * link costs a single `stat`.
 *
 * Rules with wildcards (`Read(./secrets/**)`) are matched by path only: finding every file they could name would
 * mean walking their directories on every check.
 *
 * @since 0.2.0
 * @internal
 */
import * as fs from "node:fs"
import { pathPatternPrefix } from "../../Permission/PathPattern.js"
import type { RuleContext } from "../../Tool/Tool.js"
import { resolveSync } from "./filesPaths.js"

/** The one absolute path a rule's content names, when it has no wildcard (a bare name: the one in the working directory). */
export const literalRulePath = (content: string, context: RuleContext): string | undefined => {
  if (/[*?[\]\\]/.test(content)) return undefined
  const prefix = pathPatternPrefix(content, { cwd: context.cwd, home: context.home, ruleDir: context.ruleDirectory })
  if (prefix === "") return undefined
  if (!prefix.endsWith("/")) return prefix
  return content.includes("/") ? undefined : prefix + content
}

/** Whether `path` (resolved through symlinks) is another name of the file a rule names literally. */
export const ruleNamesSameFile = (content: string, path: string, context: RuleContext): boolean => {
  const named = literalRulePath(content, context)
  if (named === undefined) return false
  const stat = fs.statSync(resolveSync(path, context.cwd, context.home).real, { throwIfNoEntry: false })
  if (stat === undefined || !stat.isFile() || stat.nlink < 2) return false
  const other = fs.statSync(named, { throwIfNoEntry: false })
  return other !== undefined && other.dev === stat.dev && other.ino === stat.ino
}
