/**
 * Trust in a repository's settings files: which files come from the repository, whether the person trusts a
 * project (`trustedProjects`), and the trust decision applied to a loaded file (permissive entries wait for trust;
 * `bypassPermissions` never comes from a repository).
 *
 * @since 0.3.0
 */
import * as Path from "node:path"
import type { RuleSource } from "../Tool/Permission.js"
import { printRule } from "../Tool/Rule.js"
import { expandHome } from "./internal/files.js"
import { HOOK_EVENTS } from "./SettingsSchema.js"
import type { LoadedSettings, PermissionModeSetting, Settings, SourcedRule } from "./SettingsSchema.js"

// -----------------------------------------------------------------------------
// trust
// -----------------------------------------------------------------------------

/**
 * Whether a settings file comes from the repository (project or local settings), so that its permissive entries
 * wait for the person's trust.
 *
 * @since 0.2.0
 * @category trust
 */
export const isRepositorySource = (kind: RuleSource): boolean => kind === "projectSettings" || kind === "localSettings"

/**
 * Whether the user's settings trust a project: `trustedProjects` lists its path or an ancestor's (`~` expanded).
 *
 * @since 0.2.0
 * @category trust
 */
export const isTrusted = (userSettings: Settings | undefined, project: string, home: string): boolean => {
  const target = Path.resolve(project)
  return (userSettings?.trustedProjects ?? []).some((entry) => {
    const trusted = Path.resolve(expandHome(entry, home))
    const relative = Path.relative(trusted, target)
    return relative === "" || (!relative.startsWith("..") && !Path.isAbsolute(relative))
  })
}

const PERMISSIVE_MODES: ReadonlyArray<PermissionModeSetting> = ["acceptEdits", "auto", "bypassPermissions", "dontAsk"]

/**
 * Applies the trust decision to a repository file: untrusted, its allow rules, hooks, `additionalDirectories` and a
 * `defaultMode` other than `default`/`plan` are set aside, with one warning per kind; trusted or not,
 * `bypassPermissions` is set aside. Deny and ask rules always stay. Files from outside the repository pass unchanged.
 *
 * `granted` (for `settings.local.json`) are the allow rules, as printed, that this runtime wrote into the file for
 * the person ("always allow", recorded in their own state: see `Grants`): those apply untrusted too.
 *
 * @since 0.2.0
 * @category trust
 */
export const applyTrust = (
  loaded: LoadedSettings,
  trusted: boolean,
  granted: ReadonlySet<string> = new Set()
): LoadedSettings => {
  if (!isRepositorySource(loaded.source.kind)) return loaded
  const file = loaded.source.path
  const warnings = [...loaded.warnings]
  const untrusted = (field: string, what: string) =>
    warnings.push({
      file,
      field,
      message:
        `${what} not applied: this project is not trusted (run with --trust-project, or add it to trustedProjects in ~/.claude/settings.json)`
    })
  const permissions = loaded.settings.permissions
  const mode = permissions?.defaultMode
  let keepMode = mode
  if (mode === "bypassPermissions") {
    warnings.push({
      file,
      field: "permissions.defaultMode",
      message: "bypassPermissions is never taken from a repository's settings; the mode stays default"
    })
    keepMode = undefined
  } else if (!trusted && mode !== undefined && PERMISSIVE_MODES.includes(mode)) {
    untrusted("permissions.defaultMode", `mode ${mode}`)
    keepMode = undefined
  }
  let rules = loaded.rules
  let hooks = loaded.settings.hooks
  let directories = permissions?.additionalDirectories
  const isGranted = (rule: SourcedRule) => rule.behavior === "allow" && granted.has(printRule(rule.rule))
  if (!trusted) {
    const allows = rules.filter((rule) => rule.behavior === "allow" && !isGranted(rule)).length
    if (allows > 0) {
      untrusted(
        "permissions.allow",
        `${allows} allow rule${allows === 1 ? "" : "s"}${
          granted.size > 0 ? " (other than those you allowed always here)" : ""
        }`
      )
    }
    rules = rules.filter((rule) => rule.behavior !== "allow" || isGranted(rule))
    if (hooks !== undefined && HOOK_EVENTS.some((event) => (hooks?.[event]?.length ?? 0) > 0)) {
      untrusted("hooks", "hooks")
    }
    hooks = undefined
    if (directories !== undefined && directories.length > 0) {
      untrusted("permissions.additionalDirectories", "additional directories")
    }
    directories = undefined
  }
  const { additionalDirectories: _dirs, defaultMode: _mode, ...restrictive } = permissions ?? {}
  const { disableAllHooks, hooks: _hooks, permissions: _permissions, ...rest } = loaded.settings
  if (!trusted && disableAllHooks === true) untrusted("disableAllHooks", "disableAllHooks")
  const settings: Settings = {
    ...rest,
    ...(hooks === undefined ? {} : { hooks }),
    ...(disableAllHooks === undefined || (!trusted && disableAllHooks) ? {} : { disableAllHooks }),
    ...(permissions === undefined ? {} : {
      permissions: {
        ...restrictive,
        ...(trusted ? {} : { allow: rules.filter((rule) => rule.behavior === "allow").map((rule) => rule.text) }),
        ...(keepMode === undefined ? {} : { defaultMode: keepMode }),
        ...(directories === undefined ? {} : { additionalDirectories: directories })
      }
    })
  }
  return { ...loaded, settings, rules, warnings, trusted }
}
