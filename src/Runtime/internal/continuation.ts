/**
 * The pipeline's fast path, kept apart under its own names. `continueWith(effect, f)` means exactly
 * `Effect.flatMap(effect, f)`, and `continueWithExit(effect, f)` means `Effect.flatMap(Effect.exit(effect), f)`;
 * the difference is speed: an effect that is already an Exit (what `Effect.succeed` and `Effect.fail` build, and
 * what a trivial tool's stages return) is continued synchronously, without entering the runtime. For a trivial
 * call every stage is like that, and skipping the run loop for them is most of the pipeline's speed
 * (`bench/pipeline`: several microseconds per call). The stages (`stages/`) and the runtime import them under these
 * names: they are not Effect's `andThen`, and nothing should read as if they were.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** `Effect.flatMap(effect, f)`, continued synchronously when `effect` is already an Exit. */
export const continueWith = <A, E, B, E2>(
  effect: Effect.Effect<A, E>,
  f: (value: A) => Effect.Effect<B, E2>
): Effect.Effect<B, E | E2> => {
  if (!Exit.isExit(effect)) return Effect.flatMap(effect, f)
  const exit = effect as Exit.Exit<A, E>
  return Exit.isSuccess(exit) ? f(exit.value) : (exit as Exit.Exit<never, E>)
}

/** `Effect.flatMap(Effect.exit(effect), f)`, continued synchronously when `effect` is already an Exit. */
export const continueWithExit = <A, E, B, E2>(
  effect: Effect.Effect<A, E>,
  f: (exit: Exit.Exit<A, E>) => Effect.Effect<B, E2>
): Effect.Effect<B, E2> => Exit.isExit(effect) ? f(effect as Exit.Exit<A, E>) : Effect.flatMap(Effect.exit(effect), f)
