/**
 * The typed failure of language-server operations. Its message is written for the model (and the person): it names
 * the server and says what happened.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"

/**
 * Why a language-server operation failed.
 *
 * - `Start`: the server could not be started, or did not answer `initialize` within its `startupTimeout`.
 * - `Crashed`: the server exited during the request, or its connection broke (a write failed, the pipe closed).
 * - `Timeout`: the server did not answer within the request timeout (the request was cancelled).
 * - `Protocol`: the server answered the request with an error.
 * - `Unsupported`: the server does not offer the operation (its capabilities say so).
 * - `Unavailable`: the server is not running and will not be started (restarts exhausted, not trusted, closed).
 *
 * @since 0.3.0
 * @category models
 */
export const LspErrorReason = Schema.Literal("Start", "Crashed", "Timeout", "Protocol", "Unsupported", "Unavailable")

/**
 * @since 0.3.0
 * @category models
 */
export type LspErrorReason = typeof LspErrorReason.Type

/**
 * A language-server failure, naming the server.
 *
 * @since 0.3.0
 * @category errors
 */
export class LspError extends Schema.TaggedError<LspError>("effect-tool-runtime/Lsp/LspError")("LspError", {
  server: Schema.String,
  reason: LspErrorReason,
  message: Schema.String
}) {}

/**
 * Whether a value is an {@link LspError}.
 *
 * @since 0.3.0
 * @category guards
 */
export const isLspError = (u: unknown): u is LspError => u instanceof LspError
