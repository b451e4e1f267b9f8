import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { toText, UiBlock } from "../../src/Tool/Presentation.js"

// One block with the text the oracle expects of it, written out here rather than asked of the implementation.
const text = fc.string({ maxLength: 12 })
const block: fc.Arbitrary<readonly [UiBlock, string]> = fc.oneof(
  text.map((t) => [UiBlock.Title({ text: t }), t] as const),
  text.map((t) => [UiBlock.Text({ text: t }), t] as const),
  text.map((t) => [UiBlock.Code({ text: t, language: "json" }), t] as const),
  fc.tuple(text, text).map(([patch, path]) => [UiBlock.Diff({ path, patch: `--- ${patch}` }), `--- ${patch}`] as const),
  fc.tuple(text.filter((t) => !t.startsWith("--- ")), text).map(([patch, path]) =>
    [UiBlock.Diff({ path, patch }), `--- ${path}\n${patch}`] as const
  ),
  fc.array(fc.tuple(text, text), { maxLength: 3 }).map((fields) =>
    [UiBlock.Fields({ fields }), fields.map(([label, value]) => `${label}: ${value}`).join("\n")] as const
  ),
  fc.tuple(text, fc.constantFrom("image/png", "image/jpeg")).map(([description, mediaType]) =>
    [UiBlock.Image({ description, mediaType }), `[image ${mediaType}: ${description}]`] as const
  ),
  fc.tuple(fc.constantFrom("info", "warning", "error") as fc.Arbitrary<"info" | "warning" | "error">, text).map((
    [level, t]
  ) => [UiBlock.Notice({ level, text: t }), level === "info" ? t : `${level}: ${t}`] as const)
)

describe("toText", () => {
  it.prop("is every block's text, in order, one block per line", [fc.array(block, { maxLength: 6 })], ([blocks]) => {
    const expected = blocks.map(([, t]) => t)
    const rendered = toText(blocks.map(([b]) => b))
    expect(rendered).toBe(expected.join("\n"))
    // Round trip where no block's text has a line break of its own: the lines are the blocks.
    if (blocks.length > 0 && expected.every((t) => !t.includes("\n"))) expect(rendered.split("\n")).toEqual(expected)
  })

  it("renders nothing as the empty string", () => {
    expect(toText([])).toBe("")
  })
})
