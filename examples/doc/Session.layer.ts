import { Effect, Ref, Schema } from "effect"
import { Session } from "effect-tool-runtime"

// A piece of state kept in the session: restored from the last checkpoint, saved at every one.
const countTurn = Effect.gen(function*() {
  const turns = yield* Session.ref("turns", Schema.Number, () => 0)
  yield* Ref.update(turns, (n) => n + 1)
  yield* Session.checkpoint
  return yield* Ref.get(turns)
})

// Two processes, one after the other, over the same directory (`Session.layerTemp`: one that lasts a scope).
export const program = (directory: string) =>
  Effect.gen(function*() {
    const first = yield* countTurn.pipe(Effect.provide(Session.layer({ directory })))
    const second = yield* countTurn.pipe(Effect.provide(Session.layer({ directory })))
    return [first, second] // [1, 2]
  })
