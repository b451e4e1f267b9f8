/**
 * The `Write` tool (`file_path`, `content`): creates a file, or replaces one the model has read whole in its current
 * version (content hash unchanged since the read; see {@link FileState}), else the model is told to Read it first.
 *
 * The write is atomic: a temp file in the same directory (exclusive create), fsync, rename over the target. The
 * existing file's mode is kept, missing parent directories are created, and the temp file is removed on any failure
 * or interruption. Right before the rename the target's mtime and size are checked again, so a change that lands
 * while the new content is being written is not clobbered.
 *
 * Traits: replacing an existing file is `destructive` (its old content survives only in the transcript); creating
 * one is not. Claims: the file's real path, for writing, so writes of different files run in parallel.
 *
 * @since 0.1.0
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
import { unifiedDiff } from "./internal/filesEdit.js"
import { describeCurrent, inspect, staleness, wasEvicted, writeChecked } from "./internal/filesGuard.js"
import { checkFilePath, displayPath, fileResource, resolveSync, ruleCovers } from "./internal/filesPaths.js"
import { boundPreview, previewLines, readForPreview } from "./internal/filesPreview.js"
import { serviceOf } from "./internal/service.js"

// ---------------------------------------------------------------------------------------------------------------
// definition
// ---------------------------------------------------------------------------------------------------------------

/**
 * Write's input, as Claude Code names it.
 *
 * @since 0.1.0
 * @category models
 */
export const WriteInput = Schema.Struct({
  file_path: PathString("The absolute path to the file to write (must be absolute, not relative)"),
  content: Schema.String.annotations({ description: "The content to write to the file" })
})

/**
 * What Write did.
 *
 * @since 0.1.0
 * @category models
 */
export const WriteOutput = Schema.Struct({
  kind: Schema.Literal("create", "update"),
  /** Relative to the working directory when inside it. */
  path: Schema.String,
  lines: Schema.Number,
  bytes: Schema.Number,
  /** A unified diff against the old content (updates of files up to 1 MB). */
  patch: Schema.optional(Schema.String)
})

/**
 * @since 0.1.0
 * @category models
 */
export type WriteOutput = typeof WriteOutput.Type

/**
 * The Write tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const Write = Tool.make("Write", {
  description: [
    "Writes a whole file: creates it (with any missing parent directories) or replaces its entire content. Use it " +
    "for new files, or to rewrite a file completely; for a change to part of an existing file use Edit, which " +
    "sends only the change.",
    "- file_path: an absolute path; a relative one is resolved against the working directory.",
    "- content: the complete new content of the file, exactly as it should be saved.",
    "- Replacing an existing file requires having read all of it with Read first, in its current version; otherwise " +
    "the write is refused (the last 100 files read are remembered; a file read before those must be read again). " +
    "Files outside the workspace or protected by rules are refused."
  ].join("\n"),
  input: WriteInput,
  output: WriteOutput,
  fileAccess: "edit",
  // Bounded in time like everything else; a timeout stops the work (the call's signal, or the child process).
  timeout: Duration.minutes(1)
})

// ---------------------------------------------------------------------------------------------------------------
// implementation
// ---------------------------------------------------------------------------------------------------------------

const maxDiffBytes = 1024 * 1024

const countLines = (
  content: string
): number => (content === "" ? 0 : content.split("\n").length - (content.endsWith("\n") ? 1 : 0))

/**
 * Write's service, built: what {@link layer} provides, as an Effect (the built-in tools are built together,
 * in one Layer: see `builtinLayer`).
 *
 * @since 0.3.0
 * @category constructors
 */
export const make = serviceOf(
  Write,
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fileState = yield* FileState
    const access = yield* FileAccess.current
    const shown = (absolute: string) => displayPath(absolute, workspace.cwd)
    const fail = (message: string) => new Tool.ToolError({ message })

    return {
      // A soft interrupt: an edit finishes (Claude Code's default).
      interruptBehavior: "block",
      validate: (input) =>
        Effect.gen(function*() {
          const { refusal, resolved, stat } = yield* inspect(access, workspace, input.file_path)
          if (refusal !== undefined) return yield* Tool.reject(refusal)
          if (stat?.type === "Directory") {
            return yield* Tool.reject(`${resolved.absolute} is a directory; give the path of a file.`)
          }
          if (stat !== undefined) {
            const read = yield* Effect.either(Effect.tryPromise(() => describeCurrent(access, resolved.real, 0)))
            if (read._tag === "Left") {
              return yield* Tool.reject(`Could not read ${resolved.absolute}: ${read.left.message}`)
            }
            const problem = staleness(
              resolved.absolute,
              yield* fileState.get(resolved.real),
              read.right.current,
              true,
              yield* wasEvicted(fileState, resolved.real)
            )
            if (problem !== undefined) return yield* Tool.reject(problem)
          }
          return { ...input, file_path: resolved.absolute }
        }),

      checkPermissions: (input) => checkFilePath(workspace, input.file_path, "Edit"),
      // Writing the same content again leaves the same file: a durable turn may re-run it.
      traits: (input) => ({
        idempotent: true,
        destructive: access.statSync(resolveSync(input.file_path, workspace.cwd, workspace.home).real) !== undefined
      }),
      claims: (input) => [Tool.Claim.write(fileResource(input.file_path, workspace.cwd, workspace.home))],
      // By path (as given and real) and by identity: a hard link of a file a rule names is that file.
      matchesRule: (content, input, context) => ruleCovers(content, input.file_path, context),

      call: (input) =>
        Effect.gen(function*() {
          const { refusal, resolved, stat } = yield* inspect(access, workspace, input.file_path)
          if (refusal !== undefined) return yield* Effect.fail(fail(refusal))
          const path = shown(resolved.absolute)
          // Staleness again: time passed since validation (an approval, other calls).
          const before = stat === undefined
            ? undefined
            : yield* Effect.tryPromise({
              try: () => describeCurrent(access, resolved.real, maxDiffBytes),
              catch: (e) => fail(String(e))
            })
          if (before !== undefined) {
            const problem = staleness(
              resolved.absolute,
              yield* fileState.get(resolved.real),
              before.current,
              true,
              yield* wasEvicted(fileState, resolved.real)
            )
            if (problem !== undefined) return yield* Effect.fail(fail(problem))
          }
          const bytes = Buffer.from(input.content, "utf8")
          const after = yield* writeChecked(access, resolved, path, bytes, before?.current)
          yield* fileState.record(resolved.real, {
            contentHash: hashContent(bytes),
            mtimeMs: after.mtimeMs,
            size: after.size,
            partial: false
          })
          const patch = before?.bytes !== undefined && bytes.length <= maxDiffBytes
            ? unifiedDiff(path, before.bytes.toString("utf8"), input.content)
            : undefined
          return {
            kind: before === undefined ? "create" as const : "update" as const,
            path,
            lines: countLines(input.content),
            bytes: bytes.length,
            ...(patch === undefined ? {} : { patch })
          }
        }),

      // What the person approves: the diff against the file as it is now, or the new file's content (bounded).
      renderUse: (input) => {
        const title = UiBlock.Title({ text: `Write(${shown(input.file_path)})` })
        const path = shown(input.file_path)
        const current = readForPreview(resolveSync(input.file_path, workspace.cwd, workspace.home).real)
        if (current !== undefined) {
          return [
            title,
            UiBlock.Diff({ path, patch: boundPreview(unifiedDiff(path, current, input.content), previewLines * 2) })
          ]
        }
        return [title, UiBlock.Code({ text: input.content === "" ? "(empty file)" : boundPreview(input.content) })]
      },
      renderResult: (output) =>
        output.patch !== undefined
          ? [UiBlock.Diff({ path: output.path, patch: output.patch })]
          : [
            UiBlock.Text({
              text: `${
                output.kind === "create" ? "Created" : "Updated"
              } ${output.path} (${output.lines} lines, ${output.bytes} bytes)`
            })
          ],
      toModel: (output) => {
        const lines = `${output.lines} line${output.lines === 1 ? "" : "s"}`
        return output.kind === "create"
          ? `File created successfully at: ${output.path} (${lines})`
          : `The file ${output.path} has been overwritten (${lines}).`
      }
    }
  })
)

/**
 * Write's behaviour; requires the session's {@link Workspace} and {@link FileState}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.scoped(Write, make)
