/**
 * An {@link Approver} that asks a person at a terminal. It shows the call as the UI renders it and why approval is
 * needed, then offers:
 *
 * ```
 *   1) Allow once
 *   2) Allow for this session   (adds the suggested rules to the session)
 *   3) Always allow             (writes the suggested rules to the local settings file)
 *   4) Deny                     (then an optional message for the model)
 *   5) Deny and stop the run
 *   e) Edit the input           (new input as JSON on one line; decoded and validated again)
 * ```
 *
 * {@link layer} reads and writes the given streams, by default the controlling terminal (`/dev/tty`), so it works
 * even when stdin and stdout carry data. {@link layerAuto} asks on the controlling terminal when there is one and
 * otherwise denies at once: a headless run never hangs waiting for an answer.
 *
 * When the input ends (the terminal closed), every request is denied.
 *
 * @since 0.1.0
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as fs from "node:fs"
import * as readline from "node:readline"
import * as tty from "node:tty"
import * as display from "../Shared/display.js"
import { toText } from "../Tool/Presentation.js"
import type { QuestionReply, QuestionRequest } from "../Tool/Question.js"
import { ApprovalAnswer, Approver } from "./Approver.js"
import type { ApprovalRequest } from "./Approver.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * Where to ask. Both default to the controlling terminal (`/dev/tty`).
 *
 * @since 0.1.0
 * @category models
 */
export interface TerminalOptions {
  readonly input?: NodeJS.ReadableStream | undefined
  readonly output?: NodeJS.WritableStream | undefined
  /**
   * Held from the first line of a question to its answer. Whatever else writes to the same terminal (a progress
   * printer) takes it for each write, so nothing is printed over a pending question: it waits, and prints after
   * the answer. See {@link makeTerminalLock}.
   *
   * @since 0.2.0
   */
  readonly lock?: Effect.Semaphore | undefined
}

/**
 * A lock for {@link TerminalOptions.lock}: one permit.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeTerminalLock = (): Effect.Semaphore => Effect.unsafeMakeSemaphore(1)

/**
 * There is no terminal to ask on.
 *
 * @since 0.1.0
 * @category errors
 */
export class TerminalUnavailable extends Data.TaggedError("TerminalUnavailable")<{ readonly detail: string }> {
  override get message(): string {
    return `No terminal to ask for approval: ${this.detail}`
  }
}

// -----------------------------------------------------------------------------
// rendering
// -----------------------------------------------------------------------------

/**
 * Text made safe to show a person (see `Shared/display`): hidden characters spelled out, never interpreted.
 *
 * @since 0.2.0
 * @category rendering
 */
export const escapeForDisplay = display.escapeForDisplay

/**
 * The most lines of one request shown: the first three quarters and the last quarter, with "N more lines" between,
 * so the end of a long command (where something could hide behind padding) is always on the screen. Tools bound
 * their own blocks further (Write and Edit show 40 lines of content or diff); this is the backstop for the rest.
 *
 * @since 0.2.0
 * @category rendering
 */
export const maxShownLines = 400

/**
 * The most characters of one request shown (before escaping), head and tail as for lines, so a huge rendering costs
 * no more than a screenful.
 *
 * @since 0.2.0
 * @category rendering
 */
export const maxShownChars = 64 * 1024

/** The head and tail of `items` (at most `max` in all), and how many were left out between them. */
const headAndTail = <A>(
  items: ReadonlyArray<A>,
  max: number
): { readonly head: ReadonlyArray<A>; readonly tail: ReadonlyArray<A>; readonly omitted: number } => {
  if (items.length <= max) return { head: items, tail: [], omitted: 0 }
  const tailCount = Math.floor(max / 4)
  return {
    head: items.slice(0, max - tailCount),
    tail: items.slice(items.length - tailCount),
    omitted: items.length - max
  }
}

/** At most {@link maxShownChars} characters of a text: head, a note of how many were left out, tail. */
const boundChars = (text: string): string => {
  if (text.length <= maxShownChars) return text
  const tail = Math.floor(maxShownChars / 4)
  return `${text.slice(0, maxShownChars - tail)}\n… ${text.length - maxShownChars} more characters …\n${
    text.slice(text.length - tail)
  }`
}

/** Content lines in a gutter, so nothing in them can pass for the prompt's own lines. */
const inGutter = (text: string): string => {
  const { head, omitted, tail } = headAndTail(escapeForDisplay(boundChars(text)).split("\n"), maxShownLines)
  const lines = omitted === 0 ? head : [...head, `… ${omitted} more lines …`, ...tail]
  return lines.map((line) => `  │ ${line}`).join("\n")
}

const rules = (suggestions: ReadonlyArray<string>) =>
  suggestions.length === 0
    ? "  (no rule can allow this call)"
    : `  [${suggestions.map((rule) => escapeForDisplay(rule, { newlines: "escape" })).join(", ")}]`

/**
 * The text shown for a request, up to the choice prompt. Everything that comes from the call (the rendered use,
 * the reason, the suggested rules) is escaped with {@link escapeForDisplay}; the call's own lines sit in a gutter.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderRequest = (request: ApprovalRequest): string =>
  [
    "",
    `── Permission needed: ${escapeForDisplay(request.toolName, { newlines: "escape" })} ──`,
    inGutter(toText(request.ui)),
    "",
    escapeForDisplay(request.message),
    ...(request.token === undefined ? [] : [
      // A durable turn's question outlives this process: the person may answer it in a later run instead.
      `  (durable approval ${
        escapeForDisplay(request.token, { newlines: "escape" })
      }: if this process stops, the next run of the session asks it again)`
    ]),
    "",
    "  1) Allow once",
    `  2) Allow for this session${rules(request.suggestions)}`,
    `  3) Always allow (saved to local settings)${rules(request.suggestions)}`,
    "  4) Deny",
    "  5) Deny and stop the run",
    "  e) Edit the input",
    ""
  ].join("\n")

// -----------------------------------------------------------------------------
// constructors
// -----------------------------------------------------------------------------

const CHOICE = "Choice [1-5, e]: "

/**
 * An approver over a pair of streams. The streams belong to the caller (they are not closed); the line reader on
 * them is closed with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: NodeJS.ReadableStream, output: NodeJS.WritableStream, lock?: Effect.Semaphore) =>
  Effect.gen(function*() {
    const lines = yield* Queue.unbounded<Option.Option<string>>()
    const reader = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const rl = readline.createInterface({ input, terminal: false })
        rl.on("line", (line) => Queue.unsafeOffer(lines, Option.some(line)))
        rl.on("close", () => Queue.unsafeOffer(lines, Option.none()))
        rl.pause()
        return rl
      }),
      (rl) => Effect.sync(() => rl.close())
    )
    let ended = false

    const write = (text: string) => Effect.sync(() => void output.write(text))
    /** Prompts and reads one line; None once the input has ended. */
    const readLine = (prompt: string): Effect.Effect<Option.Option<string>> =>
      ended ? Effect.succeed(Option.none()) : write(prompt).pipe(
        Effect.zipRight(Effect.sync(() => reader.resume())),
        Effect.zipRight(Queue.take(lines)),
        Effect.tap((line) =>
          Effect.sync(() => {
            reader.pause()
            if (Option.isNone(line)) ended = true
          })
        )
      )

    const closed = ApprovalAnswer.Deny({
      message: "The terminal closed before anyone answered; the call was denied.",
      cancelRun: false
    })

    const ask = (request: ApprovalRequest): Effect.Effect<ApprovalAnswer> =>
      Effect.gen(function*() {
        yield* write(renderRequest(request))
        for (;;) {
          const line = yield* readLine(CHOICE)
          if (Option.isNone(line)) return closed
          const choice = line.value.trim().toLowerCase()
          switch (choice) {
            case "1":
              return ApprovalAnswer.AllowOnce()
            case "2":
            case "3":
              if (request.suggestions.length === 0) {
                yield* write(
                  "No rule can allow this call (for a compound command: not every part can have a rule); choose 1 to " +
                    "allow it once.\n"
                )
                continue
              }
              return choice === "2"
                ? ApprovalAnswer.AllowSession({ rules: request.suggestions })
                : ApprovalAnswer.AllowAlways({ rules: request.suggestions })
            case "4": {
              const message = yield* readLine("Message for the model (Enter for none): ")
              const text = Option.getOrElse(message, () => "").trim()
              return ApprovalAnswer.Deny(text === "" ? { cancelRun: false } : { message: text, cancelRun: false })
            }
            case "5":
              return ApprovalAnswer.Deny({ message: "The user denied this call and stopped the run.", cancelRun: true })
            case "e": {
              yield* write(
                `Current input: ${
                  escapeForDisplay(boundChars(JSON.stringify(request.input) ?? "undefined"), { newlines: "escape" })
                }\n`
              )
              const edited = yield* readLine("New input (JSON on one line): ")
              if (Option.isNone(edited)) return closed
              try {
                const value: unknown = JSON.parse(edited.value)
                if (typeof value === "object" && value !== null && !Array.isArray(value)) {
                  return ApprovalAnswer.Edit({ input: value })
                }
                yield* write("The input must be a JSON object.\n")
              } catch (error) {
                yield* write(`That is not JSON (${error instanceof Error ? error.message : String(error)}).\n`)
              }
              continue
            }
            default:
              yield* write("Please answer 1, 2, 3, 4, 5 or e.\n")
          }
        }
      }).pipe(Effect.ensuring(write("\n")))

    /** Each question with its numbered options; a number (several, comma-separated, when allowed) or own words. */
    const answer = (request: QuestionRequest): Effect.Effect<QuestionReply> =>
      Effect.gen(function*() {
        const answers: Record<string, string> = {}
        for (const q of request.questions) {
          yield* write(
            `\n[${escapeForDisplay(q.header)}] ${escapeForDisplay(q.question)}\n` +
              q.options.map((o, i) => `  ${i + 1}. ${escapeForDisplay(o.label)}: ${escapeForDisplay(o.description)}\n`)
                .join("")
          )
          for (;;) {
            const line = yield* readLine(
              q.multiSelect
                ? "Choose (numbers, comma-separated) or type an answer: "
                : "Choose (number) or type an answer: "
            )
            if (Option.isNone(line)) {
              return { _tag: "Declined", message: "The terminal closed before anyone answered." } as const
            }
            const text = line.value.trim()
            if (text === "") continue
            const picks = text.split(",").map((part) => part.trim())
            const numbers = picks.every((part) => /^\d+$/.test(part)) ? picks.map(Number) : undefined
            if (numbers === undefined) {
              answers[q.question] = text
              break
            }
            if (!q.multiSelect && numbers.length > 1) {
              yield* write("Choose one option.\n")
              continue
            }
            if (numbers.some((n) => n < 1 || n > q.options.length)) {
              yield* write(`Choose between 1 and ${q.options.length}.\n`)
              continue
            }
            answers[q.question] = numbers.map((n) => q.options[n - 1]!.label).join(", ")
            break
          }
        }
        return { _tag: "Answered", answers } satisfies QuestionReply
      }).pipe(Effect.ensuring(write("\n")))

    return Approver.of({
      ask: lock === undefined ? ask : (request) => lock.withPermits(1)(ask(request)),
      answer: lock === undefined ? answer : (request) => lock.withPermits(1)(answer(request))
    })
  })

/** Opens the controlling terminal for reading and writing; fails when the process has none. */
const openTerminal = Effect.acquireRelease(
  Effect.try({
    try: () => {
      const inFd = fs.openSync("/dev/tty", "r")
      if (!tty.isatty(inFd)) {
        fs.closeSync(inFd)
        throw new Error("/dev/tty is not a terminal")
      }
      const outFd = fs.openSync("/dev/tty", "w")
      return { input: new tty.ReadStream(inFd), output: new tty.WriteStream(outFd) }
    },
    catch: (error) => new TerminalUnavailable({ detail: error instanceof Error ? error.message : String(error) })
  }),
  ({ input, output }) =>
    Effect.sync(() => {
      input.destroy()
      output.destroy()
    })
)

// -----------------------------------------------------------------------------
// layers
// -----------------------------------------------------------------------------

/**
 * Asks on the given streams, by default on the controlling terminal (failing with {@link TerminalUnavailable} when
 * there is none).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: TerminalOptions = {}): Layer.Layer<Approver, TerminalUnavailable> =>
  Layer.scoped(
    Approver,
    Effect.gen(function*() {
      if (options.input !== undefined && options.output !== undefined) {
        return yield* make(options.input, options.output, options.lock)
      }
      const terminal = yield* openTerminal
      return yield* make(options.input ?? terminal.input, options.output ?? terminal.output, options.lock)
    })
  )

/**
 * Asks on the controlling terminal when the process has one; otherwise denies every request at once, saying why.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerAuto = (options: Pick<TerminalOptions, "lock"> = {}): Layer.Layer<Approver> =>
  layer(options).pipe(
    Layer.catchAll(() =>
      Layer.succeed(Approver, {
        ask: (request) =>
          Effect.succeed(ApprovalAnswer.Deny({
            message: `${request.toolName} needs approval and there is no one to ask (no terminal); it was denied.`,
            cancelRun: false
          }))
      })
    )
  )
