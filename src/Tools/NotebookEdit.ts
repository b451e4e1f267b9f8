/**
 * The `NotebookEdit` tool (Claude Code's name and parameters: `notebook_path`, `cell_id`, `new_source`, `cell_type`,
 * `edit_mode` replace|insert|delete): changes one cell of a Jupyter notebook (`.ipynb`) the model has read whole, in
 * its current version, under the same rules as Edit and Write.
 *
 * - Read-before-edit and staleness as for Write (a whole read is needed: Read shows a notebook cell by cell, with the
 *   ids this tool takes), checked in `validate`, again when the call starts, and (mtime and size) right before the
 *   atomic rename through {@link FileAccess}, so a swapped file system is honoured and a file changed meanwhile is never
 *   clobbered. Containment and `Edit(...)` rules as for Edit (`fileAccess: "edit"`).
 * - `replace` sets the cell's source (and type, when given); a code cell's outputs and execution count are cleared.
 *   `insert` puts a new cell after `cell_id` (at the top without one) and needs `cell_type`. `delete` removes the cell.
 * - The rest of the notebook is kept as it was: the other cells, metadata and fields this tool does not know.
 *
 * @since 0.3.0
 */
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as FileAccess from "../Session/FileAccess.js"
import { FileState, hashContent } from "../Session/FileState.js"
import { Workspace } from "../Session/Workspace.js"
import { UiBlock } from "../Tool/Presentation.js"
import * as Tool from "../Tool/Tool.js"
import { PathString } from "./internal/argumentLimits.js"
import { inspect, readCurrent, staleness, wasEvicted, writeChecked } from "./internal/filesGuard.js"
import { checkFilePath, displayPath, fileResource, ruleCovers } from "./internal/filesPaths.js"
import { boundPreview } from "./internal/filesPreview.js"
import { applyChange, parseNotebook, serialiseNotebook } from "./internal/notebook.js"
import type { Applied } from "./internal/notebook.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * NotebookEdit's input, as Claude Code names it.
 *
 * @since 0.3.0
 * @category models
 */
export const NotebookEditInput = Schema.Struct({
  notebook_path: PathString(
    "The absolute path to the Jupyter notebook file to edit (must be absolute, not relative)"
  ),
  cell_id: Schema.optional(Schema.String).annotations({
    description: "The ID of the cell to edit. When inserting a new cell, the new cell will be inserted after the " +
      "cell with this ID, or at the beginning if not specified."
  }),
  new_source: Schema.String.annotations({ description: "The new source for the cell" }),
  cell_type: Schema.optional(Schema.Literal("code", "markdown")).annotations({
    description: "The type of the cell (code or markdown). If not specified, it defaults to the current cell type. " +
      "If using edit_mode=insert, this is required."
  }),
  edit_mode: Schema.optionalWith(Schema.Literal("replace", "insert", "delete"), { default: () => "replace" })
    .annotations({ description: "The type of edit to make (replace, insert, delete). Defaults to replace." })
})

/**
 * What NotebookEdit did.
 *
 * @since 0.3.0
 * @category models
 */
export const NotebookEditOutput = Schema.Struct({
  /** Relative to the working directory when inside it. */
  path: Schema.String,
  editMode: Schema.Literal("replace", "insert", "delete"),
  cellId: Schema.String,
  cellType: Schema.String,
  newSource: Schema.String
})

/**
 * @since 0.3.0
 * @category models
 */
export type NotebookEditOutput = typeof NotebookEditOutput.Type

/**
 * The NotebookEdit tool.
 *
 * @since 0.3.0
 * @category tools
 */
export const NotebookEdit = Tool.make("NotebookEdit", {
  description: [
    "Replaces, inserts or deletes one cell of a Jupyter notebook (.ipynb file). Read the notebook first (whole): Read " +
    "shows each cell with its id and outputs, and an edit of a notebook not read, or changed since, is refused.",
    "- notebook_path: an absolute path; a relative one is resolved against the working directory.",
    "- cell_id: the cell to replace or delete; for insert, the new cell goes after it (at the top without one).",
    "- new_source: the cell's new source (ignored for delete).",
    "- cell_type: code or markdown; required for insert; for replace it defaults to the cell's current type.",
    "- edit_mode: replace (default), insert or delete. Replacing a code cell clears its outputs."
  ].join("\n"),
  input: NotebookEditInput,
  output: NotebookEditOutput,
  fileAccess: "edit",
  timeout: Duration.minutes(1)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

/** Notebooks larger than this are not edited in memory. */
const maxNotebookBytes = 16 * 1024 * 1024

type NotebookEditInput = typeof NotebookEditInput.Type

/**
 * NotebookEdit's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  NotebookEdit,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fileState = yield* FileState
    const access = yield* FileAccess.current
    const shown = (absolute: string) => displayPath(absolute, workspace.cwd)

    /** Reads the notebook, checks the model's read is current, and applies the edit in memory. */
    const prepare = (input: NotebookEditInput) =>
      Effect.gen(function*() {
        const { refusal, resolved, stat } = yield* inspect(access, workspace, input.notebook_path)
        const problem = (message: string) => ({ resolved, problem: message, applied: undefined, current: undefined })
        if (refusal !== undefined) return problem(refusal)
        if (!resolved.absolute.toLowerCase().endsWith(".ipynb")) {
          return problem(`${resolved.absolute} is not a Jupyter notebook (.ipynb); use Edit for other files.`)
        }
        if (stat === undefined) return problem(`Notebook file does not exist: ${resolved.absolute}.`)
        if (stat.type === "Directory") return problem(`${resolved.absolute} is a directory; give the path of a file.`)
        if (stat.size > maxNotebookBytes) {
          return problem(`${resolved.absolute} is too large to edit (more than 16 MB).`)
        }
        const read = yield* Effect.either(Effect.tryPromise(() => readCurrent(access, resolved.real)))
        if (read._tag === "Left") return problem(`Could not read ${resolved.absolute}: ${read.left.message}`)
        const { bytes, current } = read.right
        const stale = staleness(
          resolved.absolute,
          yield* fileState.get(resolved.real),
          current,
          true,
          yield* wasEvicted(fileState, resolved.real)
        )
        if (stale !== undefined) return problem(stale)
        const parsed = parseNotebook(bytes.toString("utf8"))
        if ("problem" in parsed) return problem(`${resolved.absolute} is not a notebook: ${parsed.problem}.`)
        const applied = applyChange(parsed.notebook, input, resolved.absolute)
        if ("problem" in applied) return problem(applied.problem)
        return { resolved, problem: undefined, applied: applied as Applied, current }
      })

    return {
      // A soft interrupt: an edit finishes (Claude Code's default).
      interruptBehavior: "block",
      validate: (input) =>
        Effect.flatMap(prepare(input), ({ problem, resolved }) =>
          problem !== undefined
            ? Tool.reject(problem)
            : Effect.succeed({ ...input, notebook_path: resolved.absolute })),

      checkPermissions: (input) => checkFilePath(workspace, input.notebook_path, "Edit"),
      traits: (input) => ({ destructive: input.edit_mode === "delete" }),
      claims: (input) => [Tool.Claim.write(fileResource(input.notebook_path, workspace.cwd, workspace.home))],
      matchesRule: (content, input, context) => ruleCovers(content, input.notebook_path, context),

      call: (input) =>
        Effect.gen(function*() {
          // Applied again to the notebook as it is now: validation may have been a while ago.
          const { applied, current, problem, resolved } = yield* prepare(input)
          if (problem !== undefined || applied === undefined) {
            return yield* new Tool.ToolError({ message: problem ?? "The notebook could not be edited." })
          }
          const path = shown(resolved.absolute)
          const bytes = Buffer.from(serialiseNotebook(applied.notebook), "utf8")
          const after = yield* writeChecked(access, resolved, path, bytes, current)
          // The model knows the whole notebook now: it read it whole and made this change.
          yield* fileState.record(resolved.real, {
            contentHash: hashContent(bytes),
            mtimeMs: after.mtimeMs,
            size: after.size,
            partial: false
          })
          return {
            path,
            editMode: input.edit_mode,
            cellId: applied.cellId,
            cellType: applied.cellType,
            newSource: input.edit_mode === "delete" ? "" : input.new_source
          }
        }),

      activity: (input) => `Editing ${shown(input.notebook_path)}`,
      classifierInput: (input) => `${input.edit_mode} ${input.cell_id ?? "(top)"} in ${input.notebook_path}`,
      renderUse: (input) => {
        const where = input.cell_id === undefined ? "" : `, cell ${input.cell_id}`
        const title = UiBlock.Title({ text: `NotebookEdit(${shown(input.notebook_path)}, ${input.edit_mode}${where})` })
        return input.edit_mode === "delete"
          ? [title]
          : [title, UiBlock.Code({ text: boundPreview(input.new_source), language: input.cell_type ?? "python" })]
      },
      renderResult: (output) => [
        UiBlock.Text({
          text: output.editMode === "delete"
            ? `Deleted cell ${output.cellId} of ${output.path}`
            : `${output.editMode === "insert" ? "Inserted" : "Updated"} ${output.cellType} cell ${output.cellId} ` +
              `of ${output.path}`
        })
      ],
      toModel: (output) =>
        output.editMode === "delete"
          ? `Deleted cell ${output.cellId}`
          : output.editMode === "insert"
          ? `Inserted cell ${output.cellId} with ${output.newSource}`
          : `Updated cell ${output.cellId} with ${output.newSource}`
    }
  })
)

/**
 * NotebookEdit's behaviour; requires the session's {@link Workspace} and {@link FileState}.
 *
 * @since 0.3.0
 * @category layers
 */
export const layer = Layer.scoped(NotebookEdit, make)
