/**
 * The permission stage of one call, and what it needs: decoding a rewritten input and planning it again (stamped in
 * the run's write log, `freshness.ts`), the policy's verdict on an invocation (the tool's own check first), and
 * settling a verdict: allow, deny, or ask the approver, one question at a time. An answer that edits the input is a
 * new input: the policy decides it again, the person's allow counting only as an allow for that input. The pipeline
 * (`pipeline.ts`) runs these in its gate, and again when a call planned before an earlier call wrote is re-checked.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import type { RegisteredTool } from "../../Catalog/ToolRegistry.js"
import type { ApprovalRequest } from "../../Permission/Approver.js"
import { ApprovalAnswer } from "../../Permission/Approver.js"
import type { HookOpinion, PolicyRequest, PolicyVerdict } from "../../Permission/PermissionPolicy.js"
import * as Errors from "../../Tool/Errors.js"
import { inputIssues } from "../../Tool/Errors.js"
import { Decision, DecisionReason, describeReason } from "../../Tool/Permission.js"
import type { CallContext } from "../../Tool/Tool.js"
import { ToolEvent } from "../Events.js"
import { continueWith as andThen } from "./continuation.js"
import { numericStringsAsNumbers } from "./numericStrings.js"
import type { AnyInvocation, PipelineEnv, Prepared } from "./pipeline.js"

/** Records when an invocation was planned (see {@link PipelineEnv.writes}). */
export const stamped = (env: PipelineEnv, invocation: AnyInvocation): AnyInvocation =>
  env.writes === undefined ? invocation : env.writes.planned(invocation)

const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

type Decoder = (raw: unknown) => Either.Either<unknown, ParseResult.ParseIssue>

/** One decoder per input schema, built on first use: building it is a measurable share of a trivial call. */
const decoders = new WeakMap<object, Decoder>()

export const decodeInput = (tool: RegisteredTool, raw: unknown): Either.Either<unknown, Errors.InvalidInput> => {
  const schema = tool.definition.input as Schema.Schema<unknown, unknown>
  let decode = decoders.get(schema)
  if (decode === undefined) {
    decode = ParseResult.decodeUnknownEither(schema, decodeOptions)
    decoders.set(schema, decode)
  }
  // Numbers as models send them ("offset": "1"), read as Claude Code reads them: see numericStrings.
  const input = numericStringsAsNumbers(schema.ast, raw)
  return Either.mapLeft(
    decode(input),
    (issue) => new Errors.InvalidInput({ tool: tool.definition.name, issues: inputIssues(input, issue) })
  )
}

/** What the model-facing stages need to know about one prepared call. */
export interface Stage {
  readonly env: PipelineEnv
  readonly prepared: Prepared
  readonly context: CallContext
}

export const rejected = (tool: string, error: { readonly message: string }) =>
  new Errors.ValidationFailed({ tool, message: error.message })

/** Plans an input the call has not been planned for yet (the same input keeps its invocation). */
export const replan = (
  env: PipelineEnv,
  prepared: Prepared,
  invocation: AnyInvocation,
  input: unknown
): AnyInvocation => input === invocation.input ? invocation : stamped(env, prepared.tool.service.plan(input))

/**
 * The invocation planned again when something may have written since it was planned (its plan read a world that may
 * have changed: symlinks, `cd` targets, globs, real paths), else the same one.
 */
export const refreshed = (env: PipelineEnv, prepared: Prepared, invocation: AnyInvocation): AnyInvocation =>
  env.writes?.isStale(invocation) === true ? stamped(env, prepared.tool.service.plan(invocation.input)) : invocation

/** Decode a rewritten input (from a hook or a person), validate it again, and plan it. */
export const redecode = (
  { context, env, prepared }: Stage,
  raw: unknown
): Effect.Effect<AnyInvocation, Errors.InvalidInput | Errors.ValidationFailed> =>
  Either.match(decodeInput(prepared.tool, raw), {
    onLeft: (error) => Effect.fail(error),
    onRight: (input) => {
      const planned = stamped(env, prepared.tool.service.plan(input))
      return Effect.map(
        Effect.mapError(planned.validate(context), (e) => rejected(prepared.tool.definition.name, e)),
        (validated) => replan(env, prepared, planned, validated)
      )
    }
  })

/** The policy's decision, in a span of its own (attributes: tool, tool_use id, verdict). */
export const evaluateTraced = (env: PipelineEnv, request: PolicyRequest) =>
  !env.traced ? env.policy.evaluate(request) : Effect.withSpan(
    Effect.tap(
      env.policy.evaluate(request),
      (verdict) => Effect.annotateCurrentSpan("permission.verdict", verdict._tag)
    ),
    "PermissionPolicy.evaluate",
    { attributes: { "tool.name": request.definition.name, "tool_use.id": request.context.toolUseId } }
  )

/** What the permission stage settles on: the decision and the invocation to run. */
export interface Authorised {
  readonly decision: Decision
  readonly invocation: AnyInvocation
  /** The policy's verdict the decision answers: a call planned again is decided again only when its verdict differs. */
  readonly verdict: PolicyVerdict
  /** The hooks' opinion the call was decided with. */
  readonly hook: HookOpinion | undefined
}

/** The policy's verdict on an invocation: the tool's own check first, then the policy. */
export const verdictOf = (
  stage: Stage,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined,
  allowedInput?: DecisionReason
): Effect.Effect<PolicyVerdict> =>
  andThen(
    invocation.checkPermissions(stage.context),
    (toolCheck) =>
      evaluateTraced(stage.env, {
        definition: stage.prepared.tool.definition,
        invocation,
        toolCheck,
        hook,
        context: stage.context,
        ...(allowedInput === undefined ? {} : { allowedInput })
      })
  )

/** The permission stage: the tool's own check, then the policy's verdict, then the approver when it asks. */
export const authorise = (
  stage: Stage,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined
): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> =>
  andThen(verdictOf(stage, invocation, hook), (verdict) => settleVerdict(stage, invocation, hook, verdict))

/** A verdict as a decision: allow and deny at once, ask through the approver. */
export const settleVerdict = (
  stage: Stage,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined,
  verdict: PolicyVerdict
): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> => {
  switch (verdict._tag) {
    case "Allow":
      return Exit.succeed({
        decision: Decision.Allow({ reason: verdict.reason }),
        invocation: verdict.updatedInput === undefined
          ? invocation
          : replan(stage.env, stage.prepared, invocation, verdict.updatedInput),
        verdict,
        hook
      })
    case "Deny":
      return Exit.succeed({
        decision: Decision.Deny({ reason: verdict.reason, message: verdict.message }),
        invocation,
        verdict,
        hook
      })
    case "Ask":
      return askPerson(stage, invocation, verdict, hook)
  }
}

/** Whether two verdicts make the same decision: same answer, for the same reason, with the same message. */
export const sameVerdict = (a: PolicyVerdict, b: PolicyVerdict): boolean =>
  a._tag === b._tag && describeReason(a.reason) === describeReason(b.reason) &&
  (a._tag === "Allow" || b._tag === "Allow" || a.message === b.message)

/** Puts an Ask to the approver (one question at a time) and turns the answer into a decision. */
export const askPerson = (
  stage: Stage,
  invocation: AnyInvocation,
  verdict: Extract<PolicyVerdict, { readonly _tag: "Ask" }>,
  hook: HookOpinion | undefined
): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> =>
  Effect.gen(function*() {
    const { env, prepared } = stage
    const { definition } = prepared.tool
    const { message, reason, suggestions } = verdict
    const input = invocation.input
    const request: ApprovalRequest = {
      toolUseId: prepared.toolUse.id,
      toolName: definition.name,
      input,
      ui: invocation.renderUse(),
      message,
      suggestions,
      reason,
      classifierInput: invocation.classifierInput(),
      risk: invocation.risk()
    }
    const answer = yield* env.withApprovalLock(
      Effect.gen(function*() {
        yield* env.emit(() =>
          ToolEvent.PermissionRequested({
            toolUseId: request.toolUseId,
            request,
            at: env.clock.unsafeCurrentTimeMillis()
          })
        )
        const answer = yield* Effect.withSpan(env.approver.ask(request), "Approver.ask", {
          attributes: { "tool.name": definition.name, "tool_use.id": request.toolUseId }
        })
        yield* env.emit(() =>
          ToolEvent.PermissionAnswered({
            toolUseId: request.toolUseId,
            answer,
            at: env.clock.unsafeCurrentTimeMillis()
          })
        )
        return answer
      })
    )
    const allowed = (reason: DecisionReason): Authorised => ({
      decision: Decision.Allow({ reason }),
      invocation,
      verdict,
      hook
    })
    return yield* ApprovalAnswer.$match(answer, {
      AllowOnce: () => Effect.succeed(allowed(DecisionReason.User({ scope: "once" }))),
      AllowAuto: ({ approver, reason }) =>
        Effect.succeed(allowed(DecisionReason.Classifier({ approver, message: reason }))),
      AllowSession: ({ rules }) =>
        Effect.as(
          env.policy.remember(rules, "session").pipe(Effect.ignoreLogged),
          allowed(DecisionReason.User({ scope: "session" }))
        ),
      AllowAlways: ({ rules }) =>
        Effect.as(
          env.policy.remember(rules, "always").pipe(Effect.ignoreLogged),
          allowed(DecisionReason.User({ scope: "always" }))
        ),
      Deny: ({ cancelRun, message: text = "The user doesn't want to proceed with this tool use." }) =>
        Effect.as(cancelRun ? env.cancelRun : Effect.void, {
          decision: Decision.Deny({ reason: DecisionReason.User({ scope: "once", message: text }), message: text }),
          invocation,
          verdict,
          hook
        }),
      // An edited input is a new input: the policy decides it again (deny rules, ask rules, safety checks, plan mode,
      // the tool's own check), the person's allow counting only as an allow for exactly that input. What still asks
      // is put to the approver again, with the edited input.
      Edit: (edit) =>
        Effect.flatMap(
          redecode(stage, edit.input),
          (edited) =>
            Effect.flatMap(
              verdictOf(stage, edited, undefined, DecisionReason.User({ scope: "once", message: "edited the input" })),
              (again) => settleVerdict(stage, edited, undefined, again)
            )
        )
    })
  })
