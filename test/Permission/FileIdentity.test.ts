import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { isAnotherNameOf, literalRulePath } from "../../src/Permission/FileIdentity.js"

const context = { cwd: "/work/proj", home: "/home/me", ruleDir: "/work" }

describe("literalRulePath", () => {
  it.each([
    ["./secret.env", "/work/proj/secret.env"],
    ["secret.env", "/work/proj/secret.env"],
    ["~/.bashrc", "/home/me/.bashrc"],
    ["//etc/hosts", "/etc/hosts"],
    ["/conf/app.json", "/work/conf/app.json"],
    ["../other/a.txt", "/work/other/a.txt"]
  ])("%s names the one file %s", (content, expected) => {
    expect(literalRulePath(content, context)).toBe(expected)
  })

  it.each(["*.env", "src/**", "./secrets/*", "a?.txt", "src/", "//etc/", "\\*literal"])(
    "%s names no single file",
    (content) => {
      expect(literalRulePath(content, context)).toBeUndefined()
    }
  )
})

describe("isAnotherNameOf", () => {
  it("a hard link is another name of its file; a copy, a lone file and a missing file are not", () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "etr-identity-")))
    try {
      const secret = path.join(dir, "secret.env")
      fs.writeFileSync(secret, "k=v")
      const link = path.join(dir, "notes.txt")
      fs.linkSync(secret, link)
      const copy = path.join(dir, "copy.txt")
      fs.copyFileSync(secret, copy)
      expect(isAnotherNameOf(link, [secret])).toBe(true)
      expect(isAnotherNameOf(secret, [path.join(dir, "x"), link])).toBe(true)
      expect(isAnotherNameOf(copy, [secret])).toBe(false)
      expect(isAnotherNameOf(link, [])).toBe(false)
      expect(isAnotherNameOf(path.join(dir, "missing"), [secret])).toBe(false)
      expect(isAnotherNameOf(dir, [dir])).toBe(false)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
