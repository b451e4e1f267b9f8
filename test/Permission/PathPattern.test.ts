import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { compilePathPattern, settingsRootDir } from "../../src/Permission/PathPattern.js"

const context = { cwd: "/work/proj", home: "/home/me" }
const matches = (content: string, path: string, extra: Partial<Parameters<typeof compilePathPattern>[1]> = {}) =>
  compilePathPattern(content, { ...context, ...extra })(path)

describe("compilePathPattern", () => {
  describe("anchors", () => {
    it("// is the filesystem root", () => {
      expect(matches("//etc/**", "/etc/hosts")).toBe(true)
      expect(matches("//etc/**", "/etc/ssh/sshd_config")).toBe(true)
      expect(matches("//etc/**", "/work/proj/etc/hosts")).toBe(false)
    })

    it("~/ is the home directory", () => {
      expect(matches("~/.ssh/**", "/home/me/.ssh/id_ed25519")).toBe(true)
      expect(matches("~/Documents/*.pdf", "/home/me/Documents/a.pdf")).toBe(true)
      expect(matches("~/Documents/*.pdf", "/home/me/Documents/sub/a.pdf")).toBe(false)
      expect(matches("~/.ssh/**", "/work/proj/.ssh/id_ed25519")).toBe(false)
    })

    it("/ is the directory of the declaring settings file, else the cwd", () => {
      expect(matches("/src/**/*.ts", "/repo/src/a/b.ts", { ruleDir: "/repo" })).toBe(true)
      expect(matches("/src/**/*.ts", "/work/proj/src/a/b.ts", { ruleDir: "/repo" })).toBe(false)
      expect(matches("/src/**/*.ts", "/work/proj/src/a/b.ts")).toBe(true)
      // anchored: not at depth
      expect(matches("/src/**", "/work/proj/lib/src/a.ts")).toBe(false)
    })

    it("src/** and ./src/** are relative to the cwd and anchored there", () => {
      for (const content of ["src/**", "./src/**"]) {
        expect(matches(content, "/work/proj/src/index.ts")).toBe(true)
        expect(matches(content, "/work/proj/src/a/b/c.ts")).toBe(true)
        expect(matches(content, "/work/proj/lib/src/index.ts")).toBe(false)
        expect(matches(content, "/work/other/src/index.ts")).toBe(false)
      }
    })

    it("../ moves the base up", () => {
      expect(matches("../shared/**", "/work/shared/DESIGN.md")).toBe(true)
      expect(matches("../shared/**", "/work/proj/shared/DESIGN.md")).toBe(false)
    })

    it("an anchor alone covers everything below it", () => {
      expect(matches("~/", "/home/me/anything/at/all")).toBe(true)
      expect(matches("//", "/etc/passwd")).toBe(true)
      expect(matches("./", "/work/proj/a")).toBe(true)
      expect(matches("./", "/work/a")).toBe(false)
    })
  })

  describe("gitignore semantics", () => {
    it("a bare name without slash matches at any depth", () => {
      expect(matches(".env", "/work/proj/.env")).toBe(true)
      expect(matches(".env", "/work/proj/sub/.env")).toBe(true)
      expect(matches(".env", "/work/proj/sub/.env.example")).toBe(false)
      expect(matches("*.env", "/work/proj/a/b/prod.env")).toBe(true)
      expect(matches("*.env", "/work/proj/prod.env.bak")).toBe(false)
    })

    it("./name matches only directly in the cwd", () => {
      expect(matches("./.env", "/work/proj/.env")).toBe(true)
      expect(matches("./.env", "/work/proj/sub/.env")).toBe(false)
    })

    it("* stays within a segment, ** crosses segments", () => {
      expect(matches("src/*.ts", "/work/proj/src/a.ts")).toBe(true)
      expect(matches("src/*.ts", "/work/proj/src/a/b.ts")).toBe(false)
      expect(matches("src/**/*.ts", "/work/proj/src/a.ts")).toBe(true)
      expect(matches("src/**/*.ts", "/work/proj/src/a/b/c.ts")).toBe(true)
      expect(matches("**/secrets/**", "/work/proj/a/secrets/key")).toBe(true)
    })

    it("a directory pattern covers everything inside the directory", () => {
      expect(matches("secrets", "/work/proj/a/secrets/key.pem")).toBe(true)
      expect(matches("src/gen", "/work/proj/src/gen/a/b.ts")).toBe(true)
    })

    it("a trailing slash matches directories and their contents, not a file of that name", () => {
      expect(matches("dist/", "/work/proj/dist/a.js")).toBe(true)
      expect(matches("dist/", "/work/proj/pkg/dist/a.js")).toBe(true)
      expect(matches("dist/", "/work/proj/dist/")).toBe(true)
      expect(matches("dist/", "/work/proj/dist")).toBe(false)
    })

    it("dotfiles are matched by * like any other name", () => {
      expect(matches("*", "/work/proj/.env")).toBe(true)
      expect(matches("config/*", "/work/proj/config/.secret")).toBe(true)
    })

    it("a leading ! or # is literal, not negation or comment", () => {
      expect(matches("!important", "/work/proj/!important")).toBe(true)
      expect(matches("!important", "/work/proj/other")).toBe(false)
      expect(matches("#notes", "/work/proj/#notes")).toBe(true)
    })

    it("is case-sensitive unless asked otherwise", () => {
      expect(matches(".env", "/work/proj/.ENV")).toBe(false)
      expect(matches(".env", "/work/proj/.ENV", { ignoreCase: true })).toBe(true)
    })
  })

  describe("paths outside the base", () => {
    it("never match relative patterns", () => {
      expect(matches("*.env", "/work/other/.env")).toBe(false)
      expect(matches("**", "/work/other/x")).toBe(false)
      expect(matches("**", "/work/proj/../other/x")).toBe(false)
      expect(matches("*.env", "/work/proj/sub/../../.env")).toBe(false)
    })

    it("are normalised before matching", () => {
      expect(matches("src/**", "/work/proj/lib/../src/a.ts")).toBe(true)
      expect(matches("src/**", "/work/proj/src/../../proj2/src/a.ts")).toBe(false)
    })

    it("the base directory itself and relative paths never match", () => {
      expect(matches("**", "/work/proj")).toBe(false)
      expect(matches("*.env", "a.env")).toBe(false)
    })

    it.prop("no relative pattern matches a path outside the cwd", [
      fc.constantFrom("*", "**", "*.env", ".env", "src/**", "./**", "a/b", "**/x"),
      fc.array(fc.stringMatching(/^[a-z.]{1,4}$/).filter((s) => s !== "." && s !== ".."), {
        minLength: 1,
        maxLength: 4
      })
    ], ([pattern, segments]) => {
      expect(matches(pattern, `/work/elsewhere/${segments.join("/")}`)).toBe(false)
      expect(matches(pattern, `/work/proj/../${segments.join("/")}`)).toBe(false)
    })

    it.prop("** under an anchor matches exactly the paths inside the base", [
      fc.array(fc.stringMatching(/^[a-z.]{1,4}$/).filter((s) => s !== "." && s !== ".."), {
        minLength: 1,
        maxLength: 5
      }),
      fc.boolean()
    ], ([segments, inside]) => {
      const path = `${inside ? "/home/me" : "/home/you"}/${segments.join("/")}`
      expect(matches("~/**", path)).toBe(inside)
    })
  })
})

describe("settingsRootDir", () => {
  it("is the project for files in .claude/, else the file's directory", () => {
    expect(settingsRootDir("/work/proj/.claude/settings.json")).toBe("/work/proj")
    expect(settingsRootDir("/work/proj/.claude/settings.local.json")).toBe("/work/proj")
    expect(settingsRootDir("/home/me/.claude/settings.json")).toBe("/home/me")
    expect(settingsRootDir("/etc/agent/settings.json")).toBe("/etc/agent")
  })
})
