import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Approver } from "../../../src/Permission/Approver.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { Edit } from "../../../src/Tools/Edit.js"
import { Glob } from "../../../src/Tools/Glob.js"
import { Grep } from "../../../src/Tools/Grep.js"
import { Read } from "../../../src/Tools/Read.js"
import { Write } from "../../../src/Tools/Write.js"
import { context, executeOne, runtimeLayer, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

// Layout: <base>/work is the workspace; <base>/outside holds a secret; links inside point out.
const base = tempDir("paths-")
const work = path.join(base, "work")
const outside = path.join(base, "outside")
writeTree(base, { "work/inside.txt": "inside\n", "work/sub/deep.txt": "deep\n", "outside/secret.txt": "secret\n" })
fs.symlinkSync(path.join(outside, "secret.txt"), path.join(work, "link-to-secret"))
fs.symlinkSync(outside, path.join(work, "linked-dir"))
fs.symlinkSync(path.join(work, "inside.txt"), path.join(work, "link-to-inside"))

const escapes = [
  "../outside/secret.txt",
  "sub/../../outside/secret.txt",
  path.join(outside, "secret.txt"),
  "link-to-secret",
  "linked-dir/secret.txt",
  "linked-dir/new-file.txt",
  "/etc/hostname"
]

describe("paths: containment", () => {
  it.effect("every tool asks (never passes through or allows) for paths whose real target is outside", () =>
    Effect.gen(function*() {
      const read = yield* Read
      const write = yield* Write
      const edit = yield* Edit
      const glob = yield* Glob
      const grep = yield* Grep
      for (const p of escapes) {
        const checks = [
          yield* read.plan({ file_path: p }).checkPermissions(context),
          yield* write.plan({ file_path: p, content: "x" }).checkPermissions(context),
          yield* edit.plan({ file_path: p, old_string: "a", new_string: "b", replace_all: false }).checkPermissions(
            context
          ),
          yield* glob.plan({ pattern: "*", path: p }).checkPermissions(context),
          yield* grep.plan({ pattern: "x", path: p }).checkPermissions(context)
        ]
        for (const check of checks) {
          expect(check._tag, p).toBe("Ask")
          if (check._tag === "Ask") expect(check.message).toContain("outside the workspace")
        }
      }
      for (
        const p of [
          "inside.txt",
          "./sub/deep.txt",
          path.join(work, "sub", "..", "inside.txt"),
          "link-to-inside",
          "new/file.txt"
        ]
      ) {
        expect((yield* read.plan({ file_path: p }).checkPermissions(context))._tag, p).toBe("Passthrough")
        expect((yield* write.plan({ file_path: p, content: "" }).checkPermissions(context))._tag, p).toBe("Passthrough")
      }
    }).pipe(Effect.provide(toolsLayer(work))))

  it.effect("through the runtime, a denied read outside the workspace reads nothing", () =>
    Effect.gen(function*() {
      for (const p of escapes.slice(0, 5)) {
        const outcome = yield* executeOne(use("Read", { file_path: p }))
        expect(outcome.status, p).toBe("denied")
        expect(text(outcome)).not.toContain("secret\n")
      }
    }).pipe(Effect.provide(runtimeLayer(work, { approver: Approver.denyAll }))))

  it.effect("a denied Write through a symlinked parent directory writes nothing", () =>
    Effect.gen(function*() {
      const outcome = yield* executeOne(use("Write", { file_path: "linked-dir/planted.txt", content: "x" }))
      expect(outcome.status).toBe("denied")
      expect(fs.existsSync(path.join(outside, "planted.txt"))).toBe(false)
    }).pipe(Effect.provide(runtimeLayer(work, { approver: Approver.denyAll }))))

  it.effect("claims name the real path, so a link and its target conflict", () =>
    Effect.gen(function*() {
      const read = yield* Read
      const edit = yield* Edit
      expect(read.plan({ file_path: "link-to-inside" }).claims).toEqual([{
        resource: `file:${path.join(work, "inside.txt")}`,
        access: "read"
      }])
      expect(edit.plan({ file_path: "inside.txt", old_string: "a", new_string: "b", replace_all: false }).claims)
        .toEqual([
          { resource: `file:${path.join(work, "inside.txt")}`, access: "write" }
        ])
    }).pipe(Effect.provide(toolsLayer(work))))

  it.effect("rules match on the given path and on the resolved target", () =>
    Effect.gen(function*() {
      const read = yield* Read
      const matches = (content: string, p: string) =>
        read.plan({ file_path: p }).matchesRule!(content, {
          cwd: work,
          home: "/nonexistent-home",
          ruleDirectory: undefined
        })
      // A deny on the real file also covers a link to it and a relative spelling.
      expect(matches(`/${path.join(outside, "secret.txt")}`, "link-to-secret")).toBe(true)
      expect(matches(`/${outside}/**`, "linked-dir/secret.txt")).toBe(true)
      expect(matches("inside.txt", "link-to-inside")).toBe(true)
      expect(matches("./sub/**", "sub/../sub/deep.txt")).toBe(true)
      // A rule on the link's name covers the link too.
      expect(matches("link-to-secret", "link-to-secret")).toBe(true)
      expect(matches("./sub/**", "inside.txt")).toBe(false)
    }).pipe(Effect.provide(toolsLayer(work))))

  const segment = fc.oneof(
    fc.constantFrom(
      ".",
      "..",
      "sub",
      "inside.txt",
      "link-to-secret",
      "linked-dir",
      "link-to-inside",
      "secret.txt",
      "work",
      "outside"
    ),
    fc.stringMatching(/^[a-z]{1,4}$/)
  )
  it.effect.prop(
    "paths built from arbitrary segments are never passed through when their real target is outside",
    [fc.array(segment, { minLength: 1, maxLength: 7 }), fc.boolean()],
    ([segments, absolute]) =>
      Effect.gen(function*() {
        const workspace = yield* Workspace
        const read = yield* Read
        const write = yield* Write
        const p = absolute ? path.join(work, ...segments) : segments.join("/")
        const real = (yield* workspace.resolve(p)).real
        const inside = real === work || real.startsWith(`${work}/`)
        // Ground truth computed independently: realpath of the nearest existing ancestor.
        let probe = path.resolve(work, p)
        let tail = ""
        while (!fs.existsSync(probe)) {
          tail = path.join(path.basename(probe), tail)
          probe = path.dirname(probe)
        }
        const truth = path.join(fs.realpathSync(probe), tail)
        const truthInside = truth === work || truth.startsWith(`${work}/`)
        for (
          const check of [
            yield* read.plan({ file_path: p }).checkPermissions(context),
            yield* write.plan({ file_path: p, content: "" }).checkPermissions(context)
          ]
        ) {
          if (!truthInside || !inside) expect(check._tag).toBe("Ask")
          expect(check._tag).not.toBe("Allow")
        }
      }).pipe(Effect.provide(toolsLayer(work))),
    { fastCheck: { numRuns: 100 }, timeout: 60_000 }
  )
})
