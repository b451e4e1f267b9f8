import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { Session } from "../../../src/Session/Session.js"
import { testRuntime } from "../../../src/testing/index.js"
import { toText } from "../../../src/Tool/Presentation.js"
import { checklist, layer as TodoWriteLive, Todo, TodoWrite } from "../../../src/Tools/TodoWrite.js"
import { tempDir } from "../../support/index.js"

const call = (todos: unknown, id = "toolu_t") =>
  Effect.flatMap(ToolRuntime, (rt) => rt.executeOne({ type: "tool_use", id, name: "TodoWrite", input: { todos } }))

const list = [
  { content: "Run the tests", status: "completed", activeForm: "Running the tests" },
  { content: "Fix the parser", status: "in_progress", activeForm: "Fixing the parser" },
  { content: "Write the docs", status: "pending", activeForm: "Writing the docs" }
] as const

describe("TodoWrite", () => {
  it.effect("replaces the list, needs no approval, and shows a checklist", () =>
    Effect.gen(function*() {
      const first = yield* call(list)
      expect(first.status).toBe("success")
      expect(first.result.content).toContain("Todos have been modified successfully")
      expect(toText(first.ui)).toContain("[x] Run the tests\n[~] Fixing the parser\n[ ] Write the docs")
      const second = yield* call([list[2]])
      expect(second.output).toEqual({ oldTodos: list, newTodos: [list[2]] })
    }).pipe(Effect.provide(testRuntime([TodoWrite], TodoWriteLive))))

  it.effect("rejects an item without activeForm or with an unknown status, naming the parameter", () =>
    Effect.gen(function*() {
      const missing = yield* call([{ content: "x", status: "pending" }])
      expect(missing.status).toBe("error")
      expect(missing.result.content).toContain("activeForm")
      const status = yield* call([{ content: "x", status: "done", activeForm: "x-ing" }])
      expect(status.status).toBe("error")
      expect(status.result.content).toContain("status")
    }).pipe(Effect.provide(testRuntime([TodoWrite], TodoWriteLive))))

  it.effect("keeps the list in the session across processes; an all-completed list is stored empty", () =>
    Effect.gen(function*() {
      const directory = tempDir("todos-")
      const session = Session.layer({ directory })
      const run = <A, E>(program: Effect.Effect<A, E, ToolRuntime>) =>
        Effect.scoped(
          Effect.gen(function*() {
            const result = yield* program
            yield* Session.checkpoint
            return result
          }).pipe(Effect.provide(testRuntime([TodoWrite], TodoWriteLive)))
        ).pipe(Effect.provide(session))
      yield* run(call(list))
      const again = yield* run(call([list[0]]))
      expect(again.output).toEqual({ oldTodos: list, newTodos: [list[0]] })
      const after = yield* run(call([list[1]]))
      expect((after.output as { oldTodos: unknown }).oldTodos).toEqual([])
      const saved = yield* Effect.flatMap(Session, (s) => s.restore("todos", Schema.Array(Todo))).pipe(
        Effect.provide(session)
      )
      expect(saved._tag === "Some" && saved.value).toEqual([list[1]])
    }))

  it("renders an empty list", () => {
    expect(checklist([])).toBe("(no todos)")
  })
})
