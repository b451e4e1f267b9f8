/**
 * `effect-tool-runtime/ai`: the runtime under @effect/ai (an optional peer dependency). Everything that needs
 * @effect/ai at run time is here, so the other entry points import without it: the Toolkit adapter, the model
 * backend, the classifier approver (auto mode) and the page reader over a language model.
 *
 * @since 0.2.0
 */

/** @since 0.2.0 */
export * as EffectAi from "./EffectAi.js"
/** @since 0.2.0 */
export * as EffectAiModel from "./EffectAiModel.js"
/** @since 0.2.0 */
export * as ClassifierApprover from "./ClassifierApprover.js"
/** @since 0.3.0 */
export * as EffectAiPageReader from "./EffectAiPageReader.js"
