/**
 * Hook matchers with Claude Code's semantics, shared by the settings loader (which checks them) and the hooks
 * service (which runs them).
 *
 * @internal
 */
import * as Either from "effect/Either"

const SIMPLE = /^[A-Za-z0-9_\-|]+$/

/**
 * Compiles a matcher: absent, empty or `*` = every tool; only name characters and `|` = those exact names; anything
 * else = a regular expression tested, unanchored, against the tool name (`mcp__serena__*` matches serena's tools).
 * Left: why the regular expression is invalid.
 */
export const compileHookMatcher = (
  matcher: string | undefined
): Either.Either<(toolName: string) => boolean, string> => {
  const trimmed = matcher?.trim()
  if (trimmed === undefined || trimmed === "" || trimmed === "*") return Either.right(() => true)
  if (SIMPLE.test(trimmed)) {
    const names = new Set(trimmed.split("|"))
    return Either.right((toolName) => names.has(toolName))
  }
  try {
    const pattern = new RegExp(trimmed)
    return Either.right((toolName) => pattern.test(toolName))
  } catch (error) {
    return Either.left(error instanceof Error ? error.message : String(error))
  }
}
