/**
 * "Did you mean ...?": the edit distance between two words and the closest of a set of known words.
 *
 * @internal
 */

/** Levenshtein distance: insertions, deletions and substitutions of one character each. */
export const editDistance = (a: string, b: string): number => {
  if (a === b) return 0
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    previous = current
  }
  return previous[b.length]!
}

/**
 * The known word closest to `word`, compared without regard to case, if it is near enough to be a slip: at most
 * `maxDistance` edits (default: 2, or a third of the word's length when that is more).
 */
export const closest = (word: string, known: Iterable<string>, maxDistance?: number): string | undefined => {
  const limit = maxDistance ?? Math.max(2, Math.floor(word.length / 3))
  const lower = word.toLowerCase()
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return bestDistance <= limit ? best : undefined
}
