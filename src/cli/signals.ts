/**
 * SIGINT and SIGTERM, from the first moment: the launcher (`launcher.ts`, the package's `bin`) records signals
 * while the bundle loads, and `main.ts` imports this module before anything else (it imports nothing), so the
 * handlers take over before any other module of the bundle is evaluated. A signal that comes before the run
 * exists is remembered and cancels the run as soon as it starts.
 *
 * - The first signal calls every registered canceller (the run is cancelled: every tool_use still gets its outcome,
 *   "never ran" for those that had not started) and fixes the exit code: 130 for SIGINT, 143 for SIGTERM.
 * - A second signal does not wait for the cleanup: it calls the registered killer (SIGKILL to the process trees the
 *   run started), gives the output a moment to be written, and exits with the same code.
 *
 * @internal
 */

type Signal = "SIGINT" | "SIGTERM"

const cancellers = new Set<() => void>()
const lastWords = new Set<() => void>()
let received: Signal | undefined
let killer: (() => void) | undefined

/** How long a second signal waits for the outcomes to be written once the process trees are killed. */
const HARD_EXIT_MS = 1_000

const onSignal = (signal: Signal): void => {
  if (received === undefined) {
    received = signal
    for (const cancel of cancellers) cancel()
    return
  }
  try {
    killer?.()
  } finally {
    setTimeout(() => {
      for (const last of lastWords) last()
      process.exit(exitCodeFor(received!))
    }, HARD_EXIT_MS)
  }
}

const exitCodeFor = (signal: Signal): number => (signal === "SIGINT" ? 130 : 143)

process.on("SIGINT", onSignal)
process.on("SIGTERM", onSignal)

// Signals the launcher caught before this module was loaded (see `launcher.ts`) count as if they came now.
const early =
  (globalThis as Record<symbol, { readonly received: ReadonlyArray<Signal>; readonly stop: () => void } | undefined>)[
    Symbol.for("effect-tool-runtime/early-signals")
  ]
if (early !== undefined) {
  early.stop()
  for (const signal of early.received) onSignal(signal)
}

/** The signal received first, if any. */
export const receivedSignal = (): Signal | undefined => received

/** 130 after SIGINT, 143 after SIGTERM, else undefined. */
export const signalExitCode = (): number | undefined => (received === undefined ? undefined : exitCodeFor(received))

/** Calls `cancel` on the first signal (at once when one already came); returns the unregistration. */
export const onFirstSignal = (cancel: () => void): () => void => {
  if (received !== undefined) {
    cancel()
    return () => {}
  }
  cancellers.add(cancel)
  return () => cancellers.delete(cancel)
}

/** What a second signal calls before exiting: kills the known process trees. */
export const setKiller = (kill: () => void): void => {
  killer = kill
}

/** Synchronous cleanup a forced exit still does (removing a temporary session directory). */
export const beforeForcedExit = (last: () => void): () => void => {
  lastWords.add(last)
  return () => lastWords.delete(last)
}
