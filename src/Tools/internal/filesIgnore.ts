/**
 * `.gitignore` support for Glob, with the `ignore` package doing the matching: a filter that applies every
 * `.gitignore` from a top directory down to each file's directory, and a cheap pruning of whole directories named
 * in the top `.gitignore` (so `node_modules/` is never walked).
 *
 * @since 0.1.0
 * @internal
 */
import ignore from "ignore"
import type { Ignore } from "ignore"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { isWithin } from "../../Session/Workspace.js"

const readGitignore = (directory: string): Promise<Ignore | undefined> =>
  fs.promises.readFile(nodePath.join(directory, ".gitignore"), "utf8").then(
    (text) => ignore().add(text),
    () => undefined
  )

/**
 * The files (absolute) that no `.gitignore` between `top` and their own directory ignores. Each `.gitignore` is
 * matched against the path relative to its directory, as git does (negations work within one file).
 */
export const gitignoreFilter = async (top: string, files: ReadonlyArray<string>): Promise<ReadonlyArray<string>> => {
  const cache = new Map<string, Promise<Ignore | undefined>>()
  const rulesOf = (directory: string) => {
    let rules = cache.get(directory)
    if (rules === undefined) {
      rules = readGitignore(directory)
      cache.set(directory, rules)
    }
    return rules
  }
  const verdicts = await Promise.all(
    files.map(async (file) => {
      if (!isWithin(top, file)) return true
      let directory = top
      const segments = nodePath.relative(top, nodePath.dirname(file)).split(nodePath.sep).filter((s) => s !== "")
      for (let i = 0; i <= segments.length; i++) {
        if (i > 0) directory = nodePath.join(directory, segments[i - 1]!)
        const rules = await rulesOf(directory)
        if (rules?.ignores(nodePath.relative(directory, file)) === true) return false
      }
      return true
    })
  )
  return files.filter((_, i) => verdicts[i])
}

const plainName = /^\/?[^*?[\]{}()!#\\/\s]+\/?$/

/**
 * Glob ignore patterns (relative to `base`) for the directories the top `.gitignore` names plainly (`node_modules`,
 * `dist/`, `/build`), so the walk skips them. Empty when the file has negations (a `!` could re-include something
 * inside them); the exact filter runs afterwards anyway.
 */
export const rootIgnoreGlobs = async (top: string, base: string): Promise<ReadonlyArray<string>> => {
  const text = await fs.promises.readFile(nodePath.join(top, ".gitignore"), "utf8").catch(() => "")
  const lines = text.split(/\r?\n/).map((line) => line.trim()).filter((line) => line !== "" && !line.startsWith("#"))
  if (lines.some((line) => line.startsWith("!"))) return []
  return lines.flatMap((line) => {
    if (!plainName.test(line)) return []
    const name = line.replace(/^\/|\/$/g, "")
    if (!line.startsWith("/")) return [`**/${name}/**`]
    return base === top ? [`${name}/**`] : []
  })
}
