/**
 * File tool benchmarks.
 *
 * - Grep over a generated tree of 20,000 small files, through the whole ToolRuntime pipeline, against running `rg`
 *   directly with the same arguments (median of 5 runs each, after a warm-up; target ratio <= 1.2x).
 * - Glob of every `.ts` file over the same tree, through the whole ToolRuntime pipeline and as a bare tool call, against its peer:
 *   tinyglobby, then an lstat of every match and a sort by mtime (what Glob must do at least; target <= 1.5x); and
 *   over a tree of as many files spread over 5,000 directories, where the cost per directory shows.
 * - Read of a 50 MB file by range (offset near the middle, limit 100): RSS and heap growth (target < 16 MB).
 *
 * Run: `npx tsx -e 'import("./bench/files.ts").then(m => m.run())'`
 *
 * @since 0.1.0
 */
import { NodeContext } from "@effect/platform-node"
import { rgPath } from "@vscode/ripgrep"
import { Effect, Layer, ManagedRuntime } from "effect"
import * as childProcess from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { glob } from "tinyglobby"
import { Approver } from "../dist/Permission/Approver.js"
import { ToolRuntime } from "../dist/Runtime/ToolRuntime.js"
import { FileState } from "../dist/Session/FileState.js"
import { Workspace } from "../dist/Session/Workspace.js"
import { testRuntime } from "../dist/testing/index.js"
import * as FileTools from "../dist/Tools/FileTools.js"
import { Glob } from "../dist/Tools/Glob.js"
import { Grep, ripgrepArgs } from "../dist/Tools/Grep.js"
import type { GrepInput } from "../dist/Tools/Grep.js"

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const generateTree = (root: string, files: number): void => {
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `d${Math.floor(i / 100)}`)
    if (i % 100 === 0) fs.mkdirSync(dir, { recursive: true })
    const body = `// file ${i}\nexport const value${i} = ${i}\n${
      i % 50 === 0 ? "const needle = true\n" : ""
    }function f${i}() { return ${i} }\n`
    fs.writeFileSync(path.join(dir, `f${i}.ts`), body)
  }
}

const runRg = (args: ReadonlyArray<string>, cwd: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const child = childProcess.spawn(rgPath, args, { cwd, stdio: ["ignore", "pipe", "ignore"] })
    let bytes = 0
    child.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length))
    child.on("error", reject)
    child.on("close", () => resolve(bytes))
  })

const time = async (f: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await f()
  return performance.now() - start
}

const gc = (): void => {
  v8.setFlagsFromString("--expose-gc")
  ;(vm.runInNewContext("gc") as () => void)()
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`

/** Files spread thin: 4 per directory, three levels deep (where the cost per directory shows). */
const generateDeepTree = (root: string, files: number): void => {
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `a${i % 10}`, `b${Math.floor(i / 10) % 20}`, `c${Math.floor(i / 200) % 25}`)
    fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `f${i}.${i % 3 === 0 ? "js" : "ts"}`), `export const value${i} = ${i}\n`)
  }
}

/** Glob of every `.ts` file under `cwd`, against tinyglobby + lstat + sort by mtime. */
const benchGlob = async (cwd: string, label: string): Promise<void> => {
  const tools = FileTools.layer.pipe(
    Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), FileState.layer())),
    Layer.provide(NodeContext.layer)
  )
  const runtime = ManagedRuntime.make(testRuntime(FileTools.tools, tools, Approver.allowAll))
  const tool = ManagedRuntime.make(tools)
  const context = {
    toolUseId: "toolu_bench",
    toolName: "Glob",
    progress: () => Effect.void,
    isReadDenied: () => false
  }
  const globInput = { pattern: "**/*.ts" }
  const executeGlob = () =>
    runtime.runPromise(
      Effect.flatMap(
        ToolRuntime,
        (rt) => rt.executeOne({ type: "tool_use", id: "toolu_bench", name: "Glob", input: globInput })
      )
    )
  const callGlob = () => tool.runPromise(Effect.flatMap(Glob, (g) => Effect.scoped(g.plan(globInput).call(context))))
  const peerGlob = async () => {
    const files = await glob(globInput.pattern, { cwd, absolute: true, onlyFiles: true, dot: true })
    const stats = await Promise.all(files.map((file) => fs.promises.lstat(file)))
    return files.map((file, i) => ({ file, mtimeMs: stats[i]!.mtimeMs })).sort((a, b) =>
      b.mtimeMs - a.mtimeMs || a.file.localeCompare(b.file)
    ).slice(0, 100)
  }
  const globCheck = await executeGlob()
  if (globCheck.status !== "success") throw new Error(`Glob failed: ${JSON.stringify(globCheck.result)}`)
  await peerGlob()
  // All three run in this process (libuv's threads included), so its CPU time is theirs: steadier than wall time
  // on a shared machine.
  const results: Array<Array<{ readonly wall: number; readonly cpu: number }>> = [[], [], []]
  const contenders = [executeGlob, callGlob, peerGlob].map((f) => async () => {
    const cpuBefore = process.cpuUsage()
    const wall = await time(f)
    const cpu = process.cpuUsage(cpuBefore)
    return { wall, cpu: (cpu.user + cpu.system) / 1000 }
  })
  for (let i = 0; i < 5; i++) {
    for (let j = 0; j < 3; j++) {
      const k = (i + j) % 3
      results[k]!.push(await contenders[k]!())
    }
  }
  const [p, c, d] = results.map((runs) => median(runs.map((run) => run.wall))) as [number, number, number]
  const [pc, cc, dc] = results.map((runs) => median(runs.map((run) => run.cpu))) as [number, number, number]
  console.log(
    `Glob ${JSON.stringify(globInput)} over ${label} (median of 5): tinyglobby + lstat + sort ${d.toFixed(1)} ms (CPU ${
      dc.toFixed(1)
    } ms); tool call ${c.toFixed(1)} ms (${(c / d).toFixed(2)}x; CPU ${cc.toFixed(1)} ms, ${
      (cc / dc).toFixed(2)
    }x); through ToolRuntime ${p.toFixed(1)} ms (${(p / d).toFixed(2)}x; CPU ${pc.toFixed(1)} ms, ${
      (pc / dc).toFixed(2)
    }x)`
  )
  await runtime.dispose()
  await tool.dispose()
}

/**
 * Runs both benchmarks and prints their numbers.
 *
 * @since 0.1.0
 */
export const run = async (): Promise<void> => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "bench-files-")))
  try {
    const tree = path.join(root, "tree")
    generateTree(tree, 20_000)
    const tools = FileTools.layer.pipe(
      Layer.provide(Layer.mergeAll(Workspace.layer({ cwd: tree }), FileState.layer())),
      Layer.provide(NodeContext.layer)
    )
    const runtime = ManagedRuntime.make(testRuntime(FileTools.tools, tools, Approver.allowAll))
    const execute = (input: Record<string, unknown>) =>
      runtime.runPromise(
        Effect.flatMap(ToolRuntime, (rt) => rt.executeOne({ type: "tool_use", id: "toolu_bench", name: "Grep", input }))
      )
    const tool = ManagedRuntime.make(tools)
    const context = {
      toolUseId: "toolu_bench",
      toolName: "Grep",
      progress: () => Effect.void,
      isReadDenied: () => false
    }
    const callTool = (input: GrepInput) =>
      tool.runPromise(Effect.flatMap(Grep, (grep) => Effect.scoped(grep.plan(input).call(context))))

    for (const input of [{ pattern: "needle" }, { pattern: "value\\d+", output_mode: "content" as const }]) {
      const args = ripgrepArgs(input, ".")
      const check = await execute(input)
      if (check.status !== "success") throw new Error(`Grep failed: ${JSON.stringify(check.result)}`)
      await runRg(args, tree)
      const pipeline: Array<number> = []
      const call: Array<number> = []
      const direct: Array<number> = []
      // Interleaved, rotating who goes first: rg's own run-to-run noise on a small, shared machine is large.
      const contenders = [
        () => time(() => execute(input)),
        () => time(() => callTool(input)),
        () => time(() => runRg(args, tree))
      ]
      const results = [pipeline, call, direct]
      for (let i = 0; i < 5; i++) {
        for (let j = 0; j < 3; j++) {
          const k = (i + j) % 3
          results[k]!.push(await contenders[k]!())
        }
      }
      const [p, c, d] = [median(pipeline), median(call), median(direct)]
      console.log(
        `Grep ${JSON.stringify(input)} over 20,000 files (median of 5): rg ${d.toFixed(1)} ms; ` +
          `tool call ${c.toFixed(1)} ms (${(c / d).toFixed(2)}x); through ToolRuntime ${p.toFixed(1)} ms (${
            (p / d).toFixed(2)
          }x)`
      )
    }

    await benchGlob(tree, "20,000 files in 200 directories")
    const deepTree = path.join(root, "deep")
    generateDeepTree(deepTree, 20_000)
    await benchGlob(deepTree, "20,000 files in 5,000 directories (a third not .ts)")

    // Read of a 50 MB file by range.
    const big = path.join(root, "big.txt")
    const line = "0123456789".repeat(10)
    const handle = fs.openSync(big, "w")
    const block = Array.from({ length: 10_000 }, (_, i) => `${i} ${line}`).join("\n") + "\n"
    let totalLines = 0
    for (; fs.fstatSync(handle).size < 50 * 1024 * 1024; totalLines += 10_000) fs.writeSync(handle, block)
    fs.closeSync(handle)
    const readInput = { file_path: big, offset: Math.floor(totalLines / 2), limit: 100 }
    await execute({ pattern: "warm-up" })
    gc()
    const before = process.memoryUsage()
    let peakRss = before.rss
    let peakHeap = before.heapUsed
    const sampler = setInterval(() => {
      const now = process.memoryUsage()
      peakRss = Math.max(peakRss, now.rss)
      peakHeap = Math.max(peakHeap, now.heapUsed)
    }, 1)
    const started = performance.now()
    const outcome = await runtime.runPromise(
      Effect.flatMap(
        ToolRuntime,
        (rt) => rt.executeOne({ type: "tool_use", id: "toolu_read", name: "Read", input: readInput })
      )
    )
    const elapsed = performance.now() - started
    clearInterval(sampler)
    const after = process.memoryUsage()
    peakRss = Math.max(peakRss, after.rss)
    peakHeap = Math.max(peakHeap, after.heapUsed)
    const content = outcome.result.content
    const shown = typeof content === "string" ? content.split("\n").filter((l) => /^\s*\d+\t/.test(l)).length : 0
    console.log(
      `Read of a ${
        mb(fs.statSync(big).size)
      } file (${totalLines} lines), offset ${readInput.offset}, limit 100: ${outcome.status}, ${shown} lines in ${
        elapsed.toFixed(1)
      } ms; ` +
        `peak RSS growth ${mb(peakRss - before.rss)}, peak heap growth ${
          mb(peakHeap - before.heapUsed)
        } (target < 16 MB)`
    )
    await runtime.dispose()
    await tool.dispose()
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}
