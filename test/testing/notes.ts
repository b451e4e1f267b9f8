/**
 * "Your own tools", for the testing kit's README example: a notebook whose reads and writes take time on the Clock
 * and claim the note they touch.
 */
import { Effect, Layer, Ref, Schema } from "effect"
import { Tool } from "effect-tool-runtime"

const name = Schema.Literal("todo", "ideas", "log")

export const ReadNote = Tool.make("ReadNote", {
  description: "Reads a note.",
  input: Schema.Struct({ name }),
  output: Schema.String,
  touchesEnvironment: false
})

export const WriteNote = Tool.make("WriteNote", {
  description: "Replaces a note's text.",
  input: Schema.Struct({ name, text: Schema.String }),
  output: Schema.String,
  touchesEnvironment: false
})

export const NotesLive = Layer.unwrapEffect(
  Effect.map(Ref.make(new Map<string, string>()), (notes) =>
    Layer.mergeAll(
      ReadNote.implement({
        traits: () => ({ readOnly: true, concurrencySafe: true }),
        claims: (input) => [Tool.Claim.read(`note:${input.name}`)],
        call: (input) =>
          Effect.zipRight(Effect.sleep(5), Effect.map(Ref.get(notes), (all) => all.get(input.name) ?? ""))
      }),
      WriteNote.implement({
        claims: (input) => [Tool.Claim.write(`note:${input.name}`)],
        call: (input) =>
          Effect.zipRight(
            Effect.sleep(10),
            Effect.as(Ref.update(notes, (all) => new Map(all).set(input.name, input.text)), "saved")
          )
      })
    ))
)
