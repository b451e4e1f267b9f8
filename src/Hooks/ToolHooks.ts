/**
 * Hooks around each call: PreToolUse (before the permission decision: may allow, deny, ask, rewrite the input or
 * add context), PostToolUse and PostToolUseFailure (after the call: may add context). {@link ToolHooks.none} runs
 * nothing; `Hooks/Hooks` provides Effect-function and command hooks speaking Claude Code's hook JSON.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { HookOpinion } from "../Permission/PermissionPolicy.js"

/**
 * What PreToolUse hooks see.
 *
 * @since 0.1.0
 * @category models
 */
export interface PreToolUseEvent {
  readonly toolUseId: string
  readonly toolName: string
  readonly input: unknown
}

/**
 * The combined answer of the PreToolUse hooks.
 *
 * @since 0.1.0
 * @category models
 */
export interface PreToolUseResult {
  /** The strongest decision of the hooks (deny > ask > allow), if any gave one. */
  readonly opinion: HookOpinion | undefined
  /** A rewritten input, to be decoded and validated again. */
  readonly updatedInput: unknown | undefined
  readonly additionalContext: ReadonlyArray<string>
  /** Messages for the user (non-blocking hook errors, system messages). */
  readonly notices: ReadonlyArray<string>
  /** A hook asked to stop (`continue: false`): the rest of the run is cancelled. */
  readonly stopRun?: boolean | undefined
}

/**
 * What PostToolUse and PostToolUseFailure hooks see.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseEvent {
  readonly toolUseId: string
  readonly toolName: string
  readonly input: unknown
  /** The tool_result content the model is about to get. */
  readonly response: unknown
  readonly failed: boolean
}

/**
 * The combined answer of the PostToolUse hooks.
 *
 * @since 0.1.0
 * @category models
 */
export interface PostToolUseResult {
  readonly additionalContext: ReadonlyArray<string>
  readonly notices: ReadonlyArray<string>
}

/**
 * The ToolHooks service.
 *
 * @since 0.1.0
 * @category tags
 */
export class ToolHooks extends Context.Tag("effect-tool-runtime/ToolHooks")<
  ToolHooks,
  {
    readonly preToolUse: (event: PreToolUseEvent) => Effect.Effect<PreToolUseResult>
    readonly postToolUse: (event: PostToolUseEvent) => Effect.Effect<PostToolUseResult>
    /** What to tell the person once about the configuration (unused hooks, hooks that cannot run). */
    readonly warnings?: ReadonlyArray<string> | undefined
  }
>() {
  /**
   * No hooks.
   *
   * @since 0.1.0
   * @category layers
   */
  static readonly none: Layer.Layer<ToolHooks> = Layer.succeed(ToolHooks, {
    preToolUse: () => Effect.succeed(noPreToolUse),
    postToolUse: () => Effect.succeed(noPostToolUse)
  })
}

/**
 * The answer of no hooks at all.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noPreToolUse: PreToolUseResult = {
  opinion: undefined,
  updatedInput: undefined,
  additionalContext: [],
  notices: []
}

/**
 * The answer of no hooks at all.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noPostToolUse: PostToolUseResult = { additionalContext: [], notices: [] }
