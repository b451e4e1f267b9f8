/**
 * The typed failure of MCP connections and calls. Its message is written for the model (and the person): it names
 * the server and says what happened.
 *
 * @since 0.2.0
 */
import * as Data from "effect/Data"

/**
 * Why an MCP operation failed.
 *
 * - `Connect`: the server could not be started or did not answer `initialize`.
 * - `Disconnected`: the connection closed during the call (the server exited or crashed).
 * - `MessageTooLarge`: the server sent a message over the stdio buffer; the connection was reset.
 * - `Timeout`: the server did not answer in time.
 * - `Protocol`: the server rejected the request (unknown tool, invalid params, ...).
 * - `ToolError`: the tool ran and reported an error (`isError: true`).
 * - `Down`: the server is not running (restarts exhausted, or it is not enabled).
 *
 * @since 0.2.0
 * @category models
 */
export type McpErrorReason =
  | "Connect"
  | "Disconnected"
  | "MessageTooLarge"
  | "Timeout"
  | "Protocol"
  | "ToolError"
  | "Down"

/**
 * An MCP failure, naming the server.
 *
 * @since 0.2.0
 * @category errors
 */
export class McpError extends Data.TaggedError("McpError")<{
  readonly server: string
  readonly reason: McpErrorReason
  readonly message: string
}> {}

/**
 * Whether a value is an {@link McpError}.
 *
 * @since 0.2.0
 * @category guards
 */
export const isMcpError = (u: unknown): u is McpError => u instanceof McpError
