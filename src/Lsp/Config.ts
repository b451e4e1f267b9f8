/**
 * Language-server configuration as Claude Code reads it: a `.lsp.json` whose top level names the servers, or a file
 * with the same map under `lspServers` (a plugin's `plugin.json`):
 *
 * ```json
 * { "typescript": { "command": "typescript-language-server", "args": ["--stdio"],
 *                   "extensionToLanguage": { ".ts": "typescript", ".tsx": "typescriptreact" } } }
 * ```
 *
 * Fields: `command`, `args`, `extensionToLanguage` (required), `env`, `initializationOptions`, `settings` (answered to
 * `workspace/configuration` and sent once with `workspace/didChangeConfiguration`), `startupTimeout` and
 * `shutdownTimeout` (milliseconds), `restartOnCrash` (default true), `maxRestarts` (default 3), `transport` (only
 * `"stdio"`), and this runtime's `rootMarkers` (the files whose nearest directory is a file's project root) and
 * `requestTimeout` (milliseconds). A bad entry is reported on its own ({@link LspConfigError}) and never stops the
 * others; unknown keys are reported too.
 *
 * Trust: a server from the repository (the project's `.lsp.json`) is a command from the repository. It is loaded
 * with `trusted: false` until the person trusted the folder, and then listed but never started: the tool says why.
 *
 * @since 0.3.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fs from "node:fs"
import * as nodePath from "node:path"
import { readJsonFile } from "../Shared/jsonFile.js"

// ---------------------------------------------------------------------------------------------------------------
// schemas (the file format)
// ---------------------------------------------------------------------------------------------------------------

const Milliseconds = Schema.Number.pipe(Schema.positive())

/**
 * One server entry of a `.lsp.json`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const ServerEntry = Schema.Struct({
  command: Schema.String.pipe(Schema.minLength(1)),
  args: Schema.optional(Schema.Array(Schema.String)),
  extensionToLanguage: Schema.Record({ key: Schema.String, value: Schema.String }),
  env: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })),
  initializationOptions: Schema.optional(Schema.Unknown),
  settings: Schema.optional(Schema.Unknown),
  startupTimeout: Schema.optional(Milliseconds),
  shutdownTimeout: Schema.optional(Milliseconds),
  restartOnCrash: Schema.optional(Schema.Boolean),
  maxRestarts: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  transport: Schema.optional(Schema.Literal("stdio")),
  workspaceFolder: Schema.optional(Schema.String),
  rootMarkers: Schema.optional(Schema.Array(Schema.String)),
  requestTimeout: Schema.optional(Milliseconds)
})

/**
 * @since 0.3.0
 * @category schemas
 */
export type ServerEntry = typeof ServerEntry.Type

const knownKeys = new Set(Object.keys(ServerEntry.fields))

// ---------------------------------------------------------------------------------------------------------------
// models
// ---------------------------------------------------------------------------------------------------------------

/**
 * A configured server, ready to start.
 *
 * @since 0.3.0
 * @category models
 */
export interface ServerConfig {
  readonly name: string
  /** The file it came from. */
  readonly source: string
  readonly argv: readonly [string, ...Array<string>]
  /** Extensions with their dot, lower case (`.ts`), to language ids. */
  readonly extensionToLanguage: Readonly<Record<string, string>>
  readonly env: Readonly<Record<string, string>>
  readonly initializationOptions: unknown
  readonly settings: unknown
  readonly startupTimeoutMs: number
  readonly shutdownTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly restartOnCrash: boolean
  readonly maxRestarts: number
  /** A fixed project root (`workspaceFolder`), else the nearest directory holding one of `rootMarkers`. */
  readonly workspaceFolder: string | undefined
  readonly rootMarkers: ReadonlyArray<string>
  /** Why it may not start (a repository's server in an untrusted folder); undefined when it may. */
  readonly disabled: string | undefined
}

/**
 * The defaults of an entry's optional fields.
 *
 * @since 0.3.0
 * @category constants
 */
export const defaults = {
  startupTimeoutMs: 30_000,
  shutdownTimeoutMs: 3_000,
  requestTimeoutMs: 30_000,
  restartOnCrash: true,
  maxRestarts: 3,
  rootMarkers: [
    "tsconfig.json",
    "jsconfig.json",
    "package.json",
    "pyproject.toml",
    "pyrightconfig.json",
    "setup.py",
    "setup.cfg",
    "go.mod",
    "Cargo.toml",
    ".git"
  ]
} as const

/**
 * A problem with one file or one entry; `server` and `field` say where.
 *
 * @since 0.3.0
 * @category errors
 */
export class LspConfigError extends Data.TaggedError("LspConfigError")<{
  readonly file: string
  readonly server: string | undefined
  readonly reason: string
}> {
  override get message(): string {
    return `${this.file}${this.server === undefined ? "" : `: server "${this.server}"`}: ${this.reason}`
  }
}

/**
 * The servers of one or more files, and what was wrong in them.
 *
 * @since 0.3.0
 * @category models
 */
export interface LoadedConfig {
  readonly servers: ReadonlyArray<ServerConfig>
  readonly errors: ReadonlyArray<LspConfigError>
}

/**
 * How a file is loaded: `trusted` when the person named it or trusted the folder it belongs to.
 *
 * @since 0.3.0
 * @category models
 */
export interface LoadOptions {
  readonly trusted: boolean
}

/**
 * No servers.
 *
 * @since 0.3.0
 * @category constructors
 */
export const empty: LoadedConfig = { servers: [], errors: [] }

// ---------------------------------------------------------------------------------------------------------------
// loading
// ---------------------------------------------------------------------------------------------------------------

const normaliseExtension = (extension: string): string =>
  (extension.startsWith(".") ? extension : `.${extension}`).toLowerCase()

const untrustedReason = (file: string) =>
  `it is configured by the repository (${file}), and the project is not trusted: trust it (--trust-project) or ` +
  "name the file yourself (--lsp-config FILE)"

/**
 * The servers of a parsed file (`{name: entry}` or `{lspServers: {name: entry}}`); relative paths in `command` and
 * `workspaceFolder` are resolved against the file's directory.
 *
 * @since 0.3.0
 * @category constructors
 */
export const fromJson = (file: string, json: unknown, options: LoadOptions): LoadedConfig => {
  const errors: Array<LspConfigError> = []
  const top = typeof json === "object" && json !== null && !Array.isArray(json) ? json as Record<string, unknown> : {}
  if (top !== json) {
    return { servers: [], errors: [new LspConfigError({ file, server: undefined, reason: "must be a JSON object" })] }
  }
  const map = "lspServers" in top ? top.lspServers : top
  if (typeof map !== "object" || map === null || Array.isArray(map)) {
    return {
      servers: [],
      errors: [new LspConfigError({ file, server: undefined, reason: "lspServers must be an object of servers" })]
    }
  }
  const directory = nodePath.dirname(file)
  const servers: Array<ServerConfig> = []
  for (const [name, raw] of Object.entries(map as Record<string, unknown>)) {
    const decoded = Schema.decodeUnknownEither(ServerEntry, { errors: "all", onExcessProperty: "ignore" })(raw)
    if (Either.isLeft(decoded)) {
      errors.push(
        new LspConfigError({
          file,
          server: name,
          reason: ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
            .map((issue) => `${issue.path.length === 0 ? "" : `${issue.path.join(".")}: `}${issue.message}`)
            .join("; ")
        })
      )
      continue
    }
    const unknown = Object.keys(raw as object).filter((key) => !knownKeys.has(key))
    if (unknown.length > 0) {
      errors.push(new LspConfigError({ file, server: name, reason: `unknown keys ignored: ${unknown.join(", ")}` }))
    }
    const entry = decoded.right
    const extensions = Object.entries(entry.extensionToLanguage)
    if (extensions.length === 0) {
      errors.push(new LspConfigError({ file, server: name, reason: "extensionToLanguage names no extension" }))
      continue
    }
    const command = entry.command.includes("/") ? nodePath.resolve(directory, entry.command) : entry.command
    servers.push({
      name,
      source: file,
      argv: [command, ...(entry.args ?? [])],
      extensionToLanguage: Object.fromEntries(extensions.map(([ext, id]) => [normaliseExtension(ext), id])),
      env: entry.env ?? {},
      initializationOptions: entry.initializationOptions,
      settings: entry.settings,
      startupTimeoutMs: entry.startupTimeout ?? defaults.startupTimeoutMs,
      shutdownTimeoutMs: entry.shutdownTimeout ?? defaults.shutdownTimeoutMs,
      requestTimeoutMs: entry.requestTimeout ?? defaults.requestTimeoutMs,
      restartOnCrash: entry.restartOnCrash ?? defaults.restartOnCrash,
      maxRestarts: entry.maxRestarts ?? defaults.maxRestarts,
      workspaceFolder: entry.workspaceFolder === undefined ? undefined : nodePath.resolve(
        directory,
        entry.workspaceFolder
      ),
      rootMarkers: entry.rootMarkers ?? defaults.rootMarkers,
      disabled: options.trusted ? undefined : untrustedReason(file)
    })
  }
  return { servers, errors }
}

/**
 * Loads one file; a missing file is no servers, an unreadable or invalid one an error (never a failure).
 *
 * @since 0.3.0
 * @category constructors
 */
export const loadFile = Effect.fn("Lsp.loadConfig")(function*(path: string, options: LoadOptions) {
  const files = yield* FileSystem.FileSystem
  const fileError = (reason: string): LoadedConfig => ({
    servers: [],
    errors: [new LspConfigError({ file: path, server: undefined, reason })]
  })
  const read = yield* readJsonFile(files, path)
  if (read._tag === "Missing") return empty
  if (read._tag === "Unusable") return fileError(read.reason)
  return fromJson(path, read.json, options)
})

/**
 * Loads a file the person named: it must exist.
 *
 * @since 0.3.0
 * @category constructors
 */
export const loadNamedFile = (path: string): Effect.Effect<LoadedConfig, never, FileSystem.FileSystem> =>
  Effect.flatMap(
    Effect.flatMap(FileSystem.FileSystem, (files) => Effect.orElseSucceed(files.exists(path), () => false)),
    (exists) =>
      exists
        ? loadFile(path, { trusted: true })
        : Effect.succeed({
          servers: [],
          errors: [new LspConfigError({ file: path, server: undefined, reason: "does not exist" })]
        })
  )

/**
 * Merges configurations in order; a later server of the same name replaces an earlier one (a named file overrides
 * the project's `.lsp.json`).
 *
 * @since 0.3.0
 * @category combinators
 */
export const merge = (configs: ReadonlyArray<LoadedConfig>): LoadedConfig => {
  const byName = new Map<string, ServerConfig>()
  for (const config of configs) for (const server of config.servers) byName.set(server.name, server)
  return { servers: [...byName.values()], errors: configs.flatMap((config) => config.errors) }
}

// ---------------------------------------------------------------------------------------------------------------
// selection
// ---------------------------------------------------------------------------------------------------------------

/**
 * The server for a file, by its extension: the first configured one that names it (enabled or not).
 *
 * @since 0.3.0
 * @category selection
 */
export const serverFor = (
  servers: ReadonlyArray<ServerConfig>,
  absolutePath: string
): ServerConfig | undefined => {
  const extension = nodePath.extname(absolutePath).toLowerCase()
  if (extension === "") return undefined
  return servers.find((server) => extension in server.extensionToLanguage)
}

/**
 * The language id of a file for a server.
 *
 * @since 0.3.0
 * @category selection
 */
export const languageOf = (server: ServerConfig, absolutePath: string): string =>
  server.extensionToLanguage[nodePath.extname(absolutePath).toLowerCase()] ?? "plaintext"

/**
 * A file's project root for a server: its `workspaceFolder`, else the nearest directory (from the file's, up to and
 * including the working-directory root that holds the file) with one of its `rootMarkers`, else that root (or the
 * file's directory when no root holds it).
 *
 * @since 0.3.0
 * @category selection
 */
export const rootFor = (server: ServerConfig, absolutePath: string, roots: ReadonlyArray<string>): string => {
  if (server.workspaceFolder !== undefined) return server.workspaceFolder
  const holder = roots
    .filter((root) => absolutePath === root || absolutePath.startsWith(root.endsWith("/") ? root : `${root}/`))
    .sort((a, b) => b.length - a.length)[0]
  let directory = nodePath.dirname(absolutePath)
  for (;;) {
    if (server.rootMarkers.some((marker) => fs.existsSync(nodePath.join(directory, marker)))) return directory
    if (directory === holder) return directory
    const parent = nodePath.dirname(directory)
    if (parent === directory) return holder ?? nodePath.dirname(absolutePath)
    directory = parent
  }
}
