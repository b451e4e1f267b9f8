/**
 * effect-tool-runtime: a governed tool runtime for AI agents on Effect.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Tool from "./Tool/Tool.js"
/** @since 0.1.0 */
export * as ToolErrors from "./Tool/Errors.js"
/** @since 0.1.0 */
export * as Permission from "./Tool/Permission.js"
/** @since 0.1.0 */
export * as Presentation from "./Tool/Presentation.js"
/** @since 0.1.0 */
export * as Wire from "./Tool/Wire.js"
/** @since 0.1.0 */
export type { Outcome, Status, Timings } from "./Tool/Outcome.js"

/** @since 0.1.0 */
export { ApprovalAnswer, Approver } from "./Permission/Approver.js"
/** @since 0.1.0 */
export type { ApprovalRequest } from "./Permission/Approver.js"
/** @since 0.1.0 */
export { ToolEvent } from "./Runtime/Events.js"
/** @since 0.1.0 */
export { PermissionPolicy, PolicyUpdateError, PolicyVerdict } from "./Permission/PermissionPolicy.js"
/** @since 0.1.0 */
export type { HookOpinion, PolicyRequest } from "./Permission/PermissionPolicy.js"
/** @since 0.1.0 */
export { ResultStore, ResultStoreError } from "./Session/ResultStore.js"
/** @since 0.3.0 */
export { FileAccess, FileAccessError } from "./Session/FileAccess.js"
/** @since 0.3.0 */
export type { DirectoryEntry, FileInfo, FileType, MemoryTree, ReadHandle } from "./Session/FileAccess.js"
/** @since 0.1.0 */
export { RuntimeConfig } from "./Runtime/RuntimeConfig.js"
/** @since 0.1.0 */
export type { RuntimeSettings } from "./Runtime/RuntimeConfig.js"
/** @since 0.1.0 */
export { ToolHooks } from "./Hooks/ToolHooks.js"
/** @since 0.1.0 */
export { ToolRegistry } from "./Catalog/ToolRegistry.js"
/** @since 0.1.0 */
export { ToolRuntime } from "./Runtime/ToolRuntime.js"
/** @since 0.1.0 */
export type { RunHandle, RunInput, RunOptions, SchedulingMode } from "./Runtime/ToolRuntime.js"
/** @since 0.3.0 */
export { DurableExecution } from "./Runtime/DurableExecution.js"
/** @since 0.3.0 */
export type { DurableCall, DurableCallRun } from "./Runtime/DurableExecution.js"
/** @since 0.2.0 */
export * as RulePolicy from "./Permission/RulePolicy.js"
/** @since 0.1.0 */
export * as PermissionRule from "./Tool/Rule.js"
/** @since 0.1.0 */
export * as Settings from "./Settings/Settings.js"
/** @since 0.3.0 */
export * as Grants from "./Settings/Grants.js"
/** @since 0.1.0 */
export * as Hooks from "./Hooks/Hooks.js"
/** @since 0.1.0 */
export * as TerminalApprover from "./Permission/TerminalApprover.js"
/** @since 0.2.0 */
export * as Subprocess from "./Process/Subprocess.js"
/**
 * Background tasks: the registry of a session's `run_in_background` commands, their records and notifications.
 *
 * @since 0.3.0
 */
export { TaskNotFound, TaskRegistry, TaskStartError } from "./Tasks/TaskRegistry.js"
/** @since 0.3.0 */
export type {
  TaskNotification,
  TaskRead,
  TaskRecord,
  TaskRegistryOptions,
  TaskSpec,
  TaskStatus
} from "./Tasks/TaskRegistry.js"

/** @since 0.2.0 */
export * as Audit from "./Runtime/AuditLog.js"

/** @since 0.2.0 */
export * as Definitions from "./Catalog/Definitions.js"
/** @since 0.2.0 */
export {
  announcement,
  DiscoveredTools,
  notLoadedMessage,
  parseSearchMode,
  requestEnabled,
  ToolCatalog
} from "./Catalog/ToolCatalog.js"
/** @since 0.2.0 */
export type { CatalogOptions, CatalogRequest, SearchMode } from "./Catalog/ToolCatalog.js"
/** @since 0.2.0 */
export { Session, SessionError } from "./Session/Session.js"
/** @since 0.3.0 */
export * as SessionPermissions from "./Permission/SessionPermissions.js"
/** @since 0.2.0 */
export { renderEvent, renderOutcome } from "./Runtime/Render.js"
/** @since 0.2.0 */
export type { Registry } from "./Catalog/ToolRegistry.js"
/** @since 0.2.0 */
export { makeDynamicRegistry } from "./Catalog/ToolRegistry.js"
/** @since 0.2.0 */
export * as McpConfig from "./Mcp/Config.js"
/** @since 0.2.0 */
export { McpServers } from "./Mcp/McpServers.js"
/**
 * The MCP resource tools, ListMcpResourcesTool and ReadMcpResourceTool (`McpResources.tools`, `McpResources.layer`
 * over the McpServers in context).
 *
 * @since 0.3.0
 */
export * as McpResources from "./Mcp/ResourceTools.js"
/** @since 0.2.0 */
export type {
  McpServersOptions,
  ResourceContents,
  ServerResource,
  ServerState,
  ServerStatus
} from "./Mcp/McpServers.js"
/** @since 0.3.0 */
export * as McpServe from "./Mcp/McpServe.js"
/** @since 0.2.0 */
export { isMcpError, McpError } from "./Mcp/Errors.js"
/** @since 0.2.0 */
export type { McpErrorReason } from "./Mcp/Errors.js"
/** @since 0.2.0 */
export * as Preview from "./Runtime/Preview.js"
/** @since 0.2.0 */
export * as Activity from "./Runtime/Activity.js"
/** @since 0.2.0 */
export * as AgentLoop from "./Agent/AgentLoop.js"
/** @since 0.2.0 */
export * as AnthropicMessages from "./Agent/AnthropicMessages.js"
/** @since 0.2.0 */
export { ModelBackend, ModelError, ModelEvent } from "./Agent/ModelBackend.js"
/** @since 0.2.0 */
export type {
  ContentBlock,
  Message,
  ModelErrorReason,
  ModelRequest,
  ReplyPull,
  StopReason
} from "./Agent/ModelBackend.js"
