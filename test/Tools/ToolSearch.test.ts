import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, Layer, Schema } from "effect"
import { DiscoveredTools, ToolCatalog } from "../../src/Catalog/ToolCatalog.js"
import * as Tool from "../../src/Tool/Tool.js"
import { ToolResultContent } from "../../src/Tool/Wire.js"
import { builtinTools } from "../../src/Tools/index.js"
import {
  layer as ToolSearchLive,
  makeIndex,
  resultContent,
  search,
  splitWords,
  ToolSearch
} from "../../src/Tools/ToolSearch.js"

const tool = (
  name: string,
  description: string,
  options: { aliases?: ReadonlyArray<string>; searchHint?: string; input?: Schema.Schema.AnyNoContext } = {}
) =>
  Tool.make(name, {
    description,
    input: options.input ?? Schema.Struct({}),
    touchesEnvironment: false,
    loading: "deferred",
    ...(options.aliases === undefined ? {} : { aliases: options.aliases }),
    ...(options.searchHint === undefined ? {} : { searchHint: options.searchHint })
  }).definition

const catalogue = [
  ...builtinTools.map((t) => t.definition),
  tool("mcp__github__create_issue", "Create a new issue in a GitHub repository.", {
    input: Schema.Struct({
      repo: Schema.String.annotations({ description: "owner/name" }),
      title: Schema.String,
      body: Schema.String
    })
  }),
  tool("mcp__github__list_pull_requests", "List open pull requests of a repository."),
  tool("mcp__github__merge_pull_request", "Merge a pull request."),
  tool("mcp__slack__post_message", "Send a message to a Slack channel.", { aliases: ["slack_send"] }),
  tool("mcp__slack__list_channels", "List the channels of the workspace."),
  tool("mcp__codex__ask_codex", "Ask another coding agent for a second opinion."),
  tool("mcp__jira__createTicket", "Open a ticket in Jira.", { searchHint: "bug report task" }),
  tool("mcp__fs__delete_directory", "Deletes a directory and everything in it."),
  tool("mcp__cart__remove_item", "Takes an item out of the shopping cart."),
  tool("mcp__cart__delete_item", "Deletes an item from the catalog."),
  tool("mcp__db__run_query", "Execute SQL against the analytics warehouse.", {
    input: Schema.Struct({ sql: Schema.String.annotations({ description: "A PostgreSQL statement" }) })
  })
]

const index = makeIndex(catalogue)
const found = (query: string, max = 5) => {
  const result = search(index, query, max)
  return result._tag === "Found" ? result.names : []
}

describe("ToolSearch queries", () => {
  it("select: loads tools by exact name or alias, in the order asked, and reports names that do not exist", () => {
    expect(search(index, "select:mcp__slack__post_message,Read")).toEqual({
      _tag: "Found",
      names: ["mcp__slack__post_message", "Read"],
      missing: []
    })
    expect(search(index, "select: slack_send , Nope")).toEqual({
      _tag: "Found",
      names: ["mcp__slack__post_message"],
      missing: ["Nope"]
    })
    expect(resultContent("select:slack_send,Nope", search(index, "select:slack_send,Nope"))).toEqual([
      { type: "tool_reference", tool_name: "mcp__slack__post_message" },
      { type: "text", text: "No tools named: Nope." }
    ])
  })

  it("an exact name (any case) acts as select", () => {
    expect(found("mcp__db__run_query")).toEqual(["mcp__db__run_query"])
    expect(found("grep")).toEqual(["Grep"])
  })

  it("an mcp__server prefix lists that server's tools, and words after it rank within the server", () => {
    expect(found("mcp__github")).toEqual([
      "mcp__github__create_issue",
      "mcp__github__list_pull_requests",
      "mcp__github__merge_pull_request"
    ])
    expect(found("mcp__github__")).toEqual(found("mcp__github"))
    expect(found("mcp__github merge")[0]).toBe("mcp__github__merge_pull_request")
    expect(found("mcp__slack issue")).toEqual([])
  })

  it("+term marks a required term", () => {
    // Only tools matching "slack" (so no list_pull_requests), ranked by the other words.
    expect(found("list +slack")).toEqual(["mcp__slack__list_channels", "mcp__slack__post_message"])
    expect(found("list pull requests +channel")).toEqual(["mcp__slack__list_channels", "mcp__slack__post_message"])
    expect(found("+jira +nothinglikethis")).toEqual([])
  })

  it("ranks by name parts, searchHint, description and parameters, with query words split like names", () => {
    // Claude Code's known miss: "ask_codex" did not find mcp__x__ask_codex.
    expect(found("ask_codex")[0]).toBe("mcp__codex__ask_codex")
    expect(found("createTicket")[0]).toBe("mcp__jira__createTicket")
    expect(found("bug report")[0]).toBe("mcp__jira__createTicket")
    expect(found("postgresql statement")[0]).toBe("mcp__db__run_query")
    expect(found("send a slack message")[0]).toBe("mcp__slack__post_message")
    expect(found("open issues on github")[0]).toBe("mcp__github__create_issue")
    expect(found("run a shell command")[0]).toBe("Bash")
    expect(found("find files by name with a glob pattern")[0]).toBe("Glob")
    expect(found("list pull requests", 2)).toHaveLength(2)
  })

  it("a query word also finds its synonyms, weighted below the word itself", () => {
    expect(found("remove a folder")[0]).toBe("mcp__fs__delete_directory")
    expect(found("remove item").slice(0, 2)).toEqual(["mcp__cart__remove_item", "mcp__cart__delete_item"])
    expect(found("delete item").slice(0, 2)).toEqual(["mcp__cart__delete_item", "mcp__cart__remove_item"])
  })

  it("nothing found: a plain text with the closest names", () => {
    const result = search(index, "mcp__githb__create_isue")
    expect(result).toEqual({
      _tag: "NotFound",
      closest: ["mcp__github__create_issue", "mcp__jira__createTicket", "mcp__github__list_pull_requests"]
    })
    expect(resultContent("mcp__githb__create_isue", result)).toBe(
      "No tools matched \"mcp__githb__create_isue\". Closest tool names: mcp__github__create_issue, mcp__jira__createTicket, mcp__github__list_pull_requests. Try \"select:<name>\" with an exact name, \"mcp__<server>\" for a server's tools, or other keywords."
    )
    expect(resultContent("zzqx", search(index, "zzqx"))).toBe(
      "No tools matched \"zzqx\". Try \"select:<name>\" with an exact name, \"mcp__<server>\" for a server's tools, or other keywords."
    )
  })

  it("results are tool_reference blocks the wire schema accepts", () => {
    const content = resultContent("slack", search(index, "slack"))
    expect(Schema.is(ToolResultContent)(content)).toBe(true)
    expect(Schema.decodeUnknownSync(ToolResultContent)([{ type: "tool_reference", tool_name: "X" }])).toEqual([{
      type: "tool_reference",
      tool_name: "X"
    }])
  })
})

describe("words", () => {
  it("splits on __, _, -, spaces and camelCase", () => {
    expect(splitWords("mcp__github__createIssue")).toEqual(["mcp", "github", "create", "issue"])
    expect(splitWords("get-HTTPServer_status")).toEqual(["get", "http", "server", "status"])
  })

  // Words of two letters or more: "aAA" (one-letter words in camelCase) reads as "a" + the acronym "AA".
  const word = fc.stringMatching(/^[a-z][a-z0-9]{1,7}$/)
  it.prop("a name joined from words with any separators splits back into those words", [
    fc.array(word, { minLength: 1, maxLength: 5 }),
    fc.array(fc.constantFrom("_", "__", "-", "camel"), { minLength: 4, maxLength: 4 })
  ], ([words, separators]) => {
    let name = words[0]!
    words.slice(1).forEach((next, i) => {
      const separator = separators[i]!
      name += separator === "camel" ? next[0]!.toUpperCase() + next.slice(1) : `${separator}${next}`
    })
    expect(splitWords(name)).toEqual(words)
  })

  it.prop("select: returns exactly the existing names asked for, once each, in the order asked", [
    fc.array(fc.oneof(fc.constantFrom(...catalogue.map((d) => d.name)), fc.constant("Missing_tool")), {
      minLength: 1,
      maxLength: 6
    })
  ], ([names]) => {
    const result = search(index, `select:${names.join(",")}`)
    const existing = [...new Set(names.filter((name) => name !== "Missing_tool"))]
    if (existing.length === 0) expect(result._tag).toBe("NotFound")
    else {expect(result).toEqual({
        _tag: "Found",
        names: existing,
        missing: names.filter((name) => name === "Missing_tool")
      })}
  })
})

describe("the ToolSearch tool", () => {
  const layer = ToolSearchLive.pipe(
    Layer.provideMerge(ToolCatalog.layer(catalogue.map((definition) => ({ definition })))),
    Layer.provideMerge(DiscoveredTools.layer())
  )

  it.effect("is read-only, concurrency-safe, never deferred, and adds what it finds to the discovered set", () =>
    Effect.gen(function*() {
      expect(ToolSearch.definition.loading).toBe("always")
      const service = yield* ToolSearch
      expect(service.plan({ query: "x", max_results: 5 }).traits).toMatchObject({
        readOnly: true,
        concurrencySafe: true
      })
      expect(service.plan({ query: "x", max_results: 5 }).claims).toEqual([])
      const output = yield* Effect.scoped(
        service.plan({ query: "mcp__slack", max_results: 5 }).call({
          toolUseId: "t",
          toolName: "ToolSearch",
          progress: () => Effect.void,
          isReadDenied: () => false
        })
      )
      expect(output.found).toEqual(["mcp__slack__post_message", "mcp__slack__list_channels"])
      const discovered = yield* DiscoveredTools
      expect([...(yield* discovered.get)]).toEqual(["mcp__slack__post_message", "mcp__slack__list_channels"])
    }).pipe(Effect.provide(layer)))

  it("max_results defaults to 5 and is bounded", () => {
    const decode = Schema.decodeUnknownEither(ToolSearch.definition.input)
    expect(decode({ query: "x" })).toEqual(Either.right({ query: "x", max_results: 5 }))
    expect(decode({ query: "x", max_results: 0 })._tag).toBe("Left")
    expect(decode({ query: "x", max_results: 51 })._tag).toBe("Left")
  })
})
