/**
 * The tools over background tasks (`Tasks/TaskRegistry`), with Claude Code's names and parameters:
 *
 * - **TaskOutput** `{task_id, block?, timeout?}` (alias **BashOutput** `{bash_id, filter?}`): the output since the last
 *   read (bounded: past the read limit the start of that stretch is skipped, and the result says how much and where
 *   the whole file is) and the status; `block` (default true; false for BashOutput) waits up to `timeout` ms (default
 *   30000, at most 600000) for the task to end. Read-only; it reads only this session's tasks, so it needs no
 *   permission.
 * - **TaskStop** `{task_id}` (alias `shell_id`; alias tool **KillShell** `{shell_id}`): SIGTERM to the task's group and
 *   escapees, SIGKILL after a grace period; the final status. It stops only this session's own tasks, so it needs no
 *   permission beyond that (rules, hooks and modes still apply as to any tool).
 *
 * Without a `TaskRegistry` in context both are disabled (and left out of what the model is shown).
 *
 * @since 0.3.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { describeStatus, TaskRegistry, TaskStatus } from "../Tasks/TaskRegistry.js"
import type { TaskRecord } from "../Tasks/TaskRegistry.js"
import { PermissionCheck } from "../Tool/Permission.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * The longest `timeout` of TaskOutput, in milliseconds (10 minutes).
 *
 * @since 0.3.0
 * @category limits
 */
export const MAX_WAIT_MS = 600_000

/**
 * TaskOutput's input, as in Claude Code, with BashOutput's old names (`bash_id`, `filter`).
 *
 * @since 0.3.0
 * @category models
 */
export const TaskOutputInput = Schema.Struct({
  task_id: Schema.optional(Schema.String.annotations({ description: "The task ID to get output from" })),
  block: Schema.optional(Schema.Boolean.annotations({ description: "Whether to wait for completion (default true)" })),
  timeout: Schema.optional(
    Schema.Number.pipe(Schema.between(0, MAX_WAIT_MS)).annotations({
      description: `Max wait time in ms (default 30000, at most ${MAX_WAIT_MS})`
    })
  ),
  bash_id: Schema.optional(Schema.String.annotations({ description: "BashOutput's name for task_id" })),
  filter: Schema.optional(
    Schema.String.annotations({ description: "BashOutput: only output lines matching this regular expression" })
  )
}).annotations({
  // What the model is shown is Claude Code's TaskOutput (its three parameters, all required, with defaults); the
  // decoder also takes BashOutput's old names and leaves block and timeout optional.
  jsonSchema: {
    type: "object",
    properties: {
      task_id: { type: "string", description: "The task ID to get output from" },
      block: { type: "boolean", description: "Whether to wait for completion", default: true },
      timeout: {
        type: "number",
        description: "Max wait time in ms",
        default: 30_000,
        minimum: 0,
        maximum: MAX_WAIT_MS
      }
    },
    required: ["task_id", "block", "timeout"],
    additionalProperties: false
  }
})
/**
 * @since 0.3.0
 * @category models
 */
export type TaskOutputInput = typeof TaskOutputInput.Type

/**
 * What TaskOutput gives.
 *
 * @since 0.3.0
 * @category models
 */
export const TaskOutputOutput = Schema.Struct({
  task_id: Schema.String,
  command: Schema.String,
  status: TaskStatus,
  output: Schema.String,
  skippedBytes: Schema.Number,
  outputPath: Schema.String,
  waitTimedOut: Schema.Boolean
})
/**
 * @since 0.3.0
 * @category models
 */
export type TaskOutputOutput = typeof TaskOutputOutput.Type

/**
 * TaskStop's input, as in Claude Code (`shell_id` is KillShell's name for `task_id`).
 *
 * @since 0.3.0
 * @category models
 */
export const TaskStopInput = Schema.Struct({
  task_id: Schema.optional(Schema.String.annotations({ description: "The ID of the background task to stop" })),
  shell_id: Schema.optional(Schema.String.annotations({ description: "Deprecated: use task_id instead" }))
})
// Claude Code's TaskStop: both optional (KillShell sends shell_id).
/**
 * @since 0.3.0
 * @category models
 */
export type TaskStopInput = typeof TaskStopInput.Type

/**
 * What TaskStop gives.
 *
 * @since 0.3.0
 * @category models
 */
export const TaskStopOutput = Schema.Struct({
  task_id: Schema.String,
  command: Schema.String,
  status: TaskStatus,
  /** Whether the task was still running (false: it had already ended). */
  stopped: Schema.Boolean
})
/**
 * @since 0.3.0
 * @category models
 */
export type TaskStopOutput = typeof TaskStopOutput.Type

// ---------------------------------------------------------------------------------------------------------------
// definitions
// ---------------------------------------------------------------------------------------------------------------

const outputDefinition = Tool.make("TaskOutput", {
  description:
    `Retrieves output from a running or completed background task (a Bash command run with run_in_background).
- Takes a task_id; returns the output written since the last read, and the task's status.
- block=true (default) waits for the task to end, at most timeout ms (default 30000); block=false checks at once.
- Long output: the start of what is new is skipped and you get its end, with the path of the full output file.
- You are told when a task ends: there is no need to poll.`,
  input: TaskOutputInput,
  output: TaskOutputOutput,
  aliases: ["BashOutput"],
  maxResultChars: Infinity,
  timeout: Duration.millis(MAX_WAIT_MS + 10_000),
  touchesEnvironment: true
})

const stopDefinition = Tool.make("TaskStop", {
  description:
    `Stops a running background task by its ID (SIGTERM to the task's processes, SIGKILL if they do not exit).
- Takes a task_id; returns the task's final status.`,
  input: TaskStopInput,
  output: TaskStopOutput,
  aliases: ["KillShell"],
  touchesEnvironment: true
})

// ---------------------------------------------------------------------------------------------------------------
// presentation
// ---------------------------------------------------------------------------------------------------------------

const idOf = (input: { readonly task_id?: string | undefined }, old: string | undefined): string =>
  input.task_id ?? old ?? ""

const outputText = (output: TaskOutputOutput): string => {
  const lines = [
    `<task_id>${output.task_id}</task_id>`,
    `<status>${describeStatus(output.status)}</status>`
  ]
  if (output.waitTimedOut) lines.push("(still running when the wait ended)")
  if (output.skippedBytes > 0) {
    lines.push(
      `(${output.skippedBytes} bytes of new output were skipped; the whole output is in ${output.outputPath})`
    )
  }
  lines.push(output.output === "" ? "<output>(no new output)</output>" : `<output>\n${output.output}\n</output>`)
  return lines.join("\n")
}

const stopText = (output: TaskStopOutput): string =>
  output.stopped
    ? `Stopped task ${output.task_id} (${output.command}): ${describeStatus(output.status)}.`
    : `Task ${output.task_id} had already ended: ${describeStatus(output.status)}.`

const noRegistry = "Background tasks are not available in this runtime (no task registry)."

const summaryOf = (task: TaskRecord) => ({ task_id: task.id, command: task.command, status: task.status })

// ---------------------------------------------------------------------------------------------------------------
// layers
// ---------------------------------------------------------------------------------------------------------------

const makeOutput = serviceOf(
  outputDefinition,
  Effect.gen(function*() {
    const registry = Option.getOrUndefined(yield* Effect.serviceOption(TaskRegistry))
    return {
      isEnabled: Effect.succeed(
        registry === undefined ? Tool.Availability.disabled(noRegistry) : Tool.Availability.enabled
      ),
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          const id = idOf(input, input.bash_id)
          if (id === "") return yield* Tool.reject("The required parameter `task_id` is missing.")
          if (registry === undefined) return yield* Tool.reject(noRegistry)
          const known = yield* Effect.either(registry.get(id))
          if (known._tag === "Left") return yield* Tool.reject(known.left.message)
          if (input.filter !== undefined) {
            try {
              new RegExp(input.filter)
            } catch (error) {
              return yield* Tool.reject(`filter is not a regular expression: ${(error as Error).message}`)
            }
          }
          return input
        }),
      // Reads this session's own task files: nothing to ask.
      checkPermissions: () => Effect.succeed(PermissionCheck.allow({ reason: "reads this session's own task" })),
      traits: () => ({ readOnly: true, concurrencySafe: true }),
      claims: (input) => [Tool.Claim.read(`task:${idOf(input, input.bash_id)}`)],
      classifierInput: (input) => `read the output of background task ${idOf(input, input.bash_id)}`,
      call: (input) =>
        Effect.gen(function*() {
          const id = idOf(input, input.bash_id)
          // BashOutput never waited; TaskOutput waits by default.
          const block = input.block ?? input.bash_id === undefined
          const read = yield* registry!.read(id, {
            block,
            timeout: Duration.millis(input.timeout ?? 30_000),
            filter: input.filter === undefined ? undefined : new RegExp(input.filter)
          }).pipe(Effect.mapError((error) => new Tool.ToolError({ message: error.message })))
          return {
            ...summaryOf(read.task),
            output: read.output,
            skippedBytes: read.skippedBytes,
            outputPath: read.task.outputPath,
            waitTimedOut: read.waitTimedOut
          } satisfies TaskOutputOutput
        }),
      renderUse: (input) => [UiBlock.Title({ text: `TaskOutput: ${idOf(input, input.bash_id)}` })],
      renderResult: (output) => [
        UiBlock.Code({ text: output.output }),
        UiBlock.Fields({
          fields: [
            ["task", output.task_id],
            ["status", describeStatus(output.status)],
            ...(output.skippedBytes > 0 ? [["skipped", `${output.skippedBytes} bytes`] as const] : [])
          ]
        })
      ],
      toModel: outputText
    }
  })
)

const makeStop = serviceOf(
  stopDefinition,
  Effect.gen(function*() {
    const registry = Option.getOrUndefined(yield* Effect.serviceOption(TaskRegistry))
    return {
      isEnabled: Effect.succeed(
        registry === undefined ? Tool.Availability.disabled(noRegistry) : Tool.Availability.enabled
      ),
      validate: (input) =>
        Effect.gen(function*() {
          const id = idOf(input, input.shell_id)
          if (id === "") return yield* Tool.reject("The required parameter `task_id` is missing.")
          if (registry === undefined) return yield* Tool.reject(noRegistry)
          const known = yield* Effect.either(registry.get(id))
          if (known._tag === "Left") return yield* Tool.reject(known.left.message)
          return input
        }),
      // Only this session's own tasks can be named (validate): stopping one needs no further permission.
      checkPermissions: () => Effect.succeed(PermissionCheck.allow({ reason: "stops this session's own task" })),
      traits: () => ({ readOnly: false, concurrencySafe: false, destructive: false }),
      claims: (input) => [Tool.Claim.write(`task:${idOf(input, input.shell_id)}`)],
      classifierInput: (input) => `stop background task ${idOf(input, input.shell_id)}`,
      call: (input) =>
        Effect.gen(function*() {
          const id = idOf(input, input.shell_id)
          const before = yield* registry!.get(id).pipe(Effect.orDie)
          const after = yield* registry!.stop(id).pipe(Effect.orDie)
          return { ...summaryOf(after), stopped: before.status._tag === "Running" } satisfies TaskStopOutput
        }),
      renderUse: (input) => [UiBlock.Title({ text: `TaskStop: ${idOf(input, input.shell_id)}` })],
      renderResult: (output) => [UiBlock.Text({ text: stopText(output) })],
      toModel: stopText
    }
  })
)

/**
 * The TaskOutput tool (alias BashOutput).
 *
 * @since 0.3.0
 * @category tools
 */
export const TaskOutputTool = Object.assign(outputDefinition, { layer: Layer.scoped(outputDefinition, makeOutput) })

/**
 * The TaskStop tool (alias KillShell).
 *
 * @since 0.3.0
 * @category tools
 */
export const TaskStopTool = Object.assign(stopDefinition, { layer: Layer.scoped(stopDefinition, makeStop) })

/**
 * TaskOutput's and TaskStop's services, built: what their layers provide, as Effects (the built-in tools are built
 * together, in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = { output: makeOutput, stop: makeStop } as const

/**
 * A catalogue's `denies` that also leaves out TaskOutput and TaskStop when it leaves out Bash: without Bash no task
 * starts, so the model is not shown tools over tasks it cannot have.
 *
 * @since 0.3.0
 * @category utilities
 */
export const withTaskTools = (
  denies: (definition: Tool.Definition.Any) => boolean,
  bash: Tool.Definition.Any
): (definition: Tool.Definition.Any) => boolean =>
(definition) =>
  denies(definition) ||
  ((definition.name === outputDefinition.definition.name || definition.name === stopDefinition.definition.name) &&
    denies(bash))
