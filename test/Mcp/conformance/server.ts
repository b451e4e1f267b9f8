/**
 * The MCP conformance suite's server under test: the tools its server scenarios name, written with `Tool.make` and
 * served through the library (`McpServe.http`) on 127.0.0.1, governed like any other tools (a tool-only policy, no
 * approver but the client's elicitation). Prints the endpoint's URL as its first line on standard output.
 */
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer, Schema } from "effect"
import { ToolRegistry } from "../../../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../../../src/Hooks/ToolHooks.js"
import * as McpServe from "../../../src/Mcp/McpServe.js"
import { Approver } from "../../../src/Permission/Approver.js"
import { PermissionPolicy } from "../../../src/Permission/PermissionPolicy.js"
import { ResultStore } from "../../../src/Session/ResultStore.js"
import { PermissionCheck } from "../../../src/Tool/Permission.js"
import * as Tool from "../../../src/Tool/Tool.js"

/** A 1x1 red PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="

const NoInput = Schema.Struct({})

const SimpleText = Tool.make("test_simple_text", {
  description: "Returns a simple text.",
  input: NoInput,
  output: Schema.String,
  touchesEnvironment: false
})
const ImageContent = Tool.make("test_image_content", {
  description: "Returns an image.",
  input: NoInput,
  touchesEnvironment: false
})
const ErrorHandling = Tool.make("test_error_handling", {
  description: "Always fails.",
  input: NoInput,
  touchesEnvironment: false
})
const WithProgress = Tool.make("test_tool_with_progress", {
  description: "Reports progress three times.",
  input: NoInput,
  output: Schema.String,
  touchesEnvironment: false
})
const WithLogging = Tool.make("test_tool_with_logging", {
  description: "Reports three steps (sent as log messages once the client set a level).",
  input: NoInput,
  output: Schema.String,
  touchesEnvironment: false
})
const Elicitation = Tool.make("test_elicitation", {
  description: "Asks the person before it runs (through the approval form).",
  input: Schema.Struct({ message: Schema.String }),
  output: Schema.String
})
const Address = Schema.Struct({ street: Schema.optional(Schema.String), city: Schema.optional(Schema.String) })
  .annotations({ identifier: "address" })
const JsonSchema2020 = Tool.make("json_schema_2020_12_tool", {
  description: "Tool with JSON Schema 2020-12 features",
  input: Schema.Struct({ name: Schema.optional(Schema.String), address: Schema.optional(Address) }),
  output: Schema.String,
  touchesEnvironment: false
})

const steps = (context: Tool.CallContext, messages: ReadonlyArray<string>) =>
  Effect.forEach(messages, (message, i) =>
    Effect.zipRight(
      i === 0 ? Effect.void : Effect.sleep("50 millis"),
      context.progress({ message, fraction: i / (messages.length - 1) })
    ), { discard: true })

const tools = [SimpleText, ImageContent, ErrorHandling, WithProgress, WithLogging, Elicitation, JsonSchema2020] as const

const implementations = Layer.mergeAll(
  SimpleText.implement({ call: () => Effect.succeed("This is a simple text response for testing.") }),
  ImageContent.implement({
    call: () => Effect.succeed(PNG),
    toModel: (data) => [{ type: "image", source: { type: "base64", media_type: "image/png", data: data as string } }]
  }),
  ErrorHandling.implement({
    call: () => Effect.fail(new Tool.ToolError({ message: "This tool intentionally returns an error for testing" }))
  }),
  WithProgress.implement({
    call: (_, context) => Effect.as(steps(context, ["0/100", "50/100", "100/100"]), "Progress reported.")
  }),
  WithLogging.implement({
    call: (_, context) =>
      Effect.as(
        steps(context, ["Tool execution started", "Tool processing data", "Tool execution completed"]),
        "Logged three steps."
      )
  }),
  Elicitation.implement({
    checkPermissions: ({ message }) => Effect.succeed(PermissionCheck.ask(message)),
    call: ({ message }) => Effect.succeed(`Approved: ${message}`)
  }),
  JsonSchema2020.implement({ call: ({ name }) => Effect.succeed(`Hello ${name ?? "nobody"}`) })
)

const session = Layer.mergeAll(
  ToolRegistry.layer(tools).pipe(Layer.provide(implementations)),
  PermissionPolicy.toolOnly,
  ToolHooks.none,
  Approver.denyAll,
  ResultStore.layerMemory()
)

Effect.runFork(
  Effect.gen(function*() {
    const { url } = yield* McpServe.http({ name: "conformance-fixture", port: 0, session: () => session })
    process.stdout.write(`${url}\n`)
    yield* Effect.never
  }).pipe(Effect.scoped, Effect.provide(NodeContext.layer))
)
