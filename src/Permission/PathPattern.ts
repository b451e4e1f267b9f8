/**
 * The content of `Read(...)` and `Edit(...)` rules: one gitignore pattern plus Claude Code's anchors.
 *
 * | rule content        | base directory                                   | example match                 |
 * |---------------------|--------------------------------------------------|-------------------------------|
 * | `//etc/**`          | the filesystem root                              | `/etc/hosts`                  |
 * | `~/.ssh/**`         | the home directory                               | `/home/me/.ssh/id_ed25519`    |
 * | `/src/**`           | `ruleDir` (the root of the declaring settings file), else the cwd | `<ruleDir>/src/a.ts` |
 * | `src/**`, `./src/**`| the working directory                            | `<cwd>/src/a.ts`              |
 * | `*.env`, `.env`     | the working directory, at any depth (no slash)   | `<cwd>/a/b/.env`              |
 *
 * Matching itself is delegated to the `ignore` package (the gitignore implementation used by eslint and
 * many others): `*` stays within one path segment, `**` crosses segments, a trailing `/` matches only
 * directories and everything inside them, and a pattern matches everything inside a directory it matches.
 * A path outside the base directory never matches.
 *
 * Paths are POSIX paths; symlinks are not resolved here (pass real paths if that matters).
 *
 * @since 0.1.0
 */
import ignore from "ignore"
import * as Path from "node:path"

const posix = Path.posix

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * Where relative rule content is resolved from.
 *
 * @since 0.1.0
 * @category models
 */
export interface PathPatternContext {
  /** The working directory: base of `src/**`, `./src/**` and bare names like `*.env`. */
  readonly cwd: string
  /** The home directory: base of `~/...`. */
  readonly home: string
  /**
   * Base of `/...` patterns: the root of the settings file that declared the rule (see `settingsRootDir`).
   * Defaults to `cwd` (rules from the command line or the session).
   */
  readonly ruleDir?: string | undefined
  /** Compare case-insensitively (for case-insensitive file systems). Default: false, like git on Linux. */
  readonly ignoreCase?: boolean | undefined
}

/**
 * Tests an absolute path. A path ending in `/` is treated as a directory, so `dist/` matches
 * `/proj/dist/` and `/proj/dist/a.js` but not a file `/proj/dist`.
 *
 * @since 0.1.0
 * @category models
 */
export type PathMatcher = (absolutePath: string) => boolean

// -----------------------------------------------------------------------------
// anchors
// -----------------------------------------------------------------------------

interface Anchored {
  readonly base: string
  /** A gitignore pattern relative to `base`. */
  readonly pattern: string
}

/** Everything below the base, for content that is only an anchor (`//`, `~`, `~/`, `/`). */
const EVERYTHING = "**"

const anchor = (content: string, context: PathPatternContext): Anchored => {
  const rooted = (base: string, rest: string): Anchored => ({
    base: posix.resolve(base),
    // A leading slash anchors the pattern at the base, whatever its shape.
    pattern: rest.replace(/^\/+/, "") === "" ? EVERYTHING : `/${rest.replace(/^\/+/, "")}`
  })
  if (content.startsWith("//")) return rooted("/", content.slice(2))
  if (content === "~" || content.startsWith("~/")) return rooted(context.home, content.slice(1))
  if (content.startsWith("/")) return rooted(context.ruleDir ?? context.cwd, content.slice(1))

  // Relative to the working directory. `./x` and `../x` are explicit paths: anchor them.
  let base = posix.resolve(context.cwd)
  let rest = content
  let explicit = false
  for (;;) {
    if (rest.startsWith("./")) rest = rest.slice(2)
    else if (rest.startsWith("../")) {
      base = posix.dirname(base)
      rest = rest.slice(3)
    } else break
    explicit = true
  }
  if (rest === "" || rest === "." || rest === "..") {
    return { base: rest === ".." ? posix.dirname(base) : base, pattern: EVERYTHING }
  }
  return explicit ? rooted(base, rest) : { base, pattern: rest }
}

// In a single rule `!` (negation) and `#` (comment) make no sense: take them literally.
const literalLeadingSpecials = (pattern: string): string => pattern.replace(/^([!#])/, "\\$1")

// -----------------------------------------------------------------------------
// compiling
// -----------------------------------------------------------------------------

/**
 * Compiles the content of a `Read(...)`/`Edit(...)` rule into a matcher on absolute paths.
 *
 * @example
 * ```ts
 * const isEnv = compilePathPattern(".env", { cwd: "/work/proj", home: "/home/me" })
 * isEnv("/work/proj/sub/.env") // true
 * ```
 *
 * @since 0.1.0
 * @category compiling
 */
export const compilePathPattern = (content: string, context: PathPatternContext): PathMatcher => {
  const { base, pattern } = anchor(content, context)
  const ignoreCase = context.ignoreCase ?? false
  const escaped = literalLeadingSpecials(pattern)
  const matcher = ignore({ ignorecase: ignoreCase }).add(escaped)
  const prefix = literalPrefix(escaped, ignoreCase)
  const baseSlash = base === "/" ? "/" : `${base}/`
  return (absolutePath) => {
    if (!posix.isAbsolute(absolutePath)) return false
    const isDirectory = absolutePath.length > 1 && absolutePath.endsWith("/")
    const relative = relativeInside(base, baseSlash, absolutePath)
    if (relative === undefined) return false
    const candidate = isDirectory ? `${relative}/` : relative
    // Cheap rejection: an anchored pattern only matches paths that start with its literal part.
    if (prefix !== "" && !(ignoreCase ? candidate.toLowerCase() : candidate).startsWith(prefix)) return false
    return matcher.ignores(candidate)
  }
}

/**
 * A string every absolute, normalised path matched by the pattern starts with: the anchor's base directory plus the
 * pattern's literal start. A cheap pre-filter for checking many patterns against one path.
 *
 * @since 0.1.0
 * @category compiling
 */
export const pathPatternPrefix = (content: string, context: PathPatternContext): string => {
  const { base, pattern } = anchor(content, context)
  const prefix = `${base === "/" ? "" : base}/${literalPrefix(literalLeadingSpecials(pattern), false)}`
  return context.ignoreCase === true ? "" : prefix
}

/** A path with no `//`, `.` or `..` segments (trailing slash allowed): relative paths can be sliced off it. */
const NOT_NORMALIZED = /\/\/|\/\.\.?(?:\/|$)/

/** The path relative to `base`, or `undefined` when it is `base` itself or outside it. */
const relativeInside = (base: string, baseSlash: string, absolutePath: string): string | undefined => {
  if (!NOT_NORMALIZED.test(absolutePath)) {
    const path = absolutePath.length > 1 && absolutePath.endsWith("/") ? absolutePath.slice(0, -1) : absolutePath
    return path.startsWith(baseSlash) && path.length > baseSlash.length ? path.slice(baseSlash.length) : undefined
  }
  const relative = posix.relative(base, posix.resolve(absolutePath))
  return relative === "" || relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative)
    ? undefined
    : relative
}

/**
 * The literal start every match of an anchored gitignore pattern shares (`/src/gen-*.ts` -> `src/gen-`), or `""`
 * when the pattern may match at any depth or starts with a wildcard.
 */
const literalPrefix = (pattern: string, ignoreCase: boolean): string => {
  const anchored = pattern.startsWith("/") || pattern.slice(0, -1).includes("/")
  if (!anchored) return ""
  const body = pattern.replace(/^\//, "")
  const wildcard = body.search(/[*?[\\]/)
  const literal = wildcard === -1 ? body : body.slice(0, wildcard)
  return ignoreCase ? literal.toLowerCase() : literal
}

/**
 * The directory a settings file's `/...` rules are relative to: the project that owns it. For
 * `<project>/.claude/settings.json` that is `<project>`; for a settings file anywhere else, its own directory.
 * (Claude Code documents `/path` as "relative to the settings file" and, in newer docs, "relative to the
 * project root"; for the standard locations both readings agree on this.)
 *
 * @since 0.1.0
 * @category anchors
 */
export const settingsRootDir = (settingsFilePath: string): string => {
  const dir = posix.dirname(posix.resolve(settingsFilePath))
  return posix.basename(dir) === ".claude" ? posix.dirname(dir) : dir
}
