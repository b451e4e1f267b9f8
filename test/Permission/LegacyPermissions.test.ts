/**
 * The names the permission room had before it had one name per role still work, as deprecated aliases of the new
 * ones: code written against 0.1 compiles and means the same.
 */
import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import { Permission, Permissions, RulePolicy, Settings } from "../../src/index.js"

describe("deprecated permission names", () => {
  it("Permissions is RulePolicy, with loading from Settings", () => {
    expect(Permissions.layer).toBe(RulePolicy.layer)
    expect(Permissions.make).toBe(RulePolicy.make)
    expect(Permissions.loadSettings).toBe(Settings.loadSettings)
    const options: Permissions.PermissionsOptions = { mode: "plan", cliRules: { deny: ["Bash"] } }
    const same: RulePolicy.RulePolicyOptions = options
    expect(same).toBe(options)
  })

  it("modeFromSettings answers what Settings.resolveMode answers", () => {
    const settings = [fileWith("acceptEdits", "userSettings")]
    expect(Permissions.modeFromSettings(settings)).toBe("acceptEdits")
    const repository = [fileWith("bypassPermissions", "projectSettings")]
    expect(Permissions.modeFromSettings(repository)).toBe(Settings.resolveMode(repository).mode)
    expect(Permissions.modeFromSettings(repository)).toBe("default")
  })

  it("Settings.RuleSourceKind is the one RuleSource", () => {
    expect(Settings.RuleSourceKind).toBe(Permission.RuleSource)
  })
})

const fileWith = (
  defaultMode: Settings.PermissionModeSetting,
  kind: Settings.SettingsFileKind
): Settings.LoadedSettings => {
  const decoded = Settings.decodeSettingsJson({ permissions: { defaultMode } }, { kind, path: `/p/${kind}.json` })
  return Either.getOrThrow(decoded)
}
