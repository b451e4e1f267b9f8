/**
 * What changed between two lists of the same items (a registry's tools, before and after an MCP server's tools
 * arrived), found without hashing every item: the common start and end are compared by identity, and what lies
 * between them is what left and what arrived. An item that moved from one place to another is in both.
 *
 * @internal
 */

/** The items after the longest common start and before the longest common end, in each list; `start` is where. */
export const changed = <A>(
  previous: ReadonlyArray<A>,
  next: ReadonlyArray<A>
): { readonly start: number; readonly left: ReadonlyArray<A>; readonly arrived: ReadonlyArray<A> } => {
  const shorter = Math.min(previous.length, next.length)
  let start = 0
  while (start < shorter && previous[start] === next[start]) start++
  let end = 0
  while (end < shorter - start && previous[previous.length - 1 - end] === next[next.length - 1 - end]) end++
  return { start, left: previous.slice(start, previous.length - end), arrived: next.slice(start, next.length - end) }
}
