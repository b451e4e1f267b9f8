/**
 * The `LSP` tool (Claude Code's name and schema: `operation`, `filePath`, `line`, `character` 1-based, `query` for
 * `workspaceSymbol`): code intelligence from the language servers {@link LspClients} runs, one per (server, root),
 * started on first use.
 *
 * - Operations: goToDefinition, findReferences, hover, documentSymbol, workspaceSymbol, goToImplementation,
 *   prepareCallHierarchy, incomingCalls, outgoingCalls (the last two prepare the item at the position first).
 * - Results are compact text (`Results`): paths relative to the working directory, 1-based positions, at most 100
 *   entries and a count of the rest; a person sees a title and the same list.
 * - Read-only and concurrency-safe; claims the file it asks about for reading; deferred (found by tool search).
 * - Paths as Read has them: the file must be in the workspace (else the person is asked), `Read(...)` rules
 *   govern it, and a location in a file outside the workspace or under a Read deny rule is left out of the result
 *   (counted, never shown).
 * - Disabled (left out of what the model sees) when no server is configured.
 *
 * @since 0.3.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"
import type {
  CallHierarchyIncomingCall,
  CallHierarchyItem,
  CallHierarchyOutgoingCall,
  DocumentSymbol,
  Hover,
  Location,
  LocationLink,
  ServerCapabilities,
  SymbolInformation,
  WorkspaceSymbol
} from "vscode-languageserver-protocol"
import type { LspError } from "../Lsp/Errors.js"
import type { FileSession } from "../Lsp/LspClients.js"
import { LspClients } from "../Lsp/LspClients.js"
import * as Results from "../Lsp/Results.js"
import { Workspace } from "../Session/Workspace.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { PathString } from "./internal/argumentLimits.js"
import { checkFilePath, displayPath, fileResource, ruleCovers } from "./internal/filesPaths.js"
import { WholeNumber } from "./internal/numbers.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * The operations, as Claude Code names them.
 *
 * @since 0.3.0
 * @category models
 */
export const LspOperation = Schema.Literal(
  "goToDefinition",
  "findReferences",
  "hover",
  "documentSymbol",
  "workspaceSymbol",
  "goToImplementation",
  "prepareCallHierarchy",
  "incomingCalls",
  "outgoingCalls"
)

/**
 * @since 0.3.0
 * @category models
 */
export type LspOperation = typeof LspOperation.Type

/**
 * The LSP tool's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const LspInput = Schema.Struct({
  operation: LspOperation.annotations({ description: "The LSP operation to perform" }),
  filePath: PathString("The absolute or relative path to the file"),
  line: WholeNumber(1).annotations({ description: "The line number (1-based, as shown in editors)" }),
  character: WholeNumber(1).annotations({ description: "The character offset (1-based, as shown in editors)" }),
  query: Schema.optional(Schema.String).annotations({
    description: "The symbol name to search for (workspaceSymbol only)"
  })
})

/**
 * @since 0.3.0
 * @category models
 */
export type LspInput = typeof LspInput.Type

/**
 * What the LSP tool answered.
 *
 * @since 0.3.0
 * @category models
 */
export const LspOutput = Schema.Struct({
  operation: LspOperation,
  server: Schema.String,
  /** The compact text the model gets. */
  text: Schema.String,
  /** Entries found and shown (or counted past the bound). */
  count: Schema.Number,
  /** Entries left out: outside the workspace or in files Read rules deny. */
  hidden: Schema.Number
})

/**
 * @since 0.3.0
 * @category models
 */
export type LspOutput = typeof LspOutput.Type

/**
 * The LSP tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const LspTool = Tool.make("LSP", {
  description: [
    "Interact with Language Server Protocol (LSP) servers to get code intelligence features.",
    "",
    "Supported operations:",
    "- goToDefinition: Find where a symbol is defined",
    "- findReferences: Find all references to a symbol",
    "- hover: Get hover information (documentation, type info) for a symbol",
    "- documentSymbol: Get all symbols (functions, classes, variables) in a document",
    "- workspaceSymbol: Search for symbols across the entire workspace (give the name in query)",
    "- goToImplementation: Find implementations of an interface or abstract method",
    "- prepareCallHierarchy: Get the call hierarchy item (function/method) at a position",
    "- incomingCalls: Find all functions/methods that call the function at a position",
    "- outgoingCalls: Find all functions/methods called by the function at a position",
    "",
    "All operations require filePath, line (1-based) and character (1-based), as editors show them; the file picks",
    "the language server. Results list locations as path:line:column. LSP servers must be configured for the",
    "file type; if none is, an error says so."
  ].join("\n"),
  input: LspInput,
  output: LspOutput,
  loading: "deferred",
  searchHint: "code intelligence definition references hover symbols call hierarchy language server",
  fileAccess: "read",
  maxResultChars: Infinity,
  timeout: Duration.minutes(2)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const capability: Record<LspOperation, keyof ServerCapabilities> = {
  goToDefinition: "definitionProvider",
  findReferences: "referencesProvider",
  hover: "hoverProvider",
  documentSymbol: "documentSymbolProvider",
  workspaceSymbol: "workspaceSymbolProvider",
  goToImplementation: "implementationProvider",
  prepareCallHierarchy: "callHierarchyProvider",
  incomingCalls: "callHierarchyProvider",
  outgoingCalls: "callHierarchyProvider"
}

const noServers = "No language servers are configured (.lsp.json, or --lsp-config FILE)."

type Answer = Pick<LspOutput, "text" | "count" | "hidden">

/** Runs one operation against the file's server and formats the answer. */
const perform = (
  input: LspInput,
  session: FileSession,
  visibility: Results.Visibility,
  at: string
): Effect.Effect<Answer, LspError | Tool.ToolError> =>
  Effect.gen(function*() {
    if (session.capabilities[capability[input.operation]] === undefined) {
      return yield* new Tool.ToolError({
        message: `The ${session.server.name} language server does not support ${input.operation}.`
      })
    }
    const textDocument = { uri: session.uri }
    const position = { line: input.line - 1, character: input.character - 1 }
    const at_ = { textDocument, position }
    switch (input.operation) {
      case "goToDefinition":
        return Results.locations(
          yield* session.request<Location | Array<Location | LocationLink> | null>("textDocument/definition", at_),
          { one: "definition", many: "definitions", at },
          visibility
        )
      case "goToImplementation":
        return Results.locations(
          yield* session.request<Location | Array<Location | LocationLink> | null>(
            "textDocument/implementation",
            at_
          ),
          { one: "implementation", many: "implementations", at },
          visibility
        )
      case "findReferences":
        return Results.references(
          yield* session.request<Array<Location> | null>("textDocument/references", {
            ...at_,
            context: { includeDeclaration: true }
          }),
          at,
          visibility
        )
      case "hover":
        return Results.hover(yield* session.request<Hover | null>("textDocument/hover", at_), at)
      case "documentSymbol":
        return Results.documentSymbols(
          yield* session.request<Array<DocumentSymbol | SymbolInformation> | null>("textDocument/documentSymbol", {
            textDocument
          }),
          visibility.display(session.path)
        )
      case "workspaceSymbol":
        return Results.workspaceSymbols(
          yield* session.request<Array<SymbolInformation | WorkspaceSymbol> | null>("workspace/symbol", {
            query: input.query ?? ""
          }),
          input.query ?? "",
          visibility
        )
      case "prepareCallHierarchy":
        return Results.callHierarchyItems(
          yield* session.request<Array<CallHierarchyItem> | null>("textDocument/prepareCallHierarchy", at_),
          at,
          visibility
        )
      case "incomingCalls":
      case "outgoingCalls": {
        const items = yield* session.request<Array<CallHierarchyItem> | null>(
          "textDocument/prepareCallHierarchy",
          at_
        )
        const item = items?.[0]
        if (item === undefined) return { text: `No function or method at ${at}.`, count: 0, hidden: 0 }
        const incoming = input.operation === "incomingCalls"
        const answer = yield* session.request<Array<CallHierarchyIncomingCall | CallHierarchyOutgoingCall> | null>(
          incoming ? "callHierarchy/incomingCalls" : "callHierarchy/outgoingCalls",
          { item }
        )
        return Results.calls(incoming ? "incoming" : "outgoing", item, answer, visibility)
      }
    }
  })

/**
 * The LSP tool's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  LspTool,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    // Optional, so the built-in tools need no language servers: without them the tool is disabled.
    const clients = Option.getOrUndefined(yield* Effect.serviceOption(LspClients))
    const shown = (absolute: string) => displayPath(absolute, workspace.cwd)
    const configured = clients?.config.servers ?? []
    const extensions = [...new Set(configured.flatMap((server) => Object.keys(server.extensionToLanguage)))]

    return {
      isEnabled: Effect.succeed(
        configured.length === 0
          ? Tool.Availability.disabled(noServers)
          : Tool.Availability.enabled
      ),
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          const resolved = yield* workspace.resolve(input.filePath)
          if (!resolved.exists) {
            return yield* Tool.reject(`File does not exist: ${resolved.absolute}.`)
          }
          const server = clients?.serverFor(resolved.absolute)
          if (server === undefined) {
            return yield* Tool.reject(
              `No LSP server is configured for ${nodePath.extname(resolved.absolute) || "files without an extension"}${
                extensions.length === 0 ? "" : ` (configured: ${extensions.join(", ")})`
              }.`
            )
          }
          if (server.disabled !== undefined) {
            return yield* Tool.reject(`The ${server.name} language server ${server.disabled}.`)
          }
          if (input.operation === "workspaceSymbol" && (input.query ?? "").trim() === "") {
            return yield* Tool.reject("workspaceSymbol needs a query: the name (or part of it) to search for.")
          }
          return { ...input, filePath: resolved.absolute }
        }),
      checkPermissions: (input) => checkFilePath(workspace, input.filePath, "Read"),
      traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
      claims: (input) => [Tool.Claim.read(fileResource(input.filePath, workspace.cwd, workspace.home))],
      matchesRule: (content, input, context) => ruleCovers(content, input.filePath, context),
      call: (input, context) => {
        const absolute = nodePath.resolve(workspace.cwd, input.filePath)
        const visibility: Results.Visibility = {
          visible: (path) => workspace.contains(path) && !context.isReadDenied(path),
          display: shown
        }
        const at = `${shown(absolute)}:${input.line}:${input.character}`
        if (clients === undefined) return Effect.fail(new Tool.ToolError({ message: noServers }))
        return clients.withFile(absolute, (session) =>
          Effect.map(
            // An operation the server does not offer is the model's error, not the server's.
            perform(input, session, visibility, at).pipe(
              Effect.map(Either.right),
              Effect.catchTag("ToolError", (error) => Effect.succeed(Either.left(error)))
            ),
            (answer) => ({ answer, server: session.server.name })
          )).pipe(
            Effect.mapError((error) => new Tool.ToolError({ message: error.message })),
            Effect.flatMap(({ answer, server }) =>
              answer._tag === "Left"
                ? Effect.fail(new Tool.ToolError({ message: answer.left.message }))
                : Effect.succeed<LspOutput>({ operation: input.operation, server, ...answer.right })
            )
          )
      },
      renderUse: (input) => [
        UiBlock.Title({
          text: `LSP(${input.operation}, ${shown(input.filePath)}:${input.line}:${input.character}${
            input.query === undefined ? "" : `, "${input.query}"`
          })`
        })
      ],
      renderResult: (output) => [UiBlock.Code({ text: output.text })],
      toModel: (output) => output.text
    }
  })
)

/**
 * The LSP tool's behaviour; requires the session's {@link Workspace}, and uses the {@link LspClients} in context
 * (without them the tool is disabled).
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = Layer.scoped(LspTool, make)
