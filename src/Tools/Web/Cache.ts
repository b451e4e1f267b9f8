/**
 * WebFetch's page cache: least recently used, bounded in bytes, entries expiring after a time to live (Claude
 * Code's: 15 minutes, 50 MB). Time comes from Effect's Clock, so tests move it with TestClock.
 *
 * @since 0.2.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * A cache of values by key, each with a size in bytes.
 *
 * @since 0.2.0
 * @category models
 */
export interface PageCache<A> {
  readonly get: (key: string) => Effect.Effect<A | undefined>
  readonly set: (key: string, value: A, bytes: number) => Effect.Effect<void>
  /** Bytes held now. */
  readonly bytes: () => number
}

interface Entry<A> {
  readonly value: A
  readonly bytes: number
  readonly expires: number
}

/**
 * A cache holding at most `maxBytes` (a value larger than that is not kept), each entry for `ttlMillis`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makePageCache = <A>(options: { readonly maxBytes: number; readonly ttlMillis: number }): PageCache<A> => {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry<A>>()
  let held = 0
  const remove = (key: string, entry: Entry<A>) => {
    entries.delete(key)
    held -= entry.bytes
  }
  return {
    get: (key) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = entries.get(key)
        if (entry === undefined) return undefined
        remove(key, entry)
        if (entry.expires <= now) return undefined
        entries.set(key, entry)
        held += entry.bytes
        return entry.value
      }),
    set: (key, value, bytes) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const previous = entries.get(key)
        if (previous !== undefined) remove(key, previous)
        if (bytes > options.maxBytes) return
        for (const [oldest, entry] of entries) {
          if (held + bytes <= options.maxBytes && entry.expires > now) break
          remove(oldest, entry)
        }
        entries.set(key, { value, bytes, expires: now + options.ttlMillis })
        held += bytes
      }),
    bytes: () => held
  }
}
