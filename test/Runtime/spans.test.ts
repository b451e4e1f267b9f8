/**
 * The runtime reads like Effect to its users: a program with a tracer sees a span per run, per call (tool name,
 * tool_use id, status), per permission decision and per approval request, nested as they happen.
 */
import { describe, expect, it } from "@effect/vitest"
import type { Tracer } from "effect"
import { Effect, Layer, Schema } from "effect"
import { ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../src/Hooks/ToolHooks.js"
import { Approver } from "../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { ResultStore } from "../../src/Session/ResultStore.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import { recordingTracer } from "../support/index.js"

const Ask = Tool.make("Ask", {
  description: "test",
  input: Schema.Struct({ ask: Schema.Boolean }),
  output: Schema.String,
  touchesEnvironment: false
})
const AskLive = Ask.implement({
  traits: () => ({ concurrencySafe: true, readOnly: true }),
  checkPermissions: ({ ask }) =>
    Effect.succeed(ask ? PermissionCheck.ask("a person decides") : PermissionCheck.passthrough()),
  call: () => Effect.succeed("done")
})

const runtime = ToolRuntime.layer.pipe(
  Layer.provide(Layer.provide(ToolRegistry.layer([Ask]), AskLive)),
  Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
)

const parentName = (span: Tracer.Span, spans: ReadonlyArray<Tracer.Span>) =>
  span.parent._tag === "Some"
    ? spans.find((other) => other.spanId === (span.parent as { value: Tracer.AnySpan }).value.spanId)?.name
    : undefined

describe("spans", () => {
  it.effect("a run, each call with its tool, id and status, each permission decision and each approval request", () =>
    Effect.gen(function*() {
      const { spans, tracer } = recordingTracer()
      yield* ToolRuntime.execute([
        { type: "tool_use", id: "quiet", name: "Ask", input: { ask: false } },
        { type: "tool_use", id: "asks", name: "Ask", input: { ask: true } }
      ]).pipe(Effect.provide(runtime), Effect.withTracer(tracer))
      const named = (name: string) => spans.filter((span) => span.name === name)
      expect(named("ToolRuntime.execute")).toHaveLength(1)
      const calls = named("ToolRuntime.call")
      expect(calls.map((span) => Object.fromEntries(span.attributes))).toEqual([
        { "tool.name": "Ask", "tool_use.id": "quiet", "tool.status": "success" },
        { "tool.name": "Ask", "tool_use.id": "asks", "tool.status": "success" }
      ])
      expect(
        named("PermissionPolicy.evaluate").map((
          span
        ) => [span.attributes.get("tool_use.id"), span.attributes.get("permission.verdict")])
      ).toEqual([
        ["quiet", "Allow"],
        ["asks", "Ask"]
      ])
      const approvals = named("Approver.ask")
      expect(approvals.map((span) => span.attributes.get("tool_use.id"))).toEqual(["asks"])
      // Nested as they happen: decisions and approvals inside their call, every span ended.
      expect(named("PermissionPolicy.evaluate").map((span) => parentName(span, spans))).toEqual([
        "ToolRuntime.call",
        "ToolRuntime.call"
      ])
      expect(parentName(approvals[0]!, spans)).toBe("ToolRuntime.call")
      expect(spans.every((span) => span.status._tag === "Ended")).toBe(true)
    }))
})
