/**
 * A tool's own rule matching that reports a deny or ask without naming which rule still fails closed.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import type { PolicyRequest } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import { PermissionCheck } from "../../src/Tool/Permission.js"
import * as Tool from "../../src/Tool/Tool.js"
import { makeSandbox, workspaceLayer } from "./fixtures.js"

const box = makeSandbox()

const Sloppy = Tool.make("Sloppy", {
  description: "test",
  input: Schema.Struct({ verdict: Schema.Literal("Deny", "Ask") })
})
const service = Sloppy.service({
  checkPermissions: () => Effect.succeed(PermissionCheck.passthrough()),
  // Says deny (or ask) but names no rule: a bug in a tool must not turn into an allow.
  matchRules: (input) => ({ _tag: input.verdict, rule: undefined as never }),
  call: () => Effect.succeed("ran")
})

const verdictFor = (verdict: "Deny" | "Ask") => {
  const input = { verdict }
  const request: PolicyRequest = {
    definition: Sloppy.definition,
    invocation: (service as Tool.AnyService).plan(input),
    toolCheck: PermissionCheck.passthrough(),
    hook: undefined,
    context: { toolUseId: "t", toolName: "Sloppy", progress: () => Effect.void, isReadDenied: () => false }
  }
  const options = { cliRules: { allow: ["Sloppy(*)", "Sloppy(x)"], deny: ["Sloppy(x)"], ask: ["Sloppy(y)"] } }
  return Effect.runSync(
    Effect.flatMap(RulePolicy.make(options), (policy) => policy.evaluate(request)).pipe(
      Effect.provide(workspaceLayer(box))
    )
  )
}

describe("a tool's rule matching fails closed", () => {
  it("Deny without a rule is a deny by the first deny rule, whatever the allow rules say", () => {
    expect(verdictFor("Deny")._tag).toBe("Deny")
  })
  it("Ask without a rule asks", () => {
    expect(verdictFor("Ask")._tag).toBe("Ask")
  })
})
