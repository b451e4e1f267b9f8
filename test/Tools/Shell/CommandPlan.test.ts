import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { planCommand } from "../../../src/Tools/Shell/CommandPlan.js"
import type { CommandPlace } from "../../../src/Tools/Shell/CommandPlan.js"

const setup = (): { readonly place: CommandPlace; readonly cwd: string; readonly outside: string } => {
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "plan-")))
  const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "plan-outside-")))
  fs.writeFileSync(path.join(cwd, "README.md"), "# x\n")
  fs.mkdirSync(path.join(cwd, "sub"))
  fs.writeFileSync(path.join(outside, "secret.txt"), "s\n")
  fs.symlinkSync(outside, path.join(cwd, "link"))
  return { place: { cwd, home: os.homedir(), roots: [cwd] }, cwd, outside }
}

/** The claims without the reads of named files below the working directory (the plan adds them for Read deny rules). */
const rootClaims = (claims: ReadonlyArray<{ resource: string; access: string }>, cwd: string) =>
  claims.filter((claim) => !(claim.access === "read" && claim.resource.startsWith(`file:${cwd}/`)))

const inside = (place: CommandPlace) => [{ resource: `file:${place.cwd}`, access: "read" }]
const everything = [{ resource: "file:/", access: "read" }]

describe("CommandPlan", () => {
  it("a glob is checked by every entry it can match, symlinks to directories included", () => {
    const { place } = setup()
    for (const command of ["du -sh *", "cat li*/secret.txt", "cat l?nk/secret.txt", "cat lin[k]/secret.txt", "ls *"]) {
      expect(rootClaims(planCommand(command, place).claims, place.cwd), command).toEqual(everything)
    }
    expect(rootClaims(planCommand("wc -l *.md", place).claims, place.cwd)).toEqual(inside(place))
    // A path through the symlink that does not exist (yet) is still outside.
    expect(rootClaims(planCommand("cat link/missing", place).claims, place.cwd)).toEqual(everything)
  })

  it("a glob that matches nothing is not proven inside", () => {
    const { place } = setup()
    expect(rootClaims(planCommand("cat *.nothing", place).claims, place.cwd)).toEqual(everything)
  })

  it("cd is followed: relative paths and $PWD are checked from every directory a cd may reach", () => {
    const { place } = setup()
    expect(rootClaims(planCommand("cd sub && ls", place).claims, place.cwd)).toEqual(inside(place))
    expect(rootClaims(planCommand("cd sub && cat \"$PWD/x\"", place).claims, place.cwd)).toEqual(inside(place))
    for (
      const command of [
        "cd link && cat secret.txt",
        "cd / && cat etc/hostname",
        "cd && cat .bashrc",
        "cd - && ls",
        "cd $HOME && ls",
        "cd .. && ls",
        "cd sub; cd ../link && ls"
      ]
    ) {
      expect(rootClaims(planCommand(command, place).claims, place.cwd), command).not.toEqual(inside(place))
    }
  })

  it("reads beyond the arguments never stay inside", () => {
    const { place } = setup()
    for (
      const command of [
        "grep -R x .",
        "ls -LR",
        "find -L .",
        "diff -r sub link",
        "du -L .",
        "sha256sum -c README.md",
        "jq -n 'import \"x\" as $x; 1'",
        "jq -f README.md",
        "file -f README.md"
      ]
    ) {
      const plan = planCommand(command, place)
      expect(plan.readOnly, command).toBe(true)
      expect(plan.claims, command).toEqual(everything)
    }
    expect(rootClaims(planCommand("grep -r x .", place).claims, place.cwd)).toEqual(inside(place))
  })

  it("simple file commands inside the workspace claim exactly their paths, in both spellings", () => {
    const { place, cwd } = setup()
    const plan = planCommand("mkdir -p sub/a && cp README.md sub/a/", place)
    expect(plan.fileCommand).toBe(true)
    expect(plan.claims).toEqual([
      { resource: `file:${cwd}/sub/a`, access: "write" },
      { resource: `file:${cwd}/README.md`, access: "read" },
      { resource: `file:${cwd}/sub/a`, access: "write" }
    ])
    for (
      const command of [
        "touch link/x",
        "cp link/secret.txt x",
        "mkdir ../x",
        "touch /tmp/x",
        "rm x",
        "cp -L a b",
        "touch $X",
        "touch x > log",
        "mv x -t .."
      ]
    ) {
      const other = planCommand(command, place)
      expect(other.fileCommand, command).toBe(false)
      expect(other.claims, command).toEqual([{ resource: "*", access: "write" }])
    }
  })
})
