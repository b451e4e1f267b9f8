/**
 * Safety checks: writes that always need a person, whatever the mode and whatever the allow rules say. They
 * protect the things that would let a call escalate its own permissions or run code later without asking:
 * version-control internals and hooks, the agent's own settings, shell start-up files, credentials.
 *
 * Names are compared case-insensitively (a case-insensitive file system maps `.GIT/config` to `.git/config`),
 * and a protected directory is protected at any depth (`sub/.git/hooks/pre-commit` too).
 *
 * @since 0.1.0
 */
import * as Path from "node:path"

const posix = Path.posix

// -----------------------------------------------------------------------------
// models
// -----------------------------------------------------------------------------

/**
 * Directories whose contents are protected at any depth.
 *
 * @since 0.1.0
 * @category models
 */
export const protectedDirectories: ReadonlyMap<string, string> = new Map([
  [".git", "git internals (config, hooks) run code and rewrite history"],
  [".claude", "the agent's own settings, hooks and commands"],
  [".ssh", "SSH keys and configuration"],
  [".gnupg", "GnuPG keys and configuration"],
  [".husky", "git hooks run code on commit"],
  [".vscode", "editor tasks and settings can run code"],
  [".idea", "editor run configurations can run code"]
])

/**
 * Files protected wherever they are (most matter in the home directory; a copy in a project is cheap to ask for).
 *
 * @since 0.1.0
 * @category models
 */
export const protectedFiles: ReadonlyMap<string, string> = new Map([
  [".bashrc", "a shell profile runs on every new shell"],
  [".bash_profile", "a shell profile runs on every new shell"],
  [".bash_login", "a shell profile runs on every new shell"],
  [".bash_logout", "a shell profile runs when a shell exits"],
  [".profile", "a shell profile runs on every new shell"],
  [".zshrc", "a shell profile runs on every new shell"],
  [".zshenv", "a shell profile runs on every new shell"],
  [".zprofile", "a shell profile runs on every new shell"],
  [".zlogin", "a shell profile runs on every new shell"],
  [".zlogout", "a shell profile runs when a shell exits"],
  [".kshrc", "a shell profile runs on every new shell"],
  [".cshrc", "a shell profile runs on every new shell"],
  [".tcshrc", "a shell profile runs on every new shell"],
  [".envrc", "direnv runs it on entering the directory"],
  [".gitconfig", "git configuration can run code (aliases, hooks, filters)"],
  [".gitmodules", "submodule configuration fetches and runs other code"],
  [".npmrc", "npm configuration changes what installs run"],
  [".netrc", "network credentials"],
  [".mcp.json", "MCP server configuration starts programs"],
  [".claude.json", "the agent's own configuration"]
])

/** Paths protected by their last segments (for files whose bare name is too common to protect everywhere). */
const protectedSuffixes: ReadonlyArray<readonly [string, string]> = [
  ["/.config/git/config", "git configuration can run code (aliases, hooks, filters)"],
  ["/.config/fish/config.fish", "a shell profile runs on every new shell"]
]

// -----------------------------------------------------------------------------
// checks
// -----------------------------------------------------------------------------

/**
 * Why writing this absolute path needs a person, or `undefined` when it does not. `settingsFiles` are the
 * settings files in use (the agent's own permission rules), protected wherever they live.
 *
 * @since 0.1.0
 * @category checks
 */
export const protectedWriteReason = (absolutePath: string, settingsFiles: ReadonlySet<string>): string | undefined => {
  const normalized = posix.normalize(absolutePath)
  if (settingsFiles.has(normalized)) return `${normalized} is a settings file holding permission rules`
  // Every protected name starts with a dot: most paths are done here.
  if (!normalized.includes("/.")) return undefined
  const lower = normalized.toLowerCase()
  const segments = lower.split("/")
  for (const segment of segments) {
    const why = protectedDirectories.get(segment)
    if (why !== undefined) return `${normalized} is inside a protected ${segment} directory (${why})`
  }
  const base = segments[segments.length - 1] ?? ""
  const why = protectedFiles.get(base)
  if (why !== undefined) return `${normalized} is a protected file (${why})`
  for (const [suffix, reason] of protectedSuffixes) {
    if (lower.endsWith(suffix)) return `${normalized} is a protected file (${reason})`
  }
  return undefined
}
