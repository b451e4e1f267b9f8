/**
 * The class "a settings file named on the command line that lives inside the project": it is the project's file for
 * trust (the model could have written it), so its allow rules wait for trust while its deny rules apply; a file
 * outside the project is the person's and trusted. Real files in temp dirs, symlinks included.
 */
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { loadSettings } from "../../src/Settings/Settings.js"

const temp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`)))
const settings = JSON.stringify({ permissions: { allow: ["Bash(curl:*)"], deny: ["Bash(rm:*)"] } })

const load = (cwd: string, file: string, trustProject = false) =>
  loadSettings({ files: [file], cwd, home: temp("flag-home"), trustProject }).pipe(
    Effect.map(([loaded]) => ({
      kind: loaded!.source.kind,
      trusted: loaded!.trusted,
      rules: loaded!.rules.map((rule) => `${rule.behavior} ${rule.text}`)
    })),
    Effect.provide(NodeFileSystem.layer)
  )

describe("--settings FILE inside the project", () => {
  it.effect("is the project's: its allow rules wait for trust, its deny rules apply", () =>
    Effect.gen(function*() {
      const project = temp("flag-project")
      fs.writeFileSync(path.join(project, "extra.json"), settings)
      fs.mkdirSync(path.join(project, "deep"))
      fs.writeFileSync(path.join(project, "deep", "more.json"), settings)
      for (const file of ["extra.json", path.join(project, "deep", "more.json"), "./deep/../extra.json"]) {
        const loaded = yield* load(project, file)
        expect(loaded.kind, file).toBe("projectSettings")
        expect(loaded.trusted, file).toBe(false)
        expect(loaded.rules, file).toEqual(["deny Bash(rm:*)"])
      }
      expect((yield* load(project, "extra.json", true)).rules).toEqual(["deny Bash(rm:*)", "allow Bash(curl:*)"])
    }))

  it.effect("a symlink from outside into the project is judged by where the file really is, and vice versa", () =>
    Effect.gen(function*() {
      const project = temp("flag-project")
      const outside = temp("flag-outside")
      fs.writeFileSync(path.join(project, "inner.json"), settings)
      fs.symlinkSync(path.join(project, "inner.json"), path.join(outside, "link.json"))
      expect((yield* load(project, path.join(outside, "link.json"))).kind).toBe("projectSettings")
      fs.writeFileSync(path.join(outside, "mine.json"), settings)
      fs.symlinkSync(path.join(outside, "mine.json"), path.join(project, "mine.json"))
      const mine = yield* load(project, "mine.json")
      expect(mine.kind).toBe("flagSettings")
      expect(mine.rules).toEqual(["deny Bash(rm:*)", "allow Bash(curl:*)"])
    }))
})
