/**
 * The class "a glob is many operands": a rule that limits how many operands a command may take (`uniq IN OUT` and
 * `xxd IN OUT` write OUT; `base64`, `whoami`, `uname`, `nproc` take at most one or none) counts what the shell will
 * pass, and a word that can expand to several words (a glob, a brace expansion, an unquoted expansion) is many.
 * Real directories where the glob does match two files, so the oracle (what bash passes) is checked too.
 */
import { describe, expect, it } from "@effect/vitest"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { classifyReadOnly } from "../../../src/Tools/Shell/ReadOnly.js"
import { tempDir } from "../Bash/helpers.js"

const directory = () => {
  const dir = tempDir("glob-operands")
  fs.writeFileSync(path.join(dir, "in1"), "a\na\n")
  fs.writeFileSync(path.join(dir, "in2"), "precious\n")
  return dir
}

/** What bash itself passes for a word, in that directory: the oracle. */
const bashWords = (dir: string, word: string): ReadonlyArray<string> =>
  childProcess.execFileSync("bash", ["-c", `printf '%s\\n' ${word}`], { cwd: dir, encoding: "utf8" }).trim().split("\n")

describe("a glob is many operands", () => {
  it.each([
    "uniq in*",
    "uniq in?",
    "uniq in[12]",
    "uniq in{1,2}",
    "xxd in*",
    "xxd in{1,2}",
    "uniq -c in*",
    "base64 in*",
    "cd /tmp && uniq in*"
  ])("`%s` is not read-only", (command) => {
    const dir = directory()
    expect(classifyReadOnly(command, { directories: [dir] }).readOnly).toBe(false)
  })

  it("the oracle: bash passes two words for those globs here, so `uniq in*` would overwrite in2", () => {
    const dir = directory()
    expect(bashWords(dir, "in*")).toEqual(["in1", "in2"])
    expect(bashWords(dir, "in{1,2}")).toEqual(["in1", "in2"])
    childProcess.execFileSync("bash", ["-c", "uniq in*"], { cwd: dir })
    expect(fs.readFileSync(path.join(dir, "in2"), "utf8")).toBe("a\n")
  })

  it("one literal operand, and commands with no operand limit, stay read-only with globs", () => {
    const dir = directory()
    for (const command of ["uniq in1", "xxd in1", "cat in*", "wc -l in*", "head -n1 in*", "uniq -c in1"]) {
      expect(classifyReadOnly(command, { directories: [dir] }), command).toEqual({ readOnly: true })
    }
  })
})
