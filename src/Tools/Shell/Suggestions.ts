/**
 * The rules an approval prompt suggests for a command ("allow for this session", "always allow"). A simple command
 * gets `BashRule.suggestRule`'s one rule. A compound command (`npm run build && npm test`, `git status; git diff`)
 * is allowed by rules only when every part is, so it gets one rule per part, and the set is offered only when those
 * rules, decided as the policy decides them, do allow the whole command; otherwise none (the prompt then says that
 * no rule can allow it, and the person may still allow it once). Claude Code suggests rules per part as well.
 *
 * @since 0.3.0
 */
import * as Option from "effect/Option"
import type { ShellAnalysis } from "./Analysis.js"
import { decideBashRules, suggestRule } from "./BashRule.js"

/**
 * The rule contents (`npm test:*`) that would allow this command, or none when no rule set can (unanalysable, a part
 * no rule may name, a structure rules never allow). `directories` are where its parts may run (for the check).
 *
 * @since 0.3.0
 * @category suggestions
 */
export const suggestRules = (
  analysis: ShellAnalysis,
  directories: ReadonlyArray<string> = []
): ReadonlyArray<string> => {
  if (analysis._tag === "Unanalyzable") return []
  if (analysis.commands.length <= 1) return Option.toArray(suggestRule(analysis))
  const contents: Array<string> = []
  for (const simple of analysis.commands) {
    const alone = { _tag: "Parsed", source: simple.source, commands: [simple], features: analysis.features } as const
    const part = suggestRule(alone)
    if (Option.isSome(part) && !contents.includes(part.value)) contents.push(part.value)
  }
  if (contents.length === 0) return []
  // Offered only if the set does allow the whole command (a part without a rule, or one whose rule is refused for a
  // dangerous form, leaves the set unable to).
  const verdict = decideBashRules(
    analysis,
    { deny: [], ask: [], allow: contents.map((content) => ({ content })) },
    { directories }
  )
  return verdict._tag === "Allow" ? contents : []
}
