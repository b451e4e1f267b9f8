/**
 * The `TodoWrite` tool (Claude Code's name and schema: `todos: [{content, status, activeForm}]`): the model keeps a
 * task list for the session, sending the whole list on every call. The list lives in the session (a `Session` piece
 * named `todos` when a {@link Session} is in context, so it survives across processes; else in memory for the
 * layer's life) and is shown to a person as a checklist.
 *
 * It touches nothing outside the session, so it needs no permission (a deny rule `TodoWrite` still applies) and runs
 * in plan mode. Calls are serialised on the list (`session:todos`, written). As in Claude Code, a list whose every
 * item is completed is stored as empty: the work is done.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"
import { Session } from "../Session/Session.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * One item of the list.
 *
 * @since 0.3.0
 * @category models
 */
export const Todo = Schema.Struct({
  content: Schema.String.pipe(Schema.minLength(1)).annotations({ description: "What is to be done" }),
  status: Schema.Literal("pending", "in_progress", "completed"),
  activeForm: Schema.String.pipe(Schema.minLength(1)).annotations({
    description: "The present continuous form shown while it is in progress (e.g. \"Running the tests\")"
  })
})

/**
 * @since 0.3.0
 * @category models
 */
export type Todo = typeof Todo.Type

/**
 * TodoWrite's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const TodoWriteInput = Schema.Struct({
  todos: Schema.Array(Todo).annotations({ description: "The updated todo list" })
})

/**
 * The list before and after the call.
 *
 * @since 0.3.0
 * @category models
 */
export const TodoWriteOutput = Schema.Struct({
  oldTodos: Schema.Array(Todo),
  newTodos: Schema.Array(Todo)
})

/**
 * @since 0.3.0
 * @category models
 */
export type TodoWriteOutput = typeof TodoWriteOutput.Type

/**
 * The TodoWrite tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const TodoWrite = Tool.make("TodoWrite", {
  description: [
    "Keeps a structured task list for this session, to track progress on multi-step work and show the person what is " +
    "being done. Send the whole updated list on every call (it replaces the previous one).",
    "- Use it for tasks of three or more steps, or when the person gives several things to do; skip it for a single " +
    "trivial step.",
    "- Each item: content (what to do, imperative: \"Run the tests\"), activeForm (while doing it: \"Running the " +
    "tests\"), status pending, in_progress or completed.",
    "- Keep exactly one item in_progress while working; mark an item completed as soon as it is done (not in batches), " +
    "and only when it is fully done."
  ].join("\n"),
  input: TodoWriteInput,
  output: TodoWriteOutput,
  touchesEnvironment: false
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const mark: Record<Todo["status"], string> = { pending: "[ ]", in_progress: "[~]", completed: "[x]" }

/**
 * The list as a checklist, one line per item: `[ ]` pending, `[~]` in progress (its activeForm), `[x]` completed.
 *
 * @since 0.3.0
 * @category rendering
 */
export const checklist = (todos: ReadonlyArray<Todo>): string =>
  todos.length === 0
    ? "(no todos)"
    : todos.map((todo) => `${mark[todo.status]} ${todo.status === "in_progress" ? todo.activeForm : todo.content}`)
      .join("\n")

/**
 * TodoWrite's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  TodoWrite,
  Effect.gen(function*() {
    const session = yield* Effect.serviceOption(Session)
    const list = Option.isSome(session)
      ? yield* Session.ref("todos", Schema.Array(Todo), () => []).pipe(
        Effect.provideService(Session, session.value),
        // A list saved by a program this one cannot read starts over rather than failing the tools.
        Effect.orElse(() => Ref.make<ReadonlyArray<Todo>>([]))
      )
      : yield* Ref.make<ReadonlyArray<Todo>>([])

    return {
      traits: () => ({ readOnly: true, concurrencySafe: false }),
      claims: () => [Tool.Claim.write("session:todos")],
      call: (input) =>
        Ref.modify(list, (oldTodos) => {
          const kept = input.todos.every((todo) => todo.status === "completed") ? [] : input.todos
          return [{ oldTodos, newTodos: input.todos }, kept]
        }),
      activity: () => "Updating todos",
      classifierInput: (input) => `${input.todos.length} todos`,
      renderUse: (input) => [UiBlock.Title({ text: `TodoWrite(${input.todos.length} items)` })],
      renderResult: (output) => [UiBlock.Text({ text: checklist(output.newTodos) })],
      toModel: () =>
        "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. " +
        "Please proceed with the current tasks if applicable"
    }
  })
)

/**
 * TodoWrite's behaviour: the list in the {@link Session} when there is one, else in memory.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = Layer.scoped(TodoWrite, make)
