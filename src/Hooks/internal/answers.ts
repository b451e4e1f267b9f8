/**
 * What hooks answer: the hook JSON a command prints (decoded with a Schema), one hook's answer before combining, and
 * how the answers of the hooks that ran for one call combine (deny > ask > allow; two rewrites deny).
 *
 * @internal
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type { HookOpinion } from "../../Permission/PermissionPolicy.js"
import type { PreToolUseAnswer } from "../Hooks.js"
import type { PostToolUseResult, PreToolUseResult } from "../ToolHooks.js"

// -----------------------------------------------------------------------------
// hook output
// -----------------------------------------------------------------------------

/**
 * The JSON a command hook may print on stdout (exit 0). Unknown keys are ignored.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HookOutput = Schema.Struct({
  continue: Schema.optional(Schema.Boolean),
  stopReason: Schema.optional(Schema.String),
  suppressOutput: Schema.optional(Schema.Boolean),
  systemMessage: Schema.optional(Schema.String),
  decision: Schema.optional(Schema.Literal("approve", "block")),
  reason: Schema.optional(Schema.String),
  hookSpecificOutput: Schema.optional(Schema.Struct({
    hookEventName: Schema.Literal("PreToolUse", "PostToolUse", "PostToolUseFailure"),
    permissionDecision: Schema.optional(Schema.Literal("allow", "deny", "ask")),
    permissionDecisionReason: Schema.optional(Schema.String),
    updatedInput: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    additionalContext: Schema.optional(Schema.String)
  }))
})

/**
 * @since 0.1.0
 * @category schemas
 */
export type HookOutput = typeof HookOutput.Type

export const decodeHookOutput = Schema.decodeUnknownEither(HookOutput, { errors: "all" })

/** One hook's answer, before combining. */
export interface PreAnswer {
  readonly hook: string
  readonly opinion: { readonly behavior: HookOpinion["behavior"]; readonly message: string } | undefined
  readonly updatedInput: unknown
  readonly additionalContext: ReadonlyArray<string>
  readonly notices: ReadonlyArray<string>
  /** `continue: false`: stop the rest of the run too. */
  readonly stopRun: boolean
}

export const preAnswer = (hook: string, fields: Partial<Omit<PreAnswer, "hook">> = {}): PreAnswer => ({
  hook,
  opinion: fields.opinion,
  updatedInput: fields.updatedInput,
  additionalContext: fields.additionalContext ?? [],
  notices: fields.notices ?? [],
  stopRun: fields.stopRun ?? false
})

export const denied = (hook: string, message: string): PreAnswer =>
  preAnswer(hook, { opinion: { behavior: "deny", message } })

export const fromPreAnswer = (
  hook: string,
  answer: PreToolUseAnswer,
  notices: ReadonlyArray<string> = []
): PreAnswer => {
  const behavior = answer.permissionDecision
  return preAnswer(hook, {
    opinion: behavior === undefined
      ? undefined
      : { behavior, message: answer.reason ?? `hook ${hook} answered ${behavior}` },
    updatedInput: behavior === "deny" ? undefined : answer.updatedInput,
    additionalContext: answer.additionalContext === undefined ? [] : [answer.additionalContext],
    notices: [...notices, ...(answer.systemMessage === undefined ? [] : [answer.systemMessage])]
  })
}

/** Reads exit-0 stdout: JSON when it looks like JSON, else plain text. */
export const parseStdout = (stdout: string): Either.Either<Option.Option<HookOutput>, string> => {
  const text = stdout.trim()
  if (text === "" || !text.startsWith("{")) return Either.right(Option.none())
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return Either.left(`printed invalid JSON (${error instanceof Error ? error.message : String(error)})`)
  }
  return Either.match(decodeHookOutput(json), {
    onLeft: (error) =>
      Either.left(`printed JSON that is not hook output: ${ParseResult.TreeFormatter.formatErrorSync(error)}`),
    onRight: (output) => Either.right(Option.some(output))
  })
}

export const plainText = (hook: string, stdout: string): ReadonlyArray<string> => {
  const text = stdout.trim()
  return text === "" || text.startsWith("{") ? [] : [`hook ${hook}: ${text}`]
}
export const noPost = (
  hook: string,
  notices: ReadonlyArray<string>,
  context: ReadonlyArray<string> = []
): PostToolUseResult => ({
  additionalContext: context,
  notices: notices.map((notice) => `hook ${hook}: ${notice}`)
})
// -----------------------------------------------------------------------------
// combining
// -----------------------------------------------------------------------------

export const combinePre = (answers: ReadonlyArray<PreAnswer>): PreToolUseResult => {
  const additionalContext = answers.flatMap((answer) => answer.additionalContext)
  const notices = answers.flatMap((answer) => answer.notices)
  const stopRun = answers.some((answer) => answer.stopRun)
  const strongest = (["deny", "ask", "allow"] as const)
    .map((behavior) => answers.find((answer) => answer.opinion?.behavior === behavior))
    .find((answer) => answer !== undefined)
  const opinion: HookOpinion | undefined = strongest?.opinion === undefined
    ? undefined
    : { behavior: strongest.opinion.behavior, hook: strongest.hook, message: strongest.opinion.message }
  if (opinion?.behavior === "deny") return { opinion, updatedInput: undefined, additionalContext, notices, stopRun }
  const rewrites = answers.filter((answer) => answer.updatedInput !== undefined)
  if (rewrites.length > 1) {
    const names = rewrites.map((answer) => answer.hook).join(", ")
    const message =
      `Hooks ${names} each rewrote the input; the call is denied rather than guessing which rewrite to run.`
    return {
      opinion: { behavior: "deny", hook: names, message },
      updatedInput: undefined,
      additionalContext,
      notices,
      stopRun
    }
  }
  return { opinion, updatedInput: rewrites[0]?.updatedInput, additionalContext, notices, stopRun }
}
