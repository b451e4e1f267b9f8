/**
 * Bad input to serve (issue 22, item 5): a request line over the limit is one error line and reading goes on (a
 * property over random lines and random chunking, with its own oracle, and end to end through the built bundle);
 * a world-writable `--session` directory is refused with one line, exit 2.
 */
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, FastCheck as fc, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { boundedLines } from "../../src/cli/serve.js"
import { cleanUp, ensureBuilt, run, start, toolUse, waitUntil, workspace } from "./helpers.js"

beforeAll(ensureBuilt, 180_000)
afterAll(cleanUp)

describe("boundedLines", () => {
  it.effect.prop(
    "lines within the limit come out whole, longer ones as one TooLong with their length, however the bytes are cut",
    [
      fc.array(fc.oneof(fc.string({ maxLength: 12 }), fc.string({ minLength: 13, maxLength: 40 })), { maxLength: 8 }),
      fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }),
      fc.boolean()
    ],
    ([texts, cuts, trailingNewline]) =>
      Effect.gen(function*() {
        const lines = texts.map((text) => text.replaceAll("\n", " "))
        const limit = 12
        const input = Buffer.from(lines.join("\n") + (trailingNewline && lines.length > 0 ? "\n" : ""))
        const chunks: Array<Uint8Array> = []
        for (let at = 0, i = 0; at < input.length; i++) {
          const size = cuts[i % cuts.length]!
          chunks.push(input.subarray(at, at + size))
          at += size
        }
        const out = yield* Stream.runCollect(boundedLines(Stream.fromIterable(chunks), limit))
        // The oracle: split the whole input on newlines; a line over the limit is reported by its byte length.
        const expected = lines.map((line) => {
          const bytes = Buffer.byteLength(line)
          return bytes > limit ? { _tag: "TooLong", bytes } : { _tag: "Line", text: line }
        })
        expect(Chunk.toReadonlyArray(out).filter((item) => !(item._tag === "Line" && item.text === ""))).toEqual(
          expected.filter((item) => !(item._tag === "Line" && item.text === ""))
        )
      })
  )
})

describe("serve and bad input", () => {
  it("a line over --max-line-bytes is one error line; the next request is answered", async () => {
    const where = workspace()
    fs.writeFileSync(path.join(where.dir, "a.txt"), "hello\n")
    const serve = start(where, ["serve", "--max-line-bytes", "1000"])
    const big = `{"type":"turn","id":"big","padding":"${"x".repeat(5000)}"}`
    serve.child.stdin.write(`${big}\n`)
    serve.child.stdin.write(
      `${JSON.stringify({ type: "turn", id: "t1", tool_uses: [toolUse("u1", "Read", { file_path: "a.txt" })] })}\n`
    )
    await waitUntil("the result", () => serve.stdout().includes("\"type\":\"result\""))
    serve.child.stdin.end()
    const finished = await serve.finished
    const lines = finished.stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line))
    const errors = lines.filter((line) => line.type === "error")
    expect(errors).toEqual([{
      type: "error",
      id: null,
      message:
        `a request line of ${big.length} bytes is longer than the limit of 1000 bytes (--max-line-bytes); it was skipped`
    }])
    expect(lines.some((line) => line.type === "result" && line.turn === "t1")).toBe(true)
    expect(finished.code).toBe(0)
  }, 60_000)

  it("a world-writable --session directory is refused with one line, exit 2; a private one is used", async () => {
    const where = workspace()
    const open = path.join(where.tmp, "open-session")
    fs.mkdirSync(open)
    fs.chmodSync(open, 0o777)
    const refused = await run(where, ["serve", "--session", open], "")
    expect(refused.code).toBe(2)
    const lines = refused.stderr.trim().split("\n")
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`--session directory ${open} is world-writable`)
    // Not yet existing, below a world-writable non-sticky directory: refused too.
    const below = await run(where, ["serve", "--session", path.join(open, "new")], "")
    expect(below.code).toBe(2)
    const private_ = path.join(where.tmp, "private-session")
    fs.mkdirSync(private_, { mode: 0o700 })
    const used = await run(where, ["serve", "--session", private_], "")
    expect(used.code).toBe(0)
  }, 60_000)
})
