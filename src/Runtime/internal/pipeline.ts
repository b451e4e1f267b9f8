/**
 * One call, from tool_use to Outcome, in named stages read top to bottom:
 *
 * 1. {@link prepare} — lookup (name or alias), decode, **plan** (the tool binds the input into an Invocation:
 *    traits, claims, its permission view, its rendering, its private analysis). Gives the scheduler what it needs,
 *    or an Outcome straight away when the call cannot run.
 * 2. {@link run}, once the scheduler admits the call:
 *    - *gate*: validate -> PreToolUse hooks -> permission (the tool's view, the policy, the approver). Whenever the
 *      input changes on the way (a normalising validate, a hook's or a person's rewrite, a policy's updatedInput)
 *      the call is planned again: what is checked is what runs.
 *    - *readmission*: if the executed input claims more than the call was admitted with, the scheduler is asked
 *      again and the call is parked until every conflicting call before it has finished ({@link Parked}).
 *    - *execute*: call (scoped, with timeout, cancellable) -> PostToolUse hooks -> budget -> present -> Outcome.
 *
 * Nothing here ever fails: every failure becomes an Outcome. The stages use `continueWith` (see
 * `continuation.ts`), which is `Effect.flatMap` continued synchronously for stages that are already an Exit.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Tracer from "effect/Tracer"
import type { RegisteredTool, ToolRegistry } from "../../Catalog/ToolRegistry.js"
import type { ToolHooks } from "../../Hooks/ToolHooks.js"
import type { ApprovalRequest, Approver } from "../../Permission/Approver.js"
import { ApprovalAnswer } from "../../Permission/Approver.js"
import type { HookOpinion, PermissionPolicy, PolicyRequest } from "../../Permission/PermissionPolicy.js"
import type { ResultStore } from "../../Session/ResultStore.js"
import * as Errors from "../../Tool/Errors.js"
import { inputIssues } from "../../Tool/Errors.js"
import type { Outcome, Status } from "../../Tool/Outcome.js"
import { Decision, DecisionReason, describeReason } from "../../Tool/Permission.js"
import { toText, UiBlock } from "../../Tool/Presentation.js"
import { alwaysEnabled, Availability } from "../../Tool/Tool.js"
import type * as Tool from "../../Tool/Tool.js"
import type { CallContext } from "../../Tool/Tool.js"
import { toolResult } from "../../Tool/Wire.js"
import type { ToolResultContent, ToolUseBlock } from "../../Tool/Wire.js"
import { ToolEvent } from "../Events.js"
import type { RuntimeSettings } from "../RuntimeConfig.js"
import { applyBudget } from "./budget.js"
import { continueWith as andThen, continueWithExit as onExit } from "./continuation.js"
import { numericStringsAsNumbers } from "./numericStrings.js"

/** The services and shared state one turn's calls run with. */
export interface PipelineEnv {
  readonly registry: ToolRegistry["Type"]
  readonly policy: PermissionPolicy["Type"]
  readonly approver: Approver["Type"]
  readonly hooks: ToolHooks["Type"]
  readonly store: ResultStore["Type"]
  readonly settings: RuntimeSettings
  /** Read synchronously (`unsafeCurrentTimeMillis`): looking the Clock up on every timestamp is measurable. */
  readonly clock: Clock.Clock
  /** Publishes an event; built lazily, so a run nobody listens to does not pay for its events. */
  readonly emit: (event: () => ToolEvent) => Effect.Effect<void>
  /** Serialises approval requests: a person is asked one thing at a time. */
  readonly withApprovalLock: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** Cancels the rest of the run (a person's "deny and stop"); the calling fiber is spared. */
  readonly cancelRun: Effect.Effect<void>
  /**
   * Whether calls and decisions get spans: true when the program installed a tracer of its own. Effect's built-in
   * tracer exports nothing, and a span per call costs more than the whole call (`bench/pipeline`).
   */
  readonly traced: boolean
  /**
   * Whether a tool is enabled, asked only of tools that define `isEnabled` (read once per run, then cached: see
   * {@link availabilityCache}).
   */
  readonly availability: (tool: RegisteredTool) => Effect.Effect<Availability>
}

const disabledWhenUnsure = (check: Effect.Effect<Availability>): Effect.Effect<Availability> =>
  Effect.catchAllCause(check, () => Effect.succeed(Availability.disabled("its availability check failed")))

/** The availability for a single request: asked once, since the request makes one call. */
export const availabilityOnce: PipelineEnv["availability"] = (tool) => disabledWhenUnsure(tool.service.isEnabled)

/**
 * Asks each tool's `isEnabled` at most once: the answers of one run (or one request). A check that fails or dies
 * counts as disabled: a tool that cannot say it works is not called.
 */
export const availabilityCache = (): PipelineEnv["availability"] => {
  const known = new Map<string, Availability>()
  return (tool) => {
    const cached = known.get(tool.definition.name)
    if (cached !== undefined) return Exit.succeed(cached)
    return Effect.map(
      disabledWhenUnsure(tool.service.isEnabled),
      (availability) => {
        known.set(tool.definition.name, availability)
        return availability
      }
    )
  }
}

const nativeTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/** Whether calls traced by this tracer get spans: any tracer but Effect's built-in one (see {@link PipelineEnv.traced}). */
export const tracesCalls = (tracer: Tracer.Tracer): boolean => tracer !== nativeTracer

/** Whether the program installed a tracer (see {@link PipelineEnv.traced}). */
export const isTracing: Effect.Effect<boolean> = Effect.map(Effect.tracer, tracesCalls)

/** A call's input as the tool bound it. */
export type AnyInvocation = Tool.AnyInvocation

/** A call that resolved to a tool, decoded and was planned: ready to be scheduled. */
export interface Prepared {
  readonly toolUse: ToolUseBlock
  readonly tool: RegisteredTool
  /** The plan of the decoded input; the scheduler admits the call on its traits and claims. */
  readonly invocation: AnyInvocation
  readonly receivedAt: number
  /** A per-call timeout overriding the tool's default. */
  readonly timeout: Duration.Duration | undefined
}

const decodeOptions = { errors: "all", onExcessProperty: "error" } as const

type Decoder = (raw: unknown) => Either.Either<unknown, ParseResult.ParseIssue>

/** One decoder per input schema, built on first use: building it is a measurable share of a trivial call. */
const decoders = new WeakMap<object, Decoder>()

const decodeInput = (tool: RegisteredTool, raw: unknown): Either.Either<unknown, Errors.InvalidInput> => {
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

const statusOf = (error: Errors.ToolCallError): Status => {
  switch (error._tag) {
    case "PermissionDenied":
      return "denied"
    case "Interrupted":
      return "interrupted"
    case "TimedOut":
      return "timed_out"
    default:
      return "error"
  }
}

interface Finish {
  readonly toolUse: ToolUseBlock
  readonly toolName: string | undefined
  readonly receivedAt: number
  readonly startedAt?: number
  readonly ui: ReadonlyArray<UiBlock>
  readonly executedInput?: unknown
  readonly decision?: Decision
  readonly additionalContext?: ReadonlyArray<string>
}

const withContext = (content: ToolResultContent, additional: ReadonlyArray<string>): ToolResultContent => {
  if (additional.length === 0) return content
  const extra = additional.join("\n")
  return typeof content === "string" ? `${content}\n\n${extra}` : [...content, { type: "text", text: extra }]
}

const timings = (receivedAt: number, startedAt: number | undefined, endedAt: number) =>
  startedAt === undefined
    ? { receivedAt, endedAt, durationMs: 0 }
    : { receivedAt, startedAt, endedAt, durationMs: endedAt - startedAt }

/** Hook messages for the user, as events. */
const notify = (env: PipelineEnv, toolUseId: string, notices: ReadonlyArray<string>): Effect.Effect<void> =>
  notices.length === 0
    ? Effect.void
    : Effect.forEach(
      notices,
      (message) => env.emit(() => ToolEvent.Notice({ toolUseId, message, at: env.clock.unsafeCurrentTimeMillis() })),
      { discard: true }
    )

/**
 * Every Outcome ends here. A tool that streamed its output to the store (Bash) fits its own budget, so only the store
 * knows it saved something: the Outcome names that file too, whatever the status (taken, so a later call with the
 * same id does not inherit it).
 */
const complete = (env: PipelineEnv, outcome: Outcome): Effect.Effect<Outcome> =>
  andThen(env.store.saved(outcome.toolUseId), (saved) => {
    const named = saved === undefined || outcome.persistedPath !== undefined
      ? outcome
      : { ...outcome, persistedPath: saved }
    return andThen(
      env.emit(() => ToolEvent.Completed({ outcome: named, at: named.timings.endedAt })),
      () => Exit.succeed(named)
    )
  })

/** The Outcome of a call that failed at any stage. */
export const failed = (env: PipelineEnv, finish: Finish, error: Errors.ToolCallError): Effect.Effect<Outcome> => {
  const endedAt = env.clock.unsafeCurrentTimeMillis()
  const additional = finish.additionalContext ?? []
  const text = Errors.modelText(error)
  const ui = [
    ...finish.ui,
    UiBlock.Notice({ level: error._tag === "Interrupted" ? "warning" : "error", text: error.message })
  ]
  const outcome: Outcome = {
    toolUseId: finish.toolUse.id,
    requestedName: finish.toolUse.name,
    toolName: finish.toolName,
    status: statusOf(error),
    result: toolResult(finish.toolUse.id, withContext(text, additional), true),
    ui,
    audit: toText(ui),
    error,
    originalInput: finish.toolUse.input,
    ...(finish.executedInput === undefined ? {} : { executedInput: finish.executedInput }),
    ...(finish.decision === undefined ? {} : { decision: finish.decision }),
    additionalContext: additional,
    timings: timings(finish.receivedAt, finish.startedAt, endedAt)
  }
  return complete(env, outcome)
}

/**
 * Lookup, decode and plan. Returns the prepared call, or the Outcome of a call that cannot run (unknown tool,
 * invalid input, or a defect in the tool's plan).
 */
export const prepare = (
  env: PipelineEnv,
  toolUse: ToolUseBlock,
  receivedAt: number,
  timeout: Duration.Duration | undefined
): Effect.Effect<Either.Either<Prepared, Outcome>> => {
  const finish: Finish = { toolUse, toolName: undefined, receivedAt, ui: [UiBlock.Title({ text: toolUse.name })] }
  const tool = env.registry.lookup(toolUse.name)
  if (Option.isNone(tool)) {
    return Effect.map(
      failed(
        env,
        finish,
        new Errors.UnknownTool({ name: toolUse.name, suggestions: env.registry.suggest(toolUse.name) })
      ),
      Either.left
    )
  }
  const named = { ...finish, toolName: tool.value.definition.name }
  // Most tools are always enabled: they skip the check (and its Effect) entirely.
  if (tool.value.service.isEnabled !== alwaysEnabled) {
    return andThen(env.availability(tool.value), (availability) =>
      availability._tag === "Enabled"
        ? decodeAndPlan(env, tool.value, named, toolUse, receivedAt, timeout)
        : Effect.map(
          failed(
            env,
            named,
            new Errors.ToolDisabled({ tool: tool.value.definition.name, reason: availability.reason })
          ),
          Either.left
        ))
  }
  return decodeAndPlan(env, tool.value, named, toolUse, receivedAt, timeout)
}

/** Decode and plan, for a tool that was found and is enabled. */
const decodeAndPlan = (
  env: PipelineEnv,
  tool: RegisteredTool,
  named: Finish,
  toolUse: ToolUseBlock,
  receivedAt: number,
  timeout: Duration.Duration | undefined
): Effect.Effect<Either.Either<Prepared, Outcome>> => {
  try {
    // Inside the try: a schema's own filter or transform may throw, and so may a tool's traits or claims.
    const decoded = decodeInput(tool, toolUse.input)
    if (Either.isLeft(decoded)) return Effect.map(failed(env, named, decoded.left), Either.left)
    const invocation = tool.service.plan(decoded.right)
    return Effect.succeed(Either.right({ toolUse, tool, invocation, receivedAt, timeout }))
  } catch (thrown) {
    const cause = Cause.die(thrown)
    return Effect.zipRight(
      logDefect(env, toolUse.id, cause),
      Effect.map(failed(env, named, new Errors.Defect({ tool: tool.definition.name, cause, ran: false })), Either.left)
    )
  }
}

/** What the model-facing stages need to know about one prepared call. */
interface Stage {
  readonly env: PipelineEnv
  readonly prepared: Prepared
  readonly context: CallContext
}

const rejected = (tool: string, error: { readonly message: string }) =>
  new Errors.ValidationFailed({ tool, message: error.message })

/** Plans an input the call has not been planned for yet (the same input keeps its invocation). */
const replan = (prepared: Prepared, invocation: AnyInvocation, input: unknown): AnyInvocation =>
  input === invocation.input ? invocation : prepared.tool.service.plan(input)

/** Decode a rewritten input (from a hook or a person), validate it again, and plan it. */
const redecode = (
  { context, prepared }: Stage,
  raw: unknown
): Effect.Effect<AnyInvocation, Errors.InvalidInput | Errors.ValidationFailed> =>
  Either.match(decodeInput(prepared.tool, raw), {
    onLeft: (error) => Effect.fail(error),
    onRight: (input) => {
      const planned = prepared.tool.service.plan(input)
      return Effect.map(
        Effect.mapError(planned.validate(context), (e) => rejected(prepared.tool.definition.name, e)),
        (validated) => replan(prepared, planned, validated)
      )
    }
  })

/** The policy's decision, in a span of its own (attributes: tool, tool_use id, verdict). */
const evaluateTraced = (env: PipelineEnv, request: PolicyRequest) =>
  !env.traced ? env.policy.evaluate(request) : Effect.withSpan(
    Effect.tap(
      env.policy.evaluate(request),
      (verdict) => Effect.annotateCurrentSpan("permission.verdict", verdict._tag)
    ),
    "PermissionPolicy.evaluate",
    { attributes: { "tool.name": request.definition.name, "tool_use.id": request.context.toolUseId } }
  )

/** What the permission stage settles on: the decision and the invocation to run. */
interface Authorised {
  readonly decision: Decision
  readonly invocation: AnyInvocation
}

/** The permission stage: the tool's own check, then the policy's verdict, then the approver when it asks. */
const authorise = (
  stage: Stage,
  invocation: AnyInvocation,
  hook: HookOpinion | undefined
): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> => {
  const { context, env, prepared } = stage
  const { definition } = prepared.tool
  return andThen(
    invocation.checkPermissions(context),
    (toolCheck) =>
      andThen(
        evaluateTraced(env, {
          definition,
          invocation,
          toolCheck,
          hook,
          context
        }),
        (verdict) => {
          switch (verdict._tag) {
            case "Allow":
              return Exit.succeed({
                decision: Decision.Allow({ reason: verdict.reason }),
                invocation: verdict.updatedInput === undefined
                  ? invocation
                  : replan(prepared, invocation, verdict.updatedInput)
              })
            case "Deny":
              return Exit.succeed({
                decision: Decision.Deny({ reason: verdict.reason, message: verdict.message }),
                invocation
              })
            case "Ask":
              return askPerson(stage, invocation, verdict.message, verdict.suggestions, verdict.reason)
          }
        }
      )
  )
}

/** Puts an Ask to the approver (one question at a time) and turns the answer into a decision. */
const askPerson = (
  stage: Stage,
  invocation: AnyInvocation,
  message: string,
  suggestions: ReadonlyArray<string>,
  reason: DecisionReason
) =>
  Effect.gen(function*() {
    const { env, prepared } = stage
    const { definition } = prepared.tool
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
    return yield* ApprovalAnswer.$match(answer, {
      AllowOnce: () =>
        Effect.succeed<Authorised>({
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "once" }) }),
          invocation
        }),
      AllowAuto: ({ approver, reason }) =>
        Effect.succeed<Authorised>({
          decision: Decision.Allow({ reason: DecisionReason.Classifier({ approver, message: reason }) }),
          invocation
        }),
      AllowSession: ({ rules }) =>
        Effect.as(env.policy.remember(rules, "session").pipe(Effect.ignoreLogged), {
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "session" }) }),
          invocation
        }),
      AllowAlways: ({ rules }) =>
        Effect.as(env.policy.remember(rules, "always").pipe(Effect.ignoreLogged), {
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "always" }) }),
          invocation
        }),
      Deny: ({ cancelRun, message: text = "The user doesn't want to proceed with this tool use." }) =>
        Effect.as(cancelRun ? env.cancelRun : Effect.void, {
          decision: Decision.Deny({ reason: DecisionReason.User({ scope: "once", message: text }), message: text }),
          invocation
        }),
      Edit: (edit) =>
        Effect.map(redecode(stage, edit.input), (edited) => ({
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "once", message: "edited the input" }) }),
          invocation: edited
        }))
    })
  })

/**
 * How far a call got, written as it goes, so whoever interrupts it (a cancelled run) can still report it faithfully:
 * a call that started is never reported as one that never ran.
 */
export interface Trace {
  ui: ReadonlyArray<UiBlock>
  executedInput?: unknown
  decision?: Decision
  startedAt?: number
}

/** A fresh trace for a prepared call. */
export const traceOf = (prepared: Prepared): Trace => ({
  ui: safeUi(() => prepared.invocation.renderUse(), prepared.tool.definition.name)
})

/** The Outcome of a call whose fiber was interrupted, from what its trace says. */
export const interrupted = (env: PipelineEnv, prepared: Prepared, trace: Trace): Effect.Effect<Outcome> =>
  failed(
    env,
    {
      toolUse: prepared.toolUse,
      toolName: prepared.tool.definition.name,
      receivedAt: prepared.receivedAt,
      ...trace
    },
    new Errors.Interrupted({ tool: prepared.tool.definition.name, started: trace.startedAt !== undefined })
  )

/**
 * Runs a call in a scope of its own, closed with the call's exit (so interruption and timeouts release resources).
 * This is the hot path of every call: the scope goes into the fiber's context with two FiberRef writes, which is
 * measurably cheaper than `Effect.provideService`'s acquire/release. The write happens inside `onExit`, so the
 * context is restored whatever happens.
 */
const scopedCall = <A, E>(call: Effect.Effect<A, E, Scope.Scope>): Effect.Effect<A, E> =>
  Effect.flatMap(Scope.make(), (scope) =>
    FiberRef.getWith(FiberRef.currentContext, (context) =>
      Effect.onExit(
        Effect.zipRight(
          FiberRef.set(FiberRef.currentContext, Context.add(context, Scope.Scope, scope)),
          call as Effect.Effect<A, E>
        ),
        (exit) => Effect.zipRight(FiberRef.set(FiberRef.currentContext, context), Scope.close(scope, exit))
      )))

/**
 * How the scheduler admits a call to execution, once its gate has settled the input that will run.
 *
 * `admit` is asked right before the call executes, with the invocation that will run: when that input claims more
 * than the call was admitted with (a hook or a person rewrote it), the scheduler registers the wider claims; and when
 * the call must now wait (for a call it conflicts with, or because an earlier call's rewrite put it behind that
 * call), it answers true, {@link runScheduled} returns {@link Parked}, and the scheduler resumes the call once it may
 * go on. False means: execute now.
 */
export interface Admission {
  readonly admit: (invocation: AnyInvocation) => boolean
}

/** A call that passed its gate and waits to be admitted to execution, with the rest of its run. */
export interface Parked {
  readonly _tag: "Parked"
  readonly resume: Effect.Effect<Outcome | Parked>
}

/** Whether a run ended parked rather than with an Outcome. */
export const isParked = (result: Outcome | Parked): result is Parked => "_tag" in result && result._tag === "Parked"

/** A call that runs alone (`executeOne`) is never held back. */
const alone: Admission = { admit: () => false }

/**
 * Everything after scheduling, for a call that runs alone. Never fails.
 */
export const run = (env: PipelineEnv, prepared: Prepared, trace: Trace = traceOf(prepared)): Effect.Effect<Outcome> =>
  runScheduled(env, prepared, trace, alone) as Effect.Effect<Outcome>

/**
 * Everything after scheduling. Never fails. Interruption (a cancelled run, or the caller's fiber) interrupts the call
 * and closes its scope; the interrupter reports it from the {@link Trace}.
 */
export const runScheduled = (
  env: PipelineEnv,
  prepared: Prepared,
  trace: Trace,
  admission: Admission
): Effect.Effect<Outcome | Parked> => traced(env, prepared, runStages(env, prepared, trace, admission))

/** A call's span: tool name, tool_use id, and the status it ended with (`parked` when it waits to be admitted again). */
const traced = (
  env: PipelineEnv,
  prepared: Prepared,
  flow: Effect.Effect<Outcome | Parked>
): Effect.Effect<Outcome | Parked> =>
  !env.traced ? flow : Effect.withSpan(
    Effect.tap(
      flow,
      (result) => Effect.annotateCurrentSpan("tool.status", isParked(result) ? "parked" : result.status)
    ),
    "ToolRuntime.call",
    { attributes: { "tool.name": prepared.tool.definition.name, "tool_use.id": prepared.toolUse.id } }
  )

const runStages = (
  env: PipelineEnv,
  prepared: Prepared,
  trace: Trace,
  admission: Admission
): Effect.Effect<Outcome | Parked> => {
  const { toolUse, tool } = prepared
  const name = tool.definition.name
  const context: CallContext = {
    toolUseId: toolUse.id,
    toolName: name,
    progress: (progress) =>
      Effect.suspend(() =>
        env.emit(() => ToolEvent.Progress({ toolUseId: toolUse.id, progress, at: env.clock.unsafeCurrentTimeMillis() }))
      ),
    isReadDenied: env.policy.deniesRead
  }
  const stage: Stage = { env, prepared, context }
  const base = (additionalContext: ReadonlyArray<string> = []): Finish => ({
    toolUse,
    toolName: name,
    receivedAt: prepared.receivedAt,
    ...trace,
    additionalContext
  })
  const defect = (cause: Cause.Cause<unknown>): Effect.Effect<Outcome> =>
    Effect.zipRight(
      logDefect(env, toolUse.id, cause),
      failed(env, base(), new Errors.Defect({ tool: name, cause, ran: trace.startedAt !== undefined }))
    )
  /** A stage that interrupted itself (not the run: that never reaches here) still gets its Outcome. */
  const selfInterrupted = (): Effect.Effect<Outcome> =>
    failed(env, base(), new Errors.Interrupted({ tool: name, started: trace.startedAt !== undefined }))
  // -- gate: validate -> PreToolUse hooks -> permission, planning again whenever the input changes ---------------
  const gate = () => {
    const validation = onExit(
      prepared.invocation.validate(context),
      (exit): Effect.Effect<AnyInvocation, Errors.ValidationFailed> => {
        if (Exit.isSuccess(exit)) return Exit.succeed(replan(prepared, prepared.invocation, exit.value))
        return exit.cause._tag === "Fail"
          ? Exit.fail(rejected(name, exit.cause.error))
          : Exit.failCause(exit.cause as Cause.Cause<never>)
      }
    )
    return andThen(
      validation,
      (validated) =>
        andThen(
          env.hooks.preToolUse({ toolUseId: toolUse.id, toolName: name, input: validated.input }),
          (pre) =>
            andThen(
              pre.stopRun === true
                ? Effect.zipRight(notify(env, toolUse.id, pre.notices), env.cancelRun)
                : notify(env, toolUse.id, pre.notices),
              () =>
                andThen(
                  pre.updatedInput === undefined ? Exit.succeed(validated) : redecode(stage, pre.updatedInput),
                  (hooked) =>
                    andThen(
                      authorise(stage, hooked, pre.opinion),
                      (authorised) => Exit.succeed({ ...authorised, additionalContext: pre.additionalContext })
                    )
                )
            )
        )
    )
  }

  // -- after the gate: the decision, readmission when the executed input claims more, then execution ------------
  const afterGate = (
    passed: Authorised & { readonly additionalContext: ReadonlyArray<string> }
  ): Effect.Effect<Outcome | Parked> => {
    const { additionalContext, decision, invocation } = passed
    if (invocation !== prepared.invocation) trace.ui = safeUi(() => invocation.renderUse(), name)
    trace.executedInput = invocation.input
    trace.decision = decision
    return andThen(
      env.emit(() => ToolEvent.Decided({ toolUseId: toolUse.id, decision, at: env.clock.unsafeCurrentTimeMillis() })),
      (): Effect.Effect<Outcome | Parked> => {
        if (decision._tag === "Deny") {
          return failed(
            env,
            base(additionalContext),
            new Errors.PermissionDenied({ tool: name, reason: deniedText(decision) })
          )
        }
        return proceed(invocation, additionalContext)
      }
    )
  }

  // -- admission: execute now, or park until the scheduler lets the call go on ----------------------------------
  const proceed = (
    invocation: AnyInvocation,
    additionalContext: ReadonlyArray<string>
  ): Effect.Effect<Outcome | Parked> => {
    if (!admission.admit(invocation)) return execute(invocation, additionalContext)
    const parked: Parked = {
      _tag: "Parked",
      resume: traced(env, prepared, Effect.suspend(() => guardedProceed(invocation, additionalContext)))
    }
    return Exit.succeed(parked)
  }
  const guardedProceed = (
    invocation: AnyInvocation,
    additionalContext: ReadonlyArray<string>
  ): Effect.Effect<Outcome | Parked> => {
    let effect: Effect.Effect<Outcome | Parked>
    try {
      effect = proceed(invocation, additionalContext)
    } catch (thrown) {
      return defect(Cause.die(thrown))
    }
    return Exit.isExit(effect)
      ? effect
      : Effect.catchAllCause(effect, (cause) => (Cause.isInterruptedOnly(cause) ? selfInterrupted() : defect(cause)))
  }

  // -- execute: call -> PostToolUse hooks -> budget -> present --------------------------------------------------
  const execute = (invocation: AnyInvocation, additionalContext: ReadonlyArray<string>): Effect.Effect<Outcome> => {
    const input = invocation.input
    const startedAt = env.clock.unsafeCurrentTimeMillis()
    trace.startedAt = startedAt
    return andThen(
      env.emit(() =>
        ToolEvent.Started({
          toolUseId: toolUse.id,
          toolName: name,
          ui: trace.ui,
          activity: activityText(invocation, name),
          at: startedAt
        })
      ),
      () =>
        onExit(callWithTimeout(invocation), (ran) => {
          if (Exit.isFailure(ran)) {
            return ran.cause._tag === "Fail"
              ? failed(env, base(additionalContext), ran.cause.error)
              : defect(ran.cause)
          }
          const exit = ran.value
          if (Exit.isSuccess(exit)) return succeeded(env, base(), prepared, invocation, exit.value, additionalContext)
          return andThen(
            callError(env, toolUse.id, name, exit.cause, invocation.renderFailure),
            (error) =>
              andThen(
                env.hooks.postToolUse({
                  toolUseId: toolUse.id,
                  toolName: name,
                  input,
                  response: Errors.modelText(error),
                  failed: true
                }),
                (post) =>
                  andThen(
                    notify(env, toolUse.id, post.notices),
                    () => failed(env, base([...additionalContext, ...post.additionalContext]), error)
                  )
              )
          )
        })
    )
  }

  /** The call itself: its Exit, or TimedOut. A call that is already an Exit ran synchronously and needs no scope or timer. */
  const callWithTimeout = (invocation: AnyInvocation): Effect.Effect<Exit.Exit<unknown, unknown>, Errors.TimedOut> => {
    const call = invocation.call(trace.decision === undefined ? context : { ...context, decision: trace.decision })
    if (Exit.isExit(call)) return Exit.succeed(call)
    const timeout = prepared.timeout ?? env.settings.timeout ?? tool.definition.timeout
    const scoped = Effect.exit(scopedCall(call))
    // A timer costs a fiber; tools without a finite timeout (the default) do not pay for one.
    if (!Duration.isFinite(timeout)) return scoped
    return Effect.flatMap(
      Effect.timeoutOption(scoped, timeout),
      (ran) => Option.isSome(ran) ? Exit.succeed(ran.value) : Exit.fail(new Errors.TimedOut({ tool: name, timeout }))
    )
  }

  let flow: Effect.Effect<Outcome | Parked>
  try {
    flow = onExit(gate(), (passed) => {
      if (Exit.isSuccess(passed)) return afterGate(passed.value)
      const cause = passed.cause
      if (cause._tag === "Fail") return failed(env, base(), cause.error as Errors.ToolCallError)
      return Cause.isInterruptedOnly(cause) ? selfInterrupted() : defect(cause)
    })
  } catch (thrown) {
    // A stage that throws instead of failing (a tool's validate, renderer or checkPermissions) is a defect, not a crash.
    return defect(Cause.die(thrown))
  }
  // A defect anywhere in the stages that do run through the runtime still yields an Outcome.
  return Exit.isExit(flow)
    ? flow
    : Effect.catchAllCause(flow, (cause) => (Cause.isInterruptedOnly(cause) ? selfInterrupted() : defect(cause)))
}

const deniedText = (decision: Extract<Decision, { _tag: "Deny" }>): string => {
  const reason = describeReason(decision.reason)
  return decision.reason._tag === "User" || decision.reason._tag === "Tool" || decision.reason._tag === "Hook"
    ? decision.message
    : reason
}

/** A tool's activity line; a renderer that throws shows the name alone. */
const activityText = (invocation: AnyInvocation, name: string): string => {
  try {
    return invocation.activity()
  } catch {
    return name
  }
}

const safeUi = (render: () => ReadonlyArray<UiBlock>, name: string): ReadonlyArray<UiBlock> => {
  try {
    return render()
  } catch {
    return [UiBlock.Title({ text: name })]
  }
}

const logDefect = (env: PipelineEnv, toolUseId: string, cause: Cause.Cause<unknown>) =>
  Effect.zipRight(
    Effect.suspend(() =>
      env.emit(() => ToolEvent.DefectLogged({ toolUseId, cause, at: env.clock.unsafeCurrentTimeMillis() }))
    ),
    Effect.logError(`tool_use ${toolUseId} died`, cause)
  )

const callError = (
  env: PipelineEnv,
  toolUseId: string,
  tool: string,
  cause: Cause.Cause<unknown>,
  render: (failure: unknown) => string
): Effect.Effect<Errors.ToolCallError> =>
  Option.match(Cause.failureOption(cause), {
    onSome: (failure) => Effect.sync(() => new Errors.ToolFailed({ tool, failure, message: render(failure) })),
    onNone: () =>
      Cause.isInterruptedOnly(cause)
        // The tool interrupted itself (not the run): it started, and stopped.
        ? Effect.succeed(new Errors.Interrupted({ tool, started: true }))
        : Effect.as(logDefect(env, toolUseId, cause), new Errors.Defect({ tool, cause, ran: true }))
  })

const succeeded = (
  env: PipelineEnv,
  finish: Finish,
  prepared: Prepared,
  invocation: AnyInvocation,
  output: unknown,
  additionalContext: ReadonlyArray<string>
): Effect.Effect<Outcome> => {
  const { definition } = prepared.tool
  const input = invocation.input
  const limit = definition.maxResultChars === Infinity
    ? Infinity
    : Math.min(definition.maxResultChars, env.settings.maxResultChars)
  return andThen(
    applyBudget(env.store, prepared.toolUse.id, invocation.toModel(output), limit, env.settings.previewChars),
    (budgeted) =>
      andThen(
        env.hooks.postToolUse({
          toolUseId: prepared.toolUse.id,
          toolName: definition.name,
          input,
          response: budgeted.content,
          failed: false
        }),
        (post) =>
          andThen(notify(env, prepared.toolUse.id, post.notices), () => {
            const context = [...additionalContext, ...post.additionalContext]
            const ui = [...finish.ui, ...invocation.renderResult(output)]
            const outcome: Outcome = {
              toolUseId: prepared.toolUse.id,
              requestedName: prepared.toolUse.name,
              toolName: definition.name,
              status: "success",
              result: toolResult(prepared.toolUse.id, withContext(budgeted.content, context), false),
              ui,
              audit: toText(ui),
              output,
              originalInput: prepared.toolUse.input,
              executedInput: input,
              ...(finish.decision === undefined ? {} : { decision: finish.decision }),
              additionalContext: context,
              ...(budgeted.persistedPath === undefined ? {} : { persistedPath: budgeted.persistedPath }),
              timings: timings(finish.receivedAt, finish.startedAt, env.clock.unsafeCurrentTimeMillis())
            }
            return complete(env, outcome)
          })
      )
  )
}
