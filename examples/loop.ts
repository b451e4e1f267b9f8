/**
 * The README's loop, run: against the real Messages API when ANTHROPIC_API_KEY is set, otherwise against a scripted
 * model on 127.0.0.1 that speaks the same API. `npx tsx examples/loop.ts`
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as AnthropicMessages from "../src/Agent/AnthropicMessages.js"
import * as MessagesServer from "../src/testing/MessagesServer.js"
import { Claude, program } from "./readme.js"

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), "etr-loop-"))
fs.writeFileSync(path.join(cwd, "notes.txt"), "a draft\n")

/** What the scripted model says, request by request. */
const script = [
  MessagesServer.Reply.Message({
    content: [
      MessagesServer.text("I'll read the file first."),
      MessagesServer.toolUse("toolu_1", "Read", { file_path: "notes.txt" })
    ]
  }),
  MessagesServer.Reply.Message({
    content: [
      MessagesServer.toolUse("toolu_2", "Edit", { file_path: "notes.txt", old_string: "draft", new_string: "final" })
    ]
  }),
  MessagesServer.Reply.Message({ content: [MessagesServer.text("Done: notes.txt now says \"a final\".")] })
]

const model = process.env.ANTHROPIC_API_KEY
  ? Effect.succeed(Claude)
  : Effect.map(
    MessagesServer.make(script),
    (server) =>
      AnthropicMessages.layer({ model: "scripted", baseUrl: server.url, apiKey: Redacted.make("scripted") }).pipe(
        Layer.provide(FetchHttpClient.layer)
      )
  )

const main = Effect.scoped(Effect.gen(function*() {
  const result = yield* program(cwd, "Replace 'draft' with 'final' in notes.txt").pipe(Effect.provide(yield* model))
  console.log(
    `\n\n${result.stopReason} after ${result.turns} requests; notes.txt: ${
      JSON.stringify(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8"))
    }`
  )
}))

Effect.runPromise(main).finally(() => fs.rmSync(cwd, { recursive: true, force: true }))
