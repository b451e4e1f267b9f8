/**
 * Permission modes: the mode a set of trust-judged settings files asks for, or the one requested, and why it is not
 * what was asked for (`auto` without a classifier, `bypassPermissions` disabled).
 *
 * @since 0.3.0
 */
import type { LoadedSettings, PermissionMode, PermissionModeSetting } from "./SettingsSchema.js"
import { isRepositorySource } from "./Trust.js"

// -----------------------------------------------------------------------------
// modes
// -----------------------------------------------------------------------------

/**
 * The mode that applies, and why when it is not what was asked for.
 *
 * @since 0.2.0
 * @category modes
 */
export interface ResolvedMode {
  readonly mode: PermissionMode
  readonly warnings: ReadonlyArray<string>
}

/**
 * The mode a set of (trust-judged) settings files asks for: the last `permissions.defaultMode`, or `requested` when
 * given. `manual` is `default`; `auto` is `default` (the classifier approver answers the questions) and, without
 * one configured, a warning; `bypassPermissions` is refused, with a warning, when any file sets
 * `disableBypassPermissionsMode`.
 *
 * @since 0.2.0
 * @category modes
 */
export const resolveMode = (
  settings: ReadonlyArray<LoadedSettings>,
  options: { readonly requested?: PermissionModeSetting | undefined; readonly classifier?: boolean | undefined } = {}
): ResolvedMode => {
  const warnings: Array<string> = []
  let wanted: PermissionModeSetting = "default"
  let from = "the default"
  for (const loaded of settings) {
    const mode = loaded.settings.permissions?.defaultMode
    if (mode === undefined) continue
    // Defence in depth: a repository file never sets bypassPermissions, even if it did not go through applyTrust.
    if (mode === "bypassPermissions" && isRepositorySource(loaded.source.kind)) continue
    wanted = mode
    from = loaded.source.path
  }
  if (options.requested !== undefined) {
    wanted = options.requested
    from = "the command line"
  }
  switch (wanted) {
    case "manual":
      return { mode: "default", warnings }
    case "auto":
      if (options.classifier !== true) {
        warnings.push(
          `mode auto (from ${from}) needs a classifier approver and none is configured; running in default mode`
        )
      }
      return { mode: "default", warnings }
    case "bypassPermissions": {
      const disabler = settings.find((loaded) =>
        loaded.settings.permissions?.disableBypassPermissionsMode === "disable"
      )
      if (disabler !== undefined) {
        warnings.push(
          `mode bypassPermissions (from ${from}) is disabled by ${disabler.source.path} (permissions.disableBypassPermissionsMode); running in default mode`
        )
        return { mode: "default", warnings }
      }
      return { mode: wanted, warnings }
    }
    default:
      return { mode: wanted, warnings }
  }
}
