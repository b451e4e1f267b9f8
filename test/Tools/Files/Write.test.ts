import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Write } from "../../../src/Tools/Write.js"
import { execute, executeOne, runtimeLayer, tempDir, text, toolsLayer, use, writeTree } from "./helpers.js"

const write = (file: string, content: string) => use("Write", { file_path: file, content })

describe("Write", () => {
  it.effect("creates a file and its missing parent directories", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      const outcome = yield* executeOne(write(path.join(dir, "a/b/c.txt"), "one\ntwo\n")).pipe(
        Effect.provide(runtimeLayer(dir))
      )
      expect(text(outcome)).toBe("File created successfully at: a/b/c.txt (2 lines)")
      expect(fs.readFileSync(path.join(dir, "a/b/c.txt"), "utf8")).toBe("one\ntwo\n")
    }))

  it.effect("refuses to replace a file never read, leaving it untouched", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "keep.txt": "precious\n" })
      const outcome = yield* executeOne(write(path.join(dir, "keep.txt"), "gone")).pipe(
        Effect.provide(runtimeLayer(dir))
      )
      expect(outcome.status).toBe("error")
      expect(text(outcome)).toContain("File has not been read yet")
      expect(text(outcome)).toContain("Read it first")
      expect(fs.readFileSync(path.join(dir, "keep.txt"), "utf8")).toBe("precious\n")
    }))

  it.effect("refuses to replace a file read only in part, or changed since the read", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "part.txt": "1\n2\n3\n", "moved.txt": "old\n" })
      yield* Effect.gen(function*() {
        const [, partial] = yield* execute(
          use("Read", { file_path: path.join(dir, "part.txt"), limit: 1 }),
          write(path.join(dir, "part.txt"), "x")
        )
        expect(text(partial!)).toContain("only been partially read")
        yield* executeOne(use("Read", { file_path: path.join(dir, "moved.txt") }))
        fs.writeFileSync(path.join(dir, "moved.txt"), "changed\n")
        const stale = yield* executeOne(write(path.join(dir, "moved.txt"), "mine"))
        expect(text(stale)).toContain("modified since it was last read")
        expect(fs.readFileSync(path.join(dir, "moved.txt"), "utf8")).toBe("changed\n")
      }).pipe(Effect.provide(runtimeLayer(dir)))
    }))

  it.effect("replaces a fully read file atomically, keeping its mode and leaving no temp file", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "run.sh": "echo old\n" })
      fs.chmodSync(path.join(dir, "run.sh"), 0o754)
      const [, outcome, again] = yield* execute(
        use("Read", { file_path: path.join(dir, "run.sh") }),
        write(path.join(dir, "run.sh"), "echo new\n"),
        // The write updated FileState: a second write in the same turn needs no new read.
        write(path.join(dir, "run.sh"), "echo newer\n")
      ).pipe(Effect.provide(runtimeLayer(dir)))
      expect(text(outcome!)).toBe("The file run.sh has been overwritten (1 line).")
      expect(outcome!.ui.find((b) => b._tag === "Diff")).toBeDefined()
      expect(again!.status).toBe("success")
      expect(fs.readFileSync(path.join(dir, "run.sh"), "utf8")).toBe("echo newer\n")
      expect(fs.statSync(path.join(dir, "run.sh")).mode & 0o777).toBe(0o754)
      expect(fs.readdirSync(dir)).toEqual(["run.sh"])
    }))

  it.effect("replacing an existing file is destructive, creating one is not; claims are per file", () =>
    Effect.gen(function*() {
      const dir = tempDir()
      writeTree(dir, { "x.txt": "x" })
      yield* Effect.gen(function*() {
        const service = yield* Write
        expect(service.plan({ file_path: path.join(dir, "x.txt"), content: "" }).traits.destructive).toBe(true)
        expect(service.plan({ file_path: path.join(dir, "y.txt"), content: "" }).traits.destructive).toBe(false)
        expect(service.plan({ file_path: path.join(dir, "y.txt"), content: "" }).traits.concurrencySafe).toBe(false)
        expect(service.plan({ file_path: "y.txt", content: "" }).claims).toEqual([{
          resource: `file:${path.join(dir, "y.txt")}`,
          access: "write"
        }])
      }).pipe(Effect.provide(toolsLayer(dir)))
    }))

  it("a process SIGKILLed in the middle of a large write leaves the old content, never a mix", async () => {
    const dir = tempDir("crash-")
    const target = path.join(dir, "big.bin")
    const old = Buffer.alloc(1024 * 1024, "O")
    fs.writeFileSync(target, old)
    const script = fileURLToPath(new URL("./fixtures/writeLarge.ts", import.meta.url))
    const child = childProcess.spawn(process.execPath, ["--import", "tsx", script, target, "512", "N"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const temp = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()))
      child.once("exit", (code) => reject(new Error(`child exited early (${code})`)))
    })
    // Kill once the temp file has started to fill, i.e. in the middle of writing it.
    while (!fs.existsSync(temp) || fs.statSync(temp).size === 0) await new Promise((r) => setImmediate(r))
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
    const left = fs.statSync(temp).size
    expect(left).toBeLessThan(512 * 1024 * 1024) // really killed mid-write
    const after = fs.readFileSync(target)
    expect(after.equals(old)).toBe(true)
    // The only trace is the hidden temp file, named after the target.
    expect(path.basename(temp)).toMatch(/^\.big\.bin\.[0-9a-f]{12}\.tmp$/)
  })

  it("the temp file a SIGKILLed write left behind is removed by the next write of that file, and only that file's", async () => {
    const dir = tempDir("crash-")
    const target = path.join(dir, "big.bin")
    fs.writeFileSync(target, Buffer.alloc(1024, "O"))
    // Another file's leftover, and a file that only looks like one, must survive.
    const other = path.join(dir, ".other.bin.0123456789ab.tmp")
    fs.writeFileSync(other, "x")
    const lookalike = path.join(dir, ".big.bin.notatempfile.tmp")
    fs.writeFileSync(lookalike, "x")
    const script = fileURLToPath(new URL("./fixtures/writeLarge.ts", import.meta.url))
    const child = childProcess.spawn(process.execPath, ["--import", "tsx", script, target, "512", "N"], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    const temp = await new Promise<string>((resolve, reject) => {
      child.stdout.setEncoding("utf8").once("data", (line: string) => resolve(line.trim()))
      child.once("exit", (code) => reject(new Error(`child exited early (${code})`)))
    })
    while (!fs.existsSync(temp) || fs.statSync(temp).size === 0) await new Promise((r) => setImmediate(r))
    child.kill("SIGKILL")
    await new Promise((resolve) => child.once("exit", resolve))
    expect(fs.statSync(temp).size).toBeGreaterThan(0) // the leftover is there, partly written

    // The next write of big.bin, through the Write tool, as a model would do it.
    const outcome = await Effect.runPromise(
      Effect.gen(function*() {
        expect((yield* executeOne(use("Read", { file_path: target }))).status).toBe("success")
        return yield* executeOne(use("Write", { file_path: target, content: "fresh\n" }))
      }).pipe(Effect.provide(runtimeLayer(dir)))
    )
    expect(outcome.status).toBe("success")
    expect(fs.readFileSync(target, "utf8")).toBe("fresh\n")
    expect(fs.existsSync(temp)).toBe(false)
    expect(fs.readdirSync(dir).sort()).toEqual([path.basename(lookalike), path.basename(other), "big.bin"].sort())
  })

  it("a write that completes replaces the content whole", async () => {
    const dir = tempDir("crash-")
    const target = path.join(dir, "big.bin")
    fs.writeFileSync(target, Buffer.alloc(1024, "O"))
    const script = fileURLToPath(new URL("./fixtures/writeLarge.ts", import.meta.url))
    const output = childProcess.execFileSync(process.execPath, ["--import", "tsx", script, target, "8", "N"], {
      encoding: "utf8"
    })
    expect(output.trim().endsWith("done")).toBe(true)
    expect(fs.readFileSync(target).equals(Buffer.alloc(8 * 1024 * 1024, "N"))).toBe(true)
    expect(fs.readdirSync(dir)).toEqual(["big.bin"])
  })
})
