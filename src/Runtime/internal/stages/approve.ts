/**
 * Stage 5, **approve**: the policy asked, so the Approver answers (a person at a terminal, a script, a classifier or
 * a fixed answer).
 *
 * Takes the {@link Question}. Requests are asked one at a time even when their calls run in parallel; the request and
 * the answer are events, the answer has a span. Gives the {@link Authorised} decision: allow once, for the session
 * or always (the rules remembered), automatically (a classifier), deny (and maybe stop the run); or an
 * {@link Edited} input, decoded, planned and validated again (so it may fail with InvalidInput / ValidationFailed).
 * An edited input is a new input: the authorise stage decides it again (deny rules, ask rules, safety checks, plan
 * mode, the tool's own check), the person's allow counting only as an allow for exactly that input
 * ({@link editedByUser}); what still asks is put to the approver again, with the edited input.
 */
import * as Effect from "effect/Effect"
import type { ApprovalRequest } from "../../../Permission/Approver.js"
import { ApprovalAnswer } from "../../../Permission/Approver.js"
import type * as Errors from "../../../Tool/Errors.js"
import { Decision, DecisionReason } from "../../../Tool/Permission.js"
import { ToolEvent } from "../../Events.js"
import type { Authorised, Question } from "./authorise.js"
import { authorised } from "./authorise.js"
import type { AnyInvocation, Call } from "./call.js"
import { rebind } from "./plan.js"

/** The person allowed an input they edited: it goes back to the authorise stage. */
export interface Edited {
  readonly _tag: "Edited"
  readonly invocation: AnyInvocation
}

/** What the authorise stage is told when it decides an edited input again. */
export const editedByUser: DecisionReason = DecisionReason.User({ scope: "once", message: "edited the input" })

/** Puts the question to the approver (one question at a time) and turns the answer into a decision. */
export const approve = (
  call: Call,
  { hook, invocation, verdict }: Question
): Effect.Effect<Authorised | Edited, Errors.InvalidInput | Errors.ValidationFailed> =>
  Effect.gen(function*() {
    const { env, name, prepared } = call
    const { message, reason, suggestions } = verdict
    const request: ApprovalRequest = {
      toolUseId: prepared.toolUse.id,
      toolName: name,
      input: invocation.input,
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
        const asking = env.durable === undefined
          ? env.approver.ask(request)
          : env.durable.ask(request, env.approver.ask)
        // A span only for a program with a tracer (one costs a stack trace: some 30 µs per question).
        const answer = yield* (!env.traced ? asking : Effect.withSpan(asking, "Approver.ask", {
          attributes: { "tool.name": name, "tool_use.id": request.toolUseId }
        }))
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
    const allowed = (reason: DecisionReason): Authorised =>
      authorised(Decision.Allow({ reason }), invocation, verdict, hook)
    return yield* ApprovalAnswer.$match(answer, {
      AllowOnce: () => Effect.succeed<Authorised | Edited>(allowed(DecisionReason.User({ scope: "once" }))),
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
        Effect.as(
          cancelRun ? env.cancelRun : Effect.void,
          authorised(
            Decision.Deny({ reason: DecisionReason.User({ scope: "once", message: text }), message: text }),
            invocation,
            verdict,
            hook
          )
        ),
      Edit: (edit) => Effect.map(rebind(call, edit.input), (edited): Edited => ({ _tag: "Edited", invocation: edited }))
    })
  })
