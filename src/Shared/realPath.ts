/**
 * The real path of a path that may not exist yet, as the kernel would reach it when creating it: every existing
 * symlink is followed, a **dangling** one too (writing through `link -> /outside/new` creates `/outside/new`), and
 * the part that does not exist is appended as written. A dangling symlink inside a directory is therefore not inside
 * it until its target is. A chain of links longer than the kernel follows (40) resolves to where it stopped.
 *
 * One algorithm, over whatever reads the file system: `node:fs` (synchronous stages), a FileAccess, an Effect
 * FileSystem.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as nodePath from "node:path"

/** What the resolution needs to read: the real path of an existing path, and the target of a symlink. */
export interface LinkReader {
  /** The real path, or undefined when the path does not exist (a dangling symlink does not). */
  readonly realPath: (path: string) => string | undefined
  /** The target of a symlink as stored, or undefined when the path is not a symlink. */
  readonly readLink: (path: string) => string | undefined
}

/** The kernel's limit on symlinks followed in one lookup (Linux `MAXSYMLINKS`). */
const MAX_LINKS = 40

/**
 * The real path of an absolute, normalised path that may not exist (see the module doc).
 *
 * @internal
 */
export const realPathOfMissing = (absolute: string, reader: LinkReader): string => {
  let links = 0
  const resolve = (path: string): string => {
    const real = reader.realPath(path)
    if (real !== undefined) return real
    const parent = nodePath.dirname(path)
    if (parent === path) return path
    const realParent = resolve(parent)
    const here = nodePath.join(realParent, nodePath.basename(path))
    const target = links < MAX_LINKS ? reader.readLink(here) : undefined
    if (target === undefined) return here
    links++
    // A dangling symlink: where it points, from the directory it lives in.
    return resolve(nodePath.resolve(realParent, target))
  }
  return resolve(absolute)
}

/** {@link LinkReader} as effects (an Effect FileSystem, an asynchronous FileAccess). */
export interface LinkReaderEffect {
  readonly realPath: (path: string) => Effect.Effect<string | undefined>
  readonly readLink: (path: string) => Effect.Effect<string | undefined>
}

/**
 * {@link realPathOfMissing} through effects; also says whether the path itself exists.
 *
 * @internal
 */
export const realPathOfMissingEffect = (
  absolute: string,
  reader: LinkReaderEffect
): Effect.Effect<{ readonly real: string; readonly exists: boolean }> => {
  let links = 0
  const resolve = (path: string): Effect.Effect<string> =>
    Effect.flatMap(reader.realPath(path), (real) => {
      if (real !== undefined) return Effect.succeed(real)
      const parent = nodePath.dirname(path)
      if (parent === path) return Effect.succeed(path)
      return Effect.flatMap(resolve(parent), (realParent) => {
        const here = nodePath.join(realParent, nodePath.basename(path))
        if (links >= MAX_LINKS) return Effect.succeed(here)
        return Effect.flatMap(reader.readLink(here), (target) => {
          if (target === undefined) return Effect.succeed(here)
          links++
          return resolve(nodePath.resolve(realParent, target))
        })
      })
    })
  return Effect.flatMap(
    reader.realPath(absolute),
    (real): Effect.Effect<{ real: string; exists: boolean }> =>
      real !== undefined
        ? Effect.succeed({ real, exists: true })
        : Effect.map(resolve(absolute), (resolved) => ({ real: resolved, exists: false }))
  )
}
