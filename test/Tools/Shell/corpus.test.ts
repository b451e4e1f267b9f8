import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { decideBashRules } from "../../../src/Tools/Shell/BashRule.js"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"
import {
  acceptEditsBenign,
  acceptEditsHostile,
  allowBenign,
  allowHostile,
  allowRules,
  benign,
  hostile,
  insideReads,
  optionBenign,
  optionHostile,
  outsideReads,
  plantedOptionHostile,
  secondEvaluationBenign,
  secondEvaluationHostile,
  wrapperBenign,
  wrapperHostile
} from "./corpus.js"

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

describe("corpus of the hardening classes", () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), "corpus-classes-"))
  fs.writeFileSync(path.join(directory, "README.md"), "# Demo\n")
  const context = { directories: [directory] }

  it("has at least ten hostile and ten benign cases per class, each hostile one leaving a marker", () => {
    for (
      const list of [
        secondEvaluationHostile,
        optionHostile,
        wrapperHostile,
        allowHostile,
        outsideReads,
        acceptEditsHostile
      ]
    ) {
      expect(list.length).toBeGreaterThanOrEqual(10)
    }
    for (
      const list of [secondEvaluationBenign, optionBenign, wrapperBenign, allowBenign, insideReads, acceptEditsBenign]
    ) {
      expect(list.length).toBeGreaterThanOrEqual(10)
    }
    for (
      const entry of [
        ...secondEvaluationHostile,
        ...optionHostile,
        ...wrapperHostile,
        ...allowHostile,
        ...acceptEditsHostile
      ]
    ) {
      expect(entry.command, entry.command).toMatch(/PWNED|pwn\.sh/)
    }
    for (const entry of plantedOptionHostile) {
      expect(entry.files.join(" "), entry.command).toMatch(/PWNED|--files0-from/)
    }
  })

  it("classes 1 and 2: hostile commands are not read-only, benign ones are", () => {
    const readOnly = [...secondEvaluationHostile, ...optionHostile].filter((entry) =>
      classifyReadOnly(entry.command, context).readOnly
    )
    expect(readOnly.map((entry) => entry.command)).toEqual([])
    const rejected = [...secondEvaluationBenign, ...optionBenign, ...insideReads].flatMap((entry) => {
      const verdict = classifyReadOnly(entry.command, context)
      return verdict.readOnly ? [] : [`${entry.command}: ${verdict.reason}`]
    })
    expect(rejected).toEqual([])
  })

  it("class 2: a glob meeting an entry named like an option is not read-only", () => {
    for (const entry of plantedOptionHostile) {
      const planted = fs.mkdtempSync(path.join(os.tmpdir(), "corpus-planted-"))
      for (const file of entry.files) fs.writeFileSync(path.join(planted, file), "")
      fs.writeFileSync(path.join(planted, "README.md"), "")
      expect(classifyReadOnly(entry.command, { directories: [planted] }).readOnly, entry.command).toBe(false)
      // The same command over a directory without such an entry is read-only: the listing decides.
      expect(classifyReadOnly(entry.command, context).readOnly, entry.command).toBe(true)
    }
  })

  it("class 3: every wrapped or interpreted `touch` is denied or asked about under `Bash(touch:*)`", () => {
    const rules = { allow: [], ask: [], deny: [{ content: "touch:*" }] }
    const through = wrapperHostile.filter((entry) =>
      !["Deny", "Ask"].includes(decideBashRules(entry.command, rules)._tag)
    )
    expect(through.map((entry) => entry.command)).toEqual([])
    const stopped = wrapperBenign.filter((entry) => decideBashRules(entry.command, rules)._tag !== "NoMatch")
    expect(stopped.map((entry) => entry.command)).toEqual([])
  })

  it("class 4: allow rules do not grant the dangerous forms, and do grant the rest", () => {
    const rules = { allow: allowRules.map((content) => ({ content })), ask: [], deny: [] }
    const allowed = allowHostile.filter((entry) => decideBashRules(entry.command, rules, context)._tag === "Allow")
    expect(allowed.map((entry) => entry.command)).toEqual([])
    const refused = allowBenign.filter((entry) => decideBashRules(entry.command, rules, context)._tag !== "Allow")
    expect(refused.map((entry) => entry.command)).toEqual([])
  })
})
