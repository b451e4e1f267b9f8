/**
 * Diagnostics after edits: once an `Edit` or `Write` of a file that a running language server handles succeeded,
 * the server gets the new text and is given a bounded time (`budgetMs`, default 3 s) for its diagnostics (pulled
 * with 3.17's `textDocument/diagnostic` where offered, else the next `publishDiagnostics`). Errors (and warnings,
 * with `warnings: true`) that were not there before the edit and were not reported already are delivered:
 *
 * - `inline`: appended to that edit's tool_result;
 * - `next-turn`: with the next call's result (Claude Code delivers them with the next turn), the edit's result
 *   coming back at once; the next call waits at most for what is left of the budget;
 * - `off`: nothing is asked.
 *
 * Either way as one `<new-diagnostics>` block, at most 10 per file and 30 in all; a diagnostic already reported (same
 * file, range, message, code) is never repeated, and one that went away may be reported again if it comes back.
 * A slow or dead server never fails an edit, and never delays it beyond the budget.
 *
 * It is a {@link ToolHooks} decorator ({@link layer}): the edit tools know nothing of it, and it sees every call
 * after its own hooks, through `postToolUse`.
 *
 * @since 0.3.0
 */
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as nodePath from "node:path"
import type { Diagnostic } from "vscode-languageserver-protocol"
import { ToolHooks } from "../Hooks/ToolHooks.js"
import { Workspace } from "../Session/Workspace.js"
import type { DiagnosticsReport } from "./LspClients.js"
import { LspClients } from "./LspClients.js"

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * When diagnostics after an edit are delivered.
 *
 * @since 0.3.0
 * @category models
 */
export type DiagnosticsMode = "inline" | "next-turn" | "off"

/**
 * Options of {@link layer}.
 *
 * @since 0.3.0
 * @category models
 */
export interface DiagnosticsOptions {
  readonly mode: DiagnosticsMode
  /** Longest wait for a server's diagnostics after an edit, in milliseconds. Default 3,000. */
  readonly budgetMs?: number | undefined
  /** Report warnings too. Default false (errors only). */
  readonly warnings?: boolean | undefined
  /** The tools whose successful calls count as edits (their input's `file_path`). Default Edit, Write. */
  readonly editTools?: ReadonlyArray<string> | undefined
}

/**
 * The bounds of a `<new-diagnostics>` block.
 *
 * @since 0.3.0
 * @category constants
 */
export const limits = { perFile: 10, total: 30 } as const

// ---------------------------------------------------------------------------------------------------------------
// formatting
// ---------------------------------------------------------------------------------------------------------------

const severityMark = (severity: number | undefined) =>
  severity === 1 ? "✘" : severity === 2 ? "⚠" : severity === 3 ? "ℹ" : "★"

/**
 * The identity of a diagnostic, for "never repeated".
 *
 * @since 0.3.0
 * @category formatting
 */
export const diagnosticKey = (path: string, diagnostic: Diagnostic): string =>
  JSON.stringify([
    path,
    diagnostic.range.start.line,
    diagnostic.range.start.character,
    diagnostic.range.end.line,
    diagnostic.range.end.character,
    typeof diagnostic.message === "string" ? diagnostic.message : diagnostic.message.value,
    diagnostic.code ?? null,
    diagnostic.source ?? null
  ])

/**
 * The `<new-diagnostics>` block for diagnostics by file (display path), bounded ({@link limits}); undefined when
 * there is nothing to say.
 *
 * @since 0.3.0
 * @category formatting
 */
export const block = (byFile: ReadonlyArray<readonly [string, ReadonlyArray<Diagnostic>]>): string | undefined => {
  const lines: Array<string> = []
  let total = 0
  let left = 0
  for (const [file, diagnostics] of byFile) {
    if (diagnostics.length === 0) continue
    const room = Math.max(0, Math.min(limits.perFile, limits.total - total))
    const shown = diagnostics.slice(0, room)
    left += diagnostics.length - shown.length
    if (shown.length === 0) continue
    total += shown.length
    lines.push(`${file}:`)
    for (const d of shown) {
      const code = d.code === undefined ? "" : ` [${d.code}]`
      const source = d.source === undefined ? "" : ` (${d.source})`
      const message = (typeof d.message === "string" ? d.message : d.message.value).split("\n")[0]
      lines.push(
        `  ${severityMark(d.severity)} [Line ${d.range.start.line + 1}:${
          d.range.start.character + 1
        }] ${message}${code}${source}`
      )
    }
  }
  if (lines.length === 0) return undefined
  const more = left === 0 ? "" : `\n(${left} more not shown)`
  return `<new-diagnostics>The following new diagnostic issues were detected:\n\n${
    lines.join("\n")
  }${more}\n</new-diagnostics>`
}

// ---------------------------------------------------------------------------------------------------------------
// the decorator
// ---------------------------------------------------------------------------------------------------------------

const filePathOf = (input: unknown): string | undefined =>
  typeof input === "object" && input !== null && typeof (input as { file_path?: unknown }).file_path === "string"
    ? (input as { file_path: string }).file_path
    : undefined

/**
 * Wraps the {@link ToolHooks} in context with diagnostics after edits; `off` leaves them as they are.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = (
  options: DiagnosticsOptions
): Layer.Layer<ToolHooks, never, ToolHooks | LspClients | Workspace> =>
  Layer.scoped(
    ToolHooks,
    Effect.gen(function*() {
      const scope = yield* Effect.scope
      const inner = yield* ToolHooks
      if (options.mode === "off") return inner
      const clients = yield* LspClients
      const workspace = yield* Workspace
      const budgetMs = options.budgetMs ?? 3_000
      const editTools = new Set(options.editTools ?? ["Edit", "Write"])
      const worst = options.warnings === true ? 2 : 1
      /** What was reported, per file: never said twice while it stays. */
      const reported = new Map<string, Set<string>>()
      /** Collections started by next-turn edits, not yet delivered. */
      let pending: Array<Fiber.Fiber<Option.Option<DiagnosticsReport>>> = []

      /** The new diagnostics of reports, as a block; marks them reported. */
      const fresh = (reports: ReadonlyArray<DiagnosticsReport>): string | undefined => {
        const byFile: Array<readonly [string, ReadonlyArray<Diagnostic>]> = []
        for (const report of reports) {
          const path = report.path
          const before = new Set((report.before ?? []).map((d) => diagnosticKey(path, d)))
          const now = report.after.filter((d) => (d.severity ?? 1) <= worst)
          const keys = now.map((d) => diagnosticKey(path, d))
          const seen = reported.get(path) ?? new Set<string>()
          // Gone diagnostics are forgotten, so one that comes back is news again.
          reported.set(path, new Set(keys.filter((key) => seen.has(key) || before.has(key))))
          const news = now.filter((_, i) => !seen.has(keys[i]!) && !before.has(keys[i]!))
          for (const key of keys) reported.get(path)!.add(key)
          const display = nodePath.relative(workspace.cwd, path)
          byFile.push([display.startsWith("..") ? path : display, news])
        }
        return block(byFile)
      }

      const collect = (path: string) => clients.diagnosticsAfterEdit(path, budgetMs)

      const deliverPending = Effect.suspend(() => {
        if (pending.length === 0) return Effect.succeed<string | undefined>(undefined)
        const fibers = pending
        pending = []
        return Effect.map(
          Effect.forEach(fibers, Fiber.join),
          (reports) => fresh(reports.flatMap(Option.toArray))
        )
      })

      return ToolHooks.of({
        ...inner,
        postToolUse: (event) =>
          Effect.gen(function*() {
            const result = yield* inner.postToolUse(event)
            const earlier = yield* deliverPending
            const path = filePathOf(event.input)
            const edited = !event.failed && editTools.has(event.toolName) && path !== undefined &&
              clients.isRunning(nodePath.resolve(workspace.cwd, path))
            let now: string | undefined
            if (edited) {
              const absolute = nodePath.resolve(workspace.cwd, path)
              if (options.mode === "inline") {
                now = fresh(Option.toArray(yield* collect(absolute)))
              } else {
                pending.push(yield* Effect.forkIn(collect(absolute), scope))
              }
            }
            const extra = [earlier, now].filter((text): text is string => text !== undefined)
            return extra.length === 0 ? result : {
              ...result,
              additionalContext: [...result.additionalContext, ...extra]
            }
          })
      })
    })
  )
