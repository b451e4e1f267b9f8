/**
 * MCP server configuration in Claude Code's format: a `.mcp.json` (or a settings file) with
 * `{"mcpServers": {"name": {"type"?: "stdio" | "http" | "sse", "command", "args", "env", "url", "headers"}}}`.
 *
 * `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`, `url` and `headers`; a variable that is
 * not set and has no default is an error naming the server and the field. A bad entry is reported on its own
 * ({@link McpConfigError}: file, server, field) and never stops the other servers.
 *
 * Trust: servers defined by the repository (the project's `.mcp.json`) are loaded with `trusted: false` until the
 * person trusted the folder; such servers are listed but never started.
 *
 * @since 0.2.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Data from "effect/Data"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { readJsonFile } from "../Shared/jsonFile.js"

// ---------------------------------------------------------------------------------------------------------------
// schemas (the file format)
// ---------------------------------------------------------------------------------------------------------------

const StringRecord = Schema.Record({ key: Schema.String, value: Schema.String })
const Milliseconds = Schema.Number.pipe(Schema.positive())

/** Keys this runtime adds to Claude Code's entries: call timeouts in milliseconds. */
const Extensions = {
  /** Time limit of one call of any of the server's tools, in milliseconds. */
  timeout: Schema.optional(Milliseconds),
  /** Time limits of single tools (the server's own tool names), in milliseconds. */
  toolTimeouts: Schema.optional(Schema.Record({ key: Schema.String, value: Milliseconds }))
}

/**
 * A server started as a child process, spoken to over stdin/stdout.
 *
 * @since 0.2.0
 * @category schemas
 */
export const StdioEntry = Schema.Struct({
  type: Schema.optional(Schema.Literal("stdio")),
  command: Schema.String.pipe(Schema.minLength(1)),
  args: Schema.optional(Schema.Array(Schema.String)),
  env: Schema.optional(StringRecord),
  cwd: Schema.optional(Schema.String),
  ...Extensions
})

/**
 * A remote server over Streamable HTTP (`http`) or the older HTTP+SSE transport (`sse`).
 *
 * @since 0.2.0
 * @category schemas
 */
export const RemoteEntry = Schema.Struct({
  type: Schema.Literal("http", "sse"),
  url: Schema.String.pipe(Schema.minLength(1)),
  headers: Schema.optional(StringRecord),
  ...Extensions
})

/**
 * One entry of `mcpServers`, as written in the file.
 *
 * @since 0.2.0
 * @category schemas
 */
export const ServerEntry = Schema.Union(RemoteEntry, StdioEntry)

/**
 * @since 0.2.0
 * @category models
 */
export type ServerEntry = typeof ServerEntry.Type

// ---------------------------------------------------------------------------------------------------------------
// models (resolved)
// ---------------------------------------------------------------------------------------------------------------

/**
 * How to reach a server, variables expanded.
 *
 * @since 0.2.0
 * @category models
 */
export type Transport =
  | {
    readonly _tag: "stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    /** Only the configured variables: the minimal default environment is added when the process starts. */
    readonly env: Readonly<Record<string, string>>
    readonly cwd: string | undefined
  }
  | { readonly _tag: "http" | "sse"; readonly url: string; readonly headers: Readonly<Record<string, string>> }

/**
 * One configured server, ready to connect.
 *
 * @since 0.2.0
 * @category models
 */
export interface ServerConfig {
  /** The name in `mcpServers`, as written. */
  readonly name: string
  readonly transport: Transport
  /** Where the entry came from (a file path, or "inline"). */
  readonly source: string
  /**
   * Whether the server may start: false for a repository-defined server in a folder the person has not trusted.
   */
  readonly enabled: boolean
  /**
   * Whether the person trusts this server's annotations (`readOnlyHint`...) to inform traits. Never grants
   * permission. Default false.
   */
  readonly trustAnnotations: boolean
  /** Default time limit of a call (none: unbounded). */
  readonly timeout: Duration.Duration | undefined
  /** Time limits of single tools, by the server's tool name. */
  readonly toolTimeouts: Readonly<Record<string, Duration.Duration>>
}

/**
 * A configuration problem: which file, which server, which field, and what is wrong.
 *
 * @since 0.2.0
 * @category errors
 */
export class McpConfigError extends Data.TaggedError("McpConfigError")<{
  readonly file: string
  /** Undefined when the file itself is unusable. */
  readonly server: string | undefined
  /** The field path inside the server's entry (`headers.Authorization`), when one is to blame. */
  readonly field: string | undefined
  readonly reason: string
}> {
  override get message(): string {
    const where = this.server === undefined
      ? ""
      : ` server "${this.server}"${this.field === undefined ? "" : `, field ${this.field}`}:`
    return `${this.file}:${where} ${this.reason}`
  }
}

/**
 * The servers a configuration yields, and the entries it could not use.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoadedConfig {
  readonly servers: ReadonlyArray<ServerConfig>
  readonly errors: ReadonlyArray<McpConfigError>
}

/**
 * How to read one configuration.
 *
 * @since 0.2.0
 * @category models
 */
export interface LoadOptions {
  /**
   * Whether the servers may start. A file the person named (`--mcp-config`, their user settings) is trusted; a
   * repository's `.mcp.json` only once the folder is trusted.
   */
  readonly trusted: boolean
  /** Names of servers whose annotations the person trusts. Default none. */
  readonly trustAnnotations?: ReadonlyArray<string> | undefined
  /** The variables `${VAR}` reads. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
}

// ---------------------------------------------------------------------------------------------------------------
// expansion
// ---------------------------------------------------------------------------------------------------------------

const VARIABLE = /\$\{([^}:]+)(?::-([^}]*))?\}/g

/**
 * Expands `${VAR}` and `${VAR:-default}`; the names of variables that are unset and have no default, when any.
 *
 * @since 0.2.0
 * @category expansion
 */
export const expandVariables = (
  text: string,
  env: Readonly<Record<string, string | undefined>>
): Either.Either<string, ReadonlyArray<string>> => {
  const missing: Array<string> = []
  const expanded = text.replace(VARIABLE, (_, name: string, fallback: string | undefined) => {
    const value = env[name]
    if (value !== undefined) return value
    if (fallback !== undefined) return fallback
    missing.push(name)
    return ""
  })
  return missing.length === 0 ? Either.right(expanded) : Either.left(missing)
}

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

/** Entries are unions; the issue of the member the entry meant (by `type`) names the right field. */
const entrySchema = (raw: unknown) =>
  typeof raw === "object" && raw !== null && "type" in raw && (raw.type === "http" || raw.type === "sse")
    ? RemoteEntry
    : typeof raw === "object" && raw !== null && "type" in raw && raw.type !== undefined && raw.type !== "stdio"
    ? ServerEntry
    : StdioEntry

/**
 * Resolves one `mcpServers` entry: decodes it and expands its variables.
 *
 * @since 0.2.0
 * @category constructors
 */
export const resolveEntry = (
  file: string,
  name: string,
  raw: unknown,
  options: LoadOptions
): Either.Either<ServerConfig, McpConfigError> => {
  const fail = (field: string | undefined, reason: string) =>
    Either.left(new McpConfigError({ file, server: name, field, reason }))
  const decoded = Schema.decodeUnknownEither(entrySchema(raw) as Schema.Schema<ServerEntry, unknown>)(raw)
  if (Either.isLeft(decoded)) {
    const [first] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    return fail(
      first === undefined || first.path.length === 0 ? undefined : formatPath(first.path),
      first?.message ?? "invalid entry"
    )
  }
  const entry = decoded.right
  const env = options.env ?? process.env
  const expand = (field: string, text: string): Either.Either<string, McpConfigError> =>
    Either.mapLeft(
      expandVariables(text, env),
      (missing) =>
        new McpConfigError({
          file,
          server: name,
          field,
          reason: `environment variable ${missing.map((m) => `\${${m}}`).join(", ")} is not set and has no default`
        })
    )
  const expandRecord = (field: string, record: Readonly<Record<string, string>> | undefined) =>
    Either.all(
      Object.fromEntries(Object.entries(record ?? {}).map(([key, value]) => [key, expand(`${field}.${key}`, value)]))
    )
  const transport: Either.Either<Transport, McpConfigError> = "url" in entry
    ? Either.gen(function*() {
      const url = yield* expand("url", entry.url)
      if (!URL.canParse(url)) return yield* fail("url", `not a URL: ${JSON.stringify(url)}`)
      return { _tag: entry.type, url, headers: yield* expandRecord("headers", entry.headers) }
    })
    : Either.gen(function*() {
      return {
        _tag: "stdio" as const,
        command: yield* expand("command", entry.command),
        args: yield* Either.all((entry.args ?? []).map((arg: string, i: number) => expand(`args[${i}]`, arg))),
        env: yield* expandRecord("env", entry.env),
        cwd: entry.cwd === undefined ? undefined : yield* expand("cwd", entry.cwd)
      }
    })
  return Either.map(transport, (transport) => ({
    name,
    transport,
    source: file,
    enabled: options.trusted,
    trustAnnotations: options.trustAnnotations?.includes(name) ?? false,
    timeout: entry.timeout === undefined ? undefined : Duration.millis(entry.timeout),
    toolTimeouts: Object.fromEntries(
      Object.entries<number>(entry.toolTimeouts ?? {}).map(([tool, ms]) => [tool, Duration.millis(ms)])
    )
  }))
}

/**
 * Resolves every entry of an already-parsed configuration (`{mcpServers: {...}}`); bad entries become errors and the
 * rest are kept.
 *
 * @since 0.2.0
 * @category constructors
 */
export const fromJson = (file: string, json: unknown, options: LoadOptions): LoadedConfig => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return {
      servers: [],
      errors: [
        new McpConfigError({ file, server: undefined, field: undefined, reason: "the file must hold a JSON object" })
      ]
    }
  }
  const servers = "mcpServers" in json ? json.mcpServers : undefined
  if (servers === undefined) return { servers: [], errors: [] }
  if (typeof servers !== "object" || servers === null || Array.isArray(servers)) {
    return {
      servers: [],
      errors: [
        new McpConfigError({
          file,
          server: undefined,
          field: "mcpServers",
          reason: "mcpServers must be an object of server entries"
        })
      ]
    }
  }
  const resolved: Array<ServerConfig> = []
  const errors: Array<McpConfigError> = []
  for (const [name, raw] of Object.entries(servers)) {
    Either.match(resolveEntry(file, name, raw, options), {
      onLeft: (e) => errors.push(e),
      onRight: (s) => resolved.push(s)
    })
  }
  return { servers: resolved, errors }
}

/**
 * Reads a configuration file (`.mcp.json`, or a settings file with the same `mcpServers` key). A missing file yields
 * nothing; an unreadable or malformed one yields one error.
 *
 * @since 0.2.0
 * @category constructors
 */
export const loadFile = Effect.fn("Mcp.loadConfig")(function*(path: string, options: LoadOptions) {
  const fs = yield* FileSystem.FileSystem
  const fileError = (reason: string): LoadedConfig => ({
    servers: [],
    errors: [new McpConfigError({ file: path, server: undefined, field: undefined, reason })]
  })
  const read = yield* readJsonFile(fs, path)
  if (read._tag === "Missing") return { servers: [], errors: [] } satisfies LoadedConfig
  if (read._tag === "Unusable") return fileError(read.reason)
  return fromJson(path, read.json, options)
})

/**
 * Merges configurations in order; a later server of the same name replaces an earlier one (as a user's
 * `--mcp-config` overrides the project's `.mcp.json`).
 *
 * @since 0.2.0
 * @category combinators
 */
export const merge = (configs: ReadonlyArray<LoadedConfig>): LoadedConfig => {
  const byName = new Map<string, ServerConfig>()
  for (const config of configs) for (const server of config.servers) byName.set(server.name, server)
  return { servers: [...byName.values()], errors: configs.flatMap((config) => config.errors) }
}
