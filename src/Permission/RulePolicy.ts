/**
 * `RulePolicy`: the rule-based implementation of the {@link PermissionPolicy} service (the service is the Tag in
 * `Permission/PermissionPolicy`; `PermissionPolicy.toolOnly` is the minimal implementation, this one the full one):
 * permission rules from settings files, the command line and the session; the
 * permission mode; safety checks; read-only auto-allow; and the opinions of the tool and of PreToolUse hooks.
 *
 * ## Decision order
 *
 * The first step that decides, decides. Deny beats ask beats allow: every way to deny is looked at before any way
 * to ask, and every way to ask before any way to allow.
 *
 * 1. **Deny rules** (any source) → Deny.
 *    Then a PreToolUse **hook's deny**, the **tool's own Deny**, and **plan mode** (a call that is not read-only,
 *    from a tool that touches the environment) → Deny.
 * 2. **Ask rules** (any source) → Ask. Then a **hook's ask** and the **tool's own non-overridable Ask**
 *    (`overridable: false`: a shell command that cannot be analysed) → Ask.
 * 3. **Safety checks** (on what a tool declares it writes; a `*` claim declares nothing, and only
 *    `bypassPermissions` lets such a call run without asking): a write claim (`file:` resource) on `.git/`, `.claude/`
 *    (settings, hooks, commands), the settings files in use, shell profiles (`.bashrc`, `.zshrc`, `.profile`,
 *    `.bash_profile`, `.zprofile`, ...), `.gitconfig`, `.ssh/` and similar (see `Permission/SafetyCheck`) → Ask, in
 *    every mode, `bypassPermissions` and `acceptEdits` included, and whatever the allow rules say.
 * 4. **bypassPermissions** → Allow.
 * 5. **The tool's own overridable Ask** (a file outside the workspace, a custom tool's check): answered by the allow
 *    rules (settings files, command line, the session's "allow for the session/always") and a hook's allow → Allow;
 *    otherwise → Ask, with the tool's suggestions. No other mode answers it (acceptEdits covers the workspace only).
 *    The rule a prompt suggests is therefore the rule that allows the same call next time.
 * 6. **acceptEdits**: a tool with `fileAccess: "edit"` whose claims are all `file:` claims inside the workspace, at
 *    least one a write → Allow.
 * 7. **Allow rules** (any source) → Allow. A **hook's allow** counts as an allow rule, here and in step 5 only: it
 *    never overrides a deny or ask rule, the tool's deny or non-overridable ask, a safety check or plan mode.
 * 8. **Read-only auto-allow** (on by default): the call's traits are read-only and not open-world (a network read
 *    can carry data out), and every claim is a `file:` claim inside the workspace (a `*` claim is not) → Allow.
 *    Except while a `Read` deny rule exists, for a tool that touches the environment without `fileAccess` (Bash):
 *    it cannot show it keeps out of the protected files, so it asks.
 * 9. **The tool's Allow** → Allow (with its `updatedInput`, which also accompanies any other Allow). A tool that
 *    does not touch the environment → Allow.
 * 10. Otherwise → Ask, with suggested rules (the tool's, else `Edit(//dir/**)`/`Read(//dir/**)` for file tools,
 *    else the bare tool name for tools that cannot match rule content).
 *
 * In `dontAsk` mode every Ask becomes a Deny whose reason names the mode. Every verdict carries a `DecisionReason`:
 * the rule (its text, behaviour, source and settings file), the mode, the hook, the tool, the safety check,
 * read-only, or the default.
 *
 * ## Which rules govern a tool
 *
 * A rule targets a tool when its tool part is the tool's name or one of its aliases, `Read` for tools with
 * `fileAccess: "read"`, `Edit` for tools with `fileAccess: "edit"`, or an MCP server-wide rule (`mcp__srv`,
 * `mcp__srv__*`) for a tool of that server. Path rules under another file tool's name are read as Claude Code reads
 * them (see `Settings.readFileRule`): `Write(x)` deny/ask as `Edit(x)`, `Glob(x)` as `Read(x)`; their allow rules do
 * nothing. A rule without content covers every call. A content rule is decided by
 * the tool: `matchRules` when it has it (all content rules at once, for compound commands), else `matchesRule`
 * rule by rule, with the rule's `RuleContext` (`/...` patterns anchored at the root of the rule's settings file).
 * A tool with neither:
 * - path rules (`Read(...)`, `Edit(...)`, or any rule for a tool with `fileAccess`) are matched against the
 *   call's `file:` claims with the gitignore patterns of `Permission/PathPattern`: a deny or ask rule matches when
 *   any claimed file matches (or the call claims `*`), an allow rule when every claimed file does;
 * - any other content rule cannot be interpreted, so a deny or ask rule covers **every** call of the tool (a
 *   `WebFetch(domain:x)` deny is never silently ignored) and an allow rule covers **none**.
 *
 * When several rules of one behaviour match, the first reported is from the earliest source: settings files in
 * the order given, then command-line rules, then session rules.
 *
 * ## Reading many files
 *
 * `deniesRead(path)` answers whether the deny rules that govern reading (`Read`, `Read(...)`) forbid a file, on the
 * path as given and on its real path; Grep and Glob leave such files out of their results. The matchers are compiled
 * once per rule set.
 *
 * @since 0.1.0
 */
import * as FileSystem from "@effect/platform/FileSystem"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Path from "node:path"
import { realPathSync, Workspace } from "../Session/Workspace.js"
import { defaultGrantsPath, recordGrants } from "../Settings/Grants.js"
import type { LoadedSettings, PermissionModeSetting } from "../Settings/Settings.js"
import { addRuleToSettingsFile, claudeSettingsPaths, readFileRule, resolveMode } from "../Settings/Settings.js"
import type { RuleSource } from "../Tool/Permission.js"
import { parseRule, printRule } from "../Tool/Rule.js"
import type { PermissionRule, RuleBehavior, RuleParseError } from "../Tool/Rule.js"
import type { Definition } from "../Tool/Tool.js"
import { decide, deniesRead, indexRule, makeIndex, ruleCoversCall, ruleTargets } from "./internal/policy.js"
import type { IndexedRule, PolicyEnvironment } from "./internal/policy.js"
import { PermissionPolicy, PolicyUpdateError } from "./PermissionPolicy.js"

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * Rules given as text, by behaviour (command-line `--allow/--deny/--ask`, or initial session rules).
 *
 * @since 0.1.0
 * @category models
 */
export interface RuleLists {
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
  readonly ask?: ReadonlyArray<string> | undefined
}

/**
 * The options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface RulePolicyOptions {
  /** Loaded settings files, lowest precedence first (e.g. from `Settings.loadSettings`). */
  readonly settings?: ReadonlyArray<LoadedSettings> | undefined
  /** Rules from the command line (source `cliArg`). */
  readonly cliRules?: RuleLists | undefined
  /** Rules for this session only (source `session`). */
  readonly sessionRules?: RuleLists | undefined
  /**
   * The mode. Default: `permissions.defaultMode` of the highest-precedence settings file that sets one, else
   * `default` (see `Settings.resolveMode`: `manual` and `auto` run as `default`; no repository file turns on
   * `bypassPermissions`; `disableBypassPermissionsMode` refuses it).
   */
  readonly mode?: PermissionModeSetting | undefined
  /** Allow read-only calls that stay inside the workspace without asking. Default true. */
  readonly readOnlyAutoAllow?: boolean | undefined
  /** Where "allow always" rules are written. Default `<cwd>/.claude/settings.local.json`. */
  readonly localSettingsPath?: string | undefined
  /**
   * The person's record of what "allow always" wrote (see `Settings/Grants`), so the next run applies those rules of
   * the untrusted project's local settings. Default `Grants.defaultGrantsPath(home)`.
   */
  readonly grantsPath?: string | undefined
}

// -----------------------------------------------------------------------------
// constructors
// -----------------------------------------------------------------------------

const BEHAVIORS: ReadonlyArray<RuleBehavior> = ["deny", "ask", "allow"]

const parseLists = (
  lists: RuleLists | undefined,
  source: Extract<RuleSource, "cliArg" | "session">
): Either.Either<Array<IndexedRule>, RuleParseError> => {
  const out: Array<IndexedRule> = []
  for (const behavior of BEHAVIORS) {
    for (const text of lists?.[behavior] ?? []) {
      const parsed = parseRule(text)
      if (Either.isLeft(parsed)) return Either.left(parsed.left)
      const read = readFileRule(behavior, parsed.right).rule
      if (read !== undefined) out.push(indexRule(behavior, read, source, undefined))
    }
  }
  return Either.right(out)
}

/**
 * Builds the policy service over a workspace (its working directory anchors relative rules, its roots bound
 * acceptEdits and read-only auto-allow).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: RulePolicyOptions = {}
): Effect.Effect<PermissionPolicy["Type"], RuleParseError, Workspace | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const workspace = yield* Workspace
    const fs = yield* FileSystem.FileSystem
    const settings = options.settings ?? []
    const localSettingsPath = Path.resolve(
      workspace.cwd,
      options.localSettingsPath ?? claudeSettingsPaths({ home: workspace.home, cwd: workspace.cwd })[2]!.path
    )
    const grantsPath = options.grantsPath ?? defaultGrantsPath(workspace.home)
    const fromFiles = settings.flatMap((loaded) =>
      loaded.rules.map((sourced) => indexRule(sourced.behavior, sourced.rule, sourced.source.kind, sourced.source.path))
    )
    const cli = yield* parseLists(options.cliRules, "cliArg")
    const session = yield* parseLists(options.sessionRules, "session")
    // The current rule set. A plain variable rather than a Ref: `deniesRead` is synchronous (once per search result),
    // and every update below is one synchronous step, so readers never see a half-made index.
    let index = makeIndex([...fromFiles, ...cli, ...session])
    // Mutable for the mode only: plan mode is entered and left during a session (`mode.set`); each decision reads it.
    let env: PolicyEnvironment = {
      cwd: workspace.cwd,
      home: workspace.home,
      contains: workspace.contains,
      // The person's record of "always" rules is protected as the settings files are: writing it would grant rules.
      settingsFiles: new Set([
        localSettingsPath,
        grantsPath,
        ...settings.map((loaded) => Path.resolve(loaded.source.path))
      ]),
      mode: resolveMode(settings, options.mode === undefined ? {} : { requested: options.mode }).mode,
      readOnlyAutoAllow: options.readOnlyAutoAllow ?? true
    }
    // "allow always" edits one file: one writer at a time.
    const writeLock = yield* Effect.makeSemaphore(1)

    const addRules = (rules: ReadonlyArray<IndexedRule>) =>
      Effect.sync(() => {
        index = makeIndex([...index.rules, ...rules])
      })

    const remember = (
      texts: ReadonlyArray<string>,
      scope: "session" | "always"
    ): Effect.Effect<void, PolicyUpdateError> =>
      Effect.gen(function*() {
        const parsed: Array<PermissionRule> = []
        for (const text of texts) {
          const rule = parseRule(text)
          if (Either.isLeft(rule)) return yield* new PolicyUpdateError({ message: rule.left.message })
          parsed.push(rule.right)
        }
        if (scope === "session") {
          return yield* addRules(parsed.map((rule) => indexRule("allow", rule, "session", undefined)))
        }
        // The session honours the rules even if writing them fails; the failure is still reported.
        yield* addRules(parsed.map((rule) => indexRule("allow", rule, "localSettings", localSettingsPath)))
        // Written to the file, then recorded in the person's own state as written by them (see Settings/Grants).
        yield* writeLock.withPermits(1)(
          Effect.forEach(parsed, (rule) => addRuleToSettingsFile(localSettingsPath, "allow", rule), { discard: true })
            .pipe(Effect.zipRight(recordGrants(grantsPath, localSettingsPath, parsed.map(printRule))))
        ).pipe(
          Effect.provideService(FileSystem.FileSystem, fs),
          Effect.mapError((error) => new PolicyUpdateError({ message: error.message }))
        )
      }).pipe(Effect.withSpan("RulePolicy.remember", { attributes: { scope } }))

    return {
      evaluate: (request) => Effect.sync(() => decide(index, env, request)),
      remember,
      readOnlyOnly: Effect.sync(() => env.mode === "plan"),
      deniesRead: (absolutePath) => deniesRead(index, env, absolutePath, realPathSync),
      mode: {
        get: Effect.sync(() => env.mode),
        set: (mode) =>
          Effect.sync(() => {
            env = { ...env, mode }
          })
      }
    }
  })

// -----------------------------------------------------------------------------
// layers
// -----------------------------------------------------------------------------

/**
 * The full permission policy. Fails when a command-line or session rule does not parse.
 *
 * @example
 * ```ts
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Layer, Schema } from "effect"
 * import { Approver, ResultStore, RulePolicy, Tool, ToolHooks, ToolRegistry, ToolRuntime } from "effect-tool-runtime"
 * import { Workspace } from "effect-tool-runtime/tools"
 *
 * const Echo = Tool.make("Echo", {
 *   description: "Repeats the text back.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   touchesEnvironment: false
 * })
 *
 * // Claude Code's rules (these from the command line; `settings` takes loaded settings files) over a workspace.
 * const Policy = RulePolicy.layer({ cliRules: { deny: ["Echo"] }, mode: "default" }).pipe(
 *   Layer.provide(Workspace.layer({ cwd: process.cwd() })),
 *   Layer.provide(NodeContext.layer)
 * )
 *
 * export const program = ToolRuntime.execute([
 *   { type: "tool_use", id: "toolu_1", name: "Echo", input: { text: "hello" } }
 * ]).pipe(
 *   // ["denied"]: the deny rule names Echo
 *   Effect.map((outcomes) => outcomes.map((outcome) => outcome.status)),
 *   Effect.provide(ToolRuntime.layer.pipe(Layer.provide(Layer.mergeAll(
 *     ToolRegistry.layer([Echo]).pipe(Layer.provide(Echo.implement({ call: ({ text }) => Effect.succeed(text) }))),
 *     Policy,
 *     Approver.denyAll,
 *     ToolHooks.none,
 *     ResultStore.layerMemory()
 *   ))))
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: RulePolicyOptions = {}
): Layer.Layer<PermissionPolicy, RuleParseError, Workspace | FileSystem.FileSystem> =>
  Layer.effect(PermissionPolicy, make(options))

// -----------------------------------------------------------------------------
// deny rules
// -----------------------------------------------------------------------------

/**
 * Whether the deny rules of these permission options remove a whole tool: a deny rule without content that targets
 * it, exactly as the policy decides it (`Tool`, an alias, `Read`/`Edit` for file tools, `mcp__server`). Such a tool
 * is left out of the definitions, the announcement and the search; a call to it is still denied by the policy.
 * Rules that do not parse are skipped here (the policy's layer reports them).
 *
 * @since 0.2.0
 * @category deny rules
 */
export const wholeToolDenial = (
  options: Pick<RulePolicyOptions, "settings" | "cliRules" | "sessionRules">
): (definition: Definition.Any) => boolean => {
  const fromFiles = (options.settings ?? []).flatMap((loaded) =>
    loaded.rules.filter((sourced) => sourced.behavior === "deny").map((sourced) => sourced.rule)
  )
  const fromText = [...(options.cliRules?.deny ?? []), ...(options.sessionRules?.deny ?? [])].flatMap((text) => {
    const parsed = parseRule(text)
    return Either.isRight(parsed) ? [parsed.right] : []
  })
  const whole = [...fromFiles, ...fromText].filter((rule) => rule.content === undefined)
  return (definition) => whole.some((rule) => ruleTargets(rule, definition))
}

/**
 * Whether a rule covers a call, read as a deny rule would be: its tool part names the tool, or a rule without content
 * names one of the subjects the call is governed as (`Invocation.governedAs`: `mcp__fs` covers
 * `ReadMcpResourceTool {server: "fs"}`), or its content matches some part of the call (a call the tool cannot analyse
 * included). Hooks' `if` conditions use it, so a guarding hook runs whenever the call might be what it guards
 * against, for the same calls the policy would let the rule govern.
 *
 * @since 0.3.0
 * @category matching
 */
export const coversCall = ruleCoversCall
