/**
 * The repository git would use, as untrusted input. A read-only git subcommand is read-only only when the repository
 * it finds cannot make git run a program or read elsewhere: its configuration is a file the model could have written
 * (a `.git` directory or a bare repository it created, or the project's own `.git/config` changed by an earlier
 * command), and keys such as `core.fsmonitor`, `core.pager`, `diff.<driver>.textconv`, `diff.external`,
 * `filter.<name>.clean`, `include.path` or `core.worktree` turn `git status`, `git diff` or `git log -p` into
 * "run this program". So the repository is found the way git finds it (a `.git` directory or `gitdir:` file in the
 * directory or an ancestor, or the directory itself being a repository), and every configuration file git reads from
 * it (its `config`, the common directory's, `config.worktree`, the submodules' under `modules/`) must hold only keys
 * of a positive list that neither runs a program, nor reads another file, nor fetches. A bare repository found by
 * discovery (the directory itself is a repository) is never read-only: the project's own repository is not bare.
 *
 * The person's own configuration (`~/.gitconfig`, `/etc/gitconfig`, `GIT_*` variables of the runtime's environment)
 * is theirs and trusted.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Keys of sections without a subsection (`[core]`) that are fine, by section; `*` for every key of the section. */
const plainKeys: Readonly<Record<string, ReadonlySet<string> | "*">> = {
  core: new Set([
    "repositoryformatversion",
    "filemode",
    "bare",
    "logallrefupdates",
    "ignorecase",
    "precomposeunicode",
    "symlinks",
    "autocrlf",
    "safecrlf",
    "eol",
    "quotepath",
    "abbrev",
    "compression",
    "loosecompression",
    "sparsecheckout",
    "sparsecheckoutcone",
    "splitindex",
    "untrackedcache",
    "commitgraph",
    "multipackindex",
    "checkstat",
    "trustctime",
    "preloadindex",
    "protectntfs",
    "protecthfs",
    "warnambiguousrefs",
    "whitespace",
    "bigfilethreshold",
    "deltabasecachelimit",
    "packedgitlimit",
    "packedgitwindowsize",
    "packedrefstimeout",
    "commentchar",
    "commentstring",
    "checkroundtripencoding",
    "longpaths",
    "fscache",
    "fsync",
    "fsyncmethod"
  ]),
  extensions: new Set(["objectformat", "refstorage", "worktreeconfig", "preciousobjects", "noop"]),
  user: "*",
  author: "*",
  committer: "*",
  init: "*",
  pull: "*",
  push: "*",
  fetch: "*",
  gc: "*",
  maintenance: "*",
  pack: "*",
  index: "*",
  feature: "*",
  fsck: "*",
  transfer: "*",
  receive: "*",
  rerere: "*",
  rebase: "*",
  commit: "*",
  tag: "*",
  color: "*",
  column: "*",
  advice: "*",
  help: "*",
  status: "*",
  pretty: "*",
  alias: "*",
  blame: "*",
  grep: "*",
  sparse: "*",
  worktree: "*",
  versionsort: "*",
  i18n: "*",
  http: "*",
  lfs: "*",
  am: "*",
  apply: "*",
  format: "*",
  notes: "*",
  merge: new Set(["conflictstyle", "ff", "log", "renamelimit", "renames", "stat", "autostash", "verbosity"]),
  diff: new Set([
    "renames",
    "algorithm",
    "mnemonicprefix",
    "noprefix",
    "context",
    "interhunkcontext",
    "indentheuristic",
    "colormoved",
    "colormovedws",
    "relative",
    "statgraphwidth",
    "statnamewidth",
    "submodule",
    "ignoresubmodules",
    "wordregex",
    "dirstat",
    "renamelimit",
    "suppressblankempty",
    "autorefreshindex",
    "srcprefix",
    "dstprefix"
  ]),
  log: new Set([
    "date",
    "decorate",
    "abbrevcommit",
    "follow",
    "mailmap",
    "graphcolors",
    "excludedecoration",
    "initialdecorationset",
    "showroot",
    "diffmerges"
  ]),
  mailmap: new Set(["blob"]),
  submodule: new Set(["fetchjobs", "alternateerrorstrategy", "alternatelocation"])
}

/** Keys of sections with a subsection (`[remote "origin"]`) that are fine, by section. */
const subsectionKeys: Readonly<Record<string, ReadonlySet<string> | "*">> = {
  remote: new Set(["url", "fetch", "pushurl", "push", "tagopt", "prune", "prunetags", "mirror", "skipdefaultupdate"]),
  branch: new Set(["remote", "merge", "rebase", "pushremote", "description", "mergeoptions"]),
  submodule: new Set(["url", "path", "active", "branch", "ignore", "shallow", "fetchrecursesubmodules"]),
  color: "*",
  pretty: "*",
  lfs: "*",
  http: new Set(["sslverify", "extraheader", "proxy", "postbuffer"]),
  gc: "*"
}

/** Why one `section[.subsection].key` of a repository's configuration is not known to be harmless, or `undefined`. */
const keyProblem = (section: string, subsection: string | undefined, key: string): string | undefined => {
  const allowed = subsection === undefined ? plainKeys[section] : subsectionKeys[section]
  const fine = allowed !== undefined && (allowed === "*" || allowed.has(key))
  if (fine) return undefined
  const name = subsection === undefined ? `${section}.${key}` : `${section}.${subsection}.${key}`
  return `the repository's configuration sets \`${name}\`, which can make git run a program or read other files`
}

/**
 * The keys of a git configuration file as `[section, subsection, key]`, or a string saying why the file cannot be
 * read as one (git's format, simplified: anything this reader does not understand is a problem, never skipped).
 */
const configKeys = (text: string): ReadonlyArray<readonly [string, string | undefined, string]> | string => {
  const keys: Array<readonly [string, string | undefined, string]> = []
  let section: string | undefined
  let subsection: string | undefined
  let continued = false
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\r$/, "")
    if (continued) {
      continued = /\\$/.test(line)
      continue
    }
    const trimmed = line.trim()
    if (trimmed === "" || trimmed.startsWith("#") || trimmed.startsWith(";")) continue
    const header = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\](.*)$/.exec(trimmed)
    if (header !== null) {
      const rest = header[3]!.trim()
      const [name, ...dotted] = header[1]!.split(".")
      section = name!.toLowerCase()
      // `[section.sub]` is the old spelling of a subsection.
      subsection = header[2] ?? (dotted.length > 0 ? dotted.join(".") : undefined)
      if (rest === "" || rest.startsWith("#") || rest.startsWith(";")) continue
      // A key on the header's line: `[core] fsmonitor = x`.
      const inline = /^([A-Za-z][A-Za-z0-9-]*)/.exec(rest)
      if (inline === null) return `cannot read the line \`${trimmed}\``
      keys.push([section, subsection, inline[1]!.toLowerCase()])
      continued = /\\$/.test(rest)
      continue
    }
    const entry = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=|$|[#;])/.exec(trimmed)
    if (entry === null || section === undefined) return `cannot read the line \`${trimmed}\``
    keys.push([section, subsection, entry[1]!.toLowerCase()])
    continued = /\\$/.test(trimmed)
  }
  return keys
}

const isFile = (file: string): boolean => {
  try {
    return fs.statSync(file).isFile()
  } catch {
    return false
  }
}

const isDirectory = (file: string): boolean => {
  try {
    return fs.statSync(file).isDirectory()
  } catch {
    return false
  }
}

const exists = (file: string): boolean => {
  try {
    fs.lstatSync(file)
    return true
  } catch {
    return false
  }
}

/** What git's `is_git_directory` looks at: `HEAD`, `objects/` and `refs/`. */
const looksLikeGitDirectory = (directory: string): boolean =>
  exists(path.join(directory, "HEAD")) && isDirectory(path.join(directory, "objects")) &&
  isDirectory(path.join(directory, "refs"))

/** The configuration files git reads from a repository directory, and why not when they cannot be known. */
const configFiles = (gitDirectory: string): ReadonlyArray<string> | string => {
  const files = [path.join(gitDirectory, "config"), path.join(gitDirectory, "config.worktree")]
  const common = path.join(gitDirectory, "commondir")
  if (exists(common)) {
    const target = fs.readFileSync(common, "utf8").trim()
    const commonDirectory = path.resolve(gitDirectory, target)
    files.push(path.join(commonDirectory, "config"), path.join(commonDirectory, "config.worktree"))
    files.push(...submoduleConfigs(path.join(commonDirectory, "modules"), 0))
  }
  files.push(...submoduleConfigs(path.join(gitDirectory, "modules"), 0))
  return files
}

/** The `config` files of the submodule repositories under `modules/`, a few levels deep. */
const submoduleConfigs = (modules: string, depth: number): ReadonlyArray<string> => {
  if (depth > 4 || !isDirectory(modules)) return []
  const found: Array<string> = []
  for (const entry of fs.readdirSync(modules)) {
    const directory = path.join(modules, entry)
    if (!isDirectory(directory)) continue
    if (exists(path.join(directory, "config"))) found.push(path.join(directory, "config"))
    found.push(
      ...submoduleConfigs(path.join(directory, "modules"), depth + 1),
      ...submoduleConfigs(directory, depth + 1)
    )
  }
  return found
}

/** The repository directory a `.git` entry names (a directory, or a `gitdir: PATH` file), or why it cannot be used. */
const gitDirectoryOf = (dotGit: string): string | { readonly problem: string } => {
  if (isDirectory(dotGit)) return dotGit
  if (!isFile(dotGit)) return { problem: `\`${dotGit}\` is neither a directory nor a \`gitdir:\` file` }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(fs.readFileSync(dotGit, "utf8"))
  if (match === null) return { problem: `\`${dotGit}\` is not a \`gitdir:\` file` }
  return path.resolve(path.dirname(dotGit), match[1]!)
}

/**
 * Why git run in `directory` would not be read-only because of the repository it finds there, or `undefined`
 * (no repository at all is fine: git fails without reading anything).
 *
 * @internal
 */
export const gitRepositoryProblem = (directory: string): string | undefined => {
  try {
    let current = path.resolve(directory)
    for (let i = 0; i < 256; i++) {
      const dotGit = path.join(current, ".git")
      if (exists(dotGit)) {
        const gitDirectory = gitDirectoryOf(dotGit)
        if (typeof gitDirectory !== "string") return gitDirectory.problem
        return configProblem(gitDirectory)
      }
      if (looksLikeGitDirectory(current)) {
        return `\`${current}\` is itself a git repository (bare or a \`.git\` directory): its configuration and ` +
          "hooks are files the model could have written"
      }
      const parent = path.dirname(current)
      if (parent === current) return undefined
      current = parent
    }
    return "the directory is too deep to find its repository"
  } catch (error) {
    return `its repository cannot be checked (${error instanceof Error ? error.message : String(error)})`
  }
}

const configProblem = (gitDirectory: string): string | undefined => {
  const files = configFiles(gitDirectory)
  if (typeof files === "string") return files
  for (const file of files) {
    if (!exists(file)) continue
    const keys = configKeys(fs.readFileSync(file, "utf8"))
    if (typeof keys === "string") return `the repository's configuration \`${file}\`: ${keys}`
    for (const [section, subsection, key] of keys) {
      const problem = keyProblem(section, subsection, key)
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

/**
 * The top of the working tree git finds from `directory` (the directory holding `.git`), or `undefined` when there
 * is none. A path that git reads relative to the top (`HEAD:path`, `:/path`, `:(top)path`) lies below it.
 *
 * @internal
 */
export const gitTopOf = (directory: string): string | undefined => {
  let current = path.resolve(directory)
  for (let i = 0; i < 256; i++) {
    if (exists(path.join(current, ".git"))) return current
    const parent = path.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
  return undefined
}
