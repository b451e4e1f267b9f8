/**
 * The `sandbox` key of Claude Code's settings files, and how the files and the permission rules together configure
 * the shell's sandbox.
 *
 * Keys read: `enabled`, `failIfUnavailable`, `excludedCommands`, `allowUnsandboxedCommands`,
 * `autoAllowBashIfSandboxed`, `network.allowedDomains`, `filesystem.allowWrite`, `filesystem.denyWrite`,
 * `filesystem.denyRead`. Any other key under `sandbox` loads (Claude Code has more) and gets a warning saying this
 * runtime does not apply it. The defaults are stricter than Claude Code's: the sandbox is on wherever it can run,
 * `allowUnsandboxedCommands` and `autoAllowBashIfSandboxed` are off.
 *
 * From the rules, as Claude Code maps them: `WebFetch(domain:...)` allow rules name the hosts commands may reach,
 * `Edit(...)` allow rules what they may write (a directory pattern, `dir/**`), `Read(...)` deny rules what they may not
 * read. Trust: a repository's file that is not trusted can only tighten (`enabled: true`, `failIfUnavailable: true`,
 * `denyWrite`, `denyRead`); what would widen the sandbox from it is left out with a warning.
 *
 * @since 0.3.0
 */
import * as Schema from "effect/Schema"
import * as Path from "node:path"
import type { LoadedSettings, SettingsWarning } from "./SettingsSchema.js"

const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const Strings = Schema.Array(Schema.String)
const Rest = Schema.Record({ key: Schema.String, value: Schema.Unknown })

/**
 * `sandbox.network`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SandboxNetworkSettings = Schema.Struct({ allowedDomains: optional(Strings) }, Rest)

/**
 * `sandbox.filesystem`.
 *
 * @since 0.3.0
 * @category schemas
 */
export const SandboxFilesystemSettings = Schema.Struct({
  allowWrite: optional(Strings),
  denyWrite: optional(Strings),
  denyRead: optional(Strings)
}, Rest)

/**
 * The `sandbox` key of a settings file. Keys this runtime does not read are kept (and warned about).
 *
 * @since 0.3.0
 * @category schemas
 */
export const SandboxSettings = Schema.Struct({
  enabled: optional(Schema.Boolean),
  failIfUnavailable: optional(Schema.Boolean),
  excludedCommands: optional(Strings),
  allowUnsandboxedCommands: optional(Schema.Boolean),
  autoAllowBashIfSandboxed: optional(Schema.Boolean),
  network: optional(SandboxNetworkSettings),
  filesystem: optional(SandboxFilesystemSettings)
}, Rest)

/**
 * @since 0.3.0
 * @category schemas
 */
export type SandboxSettings = typeof SandboxSettings.Type

/**
 * The sandbox as the settings configure it (the shape of the Bash tool's `sandbox` option).
 *
 * @since 0.3.0
 * @category models
 */
export interface SandboxConfig {
  readonly enabled?: boolean
  readonly failIfUnavailable?: boolean
  readonly excludedCommands: ReadonlyArray<string>
  readonly allowedDomains: ReadonlyArray<string>
  readonly writable: ReadonlyArray<string>
  readonly unreadable: ReadonlyArray<string>
  readonly protectedPaths: ReadonlyArray<string>
  readonly allowUnsandboxedCommands?: boolean
  readonly autoAllowBashIfSandboxed?: boolean
}

const KNOWN = new Set([
  "enabled",
  "failIfUnavailable",
  "excludedCommands",
  "allowUnsandboxedCommands",
  "autoAllowBashIfSandboxed",
  "network",
  "filesystem"
])
const KNOWN_NETWORK = new Set(["allowedDomains"])
const KNOWN_FILESYSTEM = new Set(["allowWrite", "denyWrite", "denyRead"])

/**
 * A rule's path pattern as an absolute path, as Claude Code reads it: `//` the root, `~/` home, `/` the project
 * (the directory holding `.claude`), anything else the working directory.
 */
const absolute = (pattern: string, base: { readonly cwd: string; readonly home: string; readonly project: string }) =>
  pattern.startsWith("//")
    ? pattern.slice(1)
    : pattern.startsWith("~/")
    ? Path.join(base.home, pattern.slice(2))
    : pattern.startsWith("/")
    ? Path.join(base.project, pattern)
    : Path.resolve(base.cwd, pattern)

/** A directory pattern (`dir`, `dir/`, `dir/**`) as the directory; undefined for any other glob. */
const directoryOf = (path: string): string | undefined => {
  const stripped = path.replace(/\/\*\*$/, "").replace(/\/$/, "")
  return /[*?[\]{}]/.test(stripped) || stripped === "" ? undefined : stripped
}

/**
 * The sandbox the loaded settings files (lowest precedence first) configure: scalars from the last file that sets
 * them, lists from all, with the hosts of `WebFetch(domain:...)` allow rules, the directories of `Edit(...)` allow
 * rules and the paths of `Read(...)` deny rules. `extraAllowRules` are rules given elsewhere (the command line).
 *
 * @since 0.3.0
 * @category resolving
 */
export const sandboxConfig = (
  files: ReadonlyArray<LoadedSettings>,
  options: {
    readonly cwd: string
    readonly home: string
    readonly extraRules?: { readonly allow: ReadonlyArray<string>; readonly deny: ReadonlyArray<string> } | undefined
  }
): { readonly config: SandboxConfig; readonly warnings: ReadonlyArray<SettingsWarning> } => {
  const warnings: Array<SettingsWarning> = []
  let enabled: boolean | undefined
  let failIfUnavailable: boolean | undefined
  let allowUnsandboxedCommands: boolean | undefined
  let autoAllowBashIfSandboxed: boolean | undefined
  const excludedCommands: Array<string> = []
  const allowedDomains: Array<string> = []
  const writable: Array<string> = []
  const unreadable: Array<string> = []
  const protectedPaths: Array<string> = []
  const fromRule = (
    tool: string,
    content: string | undefined,
    behavior: string,
    base: Parameters<typeof absolute>[1]
  ) => {
    if (content === undefined) return
    if (tool === "WebFetch" && behavior === "allow" && content.startsWith("domain:")) {
      allowedDomains.push(content.slice("domain:".length).trim())
    } else if (tool === "Edit" && behavior === "allow") {
      const dir = directoryOf(absolute(content, base))
      if (dir !== undefined) writable.push(dir)
    } else if (tool === "Read" && behavior === "deny") {
      unreadable.push(absolute(content, base))
    }
  }
  for (const file of files) {
    const repository = file.source.kind === "projectSettings" || file.source.kind === "localSettings"
    const base = {
      cwd: options.cwd,
      home: options.home,
      project: repository ? Path.dirname(Path.dirname(file.source.path)) : options.cwd
    }
    for (const sourced of file.rules) fromRule(sourced.rule.toolName, sourced.rule.content, sourced.behavior, base)
    const sandbox = (file.settings as { readonly sandbox?: SandboxSettings }).sandbox
    if (sandbox === undefined) continue
    const warn = (field: string, message: string) => warnings.push({ file: file.source.path, field, message })
    const widens = repository && !file.trusted
    const untrusted = (field: string) =>
      warn(
        field,
        "not applied: this project is not trusted, and it would widen the sandbox (run with --trust-project, or add it to trustedProjects in ~/.claude/settings.json)"
      )
    for (const key of Object.keys(sandbox)) {
      if (!KNOWN.has(key)) warn(`sandbox.${key}`, "this runtime does not apply this sandbox setting")
    }
    for (const key of Object.keys(sandbox.network ?? {})) {
      if (!KNOWN_NETWORK.has(key)) warn(`sandbox.network.${key}`, "this runtime does not apply this sandbox setting")
    }
    for (const key of Object.keys(sandbox.filesystem ?? {})) {
      if (!KNOWN_FILESYSTEM.has(key)) {
        warn(`sandbox.filesystem.${key}`, "this runtime does not apply this sandbox setting")
      }
    }
    const tighten = <A>(field: string, value: A | undefined, safe: A, set: (value: A) => void) => {
      if (value === undefined) return
      if (widens && value !== safe) untrusted(field)
      else set(value)
    }
    tighten("sandbox.enabled", sandbox.enabled, true, (value) => (enabled = value))
    tighten("sandbox.failIfUnavailable", sandbox.failIfUnavailable, true, (value) => (failIfUnavailable = value))
    tighten(
      "sandbox.allowUnsandboxedCommands",
      sandbox.allowUnsandboxedCommands,
      false,
      (value) => (allowUnsandboxedCommands = value)
    )
    tighten(
      "sandbox.autoAllowBashIfSandboxed",
      sandbox.autoAllowBashIfSandboxed,
      false,
      (value) => (autoAllowBashIfSandboxed = value)
    )
    const widening = (field: string, values: ReadonlyArray<string> | undefined, into: Array<string>) => {
      if (values === undefined || values.length === 0) return
      if (widens) untrusted(field)
      else into.push(...values)
    }
    widening("sandbox.excludedCommands", sandbox.excludedCommands, excludedCommands)
    widening("sandbox.network.allowedDomains", sandbox.network?.allowedDomains, allowedDomains)
    widening(
      "sandbox.filesystem.allowWrite",
      sandbox.filesystem?.allowWrite?.map((path) => absolute(path, base)),
      writable
    )
    protectedPaths.push(...(sandbox.filesystem?.denyWrite ?? []).map((path) => absolute(path, base)))
    unreadable.push(...(sandbox.filesystem?.denyRead ?? []).map((path) => absolute(path, base)))
  }
  const cliBase = { cwd: options.cwd, home: options.home, project: options.cwd }
  for (
    const [behavior, list] of [["allow", options.extraRules?.allow ?? []], ["deny", options.extraRules?.deny ?? []]]
  ) {
    for (const text of list as ReadonlyArray<string>) {
      const match = /^([A-Za-z]+)\((.*)\)$/.exec(text.trim())
      if (match !== null) fromRule(match[1]!, match[2], behavior as string, cliBase)
    }
  }
  const config: SandboxConfig = {
    ...(enabled === undefined ? {} : { enabled }),
    ...(failIfUnavailable === undefined ? {} : { failIfUnavailable }),
    ...(allowUnsandboxedCommands === undefined ? {} : { allowUnsandboxedCommands }),
    ...(autoAllowBashIfSandboxed === undefined ? {} : { autoAllowBashIfSandboxed }),
    excludedCommands,
    allowedDomains: [...new Set(allowedDomains)],
    writable: [...new Set(writable)],
    unreadable: [...new Set(unreadable)],
    protectedPaths: [...new Set(protectedPaths)]
  }
  return { config, warnings }
}
