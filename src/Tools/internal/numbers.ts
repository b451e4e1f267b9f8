/**
 * Number parameters typed as Claude Code types them: its definitions say `"type": "number"` for every count, line
 * number and limit, and models are trained on those definitions. Ours say `number` too; what stays stricter on
 * purpose is the decoder, which still refuses a fraction or a value under the minimum where either makes no sense
 * (line 1.5, -3 lines), with a message naming the parameter. The minimum is shown in the definition as well.
 *
 * @internal
 */
import * as Schema from "effect/Schema"

/**
 * A whole number of at least `minimum`, shown to the model as `{"type": "number", "minimum": minimum}` (not
 * `integer`).
 */
export const WholeNumber = (minimum: number) =>
  Schema.Number.pipe(Schema.int({ jsonSchema: {} }), Schema.greaterThanOrEqualTo(minimum))

/** A whole number between `minimum` and `maximum`, shown as `number` with both bounds. */
export const WholeNumberBetween = (minimum: number, maximum: number) =>
  Schema.Number.pipe(Schema.int({ jsonSchema: {} }), Schema.between(minimum, maximum))
