/**
 * The `Permissions` module as it was before the permission room had one name per role: the rule-based implementation
 * of the `PermissionPolicy` service is now `RulePolicy`, and loading settings files is `Settings.loadSettings`. Every
 * name here is a deprecated alias, kept so that code written against 0.1 keeps compiling; it goes in the next minor
 * release.
 *
 * @since 0.1.0
 * @deprecated use `RulePolicy` and `Settings`.
 */
import type { RuleLists as RulePolicyRuleLists, RulePolicyOptions } from "./RulePolicy.js"
import { layer as rulePolicyLayer, make as makeRulePolicy } from "./RulePolicy.js"
import type { PermissionMode } from "./Settings.js"
import { loadSettings as loadSettingsFiles, resolveMode } from "./Settings.js"
import type { LoadedSettings } from "./Settings.js"

/**
 * @since 0.1.0
 * @deprecated use `RulePolicy.layer`.
 */
export const layer = rulePolicyLayer

/**
 * @since 0.1.0
 * @deprecated use `RulePolicy.make`.
 */
export const make = makeRulePolicy

/**
 * @since 0.1.0
 * @deprecated use `RulePolicy.RulePolicyOptions`.
 */
export type PermissionsOptions = RulePolicyOptions

/**
 * @since 0.1.0
 * @deprecated use `RulePolicy.RuleLists`.
 */
export type RuleLists = RulePolicyRuleLists

/**
 * @since 0.1.0
 * @deprecated use `Settings.loadSettings`.
 */
export const loadSettings = loadSettingsFiles

/**
 * @since 0.1.0
 * @deprecated use `Settings.resolveMode(settings).mode` (which also says why the mode differs from the one asked for).
 */
export const modeFromSettings = (settings: ReadonlyArray<LoadedSettings>): PermissionMode => resolveMode(settings).mode
