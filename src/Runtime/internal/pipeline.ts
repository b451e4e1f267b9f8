/**
 * One call, from tool_use to Outcome. Split in two so the scheduler can sit between them:
 *
 * - {@link prepare}: lookup (name or alias) and decode. Pure and fast; gives the traits and claims the scheduler
 *   needs, or an Outcome straight away when the call cannot run.
 * - {@link run}: validate -> PreToolUse hooks -> permission (policy, tool, hooks, approver) -> call (scoped, with
 *   timeout, cancellable) -> PostToolUse hooks -> present -> Outcome.
 *
 * Neither ever fails: every failure becomes an Outcome.
 */
import * as Cause from "effect/Cause"
import type * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as FiberRef from "effect/FiberRef"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import type * as Schema from "effect/Schema"
import * as Scope from "effect/Scope"
import * as Errors from "../../Tool/Errors.js"
import { inputIssues } from "../../Tool/internal/inputIssues.js"
import type { Outcome, Status } from "../../Tool/Outcome.js"
import { Decision, DecisionReason, describeReason } from "../../Tool/Permission.js"
import { UiBlock, toText } from "../../Tool/Presentation.js"
import type { CallContext, Claim, Traits } from "../../Tool/Tool.js"
import { toolResult } from "../../Tool/Wire.js"
import type { ToolResultContent, ToolUseBlock } from "../../Tool/Wire.js"
import type { Approver } from "../Approver.js"
import { ApprovalAnswer } from "../Approver.js"
import { ToolEvent } from "../Events.js"
import type { HookOpinion, PermissionPolicy } from "../PermissionPolicy.js"
import type { ResultStore } from "../ResultStore.js"
import type { RuntimeSettings } from "../RuntimeConfig.js"
import type { ToolHooks } from "../ToolHooks.js"
import type { RegisteredTool, ToolRegistry } from "../ToolRegistry.js"
import { applyBudget } from "./budget.js"

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
}

/** A call that resolved to a tool and decoded: ready to be scheduled. */
export interface Prepared {
  readonly toolUse: ToolUseBlock
  readonly tool: RegisteredTool
  readonly input: unknown
  readonly traits: Traits
  readonly claims: ReadonlyArray<Claim>
  readonly receivedAt: number
  /** A per-call timeout overriding the tool's default. */
  readonly timeout: Duration.Duration | undefined
}

/**
 * Continues with `f` once `effect` has an Exit. An effect that is already an Exit (what `Effect.succeed` and
 * `Effect.fail` build) is continued synchronously, without the runtime: a trivial call's stages are all like that,
 * and skipping the run loop for them is most of the pipeline's speed.
 */
export const andThen = <A, E, B, E2>(effect: Effect.Effect<A, E>, f: (value: A) => Effect.Effect<B, E2>): Effect.Effect<B, E | E2> => {
  if (!Exit.isExit(effect)) return Effect.flatMap(effect, f)
  const exit = effect as Exit.Exit<A, E>
  return Exit.isSuccess(exit) ? f(exit.value) : (exit as Exit.Exit<never, E>)
}

/** Like {@link andThen}, handing over the whole Exit. */
const onExit = <A, E, B, E2>(effect: Effect.Effect<A, E>, f: (exit: Exit.Exit<A, E>) => Effect.Effect<B, E2>): Effect.Effect<B, E2> =>
  Exit.isExit(effect) ? f(effect as Exit.Exit<A, E>) : Effect.flatMap(Effect.exit(effect), f)

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
  return Either.mapLeft(decode(raw), (issue) => new Errors.InvalidInput({ tool: tool.definition.name, issues: inputIssues(raw, issue) }))
}

const statusOf = (error: Errors.ToolCallError): Status => {
  switch (error._tag) {
    case "effect-tool-runtime/PermissionDenied":
      return "denied"
    case "effect-tool-runtime/Interrupted":
      return "interrupted"
    case "effect-tool-runtime/TimedOut":
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
    : Effect.forEach(notices, (message) => env.emit(() => ToolEvent.Notice({ toolUseId, message, at: env.clock.unsafeCurrentTimeMillis() })), { discard: true })

/**
 * Every Outcome ends here. A tool that streamed its output to the store (Bash) fits its own budget, so only the store
 * knows it saved something: the Outcome names that file too, whatever the status (taken, so a later call with the
 * same id does not inherit it).
 */
const complete = (env: PipelineEnv, outcome: Outcome): Effect.Effect<Outcome> =>
  andThen(env.store.saved(outcome.toolUseId), (saved) => {
    const named = saved === undefined || outcome.persistedPath !== undefined ? outcome : { ...outcome, persistedPath: saved }
    return andThen(env.emit(() => ToolEvent.Completed({ outcome: named, at: named.timings.endedAt })), () => Exit.succeed(named))
  })

/** The Outcome of a call that failed at any stage. */
export const failed = (env: PipelineEnv, finish: Finish, error: Errors.ToolCallError): Effect.Effect<Outcome> =>
{
    const endedAt = env.clock.unsafeCurrentTimeMillis()
    const additional = finish.additionalContext ?? []
    const text = Errors.modelText(error)
    const ui = [...finish.ui, UiBlock.Notice({ level: error._tag === "effect-tool-runtime/Interrupted" ? "warning" : "error", text: error.message })]
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
 * Lookup and decode. Returns the prepared call, or the Outcome of a call that cannot run (unknown tool, invalid
 * input, or a defect in the tool's traits or claims).
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
      failed(env, finish, new Errors.UnknownTool({ name: toolUse.name, suggestions: env.registry.suggest(toolUse.name) })),
      Either.left
    )
  }
  const named = { ...finish, toolName: tool.value.definition.name }
  try {
    // Inside the try: a schema's own filter or transform may throw, and so may a tool's traits or claims.
    const decoded = decodeInput(tool.value, toolUse.input)
    if (Either.isLeft(decoded)) return Effect.map(failed(env, named, decoded.left), Either.left)
    const input = decoded.right
    const traits = tool.value.service.traits(input)
    const claims = tool.value.service.claims(input)
    return Effect.succeed(Either.right({ toolUse, tool: tool.value, input, traits, claims, receivedAt, timeout }))
  } catch (thrown) {
    const cause = Cause.die(thrown)
    return Effect.zipRight(
      logDefect(env, toolUse.id, cause),
      Effect.map(failed(env, named, new Errors.Defect({ tool: tool.value.definition.name, cause, ran: false })), Either.left)
    )
  }
}

/** What the model-facing stages need to know about one prepared call. */
interface Stage {
  readonly env: PipelineEnv
  readonly prepared: Prepared
  readonly context: CallContext
}

const rejected = (tool: string, error: { readonly message: string }) => new Errors.ValidationFailed({ tool, message: error.message })

/** Decode a rewritten input (from a hook or a person) and validate it again. */
const redecode = ({ context, prepared }: Stage, raw: unknown): Effect.Effect<unknown, Errors.InvalidInput | Errors.ValidationFailed> =>
  Either.match(decodeInput(prepared.tool, raw), {
    onLeft: (error) => Effect.fail(error),
    onRight: (input) => Effect.mapError(prepared.tool.service.validate(input, context), (e) => rejected(prepared.tool.definition.name, e))
  })

/** What the permission stage settles on: the decision and the input to run. */
interface Authorised {
  readonly decision: Decision
  readonly input: unknown
}

/** The permission stage: the tool's own check, then the policy's verdict, then the approver when it asks. */
const authorise = (stage: Stage, input: unknown, hook: HookOpinion | undefined): Effect.Effect<Authorised, Errors.InvalidInput | Errors.ValidationFailed> => {
  const { context, env, prepared } = stage
  const { definition, service } = prepared.tool
  return andThen(service.checkPermissions(input, context), (toolCheck) =>
    andThen(env.policy.evaluate({ definition, service, input, traits: input === prepared.input ? prepared.traits : service.traits(input), toolCheck, hook, context }), (verdict) => {
      switch (verdict._tag) {
        case "Allow":
          return Exit.succeed({ decision: Decision.Allow({ reason: verdict.reason }), input: verdict.updatedInput ?? input })
        case "Deny":
          return Exit.succeed({ decision: Decision.Deny({ reason: verdict.reason, message: verdict.message }), input })
        case "Ask":
          return askPerson(stage, input, verdict.message, verdict.suggestions)
      }
    }))
}

/** Puts an Ask to the approver (one question at a time) and turns the answer into a decision. */
const askPerson = (stage: Stage, input: unknown, message: string, suggestions: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { env, prepared } = stage
    const { definition, service } = prepared.tool
    const request = { toolUseId: prepared.toolUse.id, toolName: definition.name, input, ui: service.renderUse(input), message, suggestions }
    const answer = yield* env.withApprovalLock(
      Effect.gen(function*() {
        yield* env.emit(() => ToolEvent.PermissionRequested({ toolUseId: request.toolUseId, request, at: env.clock.unsafeCurrentTimeMillis() }))
        const answer = yield* env.approver.ask(request)
        yield* env.emit(() => ToolEvent.PermissionAnswered({ toolUseId: request.toolUseId, answer, at: env.clock.unsafeCurrentTimeMillis() }))
        return answer
      })
    )
    return yield* ApprovalAnswer.$match(answer, {
      AllowOnce: () => Effect.succeed<Authorised>({ decision: Decision.Allow({ reason: DecisionReason.User({ scope: "once" }) }), input }),
      AllowSession: ({ rules }) =>
        Effect.as(env.policy.remember(rules, "session").pipe(Effect.ignoreLogged), {
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "session" }) }),
          input
        }),
      AllowAlways: ({ rules }) =>
        Effect.as(env.policy.remember(rules, "always").pipe(Effect.ignoreLogged), {
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "always" }) }),
          input
        }),
      Deny: ({ cancelRun, message: text = "The user doesn't want to proceed with this tool use." }) =>
        Effect.as(cancelRun ? env.cancelRun : Effect.void, {
          decision: Decision.Deny({ reason: DecisionReason.User({ scope: "once", message: text }), message: text }),
          input
        }),
      Edit: (edit) =>
        Effect.map(redecode(stage, edit.input), (edited) => ({
          decision: Decision.Allow({ reason: DecisionReason.User({ scope: "once", message: "edited the input" }) }),
          input: edited
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
  ui: safeUi(() => prepared.tool.service.renderUse(prepared.input), prepared.tool.definition.name)
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
        Effect.zipRight(FiberRef.set(FiberRef.currentContext, Context.add(context, Scope.Scope, scope)), call as Effect.Effect<A, E>),
        (exit) => Effect.zipRight(FiberRef.set(FiberRef.currentContext, context), Scope.close(scope, exit))
      )))

/**
 * Everything after scheduling. Never fails. Interruption (a cancelled run, or the caller's fiber) interrupts the call
 * and closes its scope; the interrupter reports it from the {@link Trace}.
 */
export const run = (env: PipelineEnv, prepared: Prepared, trace: Trace = traceOf(prepared)): Effect.Effect<Outcome> => {
  const { toolUse, tool } = prepared
  const { service } = tool
  const name = tool.definition.name
  const context: CallContext = {
    toolUseId: toolUse.id,
    toolName: name,
    progress: (progress) => Effect.suspend(() => env.emit(() => ToolEvent.Progress({ toolUseId: toolUse.id, progress, at: env.clock.unsafeCurrentTimeMillis() }))),
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
    Effect.zipRight(logDefect(env, toolUse.id, cause), failed(env, base(), new Errors.Defect({ tool: name, cause, ran: trace.startedAt !== undefined })))
  /** A stage that interrupted itself (not the run: that never reaches here) still gets its Outcome. */
  const selfInterrupted = (): Effect.Effect<Outcome> =>
    failed(env, base(), new Errors.Interrupted({ tool: name, started: trace.startedAt !== undefined }))

  const afterGate = (passed: Authorised & { readonly additionalContext: ReadonlyArray<string> }): Effect.Effect<Outcome> => {
    const { additionalContext, decision, input } = passed
    if (input !== prepared.input) trace.ui = safeUi(() => service.renderUse(input), name)
    trace.executedInput = input
    trace.decision = decision
    return andThen(env.emit(() => ToolEvent.Decided({ toolUseId: toolUse.id, decision, at: env.clock.unsafeCurrentTimeMillis() })), () => {
      if (decision._tag === "Deny") {
        return failed(env, base(additionalContext), new Errors.PermissionDenied({ tool: name, reason: deniedText(decision) }))
      }
      const startedAt = env.clock.unsafeCurrentTimeMillis()
      trace.startedAt = startedAt
      return andThen(env.emit(() => ToolEvent.Started({ toolUseId: toolUse.id, toolName: name, ui: trace.ui, at: startedAt })), () =>
        onExit(execute(input), (ran) => {
          if (Exit.isFailure(ran)) return ran.cause._tag === "Fail" ? failed(env, base(additionalContext), ran.cause.error) : defect(ran.cause)
          const exit = ran.value
          if (Exit.isSuccess(exit)) return succeeded(env, base(), prepared, input, exit.value, additionalContext)
          return andThen(callError(env, toolUse.id, name, exit.cause, (failure) => service.renderFailure(failure, input)), (error) =>
            andThen(env.hooks.postToolUse({ toolUseId: toolUse.id, toolName: name, input, response: Errors.modelText(error), failed: true }), (post) =>
              andThen(notify(env, toolUse.id, post.notices), () => failed(env, base([...additionalContext, ...post.additionalContext]), error))))
        }))
    })
  }

  /** The call itself: its Exit, or TimedOut. A call that is already an Exit ran synchronously and needs no scope or timer. */
  const execute = (input: unknown): Effect.Effect<Exit.Exit<unknown, unknown>, Errors.TimedOut> => {
    const call = service.call(input, context)
    if (Exit.isExit(call)) return Exit.succeed(call)
    const timeout = prepared.timeout ?? env.settings.timeout ?? tool.definition.timeout
    const scoped = Effect.exit(scopedCall(call))
    // A timer costs a fiber; tools without a finite timeout (the default) do not pay for one.
    if (!Duration.isFinite(timeout)) return scoped
    return Effect.flatMap(Effect.timeoutOption(scoped, timeout), (ran) =>
      Option.isSome(ran) ? Exit.succeed(ran.value) : Exit.fail(new Errors.TimedOut({ tool: name, timeout })))
  }

  /** validate -> PreToolUse hooks (and re-decoding their rewrite) -> permission. Built inside the try below. */
  const gate = () => {
    const validation = onExit(service.validate(prepared.input, context), (exit): Effect.Effect<unknown, Errors.ValidationFailed> => {
      if (Exit.isSuccess(exit)) return Exit.succeed(exit.value)
      return exit.cause._tag === "Fail" ? Exit.fail(rejected(name, exit.cause.error)) : Exit.failCause(exit.cause as Cause.Cause<never>)
    })
    return andThen(
      validation,
      (validated) =>
        andThen(env.hooks.preToolUse({ toolUseId: toolUse.id, toolName: name, input: validated }), (pre) =>
          andThen(pre.stopRun === true ? Effect.zipRight(notify(env, toolUse.id, pre.notices), env.cancelRun) : notify(env, toolUse.id, pre.notices), () =>
            andThen(pre.updatedInput === undefined ? Exit.succeed(validated) : redecode(stage, pre.updatedInput), (hooked) =>
              andThen(authorise(stage, hooked, pre.opinion), (authorised) => Exit.succeed({ ...authorised, additionalContext: pre.additionalContext })))))
    )
  }

  let flow: Effect.Effect<Outcome>
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

const safeUi = (render: () => ReadonlyArray<UiBlock>, name: string): ReadonlyArray<UiBlock> => {
  try {
    return render()
  } catch {
    return [UiBlock.Title({ text: name })]
  }
}

const logDefect = (env: PipelineEnv, toolUseId: string, cause: Cause.Cause<unknown>) =>
  Effect.zipRight(
    Effect.suspend(() => env.emit(() => ToolEvent.DefectLogged({ toolUseId, cause, at: env.clock.unsafeCurrentTimeMillis() }))),
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
  input: unknown,
  output: unknown,
  additionalContext: ReadonlyArray<string>
): Effect.Effect<Outcome> => {
  const { definition, service } = prepared.tool
  const limit = definition.maxResultChars === Infinity ? Infinity : Math.min(definition.maxResultChars, env.settings.maxResultChars)
  return andThen(applyBudget(env.store, prepared.toolUse.id, service.toModel(output, input), limit, env.settings.previewChars), (budgeted) =>
    andThen(
      env.hooks.postToolUse({ toolUseId: prepared.toolUse.id, toolName: definition.name, input, response: budgeted.content, failed: false }),
      (post) => andThen(notify(env, prepared.toolUse.id, post.notices), () => {
        const context = [...additionalContext, ...post.additionalContext]
        const ui = [...finish.ui, ...service.renderResult(output, input)]
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
    ))
}
