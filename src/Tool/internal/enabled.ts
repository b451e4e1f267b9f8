/**
 * Which tools are enabled now (`Tool.filterEnabled`). Every check is asked at once; a check answered already (a fixed
 * `Effect.succeed`, as most tools have) is read without running it, and a check shared by several tools (every tool
 * of one MCP server has its server's) is asked once. A check that fails or dies leaves its tools out.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

type Check = Effect.Effect<unknown>

/** @internal */
export const filterEnabled = <T extends { readonly service: { readonly isEnabled: Check } }>(
  tools: ReadonlyArray<T>,
  alwaysEnabled: Check
): Effect.Effect<ReadonlyArray<T>> => {
  const pending: Array<Check> = []
  const seen = new Set<Check>()
  for (const tool of tools) {
    const check = tool.service.isEnabled
    if (check === alwaysEnabled || Exit.isExit(check) || seen.has(check)) continue
    seen.add(check)
    pending.push(check)
  }
  const keep = (answers: ReadonlyMap<Check, Exit.Exit<unknown>>): ReadonlyArray<T> => {
    const kept = tools.filter((tool) => {
      const check = tool.service.isEnabled
      if (check === alwaysEnabled) return true
      const exit = Exit.isExit(check) ? check as Exit.Exit<unknown> : answers.get(check)!
      return Exit.isSuccess(exit) && (exit.value as { readonly _tag: string })._tag === "Enabled"
    })
    // The same array when nothing is left out: whoever caches on it sees that nothing changed.
    return kept.length === tools.length ? tools : kept
  }
  if (pending.length === 0) return Effect.succeed(keep(new Map()))
  return Effect.map(
    Effect.forEach(pending, (check) => Effect.exit(check), { concurrency: pending.length === 1 ? 1 : "unbounded" }),
    (exits) => keep(new Map(pending.map((check, i) => [check, exits[i]!])))
  )
}
