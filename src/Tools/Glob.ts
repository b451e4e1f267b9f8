/**
 * The `Glob` tool (`pattern`, `path`): files matching a glob pattern (tinyglobby), newest first, at most 100, with a
 * note when there were more. `.gitignore` files are respected: the one at the workspace root and nested ones
 * between it and each match; `.git` is never listed. Paths are relative to the working directory when inside it.
 *
 * A pattern may not climb out of its base directory (`..`); an absolute pattern is split into a base directory
 * and a relative pattern. Symlinked directories are not followed. Files that permission rules forbid reading
 * (`Read(./.env)`) are left out, and the model is told how many, not which.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { glob, isDynamicPattern } from "tinyglobby"
import * as Tool from "../Tool/Tool.js"
import { UiBlock } from "../Tool/Presentation.js"
import { gitignoreFilter, rootIgnoreGlobs } from "./internal/filesIgnore.js"
import { directorySearchStages, displayPath, specialFileReason } from "./internal/filesPaths.js"
import { withheldNote, withholding } from "./internal/filesWithheld.js"
import { isWithin, Workspace } from "../Runtime/Workspace.js"

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
  path: Schema.optional(Schema.String).annotations({
    description: "The directory to search in. Omit it to search the current working directory."
  })
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
  withheld: Schema.optional(Schema.Number)
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
    "Fast file pattern matching that works with any codebase size.",
    "- Supports glob patterns like \"**/*.js\" or \"src/**/*.ts\".",
    `- Returns matching file paths sorted by modification time, newest first (at most ${maxResults}).`,
    "- Files ignored by .gitignore are left out.",
    "- Use it to find files by name; use Grep to search their content."
  ].join("\n"),
  input: GlobInput,
  output: GlobOutput,
  fileAccess: "read"
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** Splits an absolute pattern into its static directory and the dynamic rest. */
const splitAbsolute = (pattern: string): { readonly base: string; readonly rest: string } => {
  const segments = pattern.split("/")
  const dynamic = segments.findIndex((segment) => isDynamicPattern(segment))
  if (dynamic === -1) return { base: nodePath.dirname(pattern), rest: nodePath.basename(pattern) }
  return { base: segments.slice(0, dynamic).join("/") || "/", rest: segments.slice(dynamic).join("/") }
}

/**
 * Glob's behaviour; requires the session's {@link Workspace}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Glob.implementEffect(
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const searchPath = (input: typeof GlobInput.Type) => input.path ?? workspace.cwd

    return {
      // A soft interrupt: a search may be interrupted (Claude Code's default).
      interruptBehavior: "cancel",
      validate: (input) =>
        Effect.gen(function*() {
          let { pattern, path } = input
          if (nodePath.isAbsolute(pattern)) {
            const split = splitAbsolute(pattern)
            if (path !== undefined && !isWithin(nodePath.resolve(workspace.cwd, path), split.base)) {
              return yield* Tool.reject("The pattern is absolute and lies outside `path`: give a relative pattern, or leave `path` out.")
            }
            path = split.base
            pattern = split.rest
          }
          if (pattern.split("/").includes("..")) {
            return yield* Tool.reject("The pattern may not contain `..`: set `path` to the directory to search instead.")
          }
          const resolved = yield* workspace.resolve(path ?? workspace.cwd)
          const stat = yield* Effect.promise(() => fs.promises.stat(resolved.real).catch(() => undefined))
          const refusal = specialFileReason(resolved, stat)
          if (refusal !== undefined) return yield* Tool.reject(refusal)
          if (stat === undefined) return yield* Tool.reject(`Directory does not exist: ${resolved.absolute}.`)
          if (!stat.isDirectory()) return yield* Tool.reject(`${resolved.absolute} is not a directory. Give a directory as path.`)
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
          const found = yield* Effect.tryPromise({
            try: async () => {
              const files = await glob(input.pattern, {
                cwd: base,
                absolute: true,
                onlyFiles: true,
                dot: true,
                followSymbolicLinks: false,
                expandDirectories: false,
                ignore: ["**/.git/**", ...(await rootIgnoreGlobs(top, base))]
              })
              const inside = files.map((file) => nodePath.normalize(file)).filter((file) => isWithin(base, file))
              const kept = (await gitignoreFilter(top, inside)).filter((file) => withheld.allows(file))
              const stamped = await Promise.all(
                kept.map(async (file) => ({ file, mtimeMs: await fs.promises.lstat(file).then((s) => s.mtimeMs, () => 0) }))
              )
              return stamped.sort((a, b) => b.mtimeMs - a.mtimeMs || a.file.localeCompare(b.file))
            },
            catch: (e) => new Tool.ToolError({ message: `Glob failed: ${e instanceof Error ? e.message : String(e)}` })
          })
          // Shown relative to the working directory as the model wrote it (roots may be reached through a link).
          const shownBase = resolved.absolute
          const show = (file: string) => displayPath(nodePath.join(shownBase, nodePath.relative(base, file)), workspace.cwd)
          return {
            files: found.slice(0, maxResults).map(({ file }) => show(file)),
            total: found.length,
            truncated: found.length > maxResults,
            ...(withheld.count() > 0 ? { withheld: withheld.count() } : {})
          }
        }),

      renderUse: (input) =>
        [UiBlock.Title({ text: `Glob(${input.pattern}${input.path === undefined ? "" : ` in ${displayPath(input.path, workspace.cwd)}`})` })],
      renderResult: (output) => [UiBlock.Text({ text: `Found ${output.total} file${output.total === 1 ? "" : "s"}${output.truncated ? ` (showing ${maxResults})` : ""}` })],
      toModel: (output) => {
        const body = output.total === 0
          ? "No files found"
          : output.truncated
          ? `${output.files.join("\n")}\n(Results are truncated: showing the ${maxResults} most recently modified of ${output.total} files. Use a more specific path or pattern.)`
          : output.files.join("\n")
        const note = withheldNote(output.withheld)
        return note === undefined ? body : `${body}\n${note}`
      }
    }
  })
)
