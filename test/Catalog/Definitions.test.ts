import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, JSONSchema, Layer, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Definitions from "../../src/Catalog/Definitions.js"
import { makeRegistry, ToolRegistry } from "../../src/Catalog/ToolRegistry.js"
import * as ResourceTools from "../../src/Mcp/ResourceTools.js"
import { ToolRuntime } from "../../src/Runtime/ToolRuntime.js"
import { testRuntime } from "../../src/testing/index.js"
import * as Tool from "../../src/Tool/Tool.js"
import { builtinTools } from "../../src/Tools/index.js"
import { ToolSearch } from "../../src/Tools/ToolSearch.js"
import {
  anthropicProblems,
  geminiToolsProblems,
  nodes,
  openAiChatProblems,
  openAiResponsesProblems
} from "./Definitions/restrictions.js"

type Node = { readonly [key: string]: unknown }

const builtins = [
  ...builtinTools.map((tool) => tool.definition),
  ...ResourceTools.tools.map((tool) => tool.definition),
  ToolSearch.definition
]

const shapes = {
  anthropic: (definition: Tool.Definition.Any) => Definitions.anthropic(definition),
  "openai-chat": (definition: Tool.Definition.Any) => Definitions.openAiChat(definition),
  "openai-chat-strict": (definition: Tool.Definition.Any) => Definitions.openAiChat(definition, { strict: true }),
  "openai-responses": (definition: Tool.Definition.Any) => Definitions.openAiResponses(definition),
  "openai-responses-lenient": (definition: Tool.Definition.Any) =>
    Definitions.openAiResponses(definition, { strict: false }),
  gemini: (definition: Tool.Definition.Any) => Definitions.gemini(definition)
} as const

const problemsOf = (shape: keyof typeof shapes, value: unknown): Array<string> => {
  const node = value as { readonly [key: string]: never }
  switch (shape) {
    case "anthropic":
      return anthropicProblems(node)
    case "openai-chat":
    case "openai-chat-strict":
      return openAiChatProblems(node)
    case "openai-responses":
    case "openai-responses-lenient":
      return openAiResponsesProblems(node)
    case "gemini":
      return geminiToolsProblems([{ functionDeclarations: [node] }])
  }
}

describe("Definitions of the built-in tools", () => {
  for (const definition of builtins) {
    for (const shape of Object.keys(shapes) as Array<keyof typeof shapes>) {
      it(`${definition.name} as ${shape}: snapshot, and valid under the provider's restrictions`, () => {
        const emitted = shapes[shape](definition)
        expect(problemsOf(shape, emitted)).toEqual([])
        expect(emitted).toMatchSnapshot()
      })
    }
  }

  it("every built-in tool is strict-capable for OpenAI: strict mode is really used, not silently dropped", () => {
    for (const definition of builtins) {
      expect(Definitions.openAiResponses(definition).strict, definition.name).toBe(true)
      expect(Definitions.explain(definition, "openai-strict").notStrict, definition.name).toBeUndefined()
    }
  })

  it("the canonical schemas carry no $schema, $ref, allOf or generated title (Effect's raw output has them)", () => {
    for (const definition of builtins) {
      const text = JSON.stringify(Definitions.inputSchema(definition))
      expect(text, definition.name).not.toMatch(/"\$schema"|"\$ref"|"allOf"|"title"/)
    }
    // The starting point really had them: Read's offset has the generated title `greaterThanOrEqualTo(0)` in
    // JSONSchema.make. It is a `number` as in Claude Code (the decoder still wants a whole number).
    const read = builtins.find((definition) => definition.name === "Read")!
    expect(JSON.stringify(JSONSchema.make(read.input))).toContain(`"title":"greaterThanOrEqualTo(0)"`)
    const offset = (Definitions.inputSchema(read)["properties"] as Node)["offset"] as Node
    expect(offset).toEqual({
      type: "number",
      minimum: 0,
      description:
        "The line number to start reading from (1-based). Only provide if the file is too large to read at once"
    })
  })

  it("forProvider wraps Gemini's declarations in one tool and marks Anthropic's deferred tools", () => {
    const gemini = Definitions.forProvider("gemini", builtins)
    expect(geminiToolsProblems(gemini)).toEqual([])
    expect((gemini[0] as { functionDeclarations: Array<unknown> }).functionDeclarations).toHaveLength(builtins.length)
    const anthropic = Definitions.forProvider("anthropic", builtins, {
      deferLoading: new Set(["Bash"])
    }) as ReadonlyArray<Definitions.AnthropicTool>
    expect(anthropic.filter((tool) => tool.defer_loading === true).map((tool) => tool.name)).toEqual(["Bash"])
  })
})

// ---------------------------------------------------------------------------------------------------------------
// rewrites
// ---------------------------------------------------------------------------------------------------------------

interface TreeNode {
  readonly label: string
  readonly children: ReadonlyArray<TreeNode>
}
const TreeNode: Schema.Schema<TreeNode> = Schema.Struct({
  label: Schema.String,
  children: Schema.Array(Schema.suspend(() => TreeNode))
}).annotations({ identifier: "TreeNode" })

const Tricky = Tool.make("Tricky", {
  description: "Exercises the rewrites.",
  touchesEnvironment: false,
  input: Schema.Struct({
    name: Schema.String.pipe(Schema.minLength(3)).annotations({ description: "At least three characters" }),
    ratio: Schema.Number.pipe(Schema.greaterThan(0)),
    count: Schema.optional(Schema.Int.pipe(Schema.greaterThan(0))),
    mode: Schema.optionalWith(Schema.Literal("fast", "slow"), { default: () => "fast" as const }),
    level: Schema.Literal(1, 2, 3),
    note: Schema.NullOr(Schema.String),
    point: Schema.Struct({ x: Schema.Number, y: Schema.Number }).annotations({ identifier: "Point" }),
    other: Schema.optional(Schema.Struct({ x: Schema.Number, y: Schema.Number }).annotations({ identifier: "Point" }))
  }),
  output: Schema.String
})

const Recursive = Tool.make("Recursive", {
  description: "A tree.",
  touchesEnvironment: false,
  input: Schema.Struct({ tree: TreeNode })
})

const Free = Tool.make("Free", {
  description: "A free-form map and a pair.",
  touchesEnvironment: false,
  input: Schema.Struct({
    labels: Schema.Record({ key: Schema.String, value: Schema.String }),
    pair: Schema.Tuple(Schema.String, Schema.Number)
  })
})

describe("the rewrites", () => {
  it("inlines a non-recursive identified schema everywhere it is used (no $defs left)", () => {
    const schema = Definitions.inputSchema(Tricky.definition)
    expect(schema["$defs"]).toBeUndefined()
    const properties = schema["properties"] as Node
    expect(properties["point"]).toEqual({
      type: "object",
      required: ["x", "y"],
      properties: { x: { type: "number" }, y: { type: "number" } },
      additionalProperties: false
    })
    expect(properties["other"]).toEqual(properties["point"])
  })

  it("keeps a recursive schema in $defs for Anthropic and OpenAI, and unrolls it for Gemini", () => {
    const anthropic = Definitions.anthropic(Recursive.definition)
    expect(anthropicProblems(anthropic as never)).toEqual([])
    expect(Object.keys(anthropic.input_schema["$defs"] as Node)).toEqual(["TreeNode"])
    const strict = Definitions.openAiResponses(Recursive.definition)
    expect(strict.strict).toBe(true)
    expect(openAiResponsesProblems(strict as never)).toEqual([])
    const gemini = Definitions.gemini(Recursive.definition)
    expect(geminiToolsProblems([{ functionDeclarations: [gemini] }])).toEqual([])
    expect(JSON.stringify(gemini)).not.toContain("$ref")
    // Three levels of children, then an object without properties.
    const depth = (node: Node): number => {
      const children = (node["properties"] as Node | undefined)?.["children"] as Node | undefined
      return children === undefined ? 0 : 1 + depth(children["items"] as Node)
    }
    expect(depth((gemini.parameters!["properties"] as Node)["tree"] as Node)).toBe(3)
    expect(Definitions.explain(Recursive.definition, "gemini").dropped.map((d) => d.keyword)).toEqual(["$ref"])
  })

  it("strict: optional properties become required unions with null; the others keep their type", () => {
    const { parameters } = Definitions.openAiResponses(Tricky.definition)
    const properties = parameters["properties"] as Node
    expect(parameters["required"]).toEqual(["name", "ratio", "count", "mode", "level", "note", "point", "other"])
    expect(properties["count"]).toEqual({
      type: ["integer", "null"],
      exclusiveMinimum: 0,
      description: "a positive number"
    })
    expect(properties["mode"]).toEqual({ type: ["string", "null"], enum: ["fast", "slow", null] })
    expect(properties["note"]).toEqual({ anyOf: [{ type: "string" }, { type: "null" }] })
    expect((properties["other"] as Node)["type"]).toEqual(["object", "null"])
    // minLength is not a strict keyword: dropped, and said so.
    expect(properties["name"]).toEqual({ type: "string", description: "At least three characters" })
    expect(Definitions.explain(Tricky.definition, "openai-strict").dropped).toEqual([{
      path: "/properties/name",
      keyword: "minLength"
    }])
  })

  it("Gemini: nullable instead of null unions, string enums only, integer exclusive bounds as inclusive ones", () => {
    const parameters = Definitions.gemini(Tricky.definition).parameters!
    const properties = parameters["properties"] as Node
    expect(properties["note"]).toEqual({ type: "string", nullable: true })
    expect(properties["count"]).toEqual({ type: "integer", minimum: 1, description: "a positive number" })
    // The constraint survives in words (Effect's description), and in the decoder.
    expect(properties["ratio"]).toEqual({ type: "number", description: "a positive number" })
    expect(properties["level"]).toEqual({ type: "number" })
    expect(properties["mode"]).toEqual({ type: "string", enum: ["fast", "slow"] })
    expect(Definitions.explain(Tricky.definition, "gemini").dropped).toEqual([
      { path: "/properties/ratio", keyword: "exclusiveMinimum" },
      { path: "/properties/level", keyword: "enum" }
    ])
  })

  it("a record or a tuple cannot be strict: sent with strict: false and the reason", () => {
    const responses = Definitions.openAiResponses(Free.definition)
    expect(responses.strict).toBe(false)
    expect(openAiResponsesProblems(responses as never)).toEqual([])
    expect(Definitions.explain(Free.definition, "openai-strict").notStrict).toBe(
      "strict mode cannot express a free-form object (a record) (at /properties/labels)"
    )
    const chat = Definitions.openAiChat(Free.definition, { strict: true })
    expect(chat.function.strict).toBe(false)
    const gemini = Definitions.gemini(Free.definition)
    expect(geminiToolsProblems([{ functionDeclarations: [gemini] }])).toEqual([])
    expect((gemini.parameters!["properties"] as Node)["pair"]).toEqual({
      type: "array",
      items: { anyOf: [{ type: "string" }, { type: "number" }] },
      minItems: 2,
      maxItems: 2
    })
  })

  it("restoreOmitted turns a strict model's nulls back into absent parameters, so defaults apply", () => {
    const edit = builtins.find((definition) => definition.name === "Edit")!
    const input = { file_path: "/a", old_string: "x", new_string: "y", replace_all: null }
    const restored = Definitions.restoreOmitted(edit, input)
    expect(restored).toEqual({ file_path: "/a", old_string: "x", new_string: "y" })
    expect(Schema.decodeUnknownSync(edit.input as Schema.Schema<unknown>)(restored)).toEqual({
      file_path: "/a",
      old_string: "x",
      new_string: "y",
      replace_all: false
    })
    // A null where the schema itself accepts null is the model's value, kept.
    expect(Definitions.restoreOmitted(Tricky.definition, { note: null, count: null, other: null })).toEqual({
      note: null
    })
  })

  it("restoreOmitted follows a union's members: a null is dropped only where the member it belongs to made the property optional", () => {
    const Choice = Tool.make("Choice", {
      description: "A union whose members give `mode` two meanings.",
      input: Schema.Struct({
        pick: Schema.Union(
          Schema.Struct({ kind: Schema.Literal("a"), mode: Schema.NullOr(Schema.Boolean) }),
          Schema.Struct({ kind: Schema.Literal("b"), mode: Schema.optional(Schema.Boolean) })
        )
      }),
      touchesEnvironment: false
    })
    const decode = Schema.decodeUnknownEither(Choice.definition.input as Schema.Schema<unknown>)
    const a = Definitions.restoreOmitted(Choice.definition, { pick: { kind: "a", mode: null } })
    const b = Definitions.restoreOmitted(Choice.definition, { pick: { kind: "b", mode: null } })
    expect(a).toEqual({ pick: { kind: "a", mode: null } })
    expect(b).toEqual({ pick: { kind: "b" } })
    expect([decode(a)._tag, decode(b)._tag]).toEqual(["Right", "Right"])
  })

  it("an input schema with a jsonSchema annotation (an MCP tool) is taken from it, without $schema", () => {
    const fixture = JSON.parse(
      fs.readFileSync(path.join(__dirname, "..", "..", "bench", "fixtures", "mcp-filesystem.json"), "utf8")
    ) as {
      tools: ReadonlyArray<{ name: string; description: string; inputSchema: object }>
    }
    const raw = fixture.tools.find((tool) => tool.name === "edit_file")!
    expect(JSON.stringify(raw.inputSchema)).toContain("$schema")
    const Mcp = Tool.make("mcp__filesystem__edit_file", {
      description: raw.description,
      input: Schema.Unknown.annotations({ jsonSchema: raw.inputSchema }),
      touchesEnvironment: false
    })
    for (const shape of Object.keys(shapes) as Array<keyof typeof shapes>) {
      const emitted = shapes[shape](Mcp.definition)
      expect(problemsOf(shape, emitted), shape).toEqual([])
    }
    expect(JSON.stringify(Definitions.anthropic(Mcp.definition))).not.toContain("$schema")
  })

  it("a schema without a JSON form is a DefinitionError naming the tool", () => {
    const Opaque = Tool.make("Opaque", {
      description: "x",
      input: Schema.Struct({ at: Schema.DateFromSelf }),
      touchesEnvironment: false
    })
    expect(() => Definitions.anthropic(Opaque.definition)).toThrow(/The input schema of Opaque has no JSON Schema form/)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// dropped constraints are still enforced
// ---------------------------------------------------------------------------------------------------------------

describe("a constraint a shape drops is still enforced by the decoder", () => {
  const TrickyLive = Tricky.implement({ call: ({ name }) => Effect.succeed(name) })
  const layer = testRuntime([Tricky], TrickyLive)
  const valid = { name: "abc", ratio: 1, level: 1, note: null, point: { x: 0, y: 0 } }

  it.effect("minLength (dropped in OpenAI strict): a two-character name gets a model-readable InvalidInput", () =>
    Effect.gen(function*() {
      // The premise: the strict definition really lacks the constraint.
      expect(JSON.stringify(Definitions.openAiResponses(Tricky.definition).parameters)).not.toContain("minLength")
      const [ok, bad] = yield* ToolRuntime.execute([
        { type: "tool_use", id: "t1", name: "Tricky", input: valid },
        { type: "tool_use", id: "t2", name: "Tricky", input: { ...valid, name: "ab" } }
      ])
      expect(ok!.status).toBe("success")
      expect(bad!.status).toBe("error")
      expect(bad!.error?._tag).toBe("InvalidInput")
      expect(bad!.result.content).toBe(
        "<tool_use_error>InputValidationError: Tool failed due to the following issue(s):\nThe parameter `name` is invalid: Expected At least three characters, actual \"ab\"</tool_use_error>"
      )
    }).pipe(Effect.provide(layer)))

  it.effect("exclusiveMinimum (dropped for Gemini's numbers): ratio 0 gets InvalidInput naming ratio", () =>
    Effect.gen(function*() {
      expect(Definitions.explain(Tricky.definition, "gemini").dropped).toContainEqual({
        path: "/properties/ratio",
        keyword: "exclusiveMinimum"
      })
      const [bad] = yield* ToolRuntime.execute([{
        type: "tool_use",
        id: "t1",
        name: "Tricky",
        input: { ...valid, ratio: 0 }
      }])
      expect(bad!.error?._tag).toBe("InvalidInput")
      expect(bad!.result.content).toContain("The parameter `ratio` is invalid")
    }).pipe(Effect.provide(layer)))
})

// ---------------------------------------------------------------------------------------------------------------
// names
// ---------------------------------------------------------------------------------------------------------------

describe("tool names at registration", () => {
  const registered = (name: string) => ({
    definition: { ...Tricky.definition, name, aliases: [] },
    service: Tricky.service({ call: () => Effect.succeed("") }) as Tool.AnyService
  })

  it("a name breaking ^[a-zA-Z0-9_-]{1,64}$ is refused with a clear error", () => {
    expect(() => makeRegistry([registered("mcp__my server__do")])).toThrow(
      "Tool name \"mcp__my server__do\" cannot be sent to a model: names must match ^[a-zA-Z0-9_-]{1,64}$ (letters, digits, _ and -; 1 to 64 characters)"
    )
    expect(() => makeRegistry([registered("x".repeat(65))])).toThrow(/cannot be sent to a model/)
    expect(() => makeRegistry([registered("")])).toThrow(/cannot be sent to a model/)
    expect(makeRegistry([registered("mcp__srv__get-item_2")]).tools).toHaveLength(1)
    expect(makeRegistry([registered("x".repeat(64))]).tools).toHaveLength(1)
  })

  it.effect("the layer refuses it too", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Layer.build(ToolRegistry.fromRegistered([registered("a.b")])).pipe(Effect.scoped))
      expect(exit._tag).toBe("Failure")
      expect(exit._tag === "Failure" ? Cause.pretty(exit.cause) : "").toContain("cannot be sent to a model")
    }))

  it("every node path walk covers nested schemas (the restriction checks see everything)", () => {
    const schema = Definitions.anthropic(Recursive.definition).input_schema
    expect(nodes(schema as never).map(([p]) => p)).toContain("/$defs/TreeNode/properties/children/items")
  })
})
