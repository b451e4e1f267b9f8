/**
 * The DurableExecution the runtime consults inside a durable turn: each call an activity keyed by its tool_use id,
 * each question to the approver a durable deferred. Outside a workflow (no WorkflowInstance in the fiber's context)
 * both run as they would without the layer.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Activity from "@effect/workflow/Activity"
import * as DurableDeferred from "@effect/workflow/DurableDeferred"
import { WorkflowInstance } from "@effect/workflow/WorkflowEngine"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { ApprovalAnswer, ApprovalRequest } from "../../Permission/Approver.js"
import { DurableExecution } from "../../Runtime/DurableExecution.js"
import type { DurableCall, DurableCallRun } from "../../Runtime/DurableExecution.js"
import type { Outcome } from "../../Tool/Outcome.js"
import * as Record from "./record.js"

/** The durable deferred a question is (its name, and the deferred `raceAll` keeps its answer in). */
const approvalName = (toolUseId: string, question: number): string => `approval/${toolUseId}/${question}`

/** How many questions each call of a workflow run asked so far (an edited input is asked again). */
const questions = new WeakMap<WorkflowInstance["Type"], Map<string, number>>()

const nextQuestion = (instance: WorkflowInstance["Type"], toolUseId: string): number => {
  let asked = questions.get(instance)
  if (asked === undefined) {
    asked = new Map()
    questions.set(instance, asked)
  }
  const question = (asked.get(toolUseId) ?? 0) + 1
  asked.set(toolUseId, question)
  return question
}

/** The implementation over the SQL client of the layer. */
export const make: Effect.Effect<DurableExecution["Type"], never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * The activity's body: attempt 1, or the next one after a process died while the call ran; a call that is not
   * idempotent is then reported unknown instead. A call whose outcome is already in the record gives it.
   */
  const body = (executionId: string, call: DurableCall, run: DurableCallRun): Effect.Effect<string> =>
    Effect.gen(function*() {
      const previous = yield* Record.find(sql, executionId, call.toolUseId)
      if (previous !== undefined && previous.outcome !== null) return previous.outcome
      if (previous !== undefined && !call.idempotent) {
        const outcome = yield* run.unknown(previous.attempt)
        const text = Record.encodeOutcome(outcome)
        yield* Record.ended(sql, executionId, call.toolUseId, "unknown", text, outcome.status, Date.now())
        return text
      }
      const attempt = previous === undefined ? 1 : previous.attempt + 1
      yield* Record.started(sql, executionId, call.toolUseId, call.toolName, attempt, Date.now())
      const outcome = yield* run.run(attempt)
      const text = Record.encodeOutcome(outcome)
      yield* Record.ended(sql, executionId, call.toolUseId, "done", text, outcome.status, Date.now())
      return text
    }).pipe(Effect.orDie)

  const call = (call: DurableCall, run: DurableCallRun): Effect.Effect<Outcome> =>
    Effect.flatMap(Effect.serviceOption(WorkflowInstance), (instance) => {
      if (Option.isNone(instance)) return run.run(1)
      const activity = Activity.make({
        name: `call/${call.toolUseId}`,
        success: Schema.String,
        execute: body(instance.value.executionId, call, run)
      })
      return Effect.map(
        Effect.provideService(activity, WorkflowInstance, instance.value),
        Record.decodeOutcome
      ) as Effect.Effect<Outcome>
    })

  const ask = (
    request: ApprovalRequest,
    ask: (request: ApprovalRequest) => Effect.Effect<ApprovalAnswer>
  ): Effect.Effect<ApprovalAnswer> =>
    Effect.flatMap(Effect.serviceOption(WorkflowInstance), (instance) => {
      if (Option.isNone(instance)) return ask(request)
      const { executionId } = instance.value
      const name = approvalName(request.toolUseId, nextQuestion(instance.value, request.toolUseId))
      const token = DurableDeferred.tokenFromExecutionId(DurableDeferred.make(name), instance.value)
      // The answer is kept in the session's record as it is given: the engine's own reply to a deferred is only
      // written once a suspended workflow resumes, and this one waits without suspending (the approver is asking).
      return Effect.gen(function*() {
        const kept = yield* Record.answerOf(sql, executionId, name)
        if (kept !== undefined) return JSON.parse(kept) as ApprovalAnswer
        const answer = yield* ask({ ...request, token })
        yield* Record.answered(sql, executionId, name, JSON.stringify(answer))
        return answer
      }).pipe(Effect.orDie)
    })

  return DurableExecution.of({ call, ask })
})

export { DurableExecution as DurableExecutionTag }
