/**
 * The machinery behind `Permission/RulePolicy`: an index of rules by tool, content matching through the tool's own
 * matchers, and the decision function itself. Pure and synchronous, so one decision costs microseconds.
 *
 * @internal
 */
import * as Path from "node:path"
import type { PermissionMode } from "../../Settings/Settings.js"
import { DecisionReason, describeReason } from "../../Tool/Permission.js"
import type { RuleSource } from "../../Tool/Permission.js"
import type { PermissionRule, RuleBehavior } from "../../Tool/Rule.js"
import { printRule, ruleTargetsTool } from "../../Tool/Rule.js"
import type { Claim, ContentRule, Definition, RuleContext, RulesByBehavior } from "../../Tool/Tool.js"
import { isAnotherNameOf, literalRulePath } from "../FileIdentity.js"
import { compilePathPattern, pathPatternPrefix, settingsRootDir } from "../PathPattern.js"
import type { PathMatcher } from "../PathPattern.js"
import type { PolicyRequest } from "../PermissionPolicy.js"
import { PolicyVerdict } from "../PermissionPolicy.js"
import { protectedWriteReason } from "../SafetyCheck.js"

const posix = Path.posix

// -----------------------------------------------------------------------------
// rules
// -----------------------------------------------------------------------------

/** @internal */
export interface IndexedRule {
  readonly behavior: RuleBehavior
  readonly rule: PermissionRule
  /** Canonical text (`printRule`). */
  readonly text: string
  readonly source: RuleSource
  readonly path: string | undefined
  /** Base of `/...` patterns: the root of the settings file the rule came from. */
  readonly ruleDirectory: string | undefined
  readonly reason: DecisionReason
}

/** @internal */
export interface IndexedContentRule extends IndexedRule, ContentRule {
  readonly content: string
}

/** @internal */
export const indexRule = (
  behavior: RuleBehavior,
  rule: PermissionRule,
  source: RuleSource,
  path: string | undefined
): IndexedRule => {
  const text = printRule(rule)
  const base = {
    behavior,
    rule,
    text,
    source,
    path,
    ruleDirectory: path === undefined ? undefined : settingsRootDir(path)
  }
  const reason = DecisionReason.Rule(
    path === undefined ? { rule: text, behavior, source } : { rule: text, behavior, source, path }
  )
  if (rule.content === undefined) return { ...base, reason }
  const withContent: IndexedContentRule = { ...base, reason, content: rule.content }
  return withContent
}

const hasContent = (rule: IndexedRule): rule is IndexedContentRule => rule.rule.content !== undefined

/** The rules that govern one tool, found once per tool and rule set. */
interface ToolRules {
  readonly wholeDeny: IndexedRule | undefined
  readonly wholeAsk: IndexedRule | undefined
  readonly wholeAllow: IndexedRule | undefined
  readonly content: RulesByBehavior<IndexedContentRule>
  readonly contentCount: number
}

/**
 * An immutable set of rules with a memo of the rules per tool. A new rule set (a remembered rule) is a new index.
 *
 * @internal
 */
export interface RuleIndex {
  readonly rules: ReadonlyArray<IndexedRule>
  readonly byTool: WeakMap<Definition.Any, ToolRules>
  /** The whole-tool rules of the names calls are governed as (see `Invocation.governedAs`). */
  readonly bySubject: Map<string, SubjectRules>
  readonly pathMatchers: WeakMap<IndexedContentRule, CompiledPath>
  readonly contexts: WeakMap<IndexedContentRule, RuleContext>
}

interface CompiledPath {
  /** Every normalised path the pattern matches starts with it. */
  readonly prefix: string
  readonly matches: PathMatcher
}

/** @internal */
export const makeIndex = (rules: ReadonlyArray<IndexedRule>): RuleIndex => ({
  rules,
  byTool: new WeakMap(),
  bySubject: new Map(),
  pathMatchers: new WeakMap(),
  contexts: new WeakMap()
})

/**
 * Whether a rule's tool part names this tool: its name or an alias, `Read` for tools that read files, `Edit` for
 * tools that edit files, or an MCP server-wide rule for a tool of that server (by its name or an alias: a name
 * shortened to 64 characters keeps its full `mcp__server__tool` as an alias).
 *
 * @internal
 */
export const ruleTargets = (rule: PermissionRule, definition: Definition.Any): boolean =>
  rule.toolName === definition.name ||
  definition.aliases.some((alias) => ruleTargetsTool(rule, alias)) ||
  (rule.toolName === "Read" && definition.fileAccess === "read") ||
  (rule.toolName === "Edit" && definition.fileAccess === "edit") ||
  ruleTargetsTool(rule, definition.name)

const rulesFor = (index: RuleIndex, definition: Definition.Any): ToolRules => {
  const cached = index.byTool.get(definition)
  if (cached !== undefined) return cached
  let wholeDeny: IndexedRule | undefined
  let wholeAsk: IndexedRule | undefined
  let wholeAllow: IndexedRule | undefined
  const deny: Array<IndexedContentRule> = []
  const ask: Array<IndexedContentRule> = []
  const allow: Array<IndexedContentRule> = []
  for (const rule of index.rules) {
    if (!ruleTargets(rule.rule, definition)) continue
    if (hasContent(rule)) {
      ;(rule.behavior === "deny" ? deny : rule.behavior === "ask" ? ask : allow).push(rule)
    } else if (rule.behavior === "deny") wholeDeny ??= rule
    else if (rule.behavior === "ask") wholeAsk ??= rule
    else wholeAllow ??= rule
  }
  const rules: ToolRules = {
    wholeDeny,
    wholeAsk,
    wholeAllow,
    content: { deny, ask, allow },
    contentCount: deny.length + ask.length + allow.length
  }
  index.byTool.set(definition, rules)
  return rules
}

/** The whole-tool rules of a name a call is governed as. */
type SubjectRules = Pick<ToolRules, "wholeDeny" | "wholeAsk" | "wholeAllow">

const subjectRules = (index: RuleIndex, name: string): SubjectRules => {
  const cached = index.bySubject.get(name)
  if (cached !== undefined) return cached
  let wholeDeny: IndexedRule | undefined
  let wholeAsk: IndexedRule | undefined
  let wholeAllow: IndexedRule | undefined
  for (const rule of index.rules) {
    if (hasContent(rule) || !ruleTargetsTool(rule.rule, name)) continue
    if (rule.behavior === "deny") wholeDeny ??= rule
    else if (rule.behavior === "ask") wholeAsk ??= rule
    else wholeAllow ??= rule
  }
  const rules = { wholeDeny, wholeAsk, wholeAllow }
  index.bySubject.set(name, rules)
  return rules
}

/**
 * The whole-tool rules of a call governed as other tools too: the first deny and the first ask of any of them, and
 * an allow only when every name has one.
 */
const governingRules = (index: RuleIndex, subjects: ReadonlyArray<string> | undefined): SubjectRules | undefined => {
  if (subjects === undefined || subjects.length === 0) return undefined
  const all = subjects.map((name) => subjectRules(index, name))
  return {
    wholeDeny: all.find((rules) => rules.wholeDeny !== undefined)?.wholeDeny,
    wholeAsk: all.find((rules) => rules.wholeAsk !== undefined)?.wholeAsk,
    wholeAllow: all.every((rules) => rules.wholeAllow !== undefined) ? all[0]!.wholeAllow : undefined
  }
}

// -----------------------------------------------------------------------------
// content matching
// -----------------------------------------------------------------------------

interface ContentMatch {
  readonly deny: IndexedContentRule | undefined
  readonly ask: IndexedContentRule | undefined
  readonly allow: IndexedContentRule | undefined
}

const noContentMatch: ContentMatch = { deny: undefined, ask: undefined, allow: undefined }

/** What the decision needs to know about where it runs. */
export interface PolicyEnvironment {
  readonly cwd: string
  readonly home: string
  readonly contains: (absolutePath: string) => boolean
  readonly settingsFiles: ReadonlySet<string>
  readonly mode: PermissionMode
  readonly readOnlyAutoAllow: boolean
}

const FILE = "file:"

const isPathRule = (rule: IndexedContentRule, definition: Definition.Any): boolean =>
  definition.fileAccess !== undefined || rule.rule.toolName === "Read" || rule.rule.toolName === "Edit"

const pathMatcher = (index: RuleIndex, rule: IndexedContentRule, env: PolicyEnvironment): CompiledPath => {
  let compiled = index.pathMatchers.get(rule)
  if (compiled === undefined) {
    const context = { cwd: env.cwd, home: env.home, ruleDir: rule.ruleDirectory }
    compiled = { prefix: pathPatternPrefix(rule.content, context), matches: compilePathPattern(rule.content, context) }
    index.pathMatchers.set(rule, compiled)
  }
  return compiled
}

const ruleContext = (index: RuleIndex, rule: IndexedContentRule, env: PolicyEnvironment): RuleContext => {
  let context = index.contexts.get(rule)
  if (context === undefined) {
    context = { cwd: env.cwd, home: env.home, ruleDirectory: rule.ruleDirectory, behavior: rule.behavior }
    index.contexts.set(rule, context)
  }
  return context
}

/** What path rules are matched against when the tool has no matcher: its `file:` claims. */
interface ClaimedFiles {
  readonly world: boolean
  readonly paths: ReadonlyArray<string>
  /** Whether every path is normalised, so prefixes can rule patterns out. */
  readonly normalized: boolean
}

const claimedFiles = (claims: ReadonlyArray<Claim>): ClaimedFiles => {
  const paths: Array<string> = []
  let world = false
  for (const claim of claims) {
    if (claim.resource === "*") world = true
    else if (claim.resource.startsWith(FILE)) paths.push(claim.resource.slice(FILE.length))
  }
  return { world, paths, normalized: paths.every((p) => !/\/\/|\/\.\.?(?:\/|$)/.test(p)) }
}

/**
 * Content rules for a tool with no matcher of its own. Path rules (`Read(...)`, `Edit(...)`, or any rule for a tool
 * with `fileAccess`) are matched against the call's `file:` claims. Any other content rule cannot be read: a deny or
 * ask rule then covers the whole tool (never silently ignored), an allow rule never matches.
 */
const fallbackMatches = (
  index: RuleIndex,
  rule: IndexedContentRule,
  definition: Definition.Any,
  files: ClaimedFiles,
  env: PolicyEnvironment
): boolean => {
  const restrictive = rule.behavior !== "allow"
  if (!isPathRule(rule, definition)) return restrictive
  if (files.world) return restrictive
  if (files.paths.length === 0) return false
  const { matches, prefix } = pathMatcher(index, rule, env)
  const hits = (path: string) => (files.normalized && prefix !== "" && !path.startsWith(prefix) ? false : matches(path))
  return restrictive ? files.paths.some(hits) : files.paths.every(hits)
}

/** What content matching looks at: the tool and the call's input. */
type Call = Pick<PolicyRequest, "definition" | "invocation">

const matchContent = (
  index: RuleIndex,
  rules: ToolRules,
  request: Call,
  claims: () => ReadonlyArray<Claim>,
  env: PolicyEnvironment
): ContentMatch => {
  if (rules.contentCount === 0) return noContentMatch
  let filesMemo: ClaimedFiles | undefined
  const files = () => (filesMemo ??= claimedFiles(claims()))
  const { matchRules } = request.invocation
  if (matchRules !== undefined) {
    const result = matchRules(rules.content, {
      cwd: env.cwd,
      home: env.home,
      ruleDirectory: undefined
    })
    // A tool that reports a deny or ask without naming a rule of the list still fails closed: the first such rule.
    switch (result._tag) {
      case "Deny":
        return { ...noContentMatch, deny: result.rule ?? rules.content.deny[0] }
      case "Ask":
        return { ...noContentMatch, ask: result.rule ?? rules.content.ask[0] ?? rules.content.deny[0] }
      case "Allow":
        return { ...noContentMatch, allow: result.rules[0] }
      case "NoMatch":
        return noContentMatch
    }
  }
  const deny = firstMatch(index, rules.content.deny, request, files, env)
  if (deny !== undefined) return { ...noContentMatch, deny }
  const ask = firstMatch(index, rules.content.ask, request, files, env)
  if (ask !== undefined) return { ...noContentMatch, ask }
  const allow = firstMatch(index, rules.content.allow, request, files, env)
  return allow === undefined ? noContentMatch : { ...noContentMatch, allow }
}

const firstMatch = (
  index: RuleIndex,
  rules: ReadonlyArray<IndexedContentRule>,
  request: Call,
  files: () => ClaimedFiles,
  env: PolicyEnvironment
): IndexedContentRule | undefined => {
  const matchesRule = request.invocation.matchesRule
  for (const rule of rules) {
    const hit = matchesRule === undefined
      ? fallbackMatches(index, rule, request.definition, files(), env)
      : matchesRule(rule.content, ruleContext(index, rule, env))
    if (hit) return rule
  }
  return undefined
}

/**
 * Whether a rule covers a call, read as a deny rule would be: its tool part names the tool, or (without content) one
 * of the names the call is governed as (`Invocation.governedAs`, as the decision reads them), or its content matches
 * some part of the call, a call the tool cannot analyse included. Used for hooks' `if` conditions, so a guarding hook
 * runs whenever the call might be what it guards against, and for every call the policy would let the rule govern.
 *
 * @internal
 */
export const ruleCoversCall = (
  rule: PermissionRule,
  call: Call,
  env: Pick<PolicyEnvironment, "cwd" | "home" | "contains">
): boolean => {
  const index = makeIndex([indexRule("deny", rule, "session", undefined)])
  const rules = rulesFor(index, call.definition)
  if (rules.wholeDeny !== undefined) return true
  if (governingRules(index, call.invocation.governedAs)?.wholeDeny !== undefined) return true
  const full: PolicyEnvironment = { ...env, settingsFiles: new Set(), mode: "default", readOnlyAutoAllow: false }
  return matchContent(index, rules, call, () => call.invocation.claims, full).deny !== undefined
}

// -----------------------------------------------------------------------------
// reading many files
// -----------------------------------------------------------------------------

/** The deny rules that govern reading (`Read`, `Read(...)`), compiled once per index. */
interface ReadDenial {
  /** A whole-tool `Read` deny: nothing may be read. */
  readonly everything: boolean
  readonly matchers: ReadonlyArray<PathMatcher>
  /** The files path rules name literally, also matched by identity (device + inode): a hard link is the same file. */
  readonly files: ReadonlyArray<string>
}

const readDenials = new WeakMap<RuleIndex, ReadDenial>()

const readDenial = (index: RuleIndex, env: PolicyEnvironment): ReadDenial => {
  let denial = readDenials.get(index)
  if (denial === undefined) {
    let everything = false
    const matchers: Array<PathMatcher> = []
    const files: Array<string> = []
    for (const rule of index.rules) {
      if (rule.behavior !== "deny" || rule.rule.toolName !== "Read") continue
      if (hasContent(rule)) {
        const compiled = pathMatcher(index, rule, env)
        matchers.push(compiled.matches)
        const file = literalRulePath(rule.content, { cwd: env.cwd, home: env.home, ruleDir: rule.ruleDirectory })
        if (file !== undefined) files.push(file)
      } else everything = true
    }
    denial = { everything, matchers, files }
    readDenials.set(index, denial)
  }
  return denial
}

/**
 * Whether the deny rules that govern reading (`Read` rules, the family of every tool with `fileAccess: "read"`)
 * forbid reading an absolute path: a whole-tool `Read` deny, or a `Read(...)` deny matching the path as given or
 * its real path, or another name (a hard link) of a file a rule names literally. `realPath` is only consulted when
 * some path rule exists and the path as given matched none.
 *
 * @internal
 */
export const deniesRead = (
  index: RuleIndex,
  env: PolicyEnvironment,
  absolutePath: string,
  realPath: (absolutePath: string) => string
): boolean => {
  const { everything, files, matchers } = readDenial(index, env)
  if (everything) return true
  if (matchers.length === 0) return false
  if (matchers.some((matches) => matches(absolutePath))) return true
  const real = realPath(absolutePath)
  return (real !== absolutePath && matchers.some((matches) => matches(real))) || isAnotherNameOf(real, files)
}

/** The first file a call's read claims name that a Read deny rule with a path protects (not a whole-tool `Read`). */
const deniedReadClaim = (
  index: RuleIndex,
  env: PolicyEnvironment,
  claims: ReadonlyArray<Claim>
): string | undefined => {
  const { matchers } = readDenial(index, env)
  if (matchers.length === 0) return undefined
  for (const claim of claims) {
    if (claim.access !== "read" || !claim.resource.startsWith(FILE)) continue
    const file = claim.resource.slice(FILE.length)
    if (file !== "/" && matchers.some((matches) => matches(file))) return file
  }
  return undefined
}

// -----------------------------------------------------------------------------
// claims
// -----------------------------------------------------------------------------

/** The first protected write among the claims, if any. */
const safetyCheck = (claims: ReadonlyArray<Claim>, env: PolicyEnvironment): string | undefined => {
  for (const claim of claims) {
    if (claim.access !== "write" || !claim.resource.startsWith(FILE)) continue
    const reason = protectedWriteReason(claim.resource.slice(FILE.length), env.settingsFiles)
    if (reason !== undefined) return reason
  }
  return undefined
}

/** Every claim is a `file:` claim inside the workspace (and, when `needWrite`, at least one writes). */
const staysInside = (claims: ReadonlyArray<Claim>, env: PolicyEnvironment, needWrite: boolean): boolean => {
  let writes = 0
  for (const claim of claims) {
    if (!claim.resource.startsWith(FILE)) {
      // Non-file resources (`net:`, `proc:`...) are not the workspace's; the world is certainly not inside it. An MCP
      // server is another party: its read-only annotation informs scheduling, never grants the call.
      if (claim.resource === "*" || needWrite || claim.resource.startsWith("mcp:")) return false
      continue
    }
    if (!env.contains(claim.resource.slice(FILE.length))) return false
    if (claim.access === "write") writes++
  }
  return !needWrite || writes > 0
}

const defaultSuggestions = (request: PolicyRequest, claims: ReadonlyArray<Claim>): ReadonlyArray<string> => {
  const { definition, invocation } = request
  if (definition.fileAccess !== undefined) {
    const ruleName = definition.fileAccess === "edit" ? "Edit" : "Read"
    if (claims.some((claim) => claim.resource === "*")) return []
    const directories = new Set<string>()
    for (const claim of claims) {
      if (claim.resource.startsWith(FILE)) directories.add(posix.dirname(claim.resource.slice(FILE.length)))
    }
    return [...directories].map((directory) =>
      printRule({ toolName: ruleName, content: `/${directory === "/" ? "" : directory}/**` })
    )
  }
  return invocation.matchesRule === undefined && invocation.matchRules === undefined ? [definition.name] : []
}

// -----------------------------------------------------------------------------
// the decision
// -----------------------------------------------------------------------------

const denyByRule = (name: string, rule: IndexedRule): PolicyVerdict =>
  PolicyVerdict.Deny({
    reason: rule.reason,
    message: `Permission to use ${name} has been denied by the ${describeReason(rule.reason)}.`
  })

const askByRule = (name: string, rule: IndexedRule): PolicyVerdict =>
  PolicyVerdict.Ask({
    reason: rule.reason,
    message: `${name} needs approval: ${describeReason(rule.reason)}.`,
    suggestions: []
  })

const allowWith = (request: PolicyRequest, reason: DecisionReason): PolicyVerdict => {
  const { toolCheck } = request
  return toolCheck._tag === "Allow" && toolCheck.updatedInput !== undefined
    ? PolicyVerdict.Allow({ reason, updatedInput: toolCheck.updatedInput })
    : PolicyVerdict.Allow({ reason })
}

const decideBeforeDontAsk = (index: RuleIndex, env: PolicyEnvironment, request: PolicyRequest): PolicyVerdict => {
  const { definition, hook, invocation, toolCheck } = request
  const { traits } = invocation
  const name = definition.name
  const rules = rulesFor(index, definition)
  const governing = governingRules(index, invocation.governedAs)
  const claims = () => invocation.claims

  // 1. The deny tier: deny rules, a hook's deny, the tool's deny, plan mode's refusal.
  if (rules.wholeDeny !== undefined) return denyByRule(name, rules.wholeDeny)
  if (governing?.wholeDeny !== undefined) return denyByRule(name, governing.wholeDeny)
  const content = matchContent(index, rules, request, claims, env)
  if (content.deny !== undefined) return denyByRule(name, content.deny)
  if (hook?.behavior === "deny") {
    return PolicyVerdict.Deny({
      reason: DecisionReason.Hook({ hook: hook.hook, message: hook.message }),
      message: hook.message
    })
  }
  if (toolCheck._tag === "Deny") {
    return PolicyVerdict.Deny({
      reason: DecisionReason.Tool({ message: toolCheck.message }),
      message: toolCheck.message
    })
  }
  // A tool that reads without answering `Read(...)` rules itself (Bash's `cat .env`) and names a file they protect is
  // denied, not asked, as Claude Code does.
  if (definition.touchesEnvironment && definition.fileAccess === undefined) {
    const denied = deniedReadClaim(index, env, claims())
    if (denied !== undefined) {
      const message = `${name} reads \`${denied}\`, which a Read deny rule protects.`
      return PolicyVerdict.Deny({ reason: DecisionReason.Default({ message }), message })
    }
  }
  const readOnly = traits.readOnly || !definition.touchesEnvironment
  if (env.mode === "plan" && !readOnly) {
    const message = `${name} may change things, and plan mode only runs read-only calls.`
    return PolicyVerdict.Deny({ reason: DecisionReason.Mode({ mode: "plan", message }), message })
  }

  // 2. The ask tier: ask rules, a hook's ask, the tool's ask, safety checks.
  if (rules.wholeAsk !== undefined) return askByRule(name, rules.wholeAsk)
  if (governing?.wholeAsk !== undefined) return askByRule(name, governing.wholeAsk)
  if (content.ask !== undefined) return askByRule(name, content.ask)
  if (hook?.behavior === "ask") {
    return PolicyVerdict.Ask({
      reason: DecisionReason.Hook({ hook: hook.hook, message: hook.message }),
      message: hook.message,
      suggestions: []
    })
  }
  // The tool's own ask: a non-overridable one asks here; an overridable one waits for the allow rules (below).
  const toolAsk = toolCheck._tag === "Ask"
    ? PolicyVerdict.Ask({
      reason: DecisionReason.Tool({ message: toolCheck.message }),
      message: toolCheck.message,
      suggestions: toolCheck.suggestions ?? []
    })
    : undefined
  if (toolCheck._tag === "Ask" && toolCheck.overridable === false) return toolAsk!
  const unsafe = safetyCheck(claims(), env)
  if (unsafe !== undefined) {
    return PolicyVerdict.Ask({
      reason: DecisionReason.SafetyCheck({ message: unsafe }),
      message: `${name} needs approval: ${unsafe}.`,
      suggestions: []
    })
  }

  // 3. The mode.
  if (env.mode === "bypassPermissions") {
    return allowWith(
      request,
      DecisionReason.Mode({
        mode: "bypassPermissions",
        message: "every call not denied or asked for by a rule, hook, unanalysable command or safety check runs"
      })
    )
  }
  // The tool's own overridable ask (outside the workspace, a custom tool's check) is answered by the allow rules
  // (settings, command line, session) and a hook's allow before it reaches the person; no mode but bypass answers it.
  const wholeAllow = rules.wholeAllow ?? governing?.wholeAllow
  if (toolAsk !== undefined) {
    if (wholeAllow !== undefined) return allowWith(request, wholeAllow.reason)
    if (content.allow !== undefined) return allowWith(request, content.allow.reason)
    if (hook?.behavior === "allow") {
      return allowWith(request, DecisionReason.Hook({ hook: hook.hook, message: hook.message }))
    }
    if (request.allowedInput !== undefined) return allowWith(request, request.allowedInput)
    return toolAsk
  }
  // A tool that is not a file reader qualifies by its claims: only `file:` claims inside, at least one a write (the
  // Bash tool claims exactly that for `mkdir`, `touch`, `mv`, `cp` inside the workspace, and the whole world
  // otherwise).
  if (env.mode === "acceptEdits" && definition.fileAccess !== "read" && staysInside(claims(), env, true)) {
    return allowWith(
      request,
      DecisionReason.Mode({ mode: "acceptEdits", message: "edits inside the workspace are accepted" })
    )
  }

  // 4. Allow rules, and a hook's allow (which counts as one), and a person's allow of an input they edited.
  if (wholeAllow !== undefined) return allowWith(request, wholeAllow.reason)
  if (content.allow !== undefined) return allowWith(request, content.allow.reason)
  if (hook?.behavior === "allow") {
    return allowWith(request, DecisionReason.Hook({ hook: hook.hook, message: hook.message }))
  }
  if (request.allowedInput !== undefined) return allowWith(request, request.allowedInput)

  // 5. Read-only calls that stay inside the workspace. A tool that reads files without answering `Read(...)` rules
  // (Bash: `cat .env`, `grep -r x .`) cannot show it keeps out of a file those rules protect: while any exists, it
  // asks.
  if (env.readOnlyAutoAllow && traits.readOnly && !traits.openWorld && staysInside(claims(), env, false)) {
    const readDenials = readDenial(index, env)
    if (
      definition.touchesEnvironment && definition.fileAccess === undefined && toolCheck._tag !== "Allow" &&
      (readDenials.everything || readDenials.matchers.length > 0)
    ) {
      const message = `${name} needs approval: it is read-only, but Read deny rules protect files it could read.`
      return PolicyVerdict.Ask({ reason: DecisionReason.Default({ message }), message, suggestions: [] })
    }
    return allowWith(request, DecisionReason.ReadOnly())
  }

  // 6. The tool vouches for the call, or the call cannot touch anything.
  if (toolCheck._tag === "Allow") {
    return allowWith(request, DecisionReason.Tool({ message: toolCheck.reason ?? `${name} allowed this call` }))
  }
  if (!definition.touchesEnvironment) {
    return PolicyVerdict.Allow({
      reason: DecisionReason.Default({ message: `${name} does not touch the environment` })
    })
  }

  // 7. Nothing allowed it: a person decides.
  const message = `${name} needs approval: no rule allows this call.`
  const suggestions = toolCheck.suggestions ?? defaultSuggestions(request, claims())
  return PolicyVerdict.Ask({ reason: DecisionReason.Default({ message }), message, suggestions })
}

/**
 * The verdict for one request under a rule set and an environment (the full order is documented in
 * `Permission/RulePolicy`).
 *
 * @internal
 */
export const decide = (index: RuleIndex, env: PolicyEnvironment, request: PolicyRequest): PolicyVerdict => {
  const verdict = decideBeforeDontAsk(index, env, request)
  if (verdict._tag !== "Ask" || env.mode !== "dontAsk") return verdict
  const message = `${verdict.message} dontAsk mode denies every call that would need approval.`
  return PolicyVerdict.Deny({ reason: DecisionReason.Mode({ mode: "dontAsk", message }), message })
}
