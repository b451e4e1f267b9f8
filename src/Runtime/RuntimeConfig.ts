/**
 * Runtime-wide settings, as a Context.Reference with defaults: provide a different value to change them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"

/**
 * @since 0.1.0
 * @category models
 */
export interface RuntimeSettings {
  /** Cap on any tool's model result, in characters (tools with `Infinity` opt out). Default 50,000. */
  readonly maxResultChars: number
  /** Size of the preview shown in place of a persisted result, in characters. Default 2,000. */
  readonly previewChars: number
  /** How many calls may run at once. Default 10. */
  readonly maxConcurrency: number
  /** Overrides every tool's default timeout when set. */
  readonly timeout: Duration.Duration | undefined
}

/**
 * The runtime's settings.
 *
 * @since 0.1.0
 * @category tags
 */
export class RuntimeConfig extends Context.Reference<RuntimeConfig>()("effect-tool-runtime/RuntimeConfig", {
  defaultValue: (): RuntimeSettings => ({
    maxResultChars: 50_000,
    previewChars: 2_000,
    maxConcurrency: 10,
    timeout: undefined
  })
}) {}
