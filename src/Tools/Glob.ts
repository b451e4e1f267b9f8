/**
 * The `Glob` tool (`pattern`, `path`): files matching a glob pattern (picomatch), newest first, at most 100, with a
 * note when there were more. `.gitignore` files are respected: the one at the workspace root and nested ones
 * between it and each match; `.git` is never listed. Paths are relative to the working directory when inside it.
 *
 * A pattern may not climb out of its base directory (`..`); an absolute pattern is split into a base directory
 * and a relative pattern. Symlinked directories are not followed, and a match is listed only when it resolves
 * inside the searched directory or the workspace (`link/passwd` through `link -> /etc` is not). Files that permission
 * rules forbid reading (`Read(./.env)`) are left out, and the model is told how many, not which.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as nodePath from "node:path"
import picomatch from "picomatch"
import * as FileAccess from "../Session/FileAccess.js"
import { isWithin, Workspace } from "../Session/Workspace.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { PathString } from "./internal/argumentLimits.js"
import { gitignoreOnly } from "./internal/filesIgnore.js"
import { newest } from "./internal/filesNewest.js"
import { directorySearchStages, displayPath, picomatchGlob, specialFileReason } from "./internal/filesPaths.js"
import { walk } from "./internal/filesWalk.js"
import { withheldNote, withholding } from "./internal/filesWithheld.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * Glob's input, as Claude Code names it.
 *
 * @since 0.1.0
 * @category models
 */
export const GlobInput = Schema.Struct({
  pattern: Schema.String.annotations({ description: "The glob pattern to match files against, e.g. \"**/*.ts\"" }),
  path: Schema.optional(PathString("The directory to search in. Omit it to search the current working directory."))
})

/**
 * What Glob found.
 *
 * @since 0.1.0
 * @category models
 */
export const GlobOutput = Schema.Struct({
  /** Newest first; relative to the working directory when inside it. */
  files: Schema.Array(Schema.String),
  /** How many files matched in all. */
  total: Schema.Number,
  truncated: Schema.Boolean,
  /** How many matching files were left out because permission rules deny reading them. */
  withheld: Schema.optional(Schema.Number),
  /**
   * How many matches were left out because they resolve (through a symlink) outside the searched directory and the
   * workspace.
   */
  outside: Schema.optional(Schema.Number)
})

/**
 * @since 0.1.0
 * @category models
 */
export type GlobOutput = typeof GlobOutput.Type

/**
 * The most files Glob returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const maxResults = 100

/**
 * The Glob tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Glob = Tool.make("Glob", {
  description: [
    "Finds files by name with a glob pattern, in a codebase of any size. Use it when you know (part of) a file's " +
    "name or extension; to find files by what they contain, use Grep.",
    "- pattern: a glob such as \"**/*.ts\", \"src/**/*.test.ts\" or \"*.{json,yaml}\".",
    "- path: the directory to search (default: the working directory).",
    `- Returns matching paths, most recently modified first, at most ${maxResults}; narrow the pattern if you hit ` +
    `the limit.`,
    "- Files ignored by .gitignore, and files protected by rules, are left out."
  ].join("\n"),
  input: GlobInput,
  output: GlobOutput,
  fileAccess: "read",
  // Bounded in time like everything else; a timeout stops the work (the call's signal, or the child process).
  timeout: Duration.minutes(2)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** picomatch refuses longer patterns. */
const maxPatternChars = 65_536

/** Why a pattern can never match a name, or undefined. */
const patternProblem = (pattern: string): string | undefined =>
  pattern.includes("\0")
    ? "contains a NUL byte (\\0), which no file name can hold"
    : pattern.length > maxPatternChars
    ? `is ${pattern.length} characters long, over the ${maxPatternChars} a glob pattern may have`
    : undefined

/**
 * A relative pattern as matched (a leading `./` dropped), the static directory the walk starts from (as tinyglobby
 * does: through a symlink too, whose matches the containment check then counts as outside), and the pruning it
 * allows: without `**`, no directory at or below the pattern's depth can hold a match.
 */
const globPattern = (pattern: string) => {
  const text = pattern.replace(/^(\.\/)+/, "")
  const scan = picomatch.scan(text)
  const staticSegments = scan.base.split("/").filter((segment) => segment !== "")
  // Without a dynamic part the last segment is the name itself: the walk starts in its directory.
  const prefix = (scan.glob === "" ? staticSegments.slice(0, -1) : staticSegments).join("/")
  const depth = text.split("/").filter((segment) => segment !== "").length
  const unbounded = /\*\*|[{(]/.test(scan.glob)
  return {
    text,
    prefix,
    /** Whether a directory (relative to the searched one) can hold a match. */
    mayHold: (directory: string): boolean => unbounded || directory.split("/").length < depth
  }
}

/**
 * Whether a segment holds glob syntax, as tinyglobby's `isDynamicPattern` decides it (picomatch's scan): asked of
 * picomatch directly, since importing tinyglobby at start-up loads fdir, which loads picomatch a second time from disk.
 */
const isDynamicSegment = (segment: string): boolean => {
  const scan = picomatch.scan(segment)
  return scan.isGlob || scan.negated
}

/** Splits an absolute pattern into its static directory and the dynamic rest. */
const splitAbsolute = (pattern: string): { readonly base: string; readonly rest: string } => {
  const segments = pattern.split("/")
  const dynamic = segments.findIndex(isDynamicSegment)
  if (dynamic === -1) return { base: nodePath.dirname(pattern), rest: nodePath.basename(pattern) }
  return { base: segments.slice(0, dynamic).join("/") || "/", rest: segments.slice(dynamic).join("/") }
}

/**
 * Glob's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  Glob,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const access = yield* FileAccess.current
    const searchPath = (input: typeof GlobInput.Type) => input.path ?? workspace.cwd

    return {
      // A soft interrupt: a search may be interrupted (Claude Code's default).
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          let { pattern, path } = input
          const problem = patternProblem(pattern)
          if (problem !== undefined) return yield* Tool.reject(`The pattern ${problem}.`)
          if (nodePath.isAbsolute(pattern)) {
            const split = splitAbsolute(pattern)
            if (path !== undefined && !isWithin(nodePath.resolve(workspace.cwd, path), split.base)) {
              return yield* Tool.reject(
                "The pattern is absolute and lies outside `path`: give a relative pattern, or leave `path` out."
              )
            }
            path = split.base
            pattern = split.rest
          }
          if (pattern.split("/").includes("..")) {
            return yield* Tool.reject(
              "The pattern may not contain `..`: set `path` to the directory to search instead."
            )
          }
          const resolved = yield* workspace.resolve(path ?? workspace.cwd)
          const stat = yield* access.stat(resolved.real)
          const refusal = specialFileReason(resolved, stat)
          if (refusal !== undefined) return yield* Tool.reject(refusal)
          if (stat === undefined) return yield* Tool.reject(`Directory does not exist: ${resolved.absolute}.`)
          if (stat.type !== "Directory") {
            return yield* Tool.reject(`${resolved.absolute} is not a directory. Give a directory as path.`)
          }
          return { pattern, path: resolved.absolute }
        }),

      ...directorySearchStages(workspace, searchPath),

      call: (input, context) =>
        Effect.gen(function*() {
          const resolved = yield* workspace.resolve(searchPath(input))
          const base = resolved.real
          const withheld = withholding(context, resolved)
          // .gitignore files apply from the workspace root that holds the search, else from the search directory.
          const top = workspace.roots.find((root) => isWithin(root, base)) ?? base
          const pattern = globPattern(input.pattern)
          const matches = yield* Effect.try({
            try: () => pattern.text === "" ? () => false : picomatch(picomatchGlob(pattern.text), { dot: true }),
            catch: (e) => new Tool.ToolError({ message: `Glob failed: ${e instanceof Error ? e.message : String(e)}` })
          })
          const start = pattern.prefix === "" ? base : nodePath.join(base, pattern.prefix)
          const relativeOf = (relative: string) => pattern.prefix === "" ? relative : `${pattern.prefix}/${relative}`
          const startsInDirectory = start === base || (yield* access.stat(start))?.type === "Directory"
          const walked = !startsInDirectory ? { entries: [] } : yield* walk(access, {
            root: start,
            top: isWithin(top, start) ? top : start,
            ignoreFiles: gitignoreOnly,
            override: (entry) => (entry.type === "Directory" && entry.name === ".git" ? "skip" : undefined),
            descend: (entry) => pattern.mayHold(relativeOf(entry.relative))
          }).pipe(
            Effect.mapError((e) => new Tool.ToolError({ message: `Glob failed: ${e.message}` }))
          )
          // Only regular files, as tinyglobby lists them; symlinks met in the walk are never followed, nor listed.
          const named = walked.entries.filter((entry) => entry.type === "File" && matches(relativeOf(entry.relative)))
          // Where a match resolves decides, not how it is spelled. The walk never follows a link, so a match lies where
          // its directory does: one realpath per directory, in case a directory was swapped for a link mid-walk.
          const directories = [...new Set(named.map((entry) => nodePath.dirname(entry.path)))]
          const reals = yield* FileAccess.realPathAll(access, directories)
          const realDirectories = new Map(directories.map((directory, i) => [directory, reals[i] ?? directory]))
          const isInside = (real: string) => isWithin(base, real) || workspace.contains(real)
          // A name in a directory that is inside is inside too: asked once per directory, and per file only in one
          // that is not (where the file may still be the searched directory or a root itself).
          const insideDirectories = new Set(
            directories.filter((directory) => isInside(realDirectories.get(directory)!))
          )
          const inside = named.filter((entry) => {
            const directory = nodePath.dirname(entry.path)
            return insideDirectories.has(directory) ||
              isInside(nodePath.join(realDirectories.get(directory)!, entry.name))
          })
          const outside = named.length - inside.length
          const kept = inside.filter((entry) => withheld.allows(entry.path))
          const stats = yield* FileAccess.lstatAll(access, kept.map((entry) => entry.path))
          // Only the shown ones are put in order; every kept match counts towards the total.
          const shown = newest(
            kept.map((entry, i) => ({ file: entry.path, mtimeMs: stats[i]?.mtimeMs ?? 0 })),
            maxResults
          )
          // Shown relative to the working directory as the model wrote it (roots may be reached through a link).
          const shownBase = resolved.absolute
          const show = (file: string) =>
            displayPath(nodePath.join(shownBase, nodePath.relative(base, file)), workspace.cwd)
          return {
            files: shown.map(({ file }) => show(file)),
            total: kept.length,
            truncated: kept.length > maxResults,
            ...(withheld.count() > 0 ? { withheld: withheld.count() } : {}),
            ...(outside > 0 ? { outside } : {})
          }
        }),

      renderUse: (
        input
      ) => [
        UiBlock.Title({
          text: `Glob(${input.pattern}${
            input.path === undefined ? "" : ` in ${displayPath(input.path, workspace.cwd)}`
          })`
        })
      ],
      renderResult: (
        output
      ) => [
        UiBlock.Text({
          text: `Found ${output.total} file${output.total === 1 ? "" : "s"}${
            output.truncated ? ` (showing ${maxResults})` : ""
          }`
        })
      ],
      toModel: (output) => {
        const body = output.total === 0
          ? "No files found"
          : output.truncated
          ? `${
            output.files.join("\n")
          }\n(Results are truncated: showing the ${maxResults} most recently modified of ${output.total} files. Use a more specific path or pattern.)`
          : output.files.join("\n")
        const notes = [
          withheldNote(output.withheld),
          output.outside === undefined
            ? undefined
            : `(${output.outside} match${output.outside === 1 ? "" : "es"} left out: ${
              output.outside === 1 ? "it resolves" : "they resolve"
            } through a symlink outside the searched directory)`
        ].filter((note) => note !== undefined)
        return [body, ...notes].join("\n")
      }
    }
  })
)

/**
 * Glob's behaviour; requires the session's {@link Workspace}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Glob, make)
