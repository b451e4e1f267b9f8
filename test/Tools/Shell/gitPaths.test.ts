/**
 * The class "git pathspecs and revision paths reach outside the working directory": when the workspace is a
 * sub-directory of a repository, `HEAD:path` (relative to the top), `:/path`, `:(top)path` and `HEAD:../path` read
 * files outside it, whatever the word looks like. The plan checks what git will read: such a word is inside only when
 * the repository's top is. Real repositories in temp dirs; the oracle is git itself (it does print the outside file).
 */
import { describe, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { planCommand } from "../../../src/Tools/Shell/CommandPlan.js"
import { gitRepo } from "../Bash/helpers.js"

const setUp = () => {
  const repo = fs.realpathSync(gitRepo())
  fs.mkdirSync(path.join(repo, "sub"))
  fs.writeFileSync(path.join(repo, "sub", "inner.txt"), "inner\n")
  fs.writeFileSync(path.join(repo, "secret.txt"), "SECRET\n")
  const git = (...args: Array<string>) =>
    childProcess.execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@e", ...args], {
      cwd: repo,
      encoding: "utf8"
    })
  git("add", ".")
  git("commit", "-q", "-m", "more")
  const sub = path.join(repo, "sub")
  return { repo, sub, place: { cwd: sub, home: "/nonexistent-home", roots: [sub] } }
}

const reaching = [
  "git show HEAD:secret.txt",
  "git show HEAD:../secret.txt",
  "git show :/secret.txt",
  "git log -p -- :/secret.txt",
  "git grep SECRET -- ':(top)secret.txt'",
  "git grep SECRET -- ':/'",
  "git cat-file -p HEAD:secret.txt"
]

describe("git paths are checked by what git reads", () => {
  it("the oracle: from the sub-directory, git does print the file outside it", () => {
    const { sub } = setUp()
    for (const command of ["git show HEAD:secret.txt", "git show :/secret.txt", "git show HEAD:../secret.txt"]) {
      expect(childProcess.execFileSync("bash", ["-c", command], { cwd: sub, encoding: "utf8" }), command).toContain(
        "SECRET"
      )
    }
  })

  it.each(reaching)("`%s` from a sub-directory workspace is not inside it", (command) => {
    const { place } = setUp()
    const plan = planCommand(command, place)
    expect(plan.readOnly).toBe(true)
    expect(plan.claims).toEqual([{ resource: "file:/", access: "read" }])
  })

  it("the same words are inside when the workspace is the whole repository; plain git stays inside a sub-directory", () => {
    const { repo, sub, place } = setUp()
    const whole = { cwd: repo, home: "/nonexistent-home", roots: [repo] }
    for (const command of reaching.filter((command) => !command.includes(".."))) {
      expect(planCommand(command, whole).claims[0], command).toEqual({ resource: `file:${repo}`, access: "read" })
    }
    for (const command of ["git status", "git log -1", "git log -p -- inner.txt", "git diff HEAD"]) {
      expect(planCommand(command, place).claims[0], command).toEqual({ resource: `file:${sub}`, access: "read" })
    }
  })
})
