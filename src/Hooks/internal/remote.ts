/**
 * Running HTTP hooks (the hook JSON POSTed, a 2xx body read as a command's stdout) and prompt and agent hooks (the
 * model's `{ok, reason}` read as a command's exit), both answering in a command's terms (`HookRun`).
 *
 * @internal
 */
import * as Cause from "effect/Cause"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { formatBytes } from "./run.js"
import type { HookRun, RunSettings } from "./run.js"

/** Whether a URL matches one of Claude Code's `allowedHttpHookUrls` patterns. */
export const urlAllowed = (url: string, patterns: ReadonlyArray<string> | undefined): boolean =>
  patterns === undefined ||
  patterns.some((pattern) =>
    new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(
      url
    )
  )
/** `$VAR` and `${VAR}` replaced by the allowed environment variables, and by nothing when not allowed. */
export const interpolate = (
  value: string,
  allowed: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): string =>
  value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (_, braced: string | undefined, bare: string | undefined) => {
      const name = (braced ?? bare)!
      return allowed.includes(name) ? env[name] ?? "" : ""
    }
  )

/** POSTs the hook JSON; a 2xx body is read as a command's stdout on exit 0; anything else is a crash. */
export const runHttp = (
  hook: {
    readonly url: string
    readonly headers?: Readonly<Record<string, string>> | undefined
    readonly allowedEnvVars?: ReadonlyArray<string> | undefined
  },
  body: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> => {
  if (!urlAllowed(hook.url, settings.allowedHttpHookUrls)) {
    return Effect.succeed({ _tag: "Crashed", message: "cannot run: its URL matches none of allowedHttpHookUrls" })
  }
  const globalVars = settings.httpHookAllowedEnvVars
  const allowed = (hook.allowedEnvVars ?? []).filter((name) => globalVars === undefined || globalVars.includes(name))
  const headers: Record<string, string> = { "content-type": "application/json" }
  for (const [name, value] of Object.entries(hook.headers ?? {})) {
    headers[name] = interpolate(value, allowed, settings.env)
  }
  return Effect.tryPromise({
    try: async (signal): Promise<HookRun> => {
      const response = await fetch(hook.url, { method: "POST", headers, body, signal, redirect: "error" })
      const chunks: Array<Uint8Array> = []
      let size = 0
      if (response.body !== null) {
        const reader = response.body.getReader()
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          size += value.length
          if (size > settings.maxOutput) {
            await reader.cancel()
            return { _tag: "Crashed", message: `answered with more than ${formatBytes(settings.maxOutput)}` }
          }
          chunks.push(value)
        }
      }
      if (response.status < 200 || response.status > 299) {
        return { _tag: "Crashed", message: `answered HTTP ${response.status}` }
      }
      return { _tag: "Exited", code: 0, stdout: Buffer.concat(chunks).toString("utf8"), stderr: "" }
    },
    catch: (error) => error
  }).pipe(
    Effect.timeoutOption(timeout),
    Effect.map(Option.getOrElse((): HookRun => ({ _tag: "TimedOut", after: timeout }))),
    Effect.catchAll((error) => {
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : ""
      return Effect.succeed<HookRun>({
        _tag: "Crashed",
        message: `could not be reached (${error instanceof Error ? error.message : String(error)}${cause})`
      })
    })
  )
}

export const ModelAnswer = Schema.parseJson(
  Schema.Struct({ ok: Schema.Boolean, reason: Schema.optional(Schema.String) })
)
export const decodeModelAnswer = Schema.decodeUnknownEither(ModelAnswer)

/** The model's `{ok, reason}` as a command's exit: ok is exit 0, not ok is exit 2 with the reason on stderr. */
export const runPrompt = (
  prompt: string,
  input: string,
  timeout: Duration.Duration,
  settings: RunSettings
): Effect.Effect<HookRun> => {
  const model = settings.languageModel
  if (model === undefined) {
    return Effect.succeed({
      _tag: "Crashed",
      message: "cannot run: no language model is configured for prompt and agent hooks"
    })
  }
  const text = prompt.includes("$ARGUMENTS") ? prompt.split("$ARGUMENTS").join(input) : `${prompt}\n\n${input}`
  const instructed =
    `${text}\n\nAnswer with JSON only: {"ok": true} to let this proceed, or {"ok": false, "reason": "why"} to block it.`
  return model.generateText({ prompt: instructed }).pipe(
    Effect.map((response): HookRun => {
      const raw = response.text.trim().replace(/^```(?:json)?\s*|\s*```$/g, "")
      const answer = decodeModelAnswer(raw)
      if (Either.isLeft(answer)) {
        return {
          _tag: "Crashed",
          message: `the model answered ${JSON.stringify(raw.slice(0, 200))}, not {"ok": boolean, "reason"?: string}`
        }
      }
      return answer.right.ok
        ? { _tag: "Exited", code: 0, stdout: "", stderr: "" }
        : { _tag: "Exited", code: 2, stdout: "", stderr: answer.right.reason ?? "" }
    }),
    Effect.timeoutOption(timeout),
    Effect.map(Option.getOrElse((): HookRun => ({ _tag: "TimedOut", after: timeout }))),
    Effect.catchAllCause((cause) =>
      Effect.succeed<HookRun>({
        _tag: "Crashed",
        message: `the model call failed: ${Cause.pretty(cause).split("\n")[0]}`
      })
    )
  )
}
