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
  const matcher = ignore({ ignorecase: context.ignoreCase ?? false }).add(literalLeadingSpecials(pattern))
  return (absolutePath) => {
    if (!posix.isAbsolute(absolutePath)) return false
    const isDirectory = absolutePath.length > 1 && absolutePath.endsWith("/")
    const relative = posix.relative(base, posix.resolve(absolutePath))
    if (relative === "" || relative === ".." || relative.startsWith("../") || posix.isAbsolute(relative)) {
      return false
    }
    return matcher.ignores(isDirectory ? `${relative}/` : relative)
  }
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
