/**
 * One streamed event's data, decoded: the hand-checked common cases (deltas, a block's start and end, the message's
 * delta and end, a ping) must decode exactly as the Wire Schema does, and fail whenever it fails. The oracle is the
 * Schema itself, decoding the same value.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as fc from "effect/FastCheck"
import { decodeEvent } from "../../src/Agent/internal/messagesEvents.js"
import * as Wire from "../../src/Agent/internal/messagesWire.js"

const index = fc.oneof(fc.nat(5), fc.constantFrom(-1, 1.5, "0", null))
const text = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(3, null))
const extra = fc.option(fc.constant({ extra: "field" }), { nil: undefined })
const withExtra = <A extends object>(value: fc.Arbitrary<A>) =>
  fc.tuple(value, extra).map(([v, more]) => ({ ...v, ...more }))

const contentBlock = fc.oneof(
  withExtra(fc.record({ type: fc.constantFrom("text", "txt"), text })),
  withExtra(fc.record({
    type: fc.constant("tool_use"),
    id: fc.constantFrom("toolu_1", "", 7),
    name: fc.oneof(fc.string({ maxLength: 4 }), fc.constant(null)),
    input: fc.oneof(fc.constant({}), fc.constant({ a: [1] }), fc.constant(null))
  }, { requiredKeys: ["type", "id", "name"] })),
  fc.constantFrom(null, "text")
)
const delta = fc.oneof(
  withExtra(fc.record({ type: fc.constant("text_delta"), text })),
  withExtra(fc.record({ type: fc.constant("input_json_delta"), partial_json: text })),
  fc.constant(null)
)
const event = fc.oneof(
  withExtra(fc.record({ type: fc.constant("content_block_start"), index, content_block: contentBlock })),
  withExtra(fc.record({ type: fc.constant("content_block_delta"), index, delta })),
  withExtra(fc.record({ type: fc.constant("content_block_stop"), index })),
  withExtra(fc.record({ type: fc.constantFrom("message_stop", "ping") })),
  withExtra(fc.record({
    type: fc.constant("message_delta"),
    delta: fc.oneof(
      withExtra(fc.record({
        stop_reason: fc.constantFrom("end_turn", "tool_use", "pause_turn", null, "sleepy", 1),
        stop_sequence: fc.constantFrom("STOP", null, 4)
      }, { requiredKeys: [] })),
      fc.constant(null)
    ),
    usage: fc.oneof(
      withExtra(fc.record({
        output_tokens: fc.oneof(fc.nat(100), fc.constant("5")),
        input_tokens: fc.oneof(fc.nat(100), fc.constant(null), fc.constant("3"))
      }, { requiredKeys: [] })),
      fc.constant(null)
    )
  }))
)

const schemaDecode = Schema.decodeUnknownEither(Wire.StreamEvent)

describe("decodeEvent", () => {
  it.prop("decodes every common event as the Wire Schema does, and fails where it fails", [event], ([value]) => {
    const decoded = decodeEvent(JSON.stringify(value))
    const expected = schemaDecode(value)
    if (Either.isRight(expected)) expect(decoded).toEqual(Either.right(expected.right))
    else expect(Either.isLeft(decoded)).toBe(true)
  }, { fastCheck: { numRuns: 500 } })

  it("the generator reaches both decodable and malformed events of every type", () => {
    const samples = fc.sample(event, { numRuns: 2000, seed: 11 })
    const seen = new Set(samples.map((value) => `${value.type}:${Either.isRight(schemaDecode(value))}`))
    for (const type of ["content_block_start", "content_block_delta", "content_block_stop", "message_delta"]) {
      expect(seen).toContain(`${type}:true`)
      expect(seen).toContain(`${type}:false`)
    }
    expect(seen).toContain("message_stop:true")
    expect(seen).toContain("ping:true")
  })
})
