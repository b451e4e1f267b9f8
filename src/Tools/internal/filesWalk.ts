/**
 * The directory walk of Glob and Grep's JavaScript search, through {@link FileAccess} (so the memory layer serves it):
 * breadth first from a root, symlinks never followed, ignore files applied inside the walk (an ignored directory is
 * never listed), a caller's override deciding before them (`.git`, Grep's `--glob`s), and a caller's pruning of
 * directories that cannot hold a match.
 *
 * @since 0.3.0
 * @internal
 */
import * as Effect from "effect/Effect"
import { readDirectoryEntriesAll } from "../../Session/FileAccess.js"
import type { DirectoryEntry, FileAccess, FileAccessError, FileType } from "../../Session/FileAccess.js"
import type { IgnoreStack } from "./filesIgnore.js"
import { inheritedRules, isIgnored, readIgnoreRules } from "./filesIgnore.js"

/** One name met by the walk. */
export interface WalkEntry {
  /** Absolute. */
  readonly path: string
  /** Relative to the walk's root, `/`-separated. */
  readonly relative: string
  readonly name: string
  readonly type: FileType
}

/** What to walk and how. */
export interface WalkOptions {
  /** The directory to walk (absolute, symlinks resolved). */
  readonly root: string
  /** Ignore files apply from this directory down (`root` or an ancestor of it). */
  readonly top: string
  /** The ignore files read in each directory, lowest precedence first (none: no ignore rules). */
  readonly ignoreFiles: ReadonlyArray<string>
  /** Decides before the ignore files: leave out, keep whatever they say, or undefined (they decide). */
  readonly override?: (entry: WalkEntry) => "skip" | "keep" | undefined
  /** Whether a directory that passed is listed (a pruning: it cannot hold a match); default yes. */
  readonly descend?: (entry: WalkEntry) => boolean
}

/** What the walk found. */
export interface WalkResult {
  /** Every entry but directories that passed, in walk order (breadth first, by name within a directory). */
  readonly entries: ReadonlyArray<WalkEntry>
  /** Directories below the root that could not be listed. */
  readonly unreadable: ReadonlyArray<FileAccessError>
}

interface Pending {
  readonly path: string
  readonly relative: string
  readonly stack: IgnoreStack
}

const byName = (a: { readonly name: string }, b: { readonly name: string }) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0

/**
 * Walks `options.root`. Fails only when the root itself cannot be listed; a directory below it that cannot be is
 * recorded in `unreadable` and the walk goes on.
 */
export const walk = (access: FileAccess["Type"], options: WalkOptions): Effect.Effect<WalkResult, FileAccessError> =>
  Effect.gen(function*() {
    const entries: Array<WalkEntry> = []
    const unreadable: Array<FileAccessError> = []
    const names = options.ignoreFiles
    const inherited = names.length === 0 ? [] : yield* inheritedRules(access, options.top, options.root, names)
    const rootListing = yield* access.readDirectoryEntries(options.root)
    let level: Array<{ readonly directory: Pending; readonly listing: ReadonlyArray<DirectoryEntry> }> = [
      { directory: { path: options.root, relative: "", stack: inherited }, listing: rootListing }
    ]
    while (level.length > 0) {
      const next: Array<Pending> = []
      for (const { directory, listing } of level) {
        let stack = directory.stack
        // An ignore file is read only where the listing has it (or, for `.git/info/exclude`, has `.git`).
        const listed = (name: string) => listing.some((entry) => entry.name === name.split("/")[0])
        if (names.some(listed)) {
          const own = yield* readIgnoreRules(access, directory.path, names, listed)
          if (own !== undefined) stack = [...stack, own]
        }
        for (const child of [...listing].sort(byName)) {
          const entry: WalkEntry = {
            path: directory.path === "/" ? `/${child.name}` : `${directory.path}/${child.name}`,
            relative: directory.relative === "" ? child.name : `${directory.relative}/${child.name}`,
            name: child.name,
            type: child.type
          }
          const isDirectory = child.type === "Directory"
          const verdict = options.override?.(entry)
          if (verdict === "skip") continue
          if (verdict === undefined && stack.length > 0 && isIgnored(stack, entry.path, isDirectory)) continue
          if (!isDirectory) entries.push(entry)
          else if (options.descend?.(entry) ?? true) next.push({ path: entry.path, relative: entry.relative, stack })
        }
      }
      const listings = yield* readDirectoryEntriesAll(access, next.map((directory) => directory.path))
      level = []
      next.forEach((directory, i) => {
        const listing = listings[i]!
        if (listing._tag === "Left") unreadable.push(listing.left)
        else level.push({ directory, listing: listing.right })
      })
    }
    return { entries, unreadable }
  })
