/**
 * What is scheduled is what runs: a call whose input a hook or a person rewrites is planned again, and when it now
 * claims more it waits again for the calls it conflicts with.
 */
import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, FastCheck as fc, Fiber, Layer, Ref, Schema, TestClock } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { noPostToolUse, noPreToolUse, ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { ApprovalAnswer, Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import type { ToolUseBlock } from "../../src/Tool/Wire.js"

// -- the reference model, in plain words -------------------------------------------------------------------------

type PlainClaim = { readonly resource: string; readonly access: "read" | "write" }
const isInside = (a: string, b: string) => a === b || a.startsWith(b.endsWith("/") ? b : `${b}/`)
const conflicts = (a: ReadonlyArray<PlainClaim>, b: ReadonlyArray<PlainClaim>) =>
  a.some((x) => x.resource === "*") || b.some((y) => y.resource === "*") ||
  a.some((x) =>
    b.some((y) =>
      (x.access === "write" || y.access === "write") &&
      (isInside(x.resource, y.resource) || isInside(y.resource, x.resource))
    )
  )

// -- a probe tool: claims and duration from its input; asks when told to ------------------------------------------

const ClaimSchema = Schema.Struct({ resource: Schema.String, access: Schema.Literal("read", "write") })
const ProbeInput = Schema.Struct({
  label: Schema.String,
  durationMs: Schema.Number,
  claims: Schema.Array(ClaimSchema),
  ask: Schema.Boolean
})
type ProbeInput = typeof ProbeInput.Type

const Probe = Tool.make("Probe", {
  description: "test",
  input: ProbeInput,
  output: Schema.String,
  touchesEnvironment: false
})

interface Ran {
  readonly label: string
  readonly claims: ReadonlyArray<PlainClaim>
  readonly start: number
  end: number | undefined
}

const probeLayer = (log: Ref.Ref<ReadonlyArray<Ran>>) =>
  Probe.implement({
    traits: () => ({ concurrencySafe: true }),
    claims: (input) => input.claims,
    checkPermissions: (input) =>
      Effect.succeed(input.ask ? PermissionCheck.ask("a person decides") : PermissionCheck.passthrough()),
    call: (input) =>
      Effect.gen(function*() {
        const entry: Ran = {
          label: input.label,
          claims: input.claims,
          start: yield* Clock.currentTimeMillis,
          end: undefined
        }
        yield* Ref.update(log, (all) => [...all, entry])
        yield* Effect.addFinalizer(() => Effect.map(Clock.currentTimeMillis, (now) => void (entry.end = now)))
        yield* Effect.sleep(input.durationMs)
        return input.label
      })
  })

/** A hook that rewrites the inputs named in `rewrites` (by tool_use id) into the given claims. */
const rewritingHooks = (rewrites: ReadonlyMap<string, ReadonlyArray<PlainClaim>>) =>
  Layer.succeed(ToolHooks, {
    preToolUse: (event) => {
      const claims = rewrites.get(event.toolUseId)
      return Effect.succeed(
        claims === undefined
          ? noPreToolUse
          : { ...noPreToolUse, updatedInput: { ...(event.input as ProbeInput), claims } }
      )
    },
    postToolUse: () => Effect.succeed(noPostToolUse)
  })

/** An approver that edits the inputs named in `edits` into the given claims, and allows the rest. */
const editingApprover = (edits: ReadonlyMap<string, ReadonlyArray<PlainClaim>>) =>
  Approver.scripted((request) => {
    const claims = edits.get(request.toolUseId)
    return Effect.succeed(
      claims === undefined
        ? ApprovalAnswer.AllowOnce()
        : ApprovalAnswer.Edit({ input: { ...(request.input as ProbeInput), claims } })
    )
  })

const runtimeFor = (log: Ref.Ref<ReadonlyArray<Ran>>, hooks: Layer.Layer<ToolHooks>, approver: Layer.Layer<Approver>) =>
  ToolRuntime.layer.pipe(
    Layer.provide(Layer.provide(ToolRegistry.layer([Probe]), probeLayer(log))),
    Layer.provide([PermissionPolicy.toolOnly, approver, hooks, ResultStore.layerMemory()])
  )

const use = (id: string, durationMs: number, claims: ReadonlyArray<PlainClaim>, ask = false): ToolUseBlock => ({
  type: "tool_use",
  id,
  name: "Probe",
  input: { label: id, durationMs, claims, ask }
})

const read = (resource: string): PlainClaim => ({ resource, access: "read" })
const write = (resource: string): PlainClaim => ({ resource, access: "write" })

const runTurn = (
  turn: ReadonlyArray<ToolUseBlock>,
  hooks: Layer.Layer<ToolHooks>,
  approver: Layer.Layer<Approver>,
  options: { readonly maxConcurrency?: number; readonly mode?: "conflict-aware" | "batched" } = {}
) =>
  Effect.gen(function*() {
    const log = yield* Ref.make<ReadonlyArray<Ran>>([])
    return yield* Effect.gen(function*() {
      const fiber = yield* Effect.fork(ToolRuntime.execute(turn, options))
      yield* TestClock.adjust(turn.reduce((sum, u) => sum + (u.input as ProbeInput).durationMs, 0) + 1)
      const outcomes = yield* Fiber.join(fiber)
      return { outcomes, ran: yield* Ref.get(log) }
    }).pipe(Effect.provide(runtimeFor(log, hooks, approver)))
  })

describe("replanning the executed input", () => {
  it.effect("a hook that rewrites a read of x into a write of x makes the call wait for the read before it, and the read after it waits", () =>
    Effect.gen(function*() {
      const { outcomes, ran } = yield* runTurn(
        [use("a", 30, [read("file:/w/x")]), use("b", 10, [read("file:/w/x")]), use("c", 5, [read("file:/w/x")])],
        rewritingHooks(new Map([["b", [write("file:/w/x")]]])),
        Approver.allowAll
      )
      expect(outcomes.map((o) => [o.toolUseId, o.status])).toEqual([["a", "success"], ["b", "success"], [
        "c",
        "success"
      ]])
      const at = Object.fromEntries(ran.map((r) => [r.label, [r.start, r.end]]))
      // On the scheduler that admitted calls on the model's input, all three started at 0.
      expect(at).toEqual({ a: [0, 30], b: [30, 40], c: [40, 45] })
      expect(outcomes[1]!.executedInput).toEqual({
        label: "b",
        durationMs: 10,
        claims: [write("file:/w/x")],
        ask: false
      })
    }))

  it.effect("a person's edit that moves a call onto another resource waits for that resource's writer", () =>
    Effect.gen(function*() {
      const { ran } = yield* runTurn(
        [use("w", 20, [write("file:/w/y")]), use("e", 5, [read("file:/w/x")], true)],
        Layer.succeed(ToolHooks, {
          preToolUse: () => Effect.succeed(noPreToolUse),
          postToolUse: () => Effect.succeed(noPostToolUse)
        }),
        editingApprover(new Map([["e", [read("file:/w/y/z")]]]))
      )
      expect(Object.fromEntries(ran.map((r) => [r.label, r.start]))).toEqual({ w: 0, e: 20 })
    }))

  it.effect("a rewrite into a claim already held changes nothing: the call is not held back", () =>
    Effect.gen(function*() {
      const { ran } = yield* runTurn(
        [use("a", 20, [write("file:/w")]), use("b", 5, [read("file:/v")])],
        rewritingHooks(new Map([["b", [read("file:/v")]]])),
        Approver.allowAll
      )
      expect(Object.fromEntries(ran.map((r) => [r.label, r.start]))).toEqual({ a: 0, b: 0 })
    }))

  const resources = ["file:/w", "file:/w/a", "file:/w/a/x", "file:/w/b", "file:/v", "*"]
  const arbitraryClaims = fc.uniqueArray(
    fc.record({ resource: fc.constantFrom(...resources), access: fc.constantFrom("read" as const, "write" as const) }),
    { minLength: 0, maxLength: 2, selector: (c) => c.resource }
  )
  const arbitraryRewrite = fc.uniqueArray(
    fc.record({ resource: fc.constantFrom(...resources), access: fc.constantFrom("read" as const, "write" as const) }),
    { minLength: 1, maxLength: 2, selector: (c) => c.resource }
  )
  const arbitraryCall = fc.record({
    durationMs: fc.integer({ min: 1, max: 30 }),
    claims: arbitraryClaims,
    rewrite: fc.oneof(
      { weight: 1, arbitrary: fc.constant({ by: "none" as const }) },
      { weight: 2, arbitrary: arbitraryRewrite.map((claims) => ({ by: "hook" as const, claims })) },
      { weight: 2, arbitrary: arbitraryRewrite.map((claims) => ({ by: "person" as const, claims })) }
    )
  })
  const arbitraryCase = fc.record({
    calls: fc.array(arbitraryCall, { minLength: 3, maxLength: 10 }),
    cap: fc.integer({ min: 1, max: 4 }),
    mode: fc.constantFrom("conflict-aware" as const, "batched" as const)
  })
  type Case = typeof arbitraryCase extends fc.Arbitrary<infer A> ? A : never

  const executedClaims = (
    call: Case["calls"][number]
  ) => (call.rewrite.by === "none" ? call.claims : call.rewrite.claims)
  /** The case the property is about: a rewritten call whose new claims conflict with another call's where the old ones did not. */
  const rewriteMatters = ({ calls }: Case) =>
    calls.some((a, i) =>
      a.rewrite.by !== "none" &&
      calls.some((b, j) => j !== i && conflicts(executedClaims(a), executedClaims(b)) && !conflicts(a.claims, b.claims))
    )

  it("the generator reaches a rewrite that creates a new conflict in at least 80% of cases", () => {
    const sample = fc.sample(arbitraryCase, { numRuns: 2_000, seed: 42 })
    const share = sample.filter(rewriteMatters).length / sample.length
    expect(share).toBeGreaterThanOrEqual(0.8)
  })

  it.effect.prop(
    "hooks and a person rewrite inputs arbitrarily: no two conflicting executions overlap, outcomes stay in model order, the cap holds",
    [arbitraryCase],
    ([testCase]) =>
      Effect.gen(function*() {
        const turn = testCase.calls.map((call, i) =>
          use(`t${i}`, call.durationMs, call.claims, call.rewrite.by === "person")
        )
        const hooked = new Map(
          testCase.calls.flatMap((
            call,
            i
          ) => (call.rewrite.by === "hook" ? [[`t${i}`, call.rewrite.claims] as const] : []))
        )
        const edited = new Map(
          testCase.calls.flatMap((
            call,
            i
          ) => (call.rewrite.by === "person" ? [[`t${i}`, call.rewrite.claims] as const] : []))
        )
        const { outcomes, ran } = yield* runTurn(turn, rewritingHooks(hooked), editingApprover(edited), {
          maxConcurrency: testCase.cap,
          mode: testCase.mode
        })
        expect(outcomes.map((o) => o.toolUseId)).toEqual(turn.map((u) => u.id))
        expect(outcomes.every((o) => o.status === "success")).toBe(true)
        expect(ran).toHaveLength(turn.length)
        for (const a of ran) {
          expect(a.end).toBeDefined()
          const runningAtStart = ran.filter((b) => b.start <= a.start && b.end! > a.start).length
          expect(runningAtStart).toBeLessThanOrEqual(testCase.cap)
          for (const b of ran) {
            if (a === b) continue
            // Batched mode: the probe is concurrency-safe, so it claims nothing there; only conflict-aware reads claims.
            if (testCase.mode === "conflict-aware" && conflicts(a.claims, b.claims)) {
              // Zero-length overlaps do not exist: durations are at least 1 ms.
              expect(a.end! <= b.start || b.end! <= a.start).toBe(true)
            }
          }
        }
      }),
    { fastCheck: { numRuns: 200 }, timeout: 120_000 }
  )
})
