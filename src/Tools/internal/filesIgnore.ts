/**
 * Ignore files (`.gitignore`, and for Grep also `.ignore`, `.rgignore` and git's `.git/info/exclude`, as ripgrep
 * reads them) for the directory walk of Glob and Grep, with the `ignore` package doing the matching. The rules in force
 * in a directory are the ignore files from a top directory down to it. As ripgrep decides: each kind of file in turn,
 * highest precedence first (`.rgignore`, `.ignore`, `.gitignore`, the exclude file), and the first kind with an opinion
 * on a path decides; within a kind the deepest file with an opinion (a `!negation` in a nested `.gitignore` re-includes
 * what a parent's rule left out, as in git), and within one file the last matching rule.
 *
 * Files are read through {@link FileAccess}, so the in-memory layer serves them too.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import ignore from "ignore"
import type { Ignore } from "ignore"
import * as nodePath from "node:path"
import type { FileAccess } from "../../Session/FileAccess.js"

/** The ignore files Glob reads in each directory. */
export const gitignoreOnly: ReadonlyArray<string> = [".gitignore"]

/** The ignore files ripgrep reads in each directory, lowest precedence first (git's exclude file where `.git` is). */
export const ripgrepIgnoreFiles: ReadonlyArray<string> = [".git/info/exclude", ".gitignore", ".ignore", ".rgignore"]

/** The rules of one directory's ignore files. */
export interface IgnoreRules {
  /** The directory the rules are relative to (absolute, normalised). */
  readonly directory: string
  /** Each kind's rules, by precedence (0: the highest); a kind the directory has no file of is absent. */
  readonly byRank: ReadonlyArray<Ignore | undefined>
}

/** The ignore rules in force in a directory, from the top down. */
export type IgnoreStack = ReadonlyArray<IgnoreRules>

/** Reads a small text file through FileAccess; undefined when it is not there or not a regular file. */
export const readText = (access: FileAccess["Type"], path: string): Effect.Effect<string | undefined> =>
  Effect.scoped(
    Effect.flatMap(access.openRead(path), (handle) => handle.read(0, handle.info.size))
  ).pipe(
    Effect.map((bytes) => new TextDecoder().decode(bytes)),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * The rules of `directory`'s ignore files among `names` (the kinds, lowest precedence first); `mayExist` tells which
 * are worth reading (the directory's listing has them).
 */
export const readIgnoreRules = (
  access: FileAccess["Type"],
  directory: string,
  names: ReadonlyArray<string>,
  mayExist: (name: string) => boolean = () => true
): Effect.Effect<IgnoreRules | undefined> =>
  Effect.map(
    Effect.forEach(
      names,
      (name) => mayExist(name) ? readText(access, nodePath.join(directory, name)) : Effect.succeed(undefined)
    ),
    (texts) => {
      if (texts.every((text) => text === undefined)) return undefined
      // Case-sensitive, as git on Linux and ripgrep match.
      const byRank = texts.map((text) => text === undefined ? undefined : ignore({ ignorecase: false }).add(text))
      return { directory, byRank: byRank.reverse() }
    }
  )

/**
 * The stack of rules from `top` down to `directory`'s parent (both absolute; `directory` inside `top`): what a walk
 * starting at `directory` inherits. The directory's own files are read by the walk, from its listing.
 */
export const inheritedRules = (
  access: FileAccess["Type"],
  top: string,
  directory: string,
  names: ReadonlyArray<string>
): Effect.Effect<IgnoreStack> => {
  const relative = nodePath.relative(top, directory)
  if (relative === "" || relative.startsWith("..") || nodePath.isAbsolute(relative)) return Effect.succeed([])
  const segments = relative.split(nodePath.sep)
  const ancestors = segments.map((_, i) => nodePath.join(top, ...segments.slice(0, i)))
  return Effect.map(
    Effect.forEach(ancestors, (ancestor) => readIgnoreRules(access, ancestor, names)),
    (found) => found.filter((rules): rules is IgnoreRules => rules !== undefined)
  )
}

/** Whether the rules in force leave `path` (absolute, below every rules directory) out; `directory` for a directory. */
export const isIgnored = (stack: IgnoreStack, path: string, directory: boolean): boolean => {
  const kinds = stack.reduce((most, rules) => Math.max(most, rules.byRank.length), 0)
  for (let rank = 0; rank < kinds; rank++) {
    for (let i = stack.length - 1; i >= 0; i--) {
      const { byRank, directory: base } = stack[i]!
      const rules = byRank[rank]
      if (rules === undefined) continue
      const relative = base === "/" ? path.slice(1) : path.slice(base.length + 1)
      const verdict = rules.test(directory ? `${relative}/` : relative)
      if (verdict.ignored) return true
      if (verdict.unignored) return false
    }
  }
  return false
}
