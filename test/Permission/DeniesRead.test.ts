/**
 * `deniesRead`: the question Grep and Glob ask of the policy for every file they would show.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { PermissionPolicy } from "../../src/Permission/PermissionPolicy.js"
import * as RulePolicy from "../../src/Permission/RulePolicy.js"
import type { RulePolicyOptions } from "../../src/Permission/RulePolicy.js"
import { makeSandbox, settingsFrom, workspaceLayer } from "./fixtures.js"

const box = makeSandbox()
const { home, outside, root } = box
fs.symlinkSync("../secrets/key.txt", path.join(root, "src", "link.txt"))
fs.symlinkSync("../secrets", path.join(root, "src", "linked-dir"))

const policy = (options: RulePolicyOptions) =>
  Effect.runSync(RulePolicy.make(options).pipe(Effect.provide(workspaceLayer(box))))
const denying = (...deny: Array<string>) => policy({ cliRules: { deny } })

describe("PermissionPolicy.deniesRead", () => {
  it("a relative rule is anchored at the working directory: `./.env` only there, `.env` at any depth", () => {
    const anchored = denying("Read(./.env)")
    expect(anchored.deniesRead(path.join(root, ".env"))).toBe(true)
    expect(anchored.deniesRead(path.join(root, "src", ".env"))).toBe(false)
    expect(anchored.deniesRead(path.join(root, ".env.example"))).toBe(false)
    const anywhere = denying("Read(.env)")
    expect(anywhere.deniesRead(path.join(root, "src", ".env"))).toBe(true)
    expect(anywhere.deniesRead(path.join(outside, ".env"))).toBe(false)
  })

  it("a directory rule covers everything below it and nothing beside it", () => {
    const secrets = denying("Read(./secrets/**)")
    expect(secrets.deniesRead(path.join(root, "secrets", "key.txt"))).toBe(true)
    expect(secrets.deniesRead(path.join(root, "secrets", "deep", "er.pem"))).toBe(true)
    expect(secrets.deniesRead(path.join(root, "src", "a.ts"))).toBe(false)
    expect(secrets.deniesRead(path.join(root, "secrets-public", "a.txt"))).toBe(false)
  })

  it("`//abs` is anchored at the filesystem root, `~/` at home", () => {
    const absolute = denying(`Read(/${outside}/**)`)
    expect(absolute.deniesRead(path.join(outside, "x.txt"))).toBe(true)
    expect(absolute.deniesRead(path.join(root, "x.txt"))).toBe(false)
    const inHome = denying("Read(~/.ssh/**)")
    expect(inHome.deniesRead(path.join(home, ".ssh", "id_ed25519"))).toBe(true)
    expect(inHome.deniesRead(path.join(root, ".ssh", "id_ed25519"))).toBe(false)
  })

  it("`/x` from a settings file is anchored at that file's project", () => {
    const sub = path.join(root, "sub")
    const settings = [
      settingsFrom({ permissions: { deny: ["Read(/private/**)"] } }, path.join(sub, ".claude", "settings.json"))
    ]
    const fromFile = policy({ settings })
    expect(fromFile.deniesRead(path.join(sub, "private", "a.txt"))).toBe(true)
    expect(fromFile.deniesRead(path.join(root, "private", "a.txt"))).toBe(false)
  })

  it("a symlink is judged by its target too, for files and for directories on the way", () => {
    const secrets = denying("Read(./secrets/**)")
    expect(secrets.deniesRead(path.join(root, "src", "link.txt"))).toBe(true)
    expect(secrets.deniesRead(path.join(root, "src", "linked-dir", "key.txt"))).toBe(true)
    expect(secrets.deniesRead(path.join(root, "src", "a.ts"))).toBe(false)
  })

  it("a whole-tool `Read` deny denies every path", () => {
    const all = denying("Read")
    expect(all.deniesRead(path.join(root, "src", "a.ts"))).toBe(true)
    expect(all.deniesRead(path.join(outside, "x"))).toBe(true)
  })

  it("only deny rules of the Read family count: not allow or ask rules, not Edit or other tools' rules", () => {
    expect(
      policy({ cliRules: { ask: ["Read(./.env)"], allow: ["Read(./secrets/**)"] } }).deniesRead(path.join(root, ".env"))
    ).toBe(false)
    expect(denying("Edit(./.env)", "Bash(cat:*)", "Edit").deniesRead(path.join(root, ".env"))).toBe(false)
    expect(policy({}).deniesRead(path.join(root, ".env"))).toBe(false)
  })

  it("a remembered allow does not lift a deny", () =>
    Effect.gen(function*() {
      const secrets = denying("Read(./secrets/**)")
      yield* secrets.remember(["Read(./secrets/**)"], "session")
      expect(secrets.deniesRead(path.join(root, "secrets", "key.txt"))).toBe(true)
    }).pipe(Effect.runSync))

  it("the tool-only policy denies nothing", () => {
    const toolOnly = Effect.runSync(PermissionPolicy.pipe(Effect.provide(PermissionPolicy.toolOnly)))
    expect(toolOnly.deniesRead(path.join(root, ".env"))).toBe(false)
    expect(toolOnly.deniesRead(path.join(root, "secrets", "key.txt"))).toBe(false)
  })
})
