/**
 * Path handling shared by the file tools: the synchronous resolution that `claims` and `matchesRule` need (both
 * are synchronous by contract), the refusal of device and special files, and the permission check every file
 * tool answers the same way.
 *
 * @since 0.1.0
 * @internal
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { isAnotherNameOf, literalRulePath } from "../../Permission/FileIdentity.js"
import { compilePathPattern } from "../../Permission/PathPattern.js"
import type { FileAccess, FileInfo } from "../../Session/FileAccess.js"
import { realPathSync } from "../../Session/Workspace.js"
import type { ResolvedPath, Workspace } from "../../Session/Workspace.js"
import { realPathOfMissing } from "../../Shared/realPath.js"
import { PermissionCheck } from "../../Tool/Permission.js"
import { printRule } from "../../Tool/Rule.js"
import { Claim } from "../../Tool/Tool.js"
import type { RuleContext } from "../../Tool/Tool.js"

export { realPathSync }

import { expandHome } from "../../Shared/home.js"
export { expandHome }

/** The absolute and the real path of a path from the model, synchronously. */
export const resolveSync = (
  path: string,
  cwd: string,
  home: string
): { readonly absolute: string; readonly real: string } => {
  const absolute = nodePath.resolve(cwd, expandHome(path, home))
  return { absolute, real: realPathSync(absolute) }
}

/**
 * The real path a call is planned on, through a {@link FileAccess} (symlinks resolved through the nearest existing
 * ancestor, as `Workspace.resolve` does), synchronously: `plan` binds it and the call opens exactly that file.
 */
export const plannedRealPath = (access: FileAccess["Type"], path: string, cwd: string, home: string): string =>
  realPathOfMissing(nodePath.resolve(cwd, expandHome(path, home)), {
    realPath: access.realPathSync,
    readLink: access.readLinkSync
  })

/** The claim resource of a file or directory: `file:` and its real path. */
export const fileResource = (path: string, cwd: string, home: string): string =>
  `file:${resolveSync(path, cwd, home).real}`

/**
 * A stand-in for "any file" inside a directory: only a pattern that covers every name there (`dir/**`, `dir/*`,
 * `dir/`) matches it; no name pattern does (`*.ts`, `?`), since no real name is made of NUL bytes.
 */
const anyChild = "\0".repeat(8)

/**
 * Whether a rule's content (`Read(content)`, `Edit(content)`) covers a path. A deny or ask rule (or a context that
 * does not say) is checked on the path as given (made absolute) and on its real target, so neither a relative
 * spelling nor a symlink slips past it, and, for a file, on its identity: another name (a hard link) of the one file
 * a rule names is covered too (`Permission/FileIdentity`). An allow rule grants what is really there: it must cover
 * the real path (symlinks resolved, a dangling one to its target), so `Read(./src/**)` does not grant
 * `src/link -> /outside`. A `directory` (a search root) is also covered when the rule covers everything inside it:
 * `Read(./secrets/**)` covers a Grep of `secrets`.
 */
export const ruleCovers = (content: string, path: string, context: RuleContext, directory = false): boolean => {
  const patternContext = { cwd: context.cwd, home: context.home, ruleDir: context.ruleDirectory }
  const matcher = compilePathPattern(content, patternContext)
  const { absolute, real } = resolveSync(path, context.cwd, context.home)
  if (context.behavior === "allow") {
    return directory ? [real, `${real}/`, `${real}/${anyChild}`].some(matcher) : matcher(real)
  }
  if (directory) {
    return [absolute, real, `${absolute}/`, `${real}/`, `${absolute}/${anyChild}`, `${real}/${anyChild}`].some(matcher)
  }
  if (matcher(absolute) || matcher(real)) return true
  const named = literalRulePath(content, patternContext)
  return named !== undefined && isAnotherNameOf(real, [named])
}

const specialKinds: Record<FileInfo["type"], string | undefined> = {
  File: undefined,
  Directory: undefined,
  SymbolicLink: undefined,
  FIFO: "a FIFO (named pipe)",
  Socket: "a socket",
  CharacterDevice: "a character device",
  BlockDevice: "a block device",
  Unknown: "a special file"
}

const devicePath = /^\/(dev|proc\/[^/]+\/fd)(\/|$)/

/** What kind of special file a stat describes, when it is not a regular file or a directory. */
const specialKind = (stat: fs.Stats | FileInfo): string | undefined =>
  "type" in stat
    ? specialKinds[stat.type]
    : stat.isFIFO()
    ? "a FIFO (named pipe)"
    : stat.isSocket()
    ? "a socket"
    : stat.isCharacterDevice()
    ? "a character device"
    : stat.isBlockDevice()
    ? "a block device"
    : stat.isFile() || stat.isDirectory() || stat.isSymbolicLink()
    ? undefined
    : "a special file"

/**
 * Why a path must never be opened, or undefined. Checked with `stat` before any `open` (opening a FIFO blocks until
 * a writer appears), on the real path, and on the path as written for `/dev/*` and `/proc/<pid>/fd/*`.
 */
export const specialFileReason = (
  resolved: ResolvedPath,
  stat: fs.Stats | FileInfo | undefined
): string | undefined => {
  const kind = stat === undefined ? undefined : specialKind(stat)
  if (kind !== undefined) {
    return `${resolved.requested} is ${kind}, not a regular file; it cannot be read or written by this tool.`
  }
  if (devicePath.test(resolved.absolute) || devicePath.test(resolved.real)) {
    return `${resolved.requested} is a device or process file (under /dev or /proc/*/fd); it cannot be read or ` +
      `written by this tool.`
  }
  return undefined
}

/** `stat` that answers undefined for a path that does not exist (or cannot be inspected). */
export const statOrUndefined = (path: string): Effect.Effect<fs.Stats | undefined> =>
  Effect.promise(() => fs.promises.stat(path).catch(() => undefined))

/** A rule suggestion for the directory around a path: `Read(//abs/dir/**)`. */
const suggestion = (ruleTool: "Read" | "Edit", real: string, directory: boolean): string =>
  `${ruleTool}(/${directory ? real : nodePath.dirname(real)}/**)`

/**
 * The file tools' own view of a call: inside the workspace no opinion (the policy auto-allows reads and applies the
 * mode to edits), outside the workspace ask. Never an outright allow, except for one explicit case: `savedForSession`
 * (given by Read) says a file is output the result store saved for this session, which the model may read back
 * without asking (deny and ask rules still apply first); another session's store is outside and asks.
 */
export const checkPath = (
  workspace: Workspace["Type"],
  path: string,
  ruleTool: "Read" | "Edit",
  directory = false,
  savedForSession?: (realPath: string) => boolean
): Effect.Effect<PermissionCheck<never>> =>
  Effect.map(
    workspace.resolve(path),
    (resolved) => checkResolved(resolved, [suggestion(ruleTool, resolved.real, directory)], savedForSession)
  )

/** {@link checkPath} of a path already resolved, with the rules it suggests. */
const checkResolved = (
  resolved: ResolvedPath,
  suggestions: ReadonlyArray<string>,
  savedForSession: ((realPath: string) => boolean) | undefined
): PermissionCheck<never> => {
  if (resolved.inside) return PermissionCheck.passthrough(suggestions)
  if (savedForSession?.(resolved.real) === true) {
    return PermissionCheck.allow({ reason: "output saved for this session by the result store" })
  }
  const target = resolved.real === resolved.absolute
    ? resolved.absolute
    : `${resolved.absolute} (resolves to ${resolved.real})`
  return PermissionCheck.ask(`${target} is outside the workspace`, suggestions)
}

/**
 * The permission-facing stages shared by the directory searches (Glob, Grep): read-only and concurrency-safe, claim
 * the searched directory for reading, and answer `Read(...)` rules and the workspace check on it.
 */
export const directorySearchStages = <Input>(workspace: Workspace["Type"], searchPath: (input: Input) => string) => ({
  checkPermissions: (input: Input) => checkPath(workspace, searchPath(input), "Read", true),
  traits: () => ({ readOnly: true, concurrencySafe: true, idempotent: true }),
  claims: (input: Input) => [Claim.read(fileResource(searchPath(input), workspace.cwd, workspace.home))],
  matchesRule: (content: string, input: Input, context: RuleContext) =>
    ruleCovers(content, searchPath(input), context, true)
})

/**
 * A rule suggestion for exactly one file, `Read(//abs/file)`: never broader than the call. Wildcards and a trailing
 * space in the path are escaped for gitignore, parentheses for the rule syntax, so the rule names that file only.
 */
export const fileSuggestion = (ruleTool: "Read" | "Edit", real: string): string =>
  printRule({
    toolName: ruleTool,
    content: `/${real.replace(/[\\*?[\]]/g, "\\$&").replace(/ +$/, (spaces) => spaces.replace(/ /g, "\\ "))}`
  })

/** {@link checkPath} for one file, suggesting a rule for that file only ({@link fileSuggestion}). */
export const checkFilePath = (
  workspace: Workspace["Type"],
  path: string,
  ruleTool: "Read" | "Edit",
  savedForSession?: (realPath: string) => boolean
): Effect.Effect<PermissionCheck<never>> =>
  Effect.map(
    workspace.resolve(path),
    (resolved) => checkResolved(resolved, [fileSuggestion(ruleTool, resolved.real)], savedForSession)
  )

/** A path for people and the model: relative to the working directory when inside it, else absolute. */
export const displayPath = (absolute: string, cwd: string): string => {
  const relative = nodePath.relative(cwd, absolute)
  return relative === "" ? "." : relative.startsWith("..") || nodePath.isAbsolute(relative) ? absolute : relative
}

/**
 * A glob as shells, ripgrep and Claude Code read it, spelled for picomatch: `[!...]` is a negated bracket expression,
 * as `[^...]` is (picomatch 4 reads that `!` as one more character of the set, so `a[!0-9].ts` matched `a1.ts`).
 *
 * @internal
 */
export const picomatchGlob = (glob: string): string => {
  let out = ""
  let inClass = false
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!
    if (char === "\\") {
      out += glob.slice(i, i + 2)
      i++
    } else if (!inClass && char === "[") {
      inClass = true
      const negated = glob[i + 1] === "!" || glob[i + 1] === "^"
      out += negated ? "[^" : "["
      if (negated) i++
      // A `]` first in a set is one of its characters.
      if (glob[i + 1] === "]") {
        out += "]"
        i++
      }
    } else {
      if (inClass && char === "]") inClass = false
      out += char
    }
  }
  return out
}
