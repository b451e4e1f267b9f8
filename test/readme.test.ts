import { FetchHttpClient } from "@effect/platform"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { program } from "../examples/readme.js"
import { program as sessionProgram } from "../examples/session.js"
import * as AnthropicMessages from "../src/Agent/AnthropicMessages.js"
import * as MessagesServer from "../src/testing/MessagesServer.js"

const readme = fs.readFileSync(path.join(__dirname, "..", "README.md"), "utf8")
const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1])

const tempProject = () => {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "etr-readme-"))
  fs.writeFileSync(path.join(cwd, "notes.txt"), "a draft\n")
  return cwd
}

describe("README", () => {
  it("shows examples/readme.ts verbatim as its first example, so the example it shows type-checks", () => {
    expect(blocks[0]).toBe(fs.readFileSync(path.join(__dirname, "..", "examples", "readme.ts"), "utf8"))
  })

  it("shows examples/session.ts verbatim", () => {
    expect(blocks).toContain(fs.readFileSync(path.join(__dirname, "..", "examples", "session.ts"), "utf8"))
  })

  it.live("the loop runs against a model speaking the Messages API: the model reads, edits, gets the results, answers", () =>
    Effect.scoped(Effect.gen(function*() {
      const cwd = tempProject()
      const server = yield* MessagesServer.make([
        MessagesServer.Reply.Message({
          content: [
            MessagesServer.text("I'll read it first."),
            MessagesServer.toolUse("toolu_1", "Read", { file_path: "notes.txt" })
          ]
        }),
        MessagesServer.Reply.Message({
          content: [
            MessagesServer.toolUse("toolu_2", "Edit", {
              file_path: "notes.txt",
              old_string: "draft",
              new_string: "final"
            })
          ]
        }),
        MessagesServer.Reply.Message({ content: [MessagesServer.text("Done: notes.txt now says final.")] })
      ])
      const model = AnthropicMessages.layer({
        model: "claude-sonnet-4-5",
        baseUrl: server.url,
        apiKey: Redacted.make("scripted")
      })
      const result = yield* program(cwd, "Replace 'draft' with 'final' in notes.txt").pipe(
        Effect.provide(model.pipe(Layer.provide(FetchHttpClient.layer)))
      )
      expect(result.stopReason).toBe("end_turn")
      expect(result.turns).toBe(3)
      expect(result.text).toBe("Done: notes.txt now says final.")
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("a final\n")
      // What the model got back: the file's lines after the first request, the edit's result after the second.
      const requests = (yield* server.requests) as ReadonlyArray<
        {
          readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>
          readonly tools: ReadonlyArray<{ readonly name: string }>
        }
      >
      expect(requests.length).toBe(3)
      expect(requests[1]!.messages.at(-1)).toEqual({
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "     1\ta draft" }]
      })
      const edited = requests[2]!.messages.at(-1)!.content as ReadonlyArray<
        { readonly tool_use_id: string; readonly is_error?: boolean }
      >
      expect(edited.map((block) => [block.tool_use_id, block.is_error])).toEqual([["toolu_2", undefined]])
      expect(requests[0]!.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["Read", "Edit", "Bash"]))
      fs.rmSync(cwd, { recursive: true, force: true })
    })))

  it.effect("the session example runs: Read in the first turn, Edit in the second, with the results the README shows", () =>
    Effect.gen(function*() {
      const cwd = tempProject()
      const [[read], [edit]] = (yield* sessionProgram(cwd)) as unknown as [
        [{ content: string }],
        [{ content: string; is_error?: true }]
      ]
      expect(read.content).toBe("     1\ta draft")
      expect(edit.is_error).toBeUndefined()
      expect(readme).toContain(JSON.stringify(edit.content))
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("a final\n")
      fs.rmSync(cwd, { recursive: true, force: true })
    }))
})
