/**
 * FileAccess's batches (`lstatAll`, `realPathAll`, `readDirectoryEntriesAll`): many calls in one Effect. On the Node
 * layer each answers what the layer's own member answers for every path (files, directories, symlinks dangling or
 * not, nothing there, a path through a file), in order; on any other member (a layer of one's own, the memory layer)
 * that member is asked for every path.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc, pipe } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { FileAccess, lstatAll, readDirectoryEntriesAll, realPathAll } from "../../src/Session/FileAccess.js"
import type { FileInfo } from "../../src/Session/FileAccess.js"
import { Workspace } from "../../src/Session/Workspace.js"
import { tempDir } from "../support/index.js"

const nodeAccess = Effect.runSync(Effect.provide(FileAccess, FileAccess.layer))

/** A directory with one of each kind of name, and the paths to ask about (nothing-there ones included). */
const layout = () => {
  const dir = tempDir("lstat-all-")
  fs.mkdirSync(path.join(dir, "sub"))
  fs.writeFileSync(path.join(dir, "file.txt"), "12345")
  fs.symlinkSync(path.join(dir, "file.txt"), path.join(dir, "link"))
  fs.symlinkSync(path.join(dir, "gone"), path.join(dir, "dangling"))
  const names = ["file.txt", "sub", "link", "dangling", "missing", "file.txt/below"]
  return { dir, paths: names.map((name) => path.join(dir, name)) }
}

describe("FileAccess.lstatAll", () => {
  it.effect("on the Node layer: what its lstat answers for each path, in order", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      // Many times over, so that the batch spans more than one slice on any machine.
      const many = Array.from({ length: 4000 }, (_, i) => paths[i % paths.length]!)
      const one = yield* Effect.forEach(many, (file) => nodeAccess.lstat(file))
      const all = yield* lstatAll(nodeAccess, many)
      expect(all).toEqual(one)
      expect(all.slice(0, paths.length).map((info) => info?.type)).toEqual([
        "File",
        "Directory",
        "SymbolicLink",
        "SymbolicLink",
        undefined,
        undefined
      ])
      expect(all[0]?.size).toBe(5)
      expect(yield* lstatAll(nodeAccess, [])).toEqual([])
    }))

  it.effect("pipeable too", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      const [info] = yield* pipe(nodeAccess, lstatAll(paths.slice(0, 1)))
      expect(info?.type).toBe("File")
    }))

  it.effect("on a layer whose lstat is its own (the Node one with lstat replaced): that lstat, for every path", () =>
    Effect.gen(function*() {
      const { paths } = layout()
      const asked: Array<string> = []
      const made = (file: string): FileInfo => ({
        type: "File",
        size: file.length,
        mtimeMs: 42,
        mode: 0o600,
        dev: 1,
        ino: asked.length,
        nlink: 1
      })
      const own: FileAccess["Type"] = {
        ...nodeAccess,
        lstat: (file) =>
          Effect.sync(() => {
            asked.push(file)
            return made(file)
          })
      }
      const all = yield* lstatAll(own, paths)
      expect([...asked].sort()).toEqual([...paths].sort())
      expect(all.map((info) => [info?.type, info?.size])).toEqual(paths.map((file) => ["File", file.length]))
    }))

  it.effect("on the memory layer: the memory's lstat", () =>
    Effect.gen(function*() {
      const access = yield* FileAccess
      const all = yield* lstatAll(access, ["/m/a.txt", "/m/link", "/m", "/m/none"])
      expect(all.map((info) => info?.type)).toEqual(["File", "SymbolicLink", "Directory", undefined])
    }).pipe(
      Effect.provide(FileAccess.layerMemory({ files: { "/m/a.txt": "a" }, symlinks: { "/m/link": "/m/a.txt" } }))
    ))
})

describe("FileAccess.realPathAll and readDirectoryEntriesAll", () => {
  it.effect("on the Node layer: what its realPath and readDirectoryEntries answer for each path, in order", () =>
    Effect.gen(function*() {
      const { dir, paths } = layout()
      const many = Array.from({ length: 3000 }, (_, i) => paths[i % paths.length]!)
      const reals = yield* realPathAll(nodeAccess, many)
      expect(reals).toEqual(
        yield* Effect.forEach(many, (file) => Effect.orElseSucceed(nodeAccess.realPath(file), () => undefined))
      )
      const file = path.join(dir, "file.txt")
      expect(reals.slice(0, paths.length)).toEqual([file, path.join(dir, "sub"), file, undefined, undefined, undefined])

      const directories = [dir, path.join(dir, "sub"), path.join(dir, "missing"), file]
      const listings = yield* readDirectoryEntriesAll(nodeAccess, directories)
      expect(listings).toEqual(
        yield* Effect.forEach(directories, (directory) => Effect.either(nodeAccess.readDirectoryEntries(directory)))
      )
      const [top, sub, missing, notDirectory] = listings
      expect(Either.getOrThrow(top!).map((entry) => [entry.name, entry.type]).sort()).toEqual([
        ["dangling", "SymbolicLink"],
        ["file.txt", "File"],
        ["link", "SymbolicLink"],
        ["sub", "Directory"]
      ])
      expect(Either.getOrThrow(sub!)).toEqual([])
      expect(Either.isLeft(missing!) && missing.left.reason).toBe("ENOENT")
      expect(Either.isLeft(notDirectory!) && notDirectory.left.reason).toBe("ENOTDIR")
    }))

  it.effect("on a layer whose members are its own: those members, for every path", () =>
    Effect.gen(function*() {
      const { dir } = layout()
      const own: FileAccess["Type"] = {
        ...nodeAccess,
        realPath: (file) => file.endsWith("sub") ? Effect.succeed(`/elsewhere${file}`) : nodeAccess.realPath(file),
        readDirectoryEntries: (directory) =>
          directory === dir
            ? Effect.succeed([{ name: "only-here", type: "File" }])
            : nodeAccess.readDirectoryEntries(directory)
      }
      const sub = path.join(dir, "sub")
      expect(yield* realPathAll(own, [sub, path.join(dir, "missing")])).toEqual([`/elsewhere${sub}`, undefined])
      const [listing, missing] = yield* readDirectoryEntriesAll(own, [dir, path.join(dir, "missing")])
      expect(listing).toEqual(Either.right([{ name: "only-here", type: "File" }]))
      expect(Either.isLeft(missing!)).toBe(true)
    }))
})

describe("the Node layer's openRead", () => {
  const dir = tempDir("open-read-")
  /** Bytes no two positions of which are easily confused: a read from the wrong offset shows. */
  const bytesOf = (size: number): Buffer =>
    Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + (i >> 8)) % 251))
  /** Descriptors of this process open on a file (only those: other tests' descriptors come and go meanwhile). */
  const openOn = (file: string): number =>
    fs.readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`) === file
      } catch {
        return false
      }
    }).length

  // Sizes, reads and chunks on both sides of the 64 KiB a read is made synchronously up to.
  const KiB = 1024
  const size = fc.oneof(fc.integer({ min: 0, max: 4 * KiB }), fc.integer({ min: 60 * KiB, max: 200 * KiB }))

  it.effect.prop(
    "reads and chunks give the file's own bytes, whatever the sizes",
    [size, fc.constantFrom(KiB, 16 * KiB, 64 * KiB, 128 * KiB), fc.nat({ max: 210 * KiB }), size],
    ([fileSize, chunkBytes, position, length]) =>
      Effect.gen(function*() {
        const file = path.join(dir, `f-${fileSize}.bin`)
        const bytes = bytesOf(fileSize)
        fs.writeFileSync(file, bytes)
        yield* Effect.scoped(Effect.gen(function*() {
          const handle = yield* nodeAccess.openRead(file)
          expect(openOn(file)).toBeGreaterThan(0)
          expect(handle.info.size).toBe(fileSize)
          expect(handle.realPath).toBe(file)
          const read = yield* handle.read(position, length)
          expect(Buffer.from(read).equals(bytes.subarray(position, position + length))).toBe(true)
          const chunks = yield* Effect.promise(async () => {
            const all: Array<Uint8Array> = []
            for await (const chunk of handle.chunks(chunkBytes)) all.push(chunk)
            return all
          })
          expect(chunks.every((chunk) => chunk.length > 0 && chunk.length <= chunkBytes)).toBe(true)
          expect(Buffer.concat(chunks).equals(bytes)).toBe(true)
        }))
        // The scope closed its descriptors.
        expect(openOn(file)).toBe(0)
      }),
    { fastCheck: { numRuns: 40 } }
  )

  it.effect("a handle used after its scope closed fails, small or large, and never reads what reuses the descriptor", () =>
    Effect.gen(function*() {
      const secret = path.join(dir, "secret.txt")
      fs.writeFileSync(secret, "TOP SECRET")
      for (const size of [10, 100 * KiB]) {
        const file = path.join(dir, `kept-${size}.bin`)
        fs.writeFileSync(file, bytesOf(size))
        const kept = yield* Effect.scoped(nodeAccess.openRead(file))
        // Whatever opens next may get the closed descriptor's number.
        const fd = fs.openSync(secret, "r")
        try {
          const again = yield* Effect.flip(kept.read(0, 64))
          expect(again.reason).toBe("EBADF")
          const chunks = yield* Effect.promise(async () => {
            try {
              for await (const _ of kept.chunks(KiB)) return "read"
              return "nothing"
            } catch (error) {
              return (error as NodeJS.ErrnoException).code
            }
          })
          expect(chunks).not.toBe("read")
        } finally {
          fs.closeSync(fd)
        }
      }
    }))

  it.effect("a read shorter than asked gives its bytes in a buffer of its own, nothing else reachable through it", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "short.txt")
      fs.writeFileSync(file, "0123456789")
      const read = yield* Effect.scoped(Effect.flatMap(nodeAccess.openRead(file), (handle) => handle.read(2, 100)))
      expect(Buffer.from(read).toString()).toBe("23456789")
      const whole = new Uint8Array(read.buffer)
      expect(whole.length).toBe(100)
      expect(whole.subarray(8).every((byte) => byte === 0)).toBe(true)
    }))

  it.effect("a small file that grows while it is read is read to its end, a macrotask apart per chunk beyond its stat", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "growing.log")
      fs.writeFileSync(file, "start\n")
      const grown = Buffer.concat([Buffer.from("start\n"), bytesOf(200 * KiB)])
      const { chunks, ticked } = yield* Effect.scoped(
        Effect.flatMap(nodeAccess.openRead(file), (handle) =>
          Effect.promise(async () => {
            fs.appendFileSync(file, bytesOf(200 * KiB))
            let ticked = false
            setImmediate(() => (ticked = true))
            const chunks: Array<Uint8Array> = []
            for await (const chunk of handle.chunks(KiB)) chunks.push(chunk)
            return { chunks, ticked }
          }))
      )
      expect(Buffer.concat(chunks).equals(grown)).toBe(true)
      // The event loop had a turn while the growth was read (timers and interruption are not held off).
      expect(ticked).toBe(true)
    }))

  it.effect("refuses what is not a regular file, and a symlink as the last component, and leaves nothing open", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "plain.txt")
      fs.writeFileSync(file, "plain")
      fs.symlinkSync(file, path.join(dir, "plain-link"))
      const reasons = yield* Effect.forEach(
        [dir, path.join(dir, "plain-link"), path.join(dir, "absent")],
        (target) => Effect.scoped(Effect.flip(nodeAccess.openRead(target))).pipe(Effect.map((error) => error.reason))
      )
      expect(reasons).toEqual(["EINVAL", "ELOOP", "ENOENT"])
      expect([openOn(dir), openOn(file)]).toEqual([0, 0])
    }))
})

describe("Workspace.layer resolves paths on the file system the file tools read", () => {
  it.effect("through the FileAccess in context (the memory one): its links, never the disk's", () =>
    Effect.gen(function*() {
      const workspace = yield* Workspace
      expect(workspace.cwd).toBe("/w")
      const inside = yield* workspace.resolve("notes-link")
      expect([inside.real, inside.exists, inside.inside]).toEqual(["/w/notes.txt", true, true])
      const outward = yield* workspace.resolve("/w/out")
      expect([outward.real, outward.inside]).toEqual(["/etc/secret", false])
      // Not there yet: resolved through its nearest existing ancestor, a link included.
      const fresh = yield* workspace.resolve("dir-link/new.txt")
      expect([fresh.real, fresh.exists, fresh.inside]).toEqual(["/w/dir/new.txt", false, true])
    }).pipe(
      Effect.provide(Workspace.layer({ cwd: "/w-link", home: "/home/x" })),
      Effect.provide(FileAccess.layerMemory({
        files: { "/w/notes.txt": "n", "/w/dir/a.txt": "a", "/etc/secret": "s" },
        symlinks: { "/w-link": "/w", "/w/notes-link": "/w/notes.txt", "/w/out": "/etc/secret", "/w/dir-link": "/w/dir" }
      }))
    ))

  it.effect("through node:fs when none is provided", () =>
    Effect.gen(function*() {
      const { dir } = layout()
      const workspace = yield* Effect.provide(Workspace, Workspace.layer({ cwd: dir }))
      const link = yield* workspace.resolve("link")
      expect([link.real, link.exists, link.inside]).toEqual([path.join(dir, "file.txt"), true, true])
      const dangling = yield* workspace.resolve("dangling")
      expect([dangling.real, dangling.exists]).toEqual([path.join(dir, "gone"), false])
    }))
})
