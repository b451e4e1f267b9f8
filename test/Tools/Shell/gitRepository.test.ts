/**
 * The class "git on a repository the model could have written": the repository's own configuration is untrusted
 * input. A read-only git subcommand is read-only only when the repository git finds (from each directory the command
 * may run in) holds no configuration key that runs a program, reads another file or fetches; a bare repository or a
 * `.git`-like directory found by discovery is never read-only. Real repositories in temp dirs.
 */
import { describe, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"
import { gitRepo, tempDir } from "../Bash/helpers.js"

const readOnlyIn = (directory: string, command: string): boolean =>
  classifyReadOnly(command, { directories: [directory] }).readOnly

const appendConfig = (repo: string, text: string): void =>
  fs.appendFileSync(path.join(repo, ".git", "config"), `\n${text}\n`)

const commands = ["git status", "git log -p -1", "git diff", "git show HEAD", "git grep Demo", "git blame README.md"]

describe("git reads its repository's configuration as untrusted input", () => {
  it("a fresh repository (as git init and a clone leave it) keeps every read-only subcommand read-only", () => {
    const repo = gitRepo()
    appendConfig(
      repo,
      "[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*"
    )
    appendConfig(
      repo,
      "[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n[user]\n\tname = A\n\temail = a@b"
    )
    for (const command of commands) expect(readOnlyIn(repo, command), command).toBe(true)
    expect(readOnlyIn(path.join(repo), "git --version")).toBe(true)
  })

  it.each([
    ["core.fsmonitor", "[core]\n\tfsmonitor = touch PWNED"],
    ["core.pager", "[core]\n\tpager = sh -c 'touch PWNED'"],
    ["a pager.<cmd>", "[pager]\n\tlog = touch PWNED"],
    ["diff.external", "[diff]\n\texternal = ./evil.sh"],
    ["a textconv driver", "[diff \"bin\"]\n\ttextconv = ./evil.sh"],
    ["a diff driver command", "[diff \"bin\"]\n\tcommand = ./evil.sh"],
    ["a clean filter", "[filter \"x\"]\n\tclean = ./evil.sh"],
    ["include.path", "[include]\n\tpath = ../elsewhere"],
    ["includeIf", "[includeIf \"gitdir:/\"]\n\tpath = /tmp/x"],
    ["core.worktree", "[core]\n\tworktree = /"],
    ["core.hooksPath", "[core]\n\thooksPath = ./hooks"],
    ["a partial clone's lazy fetch", "[extensions]\n\tpartialClone = origin"],
    ["remote.<name>.uploadpack", "[remote \"o\"]\n\tuploadpack = ./evil.sh"],
    ["gpg.program with log.showSignature", "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ./evil.sh"],
    ["a key on the section's line", "[core] fsmonitor = ./evil.sh"],
    ["the old dotted subsection spelling", "[diff.bin]\n\ttextconv = ./evil.sh"],
    ["an upper-case spelling", "[CORE]\n\tFSMONITOR = ./evil.sh"],
    ["an unknown key", "[frobnicate]\n\tx = 1"]
  ])("%s makes every git subcommand not read-only", (_, config) => {
    const repo = gitRepo()
    appendConfig(repo, config)
    for (const command of commands) expect(readOnlyIn(repo, command), command).toBe(false)
    // From a sub-directory too: git finds the same repository.
    fs.mkdirSync(path.join(repo, "sub"))
    expect(readOnlyIn(path.join(repo, "sub"), "git status")).toBe(false)
    // Through a `cd` the plan follows.
    expect(classifyReadOnly("cd sub && git log", { directories: [repo, path.join(repo, "sub")] }).readOnly).toBe(false)
  })

  it("a nested repository the model made is judged by its own configuration", () => {
    const repo = gitRepo()
    const nested = path.join(repo, "vendor")
    fs.mkdirSync(path.join(nested, ".git"), { recursive: true })
    childProcess.execFileSync("git", ["init", "-q", nested], { stdio: "ignore" })
    expect(readOnlyIn(nested, "git status")).toBe(true)
    fs.appendFileSync(path.join(nested, ".git", "config"), "[core]\n\tfsmonitor = touch PWNED\n")
    expect(readOnlyIn(nested, "git status")).toBe(false)
    expect(readOnlyIn(repo, "git status")).toBe(true)
  })

  it("a `gitdir:` file leads to the configuration it names, and the common directory's", () => {
    const repo = gitRepo()
    const worktree = path.join(tempDir("git-worktree"), "wt")
    childProcess.execFileSync("git", ["worktree", "add", "-q", worktree], { cwd: repo, stdio: "ignore" })
    expect(readOnlyIn(worktree, "git status")).toBe(true)
    appendConfig(repo, "[core]\n\tfsmonitor = touch PWNED")
    expect(readOnlyIn(worktree, "git status")).toBe(false)
    // A `.git` file that is not a `gitdir:` file.
    const odd = tempDir("git-odd")
    fs.writeFileSync(path.join(odd, ".git"), "nonsense\n")
    expect(readOnlyIn(odd, "git log")).toBe(false)
  })

  it("a bare repository (or a directory that looks like `.git`) found by discovery is never read-only", () => {
    const bare = tempDir("git-bare")
    childProcess.execFileSync("git", ["init", "-q", "--bare", bare], { stdio: "ignore" })
    expect(readOnlyIn(bare, "git log")).toBe(false)
    // A hand-made lookalike inside a workspace that is not a repository.
    const workspace = tempDir("git-lookalike")
    const fake = path.join(workspace, "fake")
    fs.mkdirSync(path.join(fake, "objects"), { recursive: true })
    fs.mkdirSync(path.join(fake, "refs"))
    fs.writeFileSync(path.join(fake, "HEAD"), "ref: refs/heads/main\n")
    fs.writeFileSync(path.join(fake, "config"), "[core]\n\tbare = true\n\tfsmonitor = touch PWNED\n")
    expect(readOnlyIn(fake, "git status")).toBe(false)
    expect(readOnlyIn(workspace, "ls")).toBe(true)
  })

  it("a submodule's repository under .git/modules counts too", () => {
    const repo = gitRepo()
    fs.mkdirSync(path.join(repo, ".git", "modules", "lib"), { recursive: true })
    fs.writeFileSync(path.join(repo, ".git", "modules", "lib", "config"), "[core]\n\tfsmonitor = touch PWNED\n")
    expect(readOnlyIn(repo, "git status")).toBe(false)
  })

  it("outside any repository git is still read-only (it fails without reading anything)", () => {
    const plain = tempDir("git-none")
    expect(readOnlyIn(plain, "git status")).toBe(true)
  })
})
