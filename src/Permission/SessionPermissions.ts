/**
 * The permission state a {@link Session} keeps: the rules a person allowed "for this session" (restored from the
 * session and saved with it) and the approvals given. These wrap the {@link PermissionPolicy} and the
 * {@link Approver}; the Session itself knows nothing of permissions, it only keeps named pieces of state.
 *
 * ```ts
 * const policy = SessionPermissions.policy({ settings, mode: "acceptEdits" })
 * const approver = SessionPermissions.approvals(TerminalApprover.layer())
 * ```
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Session } from "../Session/Session.js"
import { SessionError } from "../Session/Session.js"
import { parseRule } from "../Tool/Rule.js"
import type { RuleParseError } from "../Tool/Rule.js"
import { ApprovalAnswer, Approver } from "./Approver.js"
import { PermissionPolicy } from "./PermissionPolicy.js"
import * as RulePolicy from "./RulePolicy.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * One approval a person gave, as the session remembers it.
 *
 * @since 0.2.0
 * @category models
 */
export const ApprovalRecord = Schema.Struct({
  toolUseId: Schema.String,
  toolName: Schema.String,
  answer: Schema.Literal("AllowOnce", "AllowSession", "AllowAlways", "AllowAuto", "Deny", "Edit"),
  rules: Schema.Array(Schema.String),
  at: Schema.Number
})
/**
 * @since 0.2.0
 * @category models
 */
export type ApprovalRecord = typeof ApprovalRecord.Type

// -----------------------------------------------------------------------------
// layers
// -----------------------------------------------------------------------------

/**
 * The full permission policy ({@link RulePolicy.layer}) whose session rules (an "allow for this session"
 * answer) are restored from the session and saved with it, and whose plan mode lasts with the session: after
 * EnterPlanMode the next process starts in plan mode whatever mode it is given; after a person approved
 * ExitPlanMode, a process given `plan` starts in `default`. Nothing more permissive than `default` ever comes from
 * the session: another mode is always the configuration's.
 *
 * @since 0.3.0
 * @category layers
 */
export const policy = (
  options: RulePolicy.RulePolicyOptions = {}
): Layer.Layer<
  PermissionPolicy,
  RuleParseError | SessionError,
  Session | Effect.Effect.Context<ReturnType<typeof RulePolicy.make>>
> => Layer.effect(PermissionPolicy, makePolicy(options))

/**
 * The policy {@link policy} provides, as an Effect: for a program that builds its services in one Layer (each
 * Layer costs a cold start its own construction; see the CLI's `servicesLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const makePolicy = (
  options: RulePolicy.RulePolicyOptions = {}
): Effect.Effect<
  PermissionPolicy["Type"],
  RuleParseError | SessionError,
  Session | Effect.Effect.Context<ReturnType<typeof RulePolicy.make>>
> =>
  Effect.gen(function*() {
    const session = yield* Session
    const restored = Option.getOrElse(yield* session.restore(SESSION_RULES, Rules), (): ReadonlyArray<string> => [])
    // A stored rule that does not parse is the state file's problem: name it.
    for (const rule of restored) {
      const parsed = parseRule(rule)
      if (Either.isLeft(parsed)) {
        return yield* new SessionError({
          file: session.stateFile,
          detail: `is damaged (session rule ${JSON.stringify(rule)}: ${parsed.left.reason}); remove the rule from ` +
            `"${SESSION_RULES}" or move the file away to start afresh`,
          cause: parsed.left
        })
      }
    }
    const kept = yield* Ref.make<ReadonlyArray<string>>(restored.slice(-session.limits.sessionRules))
    const policy = yield* RulePolicy.make({
      ...options,
      sessionRules: { ...options.sessionRules, allow: [...(options.sessionRules?.allow ?? []), ...restored] }
    })
    yield* session.track(SESSION_RULES, Rules, Ref.get(kept))
    const mode = policy.mode
    if (mode !== undefined) {
      // What the plan-mode tools did last in this session: entered plan mode, or left it with a person's approval.
      let planMode = Option.flatten(yield* session.restore(PLAN_MODE, PlanModeState))
      const configured = yield* mode.get
      if (Option.isSome(planMode)) {
        if (planMode.value === "entered") yield* mode.set("plan")
        else if (configured === "plan") yield* mode.set("default")
      }
      yield* session.track(PLAN_MODE, PlanModeState, Effect.sync(() => planMode))
      return PermissionPolicy.of({
        ...policy,
        remember,
        mode: {
          get: mode.get,
          set: (next) =>
            Effect.flatMap(mode.get, (previous) =>
              Effect.zipRight(
                mode.set(next),
                Effect.sync(() => {
                  if (next === "plan") planMode = Option.some("entered")
                  else if (previous === "plan") planMode = Option.some("left")
                })
              ))
        }
      })
    }
    return PermissionPolicy.of({ ...policy, remember })

    function remember(rules: ReadonlyArray<string>, scope: "session" | "always") {
      return Effect.tap(
        policy.remember(rules, scope),
        () =>
          scope === "session"
            ? Effect.flatMap(
              Ref.modify(kept, (all) => {
                const next = [...all, ...rules.filter((rule) => !all.includes(rule))]
                const dropped = next.slice(0, Math.max(0, next.length - session.limits.sessionRules))
                return [dropped, next.slice(dropped.length)]
              }),
              (dropped) =>
                dropped.length === 0 ? Effect.void : Effect.logWarning(
                  `session ${session.directory}: more than ${session.limits.sessionRules} session rules; ` +
                    `the oldest (${dropped.join(", ")}) will not be kept by the next run`
                )
            )
            : Effect.void
      )
    }
  })

/**
 * Wraps an Approver so every answer is remembered in the session (the last `maxApprovals` of the session, default
 * 1,000, the oldest dropped with a warning in the log; see {@link ApprovalRecord}).
 *
 * @since 0.3.0
 * @category layers
 */
export const approvals = <E, R>(
  approver: Layer.Layer<Approver, E, R>
): Layer.Layer<Approver, E | SessionError, R | Session> =>
  Layer.effect(Approver, Effect.flatMap(Approver, makeApprovals)).pipe(Layer.provide(approver))

/**
 * What {@link approvals} provides, as an Effect over the Approver it wraps (see {@link makePolicy}).
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeApprovals = (inner: Approver["Type"]): Effect.Effect<Approver["Type"], SessionError, Session> =>
  Effect.gen(function*() {
    const session = yield* Session
    const max = session.limits.approvals
    const log = yield* Session.ref(APPROVALS, Schema.Array(ApprovalRecord), (): ReadonlyArray<ApprovalRecord> => [])
    yield* Ref.update(log, (all) => all.slice(-max))
    let warned = false
    return Approver.of({
      // Questions (AskUserQuestion) pass through: they are not approvals.
      answer: inner.answer,
      ask: (request) =>
        Effect.tap(inner.ask(request), (answer) =>
          Effect.clockWith((clock) =>
            Effect.flatMap(
              Ref.modify(log, (all) => {
                const next = [...all, {
                  toolUseId: request.toolUseId,
                  toolName: request.toolName,
                  answer: answer._tag,
                  rules: ApprovalAnswer.$is("AllowSession")(answer) || ApprovalAnswer.$is("AllowAlways")(answer)
                    ? answer.rules
                    : [],
                  at: clock.unsafeCurrentTimeMillis()
                }]
                return [next.length > max, next.slice(-max)]
              }),
              (dropped) => {
                if (!dropped || warned) return Effect.void
                warned = true
                return Effect.logWarning(
                  `session ${session.directory}: more than ${max} approvals; the oldest are dropped from the record`
                )
              }
            )
          ))
    })
  })

const SESSION_RULES = "sessionRules"
const PLAN_MODE = "planMode"
const PlanModeState = Schema.OptionFromNullOr(Schema.Literal("entered", "left"))
const APPROVALS = "approvals"
const Rules = Schema.Array(Schema.String)
