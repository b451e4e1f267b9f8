/**
 * The `Edit` tool (`file_path`, `old_string`, `new_string`, `replace_all`): exact string replacement in a file the
 * model has read in its current version (a ranged read is enough: the model edits what it saw).
 *
 * - `old_string` must occur exactly once unless `replace_all`; the errors say how often (and where) it occurs, or,
 *   when it does not occur, point at the closest near-match with its line number (whitespace-only differences
 *   first) so the model can correct itself. When the file uses CRLF line endings, an `old_string` written with LF
 *   matches too (and `new_string` gets CRLF).
 * - An empty `old_string` creates a file: allowed when the file does not exist or is empty, refused otherwise
 *   (replacing a whole file is Write's job).
 * - Identical `old_string` and `new_string` are rejected.
 * - Staleness is checked in `validate`, again when the call starts, and once more (mtime and size) right before the
 *   atomic rename, so a file changed in the meantime is never clobbered.
 * - The user sees a unified diff; the model gets one line with the changed line range.
 *
 * @since 0.1.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FileAccess from "../Session/FileAccess.js"
import { FileState, hashContent } from "../Session/FileState.js"
import { Workspace } from "../Session/Workspace.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { PathString } from "./internal/argumentLimits.js"
import { applyAt, describeNearMatch, lineAt, nearMatch, occurrences, unifiedDiff } from "./internal/filesEdit.js"
import type { Applied } from "./internal/filesEdit.js"
import { inspect, readCurrent, staleness, wasEvicted, writeChecked } from "./internal/filesGuard.js"
import type { Current } from "./internal/filesGuard.js"
import { checkFilePath, displayPath, fileResource, resolveSync, ruleCovers } from "./internal/filesPaths.js"
import { boundPreview, previewLines, readForPreview } from "./internal/filesPreview.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * Edit's input, as Claude Code names it.
 *
 * @since 0.1.0
 * @category models
 */
export const EditInput = Schema.Struct({
  file_path: PathString("The absolute path to the file to modify"),
  old_string: Schema.String.annotations({ description: "The text to replace" }),
  new_string: Schema.String.annotations({
    description: "The text to replace it with (must be different from old_string)"
  }),
  replace_all: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "Replace all occurences of old_string (default false)"
  })
})

/**
 * What Edit did.
 *
 * @since 0.1.0
 * @category models
 */
export const EditOutput = Schema.Struct({
  /** Relative to the working directory when inside it. */
  path: Schema.String,
  created: Schema.Boolean,
  replacements: Schema.Number,
  /** First and last line of the new content holding replacement text. */
  firstLine: Schema.Number,
  lastLine: Schema.Number,
  /** A unified diff of the change. */
  patch: Schema.String
})

/**
 * @since 0.1.0
 * @category models
 */
export type EditOutput = typeof EditOutput.Type

/**
 * The Edit tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Edit = Tool.make("Edit", {
  description: [
    "Changes part of a file by replacing an exact piece of text. Use it for targeted changes to existing files; use " +
    "Write to create a file or replace all of it.",
    "- Read the file first: an edit of a file you have not read, or that changed since you read it, is refused. " +
    "The last 100 files read are remembered (across the session); a file read before those must be read again.",
    "- old_string: text copied exactly from the file (same indentation and line breaks, without the line numbers " +
    "Read shows). It must occur exactly once unless replace_all is true; if it occurs more often, include more " +
    "surrounding lines to make it unique.",
    "- new_string: the replacement; it must differ from old_string.",
    "- replace_all: replace every occurrence (default false), e.g. to rename a variable throughout the file.",
    "- An empty old_string creates the file with new_string as its content (when it does not exist or is empty)."
  ].join("\n"),
  input: EditInput,
  output: EditOutput,
  fileAccess: "edit",
  // Bounded in time like everything else; a timeout stops the work (the call's signal, or the child process).
  timeout: Duration.minutes(1)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** Files larger than this are not edited in memory. */
const maxEditBytes = 16 * 1024 * 1024

type EditInput = typeof EditInput.Type

/** The planned change, or a model-facing reason why there is none. */
type Plan =
  | { readonly _tag: "Plan"; readonly before: string; readonly applied: Applied; readonly current: Current | undefined }
  | { readonly _tag: "Problem"; readonly message: string }

const problem = (message: string): Plan => ({ _tag: "Problem", message })

/** Decides what an edit does to `before` (undefined: no file), without touching anything. */
const plan = (input: EditInput, path: string, before: string | undefined, current: Current | undefined): Plan => {
  const { new_string, old_string, replace_all } = input
  if (old_string === new_string) return problem("No changes to make: old_string and new_string are exactly the same.")
  if (old_string === "") {
    if (before !== undefined && before !== "") {
      return problem(
        `Cannot create ${path}: the file already exists and is not empty. Give the old_string to replace, or use ` +
          `Write to replace the whole file.`
      )
    }
    return { _tag: "Plan", before: before ?? "", applied: applyAt("", "", new_string, [0]), current }
  }
  if (before === undefined) {
    return problem(`File does not exist: ${path}. To create it, use an empty old_string (or Write).`)
  }

  let needle = old_string
  let replacement = new_string
  let found = occurrences(before, needle)
  if (found.length === 0 && before.includes("\r\n") && !old_string.includes("\r")) {
    needle = old_string.replace(/\n/g, "\r\n")
    replacement = new_string.replace(/\r?\n/g, "\r\n")
    found = occurrences(before, needle)
  }
  if (found.length === 0) {
    const near = nearMatch(before, old_string)
    return problem(
      `String to replace not found in ${path}.` +
        (near === undefined ? " Read the file again to see its current content." : `\n${describeNearMatch(near)}`)
    )
  }
  if (found.length > 1 && !replace_all) {
    const lines = found.slice(0, 10).map((at) => lineAt(before, at))
    return problem(
      `Found ${found.length} matches of old_string in ${path} (at lines ${lines.join(", ")}${
        found.length > 10 ? ", ..." : ""
      }), but replace_all is false. ` +
        "To replace all of them, set replace_all to true. To replace only one, add surrounding context to old_string " +
        "to make it unique."
    )
  }
  return { _tag: "Plan", before, applied: applyAt(before, needle, replacement, found), current }
}

/**
 * Edit's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  Edit,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fileState = yield* FileState
    const access = yield* FileAccess.current
    const shown = (absolute: string) => displayPath(absolute, workspace.cwd)

    /** Reads the file, checks the model's read is current, and plans the edit. */
    const prepare = (input: EditInput) =>
      Effect.gen(function*() {
        const { refusal, resolved, stat } = yield* inspect(access, workspace, input.file_path)
        if (refusal !== undefined) return { resolved, plan: problem(refusal) }
        if (input.old_string === input.new_string) {
          return { resolved, plan: plan(input, resolved.absolute, undefined, undefined) }
        }
        if (stat?.type === "Directory") {
          return { resolved, plan: problem(`${resolved.absolute} is a directory; give the path of a file.`) }
        }
        if (stat === undefined) {
          return { resolved, plan: plan(input, resolved.absolute, undefined, undefined) }
        }
        if (stat.size > maxEditBytes) {
          return {
            resolved,
            plan: problem(
              `${resolved.absolute} is too large to edit (${
                Math.round(stat.size / 1024 / 1024)
              } MB; the limit is 16 MB).`
            )
          }
        }
        const read = yield* Effect.either(Effect.tryPromise(() => readCurrent(access, resolved.real)))
        if (read._tag === "Left") {
          return { resolved, plan: problem(`Could not read ${resolved.absolute}: ${read.left.message}`) }
        }
        const { bytes, current } = read.right
        // An empty old_string never needs a read: it fills an empty file (nothing to lose) or is refused anyway.
        const creating = input.old_string === ""
        const stale = creating
          ? undefined
          : staleness(
            resolved.absolute,
            yield* fileState.get(resolved.real),
            current,
            false,
            yield* wasEvicted(fileState, resolved.real)
          )
        if (stale !== undefined) {
          return { resolved, plan: problem(stale) }
        }
        return { resolved, plan: plan(input, resolved.absolute, bytes.toString("utf8"), current) }
      })

    return {
      // A soft interrupt: an edit finishes (Claude Code's default).
      interruptBehavior: "block",
      validate: (input) =>
        Effect.flatMap(
          prepare(input),
          ({ plan, resolved }) =>
            plan._tag === "Problem"
              ? Tool.reject(plan.message)
              : Effect.succeed({ ...input, file_path: resolved.absolute })
        ),

      checkPermissions: (input) => checkFilePath(workspace, input.file_path, "Edit"),
      // Re-runnable: the call plans again against the file as the model last saw it (expected state), so an edit that
      // already applied finds the file changed and fails instead of applying twice.
      traits: () => ({ destructive: false, idempotent: true }),
      claims: (input) => [Tool.Claim.write(fileResource(input.file_path, workspace.cwd, workspace.home))],
      // By path (as given and real) and by identity: a hard link of a file a rule names is that file.
      matchesRule: (content, input, context) => ruleCovers(content, input.file_path, context),

      call: (input) =>
        Effect.gen(function*() {
          // Planned again from the file as it is now: validation may have been a while ago.
          const { plan, resolved } = yield* prepare(input)
          if (plan._tag === "Problem") return yield* new Tool.ToolError({ message: plan.message })
          const path = shown(resolved.absolute)
          const bytes = Buffer.from(plan.applied.content, "utf8")
          const after = yield* writeChecked(access, resolved, path, bytes, plan.current)
          // The model knows the whole file now only if it knew it before: a ranged read stays partial.
          const partial = Option.match(yield* fileState.get(resolved.real), {
            onNone: () => false,
            onSome: (seen) => seen.partial
          })
          yield* fileState.record(resolved.real, {
            contentHash: hashContent(bytes),
            mtimeMs: after.mtimeMs,
            size: after.size,
            partial
          })
          return {
            path,
            created: plan.current === undefined,
            replacements: plan.applied.replacements,
            firstLine: plan.applied.firstLine,
            lastLine: plan.applied.lastLine,
            patch: unifiedDiff(path, plan.before, plan.applied.content)
          }
        }),

      // What the person approves: the change as it would apply to the file now (real line numbers), or, when the
      // file cannot be planned against (missing, large, the edit would fail), old_string against new_string.
      renderUse: (input) => {
        const path = shown(input.file_path)
        const title = UiBlock.Title({ text: `Edit(${path}${input.replace_all ? ", replace all" : ""})` })
        const before = readForPreview(resolveSync(input.file_path, workspace.cwd, workspace.home).real)
        const planned = before === undefined ? undefined : plan(input, path, before, undefined)
        const patch = planned?._tag === "Plan"
          ? unifiedDiff(path, planned.before, planned.applied.content)
          : unifiedDiff(path, input.old_string, input.new_string)
        return [title, UiBlock.Diff({ path, patch: boundPreview(patch, previewLines * 2) })]
      },
      renderResult: (output) => [UiBlock.Diff({ path: output.path, patch: output.patch })],
      toModel: (output) => {
        if (output.created) return `File created successfully at: ${output.path}`
        const lines = output.firstLine === output.lastLine
          ? `line ${output.firstLine}`
          : `lines ${output.firstLine}-${output.lastLine}`
        const what = output.replacements === 1 ? "1 replacement" : `${output.replacements} replacements`
        return `The file ${output.path} has been updated (${what}, ${lines}).`
      }
    }
  })
)

/**
 * Edit's behaviour; requires the session's {@link Workspace} and {@link FileState}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Edit, make)
