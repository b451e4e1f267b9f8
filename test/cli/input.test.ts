/**
 * What the CLI accepts as a turn and as a `serve` request line: properties over generated input, with the oracle
 * written here (which blocks are tool_use blocks, which ids repeat), and the serialisation of the session's FileState.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as fc from "effect/FastCheck"
import { decodeTurn } from "../../src/cli/input.js"
import { parseRequest } from "../../src/cli/serve.js"
import { FileEntries } from "../../src/Session/SessionFileState.js"

const toolUse = fc.record({
  type: fc.constant("tool_use"),
  id: fc.constantFrom("t1", "t2", "t3", "t4", "t5", "t6"),
  name: fc.constantFrom("Read", "Bash", "Nope"),
  input: fc.object()
})
const otherBlock = fc.oneof(
  fc.record({ type: fc.constant("text"), text: fc.string() }),
  fc.record({ type: fc.constant("thinking"), thinking: fc.string(), signature: fc.string() }),
  fc.record({ type: fc.constantFrom("server_tool_use", "image", "whatever"), id: fc.string() })
)

describe("decodeTurn", () => {
  it.prop("an assistant message: exactly its tool_use blocks, in order, unless an id repeats", [
    fc.array(fc.oneof(toolUse, otherBlock), { maxLength: 8 })
  ], ([content]) => {
    const uses = content.filter((block) => block.type === "tool_use") as Array<{ id: string }>
    const ids = uses.map((block) => block.id)
    const repeats = new Set(ids).size !== ids.length
    const decoded = decodeTurn({ role: "assistant", content })
    if (repeats) {
      expect(Either.isLeft(decoded)).toBe(true)
      return
    }
    expect(Either.getOrThrow(decoded).map((block) => block.id)).toEqual(ids)
  })

  it.prop("plain string content holds no tool_use", [fc.string()], ([text]) => {
    expect(Either.getOrThrow(decodeTurn({ role: "assistant", content: text }))).toEqual([])
  })

  it.prop("anything that is neither an array nor an assistant message is refused, with one line", [
    fc.jsonValue().filter((json) =>
      !Array.isArray(json) &&
      !(typeof json === "object" && json !== null && (json as { role?: unknown }).role === "assistant")
    )
  ], ([json]) => {
    const decoded = decodeTurn(json)
    expect(Either.isLeft(decoded)).toBe(true)
    if (Either.isLeft(decoded)) expect(decoded.left.message).not.toContain("\n")
  })
})

describe("serve request lines", () => {
  it.prop("a turn line decodes to its id and tool_uses", [
    fc.stringMatching(/^[a-z0-9-]{1,8}$/),
    fc.uniqueArray(toolUse, { selector: (block) => block.id, maxLength: 5 })
  ], ([id, uses]) => {
    const parsed = parseRequest(JSON.stringify({ type: "turn", id, tool_uses: uses }))
    // The line is JSON: what it carries is what JSON keeps of the input.
    expect(Either.getOrThrow(parsed)).toEqual({ id, toolUses: JSON.parse(JSON.stringify(uses)) })
  })

  it.prop("a line that is not a request is an error that echoes the line's id when it has one", [
    fc.oneof(
      fc.string(),
      fc.jsonValue().map((json) => JSON.stringify(json)),
      fc.record({ type: fc.constantFrom("turn", "approval", "other"), id: fc.string() }).map((json) =>
        JSON.stringify(json)
      )
    )
  ], ([line]) => {
    let json: unknown = undefined
    try {
      json = JSON.parse(line)
    } catch {
      // not JSON
    }
    const isTurn = typeof json === "object" && json !== null && (json as { type?: unknown }).type === "turn" &&
      ("tool_uses" in json || "message" in json)
    const isApproval = typeof json === "object" && json !== null && (json as { type?: unknown }).type === "approval" &&
      "answer" in json
    fc.pre(!isTurn && !isApproval)
    const parsed = parseRequest(line)
    expect(Either.isLeft(parsed)).toBe(true)
    const id = typeof json === "object" && json !== null && typeof (json as { id?: unknown }).id === "string"
      ? (json as { id: string }).id
      : null
    if (Either.isLeft(parsed)) {
      expect(parsed.left.id).toBe(id)
      expect(parsed.left.error.message).not.toContain("\n")
    }
  })
})

describe("the session's FileState", () => {
  it.prop("entries survive JSON: a missing hash (a ranged read) stays missing", [
    fc.array(
      fc.tuple(
        fc.string(),
        fc.record({
          contentHash: fc.option(fc.hexaString({ minLength: 64, maxLength: 64 }), { nil: undefined }),
          mtimeMs: fc.tuple(fc.nat(), fc.integer({ min: 0, max: 999 })).map(([ms, fraction]) => ms + fraction / 1000),
          size: fc.nat(),
          partial: fc.boolean()
        })
      ),
      { maxLength: 6 }
    )
  ], ([entries]) => {
    const json = JSON.parse(JSON.stringify(Schema.encodeSync(FileEntries)(entries))) as unknown
    expect(Schema.decodeUnknownSync(FileEntries)(json)).toEqual(entries)
  })
})
