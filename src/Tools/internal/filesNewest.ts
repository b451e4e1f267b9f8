/**
 * The newest few of many files, for Glob and Grep: what a full sort by modification time (newest first, then by path,
 * then in the order given) followed by `slice(0, limit)` answers, without sorting the files that are not shown.
 *
 * The readable version: `[...files].sort(newerFirst).slice(0, limit)` (`Array.prototype.sort` is stable, so equal
 * files keep the order given), which is what runs when more than a thousand are asked for. Otherwise only `limit`
 * files are kept, in that order; a file is compared with the last kept one, and placed by a binary search only when it
 * beats it, so almost every file costs one comparison.
 *
 * @since 0.3.0
 * @internal
 */

/** A file and when it was last modified. */
export interface Dated {
  readonly file: string
  readonly mtimeMs: number
}

/**
 * Newest first, then by path (`localeCompare`, as Glob has always ordered ties), then by the path's UTF-16 code units:
 * `localeCompare` calls some different names equal (NFC and NFD spellings, ignorable characters).
 */
export const newerFirst = (a: Dated, b: Dated): number =>
  b.mtimeMs - a.mtimeMs || a.file.localeCompare(b.file) || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)

/** Up to this many kept files, they are placed one by one; beyond, everything is sorted. */
const boundedUpTo = 1024

/** The first `limit` of `files` sorted stably by {@link newerFirst}. */
export const newest = <A extends Dated>(files: ReadonlyArray<A>, limit: number): Array<A> => {
  const kept: Array<A> = []
  if (limit <= 0) return kept
  // Placing each file among many kept ones costs more than sorting them all: a bounded list pays only when short.
  if (limit > boundedUpTo) return [...files].sort(newerFirst).slice(0, limit)
  for (const file of files) {
    // Not before the last kept one: a later file that ties it comes after it, as in a stable sort.
    if (kept.length === limit && newerFirst(file, kept[limit - 1]!) >= 0) continue
    // After every kept file it does not beat (ties included: they came first).
    let low = 0
    let high = kept.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (newerFirst(file, kept[middle]!) < 0) high = middle
      else low = middle + 1
    }
    kept.splice(low, 0, file)
    if (kept.length > limit) kept.pop()
  }
  return kept
}
