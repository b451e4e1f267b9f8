import { describe, expect, it } from "@effect/vitest"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"
import { benign, hostile } from "./corpus.js"

describe("corpus", () => {
  it("is large enough and every hostile command leaves a PWNED marker", () => {
    expect(hostile.length).toBeGreaterThanOrEqual(70)
    expect(benign.length).toBeGreaterThanOrEqual(30)
    for (const entry of hostile) {
      expect(entry.command, entry.command).toContain("PWNED")
      expect(entry.source.length, entry.command).toBeGreaterThan(0)
    }
    expect(new Set(hostile.map((entry) => entry.command)).size).toBe(hostile.length)
  })

  it("classifies every hostile command as not read-only", () => {
    const readOnly = hostile.filter((entry) => classifyReadOnly(entry.command).readOnly)
    expect(readOnly.map((entry) => entry.command)).toEqual([])
  })

  it("classifies every benign command as read-only", () => {
    const rejected = benign.flatMap((entry) => {
      const verdict = classifyReadOnly(entry.command)
      return verdict.readOnly ? [] : [`${entry.command}: ${verdict.reason}`]
    })
    expect(rejected).toEqual([])
  })
})
