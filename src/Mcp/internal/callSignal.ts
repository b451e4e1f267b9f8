/**
 * The abort signal of one tool call: what the MCP SDK's `request` reads of an AbortSignal (`aborted`, `reason`,
 * `throwIfAborted`, `addEventListener("abort")`), without Node's EventTarget. Node 20 builds every AbortSignal by
 * changing an EventTarget's prototype: one signal with the SDK's listener costs about 15 µs of CPU in a hot loop and
 * some 40 µs in a call one at a time, a fifth of what our runtime adds to an MCP call (bench/mcp). A call aborted here
 * is cancelled by the SDK exactly as with an AbortController: it sends `notifications/cancelled` with the reason and
 * rejects the request.
 *
 * The readable version is `new AbortController()` and `controller.signal`; the cancellation tests against real servers
 * (test/Mcp/supervision.test.ts) hold this one to it.
 */

/** What aborting without a reason gives, as AbortController's `abort()` does. */
const abortError = (): unknown => new DOMException("This operation was aborted", "AbortError")

/** One call's abort: pass {@link CallSignal.signal} to the SDK, call {@link CallSignal.abort} to cancel. */
export class CallSignal {
  aborted = false
  reason: unknown = undefined
  private listeners: Array<() => void> | undefined

  /** The signal as the SDK's options type it. */
  get signal(): AbortSignal {
    return this as unknown as AbortSignal
  }

  abort(reason?: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason === undefined ? abortError() : reason
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners !== undefined) { for (const listener of listeners) listener() }
  }

  throwIfAborted(): void {
    if (this.aborted) throw this.reason
  }

  addEventListener(type: string, listener: () => void): void {
    if (type !== "abort" || this.aborted) return
    ;(this.listeners ??= []).push(listener)
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type !== "abort" || this.listeners === undefined) return
    this.listeners = this.listeners.filter((l) => l !== listener)
  }
}
