/**
 * The built-in tools (`effect-tool-runtime/tools`): Read, Write, Edit, Glob, Grep, Bash, WebFetch, LSP, TaskOutput and
 * TaskStop, with what they share (Workspace, FileState), and {@link builtinLayer}, which provides all of them.
 * ToolSearch needs a session's catalogue, so it is not among them: `Search.catalogLayer(tools)` adds it.
 *
 * @since 0.1.0
 */
import type * as CommandExecutor from "@effect/platform/CommandExecutor"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { SandboxUnavailable } from "../Process/Sandbox.js"
import { FileState } from "../Session/FileState.js"
import type { FileStateOptions } from "../Session/FileState.js"
import type { ResultStore } from "../Session/ResultStore.js"
import type { Session, SessionError } from "../Session/Session.js"
import * as SessionFileState from "../Session/SessionFileState.js"
import type { Workspace } from "../Session/Workspace.js"
import { TaskRegistry } from "../Tasks/TaskRegistry.js"
import type * as Tool from "../Tool/Tool.js"
import * as AskUserQuestionModule from "./AskUserQuestion.js"
import { AskUserQuestion } from "./AskUserQuestion.js"
import * as BashModule from "./Bash.js"
import { BashTool } from "./Bash.js"
import type { BashOptions } from "./Bash.js"
import * as EditModule from "./Edit.js"
import * as FileTools from "./FileTools.js"
import * as GlobModule from "./Glob.js"
import * as GrepModule from "./Grep.js"
import * as LspModule from "./Lsp.js"
import { LspTool } from "./Lsp.js"
import * as NotebookEditModule from "./NotebookEdit.js"
import { NotebookEdit } from "./NotebookEdit.js"
import * as PlanMode from "./PlanMode.js"
import { EnterPlanMode, ExitPlanMode } from "./PlanMode.js"
import * as ReadModule from "./Read.js"
import * as Tasks from "./Tasks.js"
import { TaskOutputTool, TaskStopTool } from "./Tasks.js"
import * as TodoWriteModule from "./TodoWrite.js"
import { TodoWrite } from "./TodoWrite.js"
import type { InvalidAllowEntry } from "./Web/Address.js"
import { PageReader } from "./Web/PageReader.js"
import { Resolver } from "./Web/Resolver.js"
import * as WebFetchModule from "./WebFetch.js"
import { WebFetchTool } from "./WebFetch.js"
import type { WebFetchOptions } from "./WebFetch.js"
import * as WriteModule from "./Write.js"

/**
 * The Bash tool (named, like every built-in tool here, as the model calls it).
 *
 * @since 0.3.0
 */
export { BashTool as Bash } from "./Bash.js"
/** @since 0.1.0 */
export type { BashOptions, BashSandboxOptions } from "./Bash.js"
/** @since 0.1.0 */
export { Edit, Glob, Grep, Read, Write } from "./FileTools.js"
/**
 * The five file tools together (`FileTools.tools`, `FileTools.layer`), for a program or a test that wants only them
 * (over `Workspace.layerFileAccess` and `fileAccessMemory` from the testing entry, they never touch the disk).
 *
 * @since 0.3.0
 */
export * as FileTools from "./FileTools.js"
/** @since 0.1.0 */
export { FileState } from "../Session/FileState.js"
/** @since 0.1.0 */
export { Workspace } from "../Session/Workspace.js"
/** @since 0.1.0 */
export type { ResolvedPath, WorkspaceOptions } from "../Session/Workspace.js"
/** @since 0.1.0 */
export { analyze } from "./Shell/Analysis.js"
/** @since 0.1.0 */
export { classifyReadOnly } from "./Shell/ReadOnly.js"
/** @since 0.3.0 */
export { suggestRules } from "./Shell/Suggestions.js"
/** @since 0.3.0 */
export { backgroundRefusal, sandboxEscapeRefusal } from "./Bash.js"
/** @since 0.2.0 */
export { ToolSearch } from "./ToolSearch.js"
/**
 * The tools over background tasks: TaskOutput (alias BashOutput) and TaskStop (alias KillShell).
 *
 * @since 0.3.0
 */
export { TaskOutputTool as TaskOutput, TaskStopTool as TaskStop } from "./Tasks.js"
/** @since 0.3.0 */
export type { TaskOutputInput, TaskOutputOutput, TaskStopInput, TaskStopOutput } from "./Tasks.js"
/** @since 0.3.0 */
export { LspTool } from "./Lsp.js"
/** @since 0.3.0 */
export { NotebookEdit, NotebookEditInput, NotebookEditOutput } from "./NotebookEdit.js"
/** @since 0.3.0 */
export { AskUserQuestion, AskUserQuestionInput, AskUserQuestionOutput } from "./AskUserQuestion.js"
/** @since 0.3.0 */
export { EnterPlanMode, ExitPlanMode, ExitPlanModeInput } from "./PlanMode.js"
/** @since 0.3.0 */
export { checklist, Todo, TodoWrite, TodoWriteInput, TodoWriteOutput } from "./TodoWrite.js"
/** @since 0.3.0 */
export type { LspInput, LspOperation, LspOutput } from "./Lsp.js"
/**
 * ToolSearch's index, queries and layers (`Search.catalogLayer(tools)`: a session's registry and catalogue with
 * deferral and search).
 *
 * @since 0.2.0
 */
export * as Search from "./ToolSearch.js"
/**
 * The WebFetch tool.
 *
 * @since 0.3.0
 */
export { WebFetchTool as WebFetch } from "./WebFetch.js"
/** @since 0.2.0 */
export { WebFetchError } from "./WebFetch.js"
/** @since 0.2.0 */
export type { WebFetchInput, WebFetchOptions, WebFetchOutput } from "./WebFetch.js"
/** @since 0.2.0 */
export { PageReader, PageReaderError } from "./Web/PageReader.js"
/** @since 0.2.0 */
export type { PageReaderOptions, PageRequest } from "./Web/PageReader.js"
/** @since 0.2.0 */
export { ResolveError, Resolver } from "./Web/Resolver.js"
/** @since 0.2.0 */
export type { ResolvedAddress } from "./Web/Resolver.js"
/** @since 0.2.0 */
export { InvalidAllowEntry } from "./Web/Address.js"

/**
 * Every built-in tool, in the order the model is shown them.
 *
 * @since 0.1.0
 * @category tools
 */
export const builtinTools = [
  ...FileTools.tools,
  BashTool,
  WebFetchTool,
  LspTool,
  NotebookEdit,
  TodoWrite,
  AskUserQuestion,
  EnterPlanMode,
  ExitPlanMode,
  TaskOutputTool,
  TaskStopTool
] as const

/**
 * The Context identifiers of the built-in tools.
 *
 * @since 0.1.0
 * @category models
 */
export type BuiltinTools = Tool.IdentifierOf<(typeof builtinTools)[number]>

/**
 * Options of {@link builtinLayer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuiltinOptions {
  readonly bash?: BashOptions | undefined
  readonly fileState?: FileStateOptions | undefined
  /** WebFetch's settings: private hosts, plain-http hosts, limits, cache, reader and resolver. */
  readonly webFetch?: WebFetchOptions | undefined
}

// The built-in tools are built in one Layer, not one Layer each: every Layer costs a cold start a couple of hundred
// effect operations to build and as many to release, whatever it holds (see `internal/service.ts`).

/** WebFetch's resolver and reader when the options name none: services, no Layer to build. */
const defaultWebFetch = (options: WebFetchOptions | undefined) =>
  WebFetchModule.make(options).pipe(
    Effect.provideService(Resolver, Resolver.system),
    Effect.provideService(PageReader, PageReader.modelFree())
  )

/** Every built-in tool's service but WebFetch's (the file tools and NotebookEdit over the FileState in context). */
const builtinContext = (options: BuiltinOptions) =>
  Effect.gen(function*() {
    const planMode = yield* PlanMode.make
    return Context.make(FileTools.Read, yield* ReadModule.make).pipe(
      Context.add(FileTools.Write, yield* WriteModule.make),
      Context.add(FileTools.Edit, yield* EditModule.make),
      Context.add(FileTools.Glob, yield* GlobModule.make),
      Context.add(FileTools.Grep, yield* GrepModule.make),
      Context.add(NotebookEdit, yield* NotebookEditModule.make),
      Context.add(BashTool, yield* BashModule.make(options.bash)),
      Context.add(LspTool, yield* LspModule.make),
      Context.add(TodoWrite, yield* TodoWriteModule.make),
      Context.add(AskUserQuestion, yield* AskUserQuestionModule.make),
      Context.add(EnterPlanMode, planMode.enter),
      Context.add(ExitPlanMode, planMode.exit),
      Context.add(TaskOutputTool, yield* Tasks.make.output),
      Context.add(TaskStopTool, yield* Tasks.make.stop)
    )
  })

/**
 * Every built-in tool in one Layer over a FileState; WebFetch in it too, unless its options bring a resolver's or
 * reader's Layer of their own: then its Layer is built beside, as it was.
 */
const builtinTools_ = <E, R>(options: BuiltinOptions, fileState: Layer.Layer<FileState, E, R>) =>
  options.webFetch?.resolver !== undefined || options.webFetch?.pageReader !== undefined
    ? Layer.merge(
      Layer.scopedContext(builtinContext(options)).pipe(
        Layer.provide(fileState)
      ),
      WebFetchTool.layer(options.webFetch)
    )
    : Layer.scopedContext(
      Effect.zipWith(
        builtinContext(options),
        defaultWebFetch(options.webFetch),
        (context, webFetch) => Context.add(context, WebFetchTool, webFetch)
      )
    ).pipe(Layer.provide(fileState))

/**
 * All built-in tools, with a FileState of their own; they need the Workspace, the ResultStore and a command
 * executor (`NodeContext.layer`). The LSP tool uses the `LspClients` in context when there are (provide
 * `LspClients.layer(config)` below this layer); without them it is disabled.
 *
 * @since 0.1.0
 * @category layers
 */
export const builtinLayer = (
  options: BuiltinOptions = {}
): Layer.Layer<
  BuiltinTools,
  SandboxUnavailable | InvalidAllowEntry,
  Workspace | ResultStore | CommandExecutor.CommandExecutor
> => builtinTools_(options, FileState.layer(options.fileState))
/** @since 0.2.0 */
export * as SessionFileState from "../Session/SessionFileState.js"

/**
 * All built-in tools' services over a {@link Session}, built in the scope: what {@link builtinSessionLayer} provides,
 * as an Effect (for a program that builds its services one after the other, as the CLI does, where a Layer costs a
 * cold start more than building them).
 *
 * @since 0.3.0
 * @category constructors
 */
export const makeBuiltinSession = (
  options: BuiltinOptions = {}
): Effect.Effect<
  Context.Context<BuiltinTools>,
  SandboxUnavailable | InvalidAllowEntry | SessionError,
  Workspace | ResultStore | CommandExecutor.CommandExecutor | Session | Scope.Scope
> =>
  Effect.gen(function*() {
    const fileState = yield* SessionFileState.make(options.fileState)
    const registry = yield* Effect.serviceOption(TaskRegistry)
    const tasks = Option.isSome(registry) ? registry.value : yield* TaskRegistry.makeSession()
    const webFetch = options.webFetch?.resolver !== undefined || options.webFetch?.pageReader !== undefined
      ? Effect.map(Layer.build(WebFetchTool.layer(options.webFetch)), Context.get(WebFetchTool))
      : defaultWebFetch(options.webFetch)
    return yield* Effect.zipWith(
      builtinContext(options),
      webFetch,
      (context, webFetch) => Context.add(context, WebFetchTool, webFetch)
    ).pipe(Effect.provideService(FileState, fileState), Effect.provideService(TaskRegistry, tasks))
  })

/**
 * All built-in tools over a {@link Session}: like {@link builtinLayer}, with the FileState restored from the
 * session and saved with it (`SessionFileState`), so a Read in one turn or process counts for an Edit in the next.
 * Background tasks use the `TaskRegistry` in context, else one of their own in the session
 * (`TaskRegistry.layerSession`, its tasks stopped when this layer's scope closes); provide one above
 * (`Layer.provideMerge`) for the agent loop to announce their ends.
 *
 * @since 0.2.0
 * @category layers
 */
export const builtinSessionLayer = (
  options: BuiltinOptions = {}
): Layer.Layer<
  BuiltinTools,
  SandboxUnavailable | InvalidAllowEntry | SessionError,
  Workspace | ResultStore | CommandExecutor.CommandExecutor | Session
> =>
  Layer.unwrapEffect(Effect.map(Effect.serviceOption(TaskRegistry), (registry) => {
    const tools = builtinTools_(options, SessionFileState.layer(options.fileState))
    return Option.isSome(registry) ? tools : tools.pipe(Layer.provide(TaskRegistry.layerSession()))
  }))
