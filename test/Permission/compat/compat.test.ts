/**
 * The compatibility suite: settings files as people write them for Claude Code, each with the decisions Claude Code's
 * documentation gives for it, run end to end (see `harness.ts`). A case that marks `differs` documents a deliberate
 * difference, and the decision it expects is this runtime's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Places } from "./harness.js"
import { loadCases, makePlaces, runCase, startHookServer, substitute } from "./harness.js"

const cases = loadCases()
let server: Awaited<ReturnType<typeof startHookServer>>

beforeAll(async () => {
  server = await startHookServer()
})
afterAll(async () => {
  await server.close()
})

describe("Claude Code settings compatibility", () => {
  it("has at least 30 settings files", () => {
    expect(cases.length).toBeGreaterThanOrEqual(30)
  })

  for (const [file, test] of cases) {
    it(`${file}: ${test.about}`, async () => {
      const places: Places = makePlaces(server.url)
      const result = await runCase(test, places)
      const expected = test.expect
      if (expected.error !== undefined) {
        expect(result._tag).toBe("LoadFailed")
        if (result._tag !== "LoadFailed") return
        expect(result.message).toContain(substitute(expected.error, places) as string)
        expect(result.message).not.toContain("\n")
        return
      }
      if (result._tag === "LoadFailed") throw new Error(`the settings did not load: ${result.message}`)
      for (const warning of expected.warnings ?? []) {
        const wanted = substitute(warning, places) as string
        expect(
          result.warnings.some((line) => line.includes(wanted)),
          `no warning contains ${JSON.stringify(wanted)}; warnings: ${JSON.stringify(result.warnings, null, 2)}`
        ).toBe(true)
      }
      for (const line of result.warnings) expect(line).not.toContain("\n")
      if (expected.noWarnings === true) expect(result.warnings).toEqual([])
      if (expected.mode !== undefined) expect(result.mode).toBe(expected.mode)
      ;(expected.calls ?? []).forEach((call, i) => {
        const got = result.calls[i]!
        const label = `${call.tool} ${JSON.stringify(call.input)}: ${got.decision} (${got.reason})`
        expect(got.decision, label).toBe(call.expect)
        if (call.reason !== undefined) expect(got.reason, label).toContain(substitute(call.reason, places) as string)
      })
    }, 60_000)
  }
})
