/**
 * Compiled hooks: each configured hook (command, HTTP, prompt, agent, or an Effect function) as one value with its
 * event, matcher, `if` condition and what it answers before and after a call, failures read fail closed.
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type { HookDefinition } from "../../Settings/Settings.js"
import type { PermissionRule } from "../../Tool/Rule.js"
import type { FunctionHook, HookEvent } from "../Hooks.js"
import type { PostToolUseEvent, PostToolUseResult, PreToolUseEvent } from "../ToolHooks.js"
import { denied, fromPreAnswer, noPost, parseStdout, plainText, preAnswer } from "./answers.js"
import type { PreAnswer } from "./answers.js"
import { runHttp, runPrompt } from "./remote.js"
import { crashedExit, describeFailure, runCommand } from "./run.js"
import type { HookRun, RunSettings } from "./run.js"

// -----------------------------------------------------------------------------
// compiled hooks
// -----------------------------------------------------------------------------

export interface CompiledHook {
  readonly event: HookEvent
  readonly name: string
  readonly matches: (toolName: string) => boolean
  readonly condition: PermissionRule | undefined
  readonly pre: (event: PreToolUseEvent) => Effect.Effect<PreAnswer>
  readonly post: (event: PostToolUseEvent) => Effect.Effect<PostToolUseResult>
}
export const hookName = (hook: HookDefinition): string => {
  switch (hook.type) {
    case "command":
      return hook.args === undefined ? hook.command : [hook.command, ...hook.args].join(" ")
    case "http":
      return hook.url
    case "prompt":
    case "agent": {
      const first = hook.prompt.split("\n")[0]!
      return `${hook.type} ${JSON.stringify(first.length > 60 ? `${first.slice(0, 57)}...` : first)}`
    }
  }
}

/** A hook that runs outside the program (a command, an HTTP endpoint, a model), read the way command hooks are. */
export const externalHook = (
  event: HookEvent,
  matches: (toolName: string) => boolean,
  condition: PermissionRule | undefined,
  hook: HookDefinition,
  settings: RunSettings
): CompiledHook => {
  const name = hookName(hook)
  const timeout = hook.timeout === undefined ? settings.defaultTimeout : Duration.seconds(hook.timeout)
  const run = (input: Record<string, unknown>): Effect.Effect<HookRun> => {
    const json = JSON.stringify({ session_id: settings.sessionId, cwd: settings.cwd, hook_event_name: event, ...input })
    switch (hook.type) {
      case "command":
        return runCommand(hook, json, timeout, settings)
      case "http":
        return runHttp(hook, json, timeout, settings)
      case "prompt":
      case "agent":
        return runPrompt(hook.prompt, json, timeout, settings)
    }
  }
  return {
    event,
    name,
    matches,
    condition,
    pre: (call) =>
      Effect.map(
        run({ tool_name: call.toolName, tool_input: call.input, tool_use_id: call.toolUseId }),
        (result): PreAnswer => {
          if (result._tag !== "Exited" || crashedExit(result.code)) {
            return denied(name, `PreToolUse hook ${name} ${describeFailure(result)}; the call is denied.`)
          }
          if (result.code === 2) {
            return denied(name, result.stderr.trim() === "" ? `Blocked by hook ${name}.` : result.stderr.trim())
          }
          if (result.code !== 0) {
            return preAnswer(name, { notices: [`hook ${name} ${describeFailure(result)}`] })
          }
          const parsed = parseStdout(result.stdout)
          if (Either.isLeft(parsed)) return denied(name, `PreToolUse hook ${name} ${parsed.left}; the call is denied.`)
          if (Option.isNone(parsed.right)) return preAnswer(name, { notices: plainText(name, result.stdout) })
          const output = parsed.right.value
          const notices = output.systemMessage === undefined ? [] : [output.systemMessage]
          // Claude Code stops the whole turn on `continue: false`: the call is denied and the rest of the run stops.
          if (output.continue === false) {
            return { ...denied(name, output.stopReason ?? `Hook ${name} stopped processing.`), notices, stopRun: true }
          }
          const specific = output.hookSpecificOutput
          if (specific !== undefined && specific.hookEventName !== "PreToolUse") {
            return denied(
              name,
              `PreToolUse hook ${name} printed output for ${specific.hookEventName}; the call is denied.`
            )
          }
          const legacy = output.decision === "approve" ? "allow" : output.decision === "block" ? "deny" : undefined
          const decision = specific?.permissionDecision ?? legacy
          const reason = specific?.permissionDecisionReason ?? output.reason
          return fromPreAnswer(name, {
            ...(decision === undefined ? {} : { permissionDecision: decision }),
            ...(reason === undefined ? {} : { reason }),
            ...(specific?.updatedInput === undefined ? {} : { updatedInput: specific.updatedInput }),
            ...(specific?.additionalContext === undefined ? {} : { additionalContext: specific.additionalContext })
          }, notices)
        }
      ),
    post: (call) =>
      Effect.map(
        run({
          tool_name: call.toolName,
          tool_input: call.input,
          tool_use_id: call.toolUseId,
          tool_response: call.response,
          ...(call.failed
            ? { error: typeof call.response === "string" ? call.response : JSON.stringify(call.response) }
            : {})
        }),
        (result): PostToolUseResult => {
          if (result._tag !== "Exited") return noPost(name, [describeFailure(result)])
          if (result.code === 2) return noPost(name, [], result.stderr.trim() === "" ? [] : [result.stderr.trim()])
          if (result.code !== 0) return noPost(name, [describeFailure(result)])
          const parsed = parseStdout(result.stdout)
          if (Either.isLeft(parsed)) return noPost(name, [parsed.left])
          if (Option.isNone(parsed.right)) return { additionalContext: [], notices: plainText(name, result.stdout) }
          const output = parsed.right.value
          const notices = output.systemMessage === undefined ? [] : [output.systemMessage]
          const specific = output.hookSpecificOutput
          if (specific !== undefined && specific.hookEventName !== event) {
            return noPost(name, [
              ...notices,
              `printed output for ${specific.hookEventName}`
            ])
          }
          const context = [
            ...(output.decision === "block" && output.reason !== undefined ? [output.reason] : []),
            ...(specific?.additionalContext === undefined ? [] : [specific.additionalContext])
          ]
          return { additionalContext: context, notices: notices.map((notice) => `hook ${name}: ${notice}`) }
        }
      )
  }
}

export const functionHook = (
  hook: FunctionHook,
  matches: (toolName: string) => boolean,
  settings: RunSettings
): CompiledHook => {
  const timeout = hook.timeout === undefined ? settings.defaultTimeout : Duration.decode(hook.timeout)
  const guarded = <A>(effect: Effect.Effect<A, unknown>) =>
    effect.pipe(
      Effect.timeoutFail({ duration: timeout, onTimeout: () => `timed out after ${Duration.format(timeout)}` }),
      Effect.sandbox,
      Effect.mapError((cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure) && typeof failure.value === "string") return failure.value
        return `failed: ${Cause.pretty(cause).split("\n")[0]}`
      }),
      Effect.either
    )
  return {
    event: hook.event,
    name: hook.name,
    matches,
    condition: undefined,
    pre: (call) =>
      hook.event === "PreToolUse"
        ? Effect.map(
          guarded(Effect.suspend(() => hook.run(call))),
          Either.match({
            onLeft: (why) => denied(hook.name, `PreToolUse hook ${hook.name} ${why}; the call is denied.`),
            onRight: (answer) => fromPreAnswer(hook.name, answer)
          })
        )
        : Effect.succeed(preAnswer(hook.name)),
    post: (call) =>
      hook.event === "PreToolUse"
        ? Effect.succeed(noPost(hook.name, []))
        : Effect.map(
          guarded(Effect.suspend(() => hook.run(call))),
          Either.match({
            onLeft: (why) => noPost(hook.name, [why]),
            onRight: (answer) => ({
              additionalContext: answer.additionalContext === undefined ? [] : [answer.additionalContext],
              notices: answer.systemMessage === undefined ? [] : [`hook ${hook.name}: ${answer.systemMessage}`]
            })
          })
        )
  }
}
