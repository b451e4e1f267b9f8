/**
 * `effect-tool-runtime/ai`: the runtime under @effect/ai (an optional peer dependency).
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as EffectAi from "./EffectAi.js"
/** @since 0.2.0 */
export * as EffectAiModel from "./EffectAiModel.js"
