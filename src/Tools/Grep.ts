/**
 * The `Grep` tool (Claude Code's parameters: `pattern`, `path`, `glob`, `type`, `output_mode`, `-i`, `-n`, `-o`,
 * `-A`, `-B`, `-C`, `context`, `multiline`, `head_limit`, `offset`): ripgrep from `@vscode/ripgrep`, spawned with an
 * argv array (never a shell), the pattern after `-e` so a pattern starting with `-` is not an option.
 *
 * - Exit code 1 is "no matches", not an error; exit code 2 is an error with rg's stderr (unless rg still found
 *   matches, e.g. past an unreadable file: then the matches come back with a note).
 * - Output is read as it streams and rg is stopped once `head_limit` entries (or 4 MB) have arrived; interrupting
 *   the call (timeout, cancellation) stops rg too (through `Subprocess`: SIGTERM, SIGKILL half a second later).
 * - rg runs in the working directory with a relative target when the target is inside it, so paths come back
 *   short. `--no-config` keeps a user's RIPGREP_CONFIG_PATH out; hidden files are searched, `.git` is not; `.gitignore`
 *   is respected, in a git repository or not (`--no-require-git`, as Glob does). Symlinks met while recursing are
 *   not followed (`--no-follow`), so a link inside cannot lead the search outside the workspace.
 * - Files that permission rules forbid reading (`Read(./.env)`, `Read(./secrets/**)`) are left out of every output
 *   mode, and out of rg's complaints; the model is told how many files were withheld, never which. rg prints each
 *   path NUL-terminated (`--null`, see `internal/filesRipgrep`), so every line is tied to its file whatever the
 *   file's name contains.
 * - On a file system that is not the host's ({@link FileAccess.FileAccess.layerMemory}, a user's own layer), ripgrep
 *   cannot see the files: the same search runs in JavaScript through the FileAccess service
 *   (`internal/filesSearch`, which lists where it differs), answered in rg's records and put together the same way.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"
import * as Subprocess from "../Process/Subprocess.js"
import * as FileAccess from "../Session/FileAccess.js"
import { isWithin, Workspace } from "../Session/Workspace.js"
import { ripgrepPath } from "../Shared/ripgrep.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { ArgumentString, argvProblem, PathString } from "./internal/argumentLimits.js"
import { newest } from "./internal/filesNewest.js"
import { directorySearchStages, displayPath, specialFileReason } from "./internal/filesPaths.js"
import { complaintPaths, complaintsOf, contextSeparatorArg, recordReader } from "./internal/filesRipgrep.js"
import type { RgRecord } from "./internal/filesRipgrep.js"
import { search } from "./internal/filesSearch.js"
import type { SearchTarget } from "./internal/filesSearch.js"
import { withheldNote, withholding } from "./internal/filesWithheld.js"
import type { Withholding } from "./internal/filesWithheld.js"
import { WholeNumber } from "./internal/numbers.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

const Count = WholeNumber(0)

/**
 * Grep's input, as Claude Code names it.
 *
 * @since 0.1.0
 * @category models
 */
export const GrepInput = Schema.Struct({
  pattern: ArgumentString("The regular expression pattern to search for in file contents (ripgrep syntax)", {
    nulHint: "to match a NUL byte, write \\x00"
  }),
  path: Schema.optional(PathString("File or directory to search in. Defaults to the current working directory.")),
  glob: Schema.optional(ArgumentString("Glob pattern to filter files (e.g. \"*.js\", \"*.{ts,tsx}\")")),
  type: Schema.optional(ArgumentString("File type to search (rg --type), e.g. js, py, rust")),
  output_mode: Schema.optional(Schema.Literal("content", "files_with_matches", "count")).annotations({
    description:
      "\"content\" shows matching lines, \"files_with_matches\" shows file paths (default), \"count\" shows match " +
      "counts"
  }),
  "-i": Schema.optional(Schema.Boolean).annotations({ description: "Case insensitive search" }),
  "-n": Schema.optional(Schema.Boolean).annotations({
    description: "Show line numbers in output (content mode; default true)"
  }),
  "-A": Schema.optional(Count).annotations({ description: "Lines to show after each match (content mode)" }),
  "-B": Schema.optional(Count).annotations({ description: "Lines to show before each match (content mode)" }),
  "-C": Schema.optional(Count).annotations({ description: "Alias for context" }),
  context: Schema.optional(Count).annotations({
    description: "Lines to show before and after each match (rg -C; content mode)"
  }),
  "-o": Schema.optional(Schema.Boolean).annotations({
    description: "Show only the matching part of each line, one per line (rg -o; content mode)"
  }),
  multiline: Schema.optional(Schema.Boolean).annotations({
    description: "Let patterns span lines and `.` match newlines (rg -U --multiline-dotall)"
  }),
  head_limit: Schema.optional(Count).annotations({
    description: "Only the first N lines or entries of the output; 0 means no limit (as when it is left out)"
  }),
  offset: Schema.optional(Count).annotations({
    description:
      "Skip the first N lines or entries before applying head_limit (like \"| tail -n +N+1 | head -N\"); every " +
      "output mode. Default 0."
  })
})

/**
 * @since 0.1.0
 * @category models
 */
export type GrepInput = typeof GrepInput.Type

/**
 * What Grep found: the paths of files with matches, most recently modified first (then by path); or rg's output lines
 * (content, count), file by file in path order.
 *
 * @since 0.1.0
 * @category models
 */
export const GrepOutput = Schema.Struct({
  mode: Schema.Literal("content", "files_with_matches", "count"),
  lines: Schema.Array(Schema.String),
  /** Whether output was cut at `head_limit` or the size cap. */
  truncated: Schema.Boolean,
  /**
   * Files with matches only: the list itself was cut at the size cap (the first files in path order were kept), so
   * `offset` cannot reach the rest; a narrower search can.
   */
  capped: Schema.optional(Schema.Literal(true)),
  /** rg's complaints when it still found matches (exit code 2 with output). */
  warning: Schema.optional(Schema.String),
  /** How many files with matches were left out because permission rules deny reading them. */
  withheld: Schema.optional(Count)
})

/**
 * @since 0.1.0
 * @category models
 */
export type GrepOutput = typeof GrepOutput.Type

/**
 * The Grep tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Grep = Tool.make("Grep", {
  description: [
    "Searches file contents with a regular expression (ripgrep). Use it to find where something is defined or used; " +
    "use it instead of grep or rg in Bash.",
    "- pattern: ripgrep regex syntax (\"log.*Error\", \"function\\s+\\w+\"); escape literal braces " +
    "(\"interface\\{\\}\").",
    "- path: a file or directory (default: the working directory). glob (\"*.ts\", \"**/*.{ts,tsx}\") or type " +
    "(\"js\", \"py\", \"rust\") narrow the files searched.",
    "- output_mode: \"files_with_matches\" (default) lists paths, most recently modified first; \"content\" shows " +
    "matching lines (with -n line numbers, -A/-B/-C context lines); \"count\" gives counts per file. -i ignores " +
    "case; multiline lets a pattern span lines.",
    "- head_limit: keep only the first N entries (0: all); offset skips the first N before it (page through with " +
    "both). -o shows only the matching parts. Long output is cut; files ignored by .gitignore or protected by rules " +
    "are skipped."
  ].join("\n"),
  input: GrepInput,
  output: GrepOutput,
  maxResultChars: 20_000,
  fileAccess: "read",
  // Bounded in time like everything else; a timeout stops the work (the call's signal, or the child process).
  timeout: Duration.minutes(2)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** Output kept in memory at most; the result store takes over from the runtime's cap anyway. */
const maxOutputBytes = 4 * 1024 * 1024

/** rg reads its standard input for a path of "-", even after "--": a file of that name is "./-" (and prints so). */
const asTarget = (target: string): string => (target === "-" ? "./-" : target)

/**
 * rg's arguments for an input; `target` is the file or directory to search, as rg should print it. Content and count
 * lines come in path order (`--sort path`); files with matches come as rg's threads find them, unless `sortByPath`.
 *
 * @since 0.1.0
 * @category utilities
 */
export const ripgrepArgs = (
  input: GrepInput,
  target: string,
  options?: { readonly sortByPath?: boolean | undefined }
): ReadonlyArray<string> => {
  const mode = input.output_mode ?? "files_with_matches"
  const args = [
    "--no-config",
    "--color=never",
    "--no-require-git",
    // Symlinks met while recursing are not followed (rg's default, said out loud): they could lead out of the
    // workspace.
    "--no-follow",
    "--hidden",
    "--glob",
    "!.git",
    "--max-columns",
    "500",
    "--max-columns-preview",
    "--null"
  ]
  // Each mode in an order that does not change from run to run, or offset would page through a different list each
  // time: files with matches are collected whole and put in order by modification time afterwards; content and count
  // lines come in path order, so rg stops as soon as enough of them are in.
  if (mode === "files_with_matches") {
    args.push("--files-with-matches")
    if (options?.sortByPath === true) args.push("--sort", "path")
  } else if (mode === "count") args.push("--sort", "path", "--count", "--with-filename")
  else {
    args.push("--sort", "path")
    // Line numbers always: their `:` or `-` tells a match from context (with `--null` the path's own separator is
    // gone); `-n: false` drops them again when the lines are put together.
    args.push("--no-heading", "--with-filename", "--line-number", "--context-separator", contextSeparatorArg)
    // `context` is Claude Code's name for -C; when both are given, `context` wins.
    const context = input.context ?? input["-C"]
    if (context !== undefined) args.push("--context", String(context))
    if (input["-o"] === true) args.push("--only-matching")
    if (input["-A"] !== undefined) args.push("--after-context", String(input["-A"]))
    if (input["-B"] !== undefined) args.push("--before-context", String(input["-B"]))
  }
  if (input["-i"] === true) args.push("--ignore-case")
  if (input.multiline === true) args.push("--multiline", "--multiline-dotall")
  if (input.type !== undefined) args.push("--type", input.type)
  // Several globs separated by whitespace; a brace group ("*.{ts,tsx}") stays one glob.
  for (const glob of input.glob?.split(/\s+/).filter((g) => g !== "") ?? []) args.push("--glob", glob)
  args.push("-e", input.pattern, "--", asTarget(target))
  return args
}

interface RgResult {
  readonly lines: ReadonlyArray<string>
  readonly truncated: boolean
  readonly code: number | null
  readonly stderr: string
  /**
   * Whether the search itself failed (a pattern, glob or type rg refuses), as opposed to complaints about some files
   * (one it could not read) in a search that went on: a page with no lines is then still an answer.
   */
  readonly failed: boolean
}

/** rg's complaint about one file or directory it could not read: the search went on without it. */
const IO_COMPLAINT = /^rg: [\s\S]+ \(os error \d+\)$/

/** rg exits at once on SIGTERM; SIGKILL follows this soon if it did not. */
const KILL_GRACE = Duration.millis(500)
/** rg's complaints kept at most. */
const maxStderrBytes = 64 * 1024

type Line = (record: Exclude<RgRecord, { readonly _tag: "Separator" }>) => string | undefined

/** Which lines of files a search answers with: the first `skip` are passed over, then at most `keep` are kept. */
interface Window {
  readonly skip: number
  readonly keep: number
}

/**
 * Puts output lines together from ripgrep's records (from rg or from the JavaScript search alike): each record becomes
 * a line with `toLine` (undefined leaves it out); the lines of the `window` are kept, up to {@link maxOutputBytes}.
 * A context separator ("--") is kept only between two kept lines, and is not a line of any file: the window counts
 * the others only, so pages read with offset and head_limit are parts of one list and none starts or ends with one.
 * Separators are told from lines by the records, never by their text (a file may be named "--"). `take` answers false
 * once there is enough.
 */
const collector = (window: Window, toLine: Line) => {
  const lines: Array<string> = []
  let seen = 0
  let separated = false
  let bytes = 0
  let truncated = false
  return {
    lines,
    truncated: () => truncated,
    take: (record: RgRecord): boolean => {
      if (truncated) return false
      if (record._tag === "Separator") {
        separated = true
        return true
      }
      const line = toLine(record)
      if (line === undefined) return true
      if (seen < window.skip) {
        seen++
        separated = false
        return true
      }
      if (seen - window.skip >= window.keep || bytes >= maxOutputBytes) {
        truncated = true
        return false
      }
      if (separated && lines.length > 0) {
        lines.push("--")
        bytes += 3
      }
      separated = false
      lines.push(line)
      seen++
      bytes += line.length + 1
      return true
    }
  }
}

/**
 * Runs rg through {@link Subprocess.run}, keeping its records' lines with a {@link collector}; rg is stopped when
 * enough arrived or when the fiber is interrupted.
 */
const runRipgrep = (
  args: ReadonlyArray<string>,
  /** The file or directory searched, as rg prints it: only its own notes are taken for rg's. */
  target: string,
  cwd: string,
  mode: GrepOutput["mode"],
  window: Window,
  toLine: Line,
  onLines: (lines: ReadonlyArray<string>) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<RgResult, Tool.ToolError> =>
  Effect.gen(function*() {
    const rgPath = yield* Effect.tryPromise({
      try: ripgrepPath,
      catch: (error) =>
        new Tool.ToolError({ message: `Cannot run ripgrep: ${error instanceof Error ? error.message : String(error)}` })
    })
    // The input schema already bounds each argument; this is the last word before the kernel's.
    const problem = argvProblem([rgPath, ...args])
    if (problem !== undefined) return yield* new Tool.ToolError({ message: `Cannot run ripgrep: ${problem}.` })
    const read = recordReader(mode, { target })
    const decoder = new TextDecoder()
    const collected = collector(window, toLine)
    let printed = false
    // Each chunk's new lines go to `onLines` while rg goes on searching.
    const take = (text: string): Effect.Effect<Subprocess.Delivery> => {
      const before = collected.lines.length
      for (const record of read(text)) {
        printed = true
        if (!collected.take(record)) break
      }
      const delivery = collected.truncated() ? "enough" : undefined
      return collected.lines.length === before
        ? Effect.succeed(delivery)
        : Effect.as(onLines(collected.lines.slice(before)), delivery)
    }
    const result = yield* Effect.scoped(Subprocess.run({
      argv: [rgPath, ...args],
      cwd,
      env: process.env,
      killGrace: KILL_GRACE,
      stdout: { onChunk: (chunk) => Effect.suspend(() => take(decoder.decode(chunk, { stream: true }))) },
      stderr: { maxBytes: maxStderrBytes, overflow: "drop" }
    })).pipe(Effect.mapError((error) => new Tool.ToolError({ message: `Could not run ripgrep: ${error.message}` })))
    const truncated = collected.truncated()
    if (!truncated) yield* take(decoder.decode())
    const code = truncated || result.exit._tag === "Stopped"
      ? 0
      : result.exit._tag === "Exited"
      ? result.exit.code
      : null
    const stderr = new TextDecoder().decode(result.stderr)
    return {
      lines: collected.lines,
      truncated: collected.truncated(),
      code,
      stderr,
      // Nothing printed and an error that is not about one file: rg did not search.
      failed: code === 2 && !printed &&
        !complaintsOf(stderr).every((complaint) => IO_COMPLAINT.test(complaint))
    }
  })

/**
 * The same search in JavaScript through {@link FileAccess} (`internal/filesSearch`), for a file system ripgrep cannot
 * see, answered as rg would: exit code 0 with matches, 1 without, 2 with complaints (and a bad pattern as rg's error).
 */
const searchInJs = (
  access: FileAccess.FileAccess["Type"],
  input: GrepInput,
  target: SearchTarget,
  window: Window,
  toLine: Line
): Effect.Effect<RgResult> =>
  Effect.gen(function*() {
    const context = input.context ?? input["-C"]
    const collected = collector(window, toLine)
    const ended = yield* Effect.either(search(
      access,
      {
        pattern: input.pattern,
        mode: input.output_mode ?? "files_with_matches",
        glob: input.glob,
        type: input.type,
        ignoreCase: input["-i"] === true,
        onlyMatching: input["-o"] === true,
        multiline: input.multiline === true,
        before: input["-B"] ?? context ?? 0,
        after: input["-A"] ?? context ?? 0
      },
      target,
      collected.take
    ))
    if (ended._tag === "Left") {
      return { lines: [], truncated: false, code: 2, stderr: `rg: ${ended.left}`, failed: true }
    }
    const complaints = ended.right.complaints
    return {
      lines: collected.lines,
      truncated: collected.truncated(),
      code: collected.truncated() ? 0 : complaints.length > 0 ? 2 : collected.lines.length > 0 ? 0 : 1,
      stderr: complaints.join("\n"),
      failed: false
    }
  })

/**
 * The page of files with matches, newest first then by path (as Claude Code's Grep and our Glob order them), only
 * the first `skip + keep` put in order: what ripgrep's threads print comes in no fixed order, and a page read with
 * offset must be the next part of the same list. `mtimes` are the files' modification times, in order; a file that
 * could not be stated sorts as the oldest.
 */
const newestFirst = (
  mtimes: Effect.Effect<ReadonlyArray<number>>,
  found: RgResult,
  skip: number,
  keep: number
): Effect.Effect<RgResult> =>
  Effect.map(
    mtimes,
    (mtimesMs) => {
      const limit = Math.min(skip + keep, Number.MAX_SAFE_INTEGER)
      const dated = found.lines.map((file, i) => ({ file, mtimeMs: mtimesMs[i] ?? 0 }))
      return {
        ...found,
        lines: newest(dated, limit).slice(skip).map(({ file }) => file),
        truncated: found.truncated || found.lines.length > limit
      }
    }
  )

/**
 * Whether the deny rules let a record's file be shown. A path with a newline may be a line of rg's that is not a
 * record (a note the reader does not know) joined to the next record's path: each part after a newline must be allowed
 * too, so that a denied file cannot hide behind such a line.
 */
const mayShow = (withheld: Withholding, cwd: string, path: string): boolean => {
  const file = nodePath.resolve(cwd, path)
  if (!withheld.allows(file)) return false
  for (let newline = path.indexOf("\n"); newline !== -1; newline = path.indexOf("\n", newline + 1)) {
    if (withheld.denies(nodePath.resolve(cwd, path.slice(newline + 1)))) {
      withheld.withhold(file)
      return false
    }
  }
  return true
}

/** `12:text` (a match) or `12-text` (context): the separator after the line number, and where the text starts. */
const LINE_NUMBER = /^\d+([:-])/

/**
 * Grep's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  Grep,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const access = yield* FileAccess.current
    const searchPath = (input: GrepInput) => input.path ?? workspace.cwd

    return {
      // A soft interrupt: a search may be interrupted (Claude Code's default).
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          const resolved = yield* workspace.resolve(searchPath(input))
          const stat = yield* access.stat(resolved.real)
          const refusal = specialFileReason(resolved, stat)
          if (refusal !== undefined) return yield* Tool.reject(refusal)
          if (stat === undefined) return yield* Tool.reject(`Path does not exist: ${resolved.absolute}.`)
          if (input.pattern === "") {
            return yield* Tool.reject("The pattern is empty; give a regular expression to search for.")
          }
          return { ...input, path: resolved.absolute }
        }),

      ...directorySearchStages(workspace, searchPath),

      call: (input, context) =>
        Effect.gen(function*() {
          const resolved = yield* workspace.resolve(searchPath(input))
          // Searched through its real path (no symlink swap after the check); printed relative to the cwd when inside.
          const target = isWithin(workspace.cwd, resolved.real)
            ? nodePath.relative(workspace.cwd, resolved.real) || "."
            : resolved.real
          const mode = input.output_mode ?? "files_with_matches"
          // rg prints paths under a "." target as "./x": drop that prefix, the paths are relative to the cwd anyway.
          const shown = (path: string) => (target === "." && path.startsWith("./") ? path.slice(2) : path)
          const lineNumbers = input["-n"] !== false
          const lineOf = (withheld: Withholding): Line => {
            // The line of the note just before, if the record before was one: with the next record's path it would
            // name a file whose name holds a newline (a note rg printed, or a name made to look like one).
            let note: string | undefined
            return (record) => {
              const joined = note === undefined ? record.path : `${note}\n${record.path}`
              note = record._tag === "BinaryNotice" ? record.text : undefined
              if (!mayShow(withheld, workspace.cwd, record.path)) return undefined
              if (joined !== record.path && !mayShow(withheld, workspace.cwd, joined)) return undefined
              return lineOfShown(record)
            }
          }
          const lineOfShown: Line = (record) => {
            if (record._tag === "BinaryNotice") return shown(record.text)
            if (mode === "files_with_matches") return shown(record.path)
            if (mode === "count") return `${shown(record.path)}:${record.rest}`
            const number = LINE_NUMBER.exec(record.rest)
            if (number === null) return `${shown(record.path)}:${record.rest}`
            return `${shown(record.path)}${number[1]}${lineNumbers ? record.rest : record.rest.slice(number[0].length)}`
          }
          const mtimesOf = (lines: ReadonlyArray<string>) =>
            Effect.map(
              FileAccess.lstatAll(access, lines.map((line) => nodePath.resolve(workspace.cwd, line))),
              (stats) => stats.map((stat) => stat?.mtimeMs ?? 0)
            )
          const skipped = input.offset ?? 0
          // 0 is no limit, as in Claude Code's Grep (a model that asks for everything must not get nothing).
          const kept = input.head_limit === undefined || input.head_limit === 0
            ? Number.MAX_SAFE_INTEGER
            : input.head_limit
          // Files with matches are all collected (up to the size cap; rg is not stopped early), then put in order and
          // paged; lines are paged as they come, and rg stops once the page is full.
          const window: Window = mode === "files_with_matches"
            ? { skip: 0, keep: Number.MAX_SAFE_INTEGER }
            : { skip: skipped, keep: kept }
          // One run of rg, with a withheld-file count of its own (only what its output would show counts). Files with
          // matches are dated as rg finds them, while it goes on searching (after it, their lstat calls would add to
          // its time).
          const withRipgrep = (sortByPath: boolean) =>
            Effect.suspend(() => {
              const withheld = withholding(context, resolved)
              const mtimes: Array<number> = []
              const dating = (lines: ReadonlyArray<string>) =>
                Effect.map(mtimesOf(lines), (found) => {
                  for (const mtime of found) mtimes.push(mtime)
                })
              return Effect.map(
                runRipgrep(
                  ripgrepArgs(input, target, { sortByPath }),
                  asTarget(target),
                  workspace.cwd,
                  mode,
                  window,
                  lineOf(withheld),
                  mode === "files_with_matches" ? dating : undefined
                ),
                (found) => ({ found, withheld, mtimes: Option.some(mtimes) })
              )
            })
          // ripgrep where it sees the same files (the host's); else the same search in JavaScript.
          const searched = access.onDisk
            ? yield* Effect.flatMap(withRipgrep(false), (first) =>
              // Files with matches over the size cap: which made it depends on rg's threads. Searched again in path
              // order, the ones kept are the same every time (the first in path order).
              mode === "files_with_matches" && first.found.truncated ? withRipgrep(true) : Effect.succeed(first))
            : yield* Effect.gen(function*() {
              const withheld = withholding(context, resolved)
              const searchTarget: SearchTarget = {
                real: resolved.real,
                shown: asTarget(target),
                isDirectory: (yield* access.stat(resolved.real))?.type === "Directory",
                cwd: workspace.cwd,
                top: workspace.roots.find((root) => isWithin(root, resolved.real)) ?? resolved.real
              }
              const found = yield* searchInJs(access, input, searchTarget, window, lineOf(withheld))
              return { found, withheld, mtimes: Option.none<ReadonlyArray<number>>() }
            })
          const { withheld } = searched
          const named = (path: string) => !withheld.denies(nodePath.resolve(workspace.cwd, path))
          const result = mode === "files_with_matches"
            ? yield* newestFirst(
              Option.match(searched.mtimes, { onNone: () => mtimesOf(searched.found.lines), onSome: Effect.succeed }),
              searched.found,
              skipped,
              kept
            )
            : searched.found
          // rg's complaints about withheld files (unreadable, too large...) would name them: leave those out too.
          const complaints = complaintsOf(result.stderr).filter((complaint) => complaintPaths(complaint).every(named))
          const stderr = complaints.join("\n")
          const onlyAboutWithheld = stderr === "" && result.stderr.trim() !== ""
          if (result.failed && !onlyAboutWithheld) {
            return yield* new Tool.ToolError({
              message: `${access.onDisk ? "ripgrep" : "Search"} failed: ${stderr === "" ? "exit code 2" : stderr}`
            })
          }
          if (result.code !== 0 && result.code !== 1 && result.code !== 2) {
            return yield* new Tool.ToolError({
              message: `ripgrep exited with code ${result.code}${stderr === "" ? "" : `: ${stderr}`}`
            })
          }
          return {
            mode,
            // Exit code 1 is rg saying it found nothing; what it printed then is context around an empty match it
            // did not report (`-U -C1 '^$'` over "foo\n" prints "1-foo" and exits 1): no match, no lines.
            lines: result.code === 1 ? [] : result.lines,
            truncated: result.truncated,
            // Files with matches are cut at the cap as a whole list, whatever the offset.
            ...(mode === "files_with_matches" && searched.found.truncated ? { capped: true } : {}),
            ...(result.code === 2 && stderr !== "" ? { warning: stderr } : {}),
            ...(withheld.count() > 0 ? { withheld: withheld.count() } : {})
          }
        }),

      renderUse: (
        input
      ) => [
        UiBlock.Title({
          text: `Grep(${JSON.stringify(input.pattern)}${
            input.path === undefined ? "" : ` in ${displayPath(input.path, workspace.cwd)}`
          })`
        })
      ],
      renderResult: (output) => [UiBlock.Text({ text: summary(output) })],
      toModel: (output) => {
        const note = [
          output.capped === true
            ? "(Too many files with matches to list them all: the list was cut at the size cap, keeping the first files " +
              "in path order; offset pages through those, but cannot reach the others. Narrow the search with path, " +
              "glob or type.)"
            : output.truncated
            ? "(Output truncated at head_limit or the size cap: narrow the search, raise head_limit, or read on with " +
              "offset.)"
            : undefined,
          output.warning === undefined ? undefined : `(ripgrep reported: ${output.warning})`,
          withheldNote(output.withheld)
        ].filter((n) => n !== undefined)
        const body = output.lines.length === 0
          ? output.capped === true
            ? "No files at this offset"
            : output.mode === "content"
            ? "No matches found"
            : "No files found"
          : output.mode === "content"
          ? output.lines.join("\n")
          : `${summary(output)}\n${output.lines.join("\n")}`
        return [body, ...note].join("\n")
      }
    }
  })
)

/**
 * Grep's behaviour; requires the session's {@link Workspace}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Grep, make)

const summary = (output: GrepOutput): string => {
  switch (output.mode) {
    case "files_with_matches":
      return `Found ${output.lines.length} file${output.lines.length === 1 ? "" : "s"}`
    case "count": {
      const total = output.lines.reduce((sum, line) => sum + (Number(line.slice(line.lastIndexOf(":") + 1)) || 0), 0)
      return `Found ${total} total occurrence${total === 1 ? "" : "s"} across ${output.lines.length} file${
        output.lines.length === 1 ? "" : "s"
      }`
    }
    case "content":
      return `Found ${output.lines.length} line${output.lines.length === 1 ? "" : "s"}`
  }
}
