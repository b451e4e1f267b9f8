/**
 * Stage 2, **plan**: the tool binds a decoded input into an Invocation (its traits, claims, permission view,
 * rendering and private analysis, computed once), and every later stage works on that value.
 *
 * Takes a decoded input, or a rewritten one (a normalising validate, a hook's or a person's rewrite, a policy's
 * updatedInput). Gives the Invocation, stamped in the run's write log (`freshness.ts`). An input the call already
 * has keeps its invocation ({@link replan}); a rewritten raw input is decoded, planned and validated again
 * ({@link rebind}): what is checked is what runs. A plan made before an earlier call of the turn may have written is
 * made again ({@link refreshed}): its plan read a world that may have changed (symlinks, `cd` targets, globs, real
 * paths).
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { RegisteredTool } from "../../../Catalog/ToolRegistry.js"
import * as Errors from "../../../Tool/Errors.js"
import type { AnyInvocation, Call, Prepared } from "./call.js"
import { decodeInput } from "./decode.js"
import type { PipelineEnv } from "./env.js"

/**
 * The tool's plan of a decoded input, recorded in the run's write log (see {@link PipelineEnv.writes}). May throw
 * (a tool's traits or claims): the caller makes that a defect.
 */
export const plan = (env: PipelineEnv, tool: RegisteredTool, input: unknown): AnyInvocation => {
  const invocation = tool.service.plan(input)
  return env.writes === undefined ? invocation : env.writes.planned(invocation)
}

/** Plans an input the call has not been planned for yet (the same input keeps its invocation). */
export const replan = (
  env: PipelineEnv,
  prepared: Prepared,
  invocation: AnyInvocation,
  input: unknown
): AnyInvocation => input === invocation.input ? invocation : plan(env, prepared.tool, input)

/**
 * The invocation planned again when something may have written since it was planned (its plan read a world that may
 * have changed: symlinks, `cd` targets, globs, real paths), else the same one.
 */
export const refreshed = (env: PipelineEnv, prepared: Prepared, invocation: AnyInvocation): AnyInvocation =>
  env.writes?.isStale(invocation) === true ? plan(env, prepared.tool, invocation.input) : invocation

/** A tool's `validate` rejected the input: the message is written for the model. */
export const validationFailed = (tool: string, error: { readonly message: string }): Errors.ValidationFailed =>
  new Errors.ValidationFailed({ tool, message: error.message })

/** Decode a rewritten input (from a hook or a person), plan it, validate it again, and plan what validate gave. */
export const rebind = (
  { context, env, name, prepared }: Call,
  raw: unknown
): Effect.Effect<AnyInvocation, Errors.InvalidInput | Errors.ValidationFailed> =>
  Either.match(decodeInput(prepared.tool, raw), {
    onLeft: (error) => Effect.fail(error),
    onRight: (input) => {
      const planned = plan(env, prepared.tool, input)
      return Effect.map(
        Effect.mapError(planned.validate(context), (e) => validationFailed(name, e)),
        (validated) => replan(env, prepared, planned, validated)
      )
    }
  })
