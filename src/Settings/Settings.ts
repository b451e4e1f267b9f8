/**
 * Claude Code settings files (`~/.claude/settings.json`, `.claude/settings.json`,
 * `.claude/settings.local.json`): their schema, a loader that turns a file into parsed rules tagged with
 * where they came from, the trust given to a repository's files, and atomic edits ("allow always", "trust this
 * project").
 *
 * ## What loads
 * Every key Claude Code documents is accepted; the ones this runtime acts on (`permissions`, `hooks`) are checked
 * against a schema. A key nobody knows (`permissions.Deny`) is a warning that names the closest known key and is
 * otherwise ignored. A known key with a value of the wrong shape, an invalid hook matcher or `if` condition, and a
 * malformed `deny` or `ask` rule stop the load (fail closed: a rule meant to protect something is never silently
 * lost); a malformed `allow` rule is dropped with a warning, as Claude Code does. Each problem is one line naming
 * the file and the field.
 *
 * ## Rules for tools
 * A rule for a tool this runtime does not have (`WebSearch`, `Task`, an MCP server that is not configured) is kept,
 * with a warning; a tool name one edit away from a known tool (`bash`) is an error naming the tool meant.
 * File rules are read as Claude Code reads them: `Edit(...)` governs every tool that writes files and `Read(...)`
 * every tool that reads or lists them. `Write(...)`, `MultiEdit(...)` and `NotebookEdit(...)` deny and ask rules are
 * read as `Edit(...)`, `Glob(...)`, `Grep(...)` and `LS(...)` ones as `Read(...)` (never less safe than written);
 * allow rules under those names do nothing, as in Claude Code. Each such rule gets a warning saying how it is read.
 *
 * ## Trust
 * Restrictive entries (deny and ask rules) apply from every file. Permissive entries of the repository's files
 * (`.claude/settings.json`, `.claude/settings.local.json`): allow rules, hooks, `additionalDirectories` and a
 * `defaultMode` other than `default`/`plan`, apply only once the person trusted the project: its path (or an
 * ancestor's) is listed in `trustedProjects` of the user's settings, or the loader is told so (`--trust-project`).
 * No repository file can turn on `bypassPermissions`, trusted or not. `~` is the home directory in every path.
 * One exception, as in Claude Code: the allow rules "always allow" wrote into `settings.local.json` for the person
 * apply untrusted too, because the person's own record (`Grants`, outside the project) lists them for that file.
 *
 * ## Modules
 * This module gathers the room's parts under one name: the schema (`SettingsSchema`), the rules' tool names
 * (`RuleTools`), loading (`Load`), trust (`Trust`), modes (`Modes`) and editing (`Edit`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * from "./SettingsSchema.js"

/** @since 0.2.0 */
export * from "./RuleTools.js"

/** @since 0.1.0 */
export * from "./Load.js"

/** @since 0.2.0 */
export * from "./Trust.js"

/** @since 0.2.0 */
export * from "./Modes.js"

/** @since 0.1.0 */
export * from "./Edit.js"
