/**
 * Cold start of the CLI: wall time from spawn to exit of `exec` running one trivial Read, for the shipped bin
 * (launcher + one-file bundle + V8 code cache) and for the unbundled build (`dist/cli/main.js`, hundreds of
 * modules), side by side with `node -e 0` on the same machine at the same moment (median of 25 runs each, runs
 * interleaved, after a warm-up), and for the bin on a Node whose V8 rejects the shipped cache (simulated by a damaged
 * copy: the launcher's own cache in the user's cache directory, made by the warm-up, is what it runs from). Target:
 * the bin <= 300 ms. Beside it, the CPU time (user + system, children included, to the millisecond: bash's `times`)
 * and the peak RSS of each (`/usr/bin/time`, when it is installed). Target: `exec` <= 3x the CPU of `node -e 0`.
 *
 * Run: `npm run bench -- cli` (builds first).
 *
 * @since 0.2.0
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { median, report } from "./stats.js"

const root = path.resolve(import.meta.dirname, "..")
const RUNS = 25

export const run = async (): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "etr-bench-cli-"))
  fs.writeFileSync(path.join(dir, "a.txt"), "hello\n")
  const stdin = JSON.stringify([{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.txt" } }])
  const rejected = path.join(dir, "bin-rejected-cache")
  fs.mkdirSync(rejected)
  for (const name of ["cli.cjs", "cli.cache", "effect-tool-runtime.js"]) {
    fs.copyFileSync(path.join(root, "dist/bin", name), path.join(rejected, name))
  }
  const damaged = fs.readFileSync(path.join(rejected, "cli.cache"))
  for (let i = 0; i < 16; i++) damaged[i] = damaged[i]! ^ 0xff
  fs.writeFileSync(path.join(rejected, "cli.cache"), damaged)
  // Every subject's user cache directory is this one: only the damaged copy writes to it.
  const env = { ...process.env, XDG_CACHE_HOME: path.join(dir, "cache") }
  const subjects: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
    ["node -e 0", ["-e", "0"]],
    ["exec, shipped bin (bundle)", [
      path.join(root, "dist/bin/effect-tool-runtime.js"),
      "exec",
      "--no-claude-settings"
    ]],
    ["exec, shipped cache rejected (user cache)", [
      path.join(rejected, "effect-tool-runtime.js"),
      "exec",
      "--no-claude-settings"
    ]],
    ["exec, unbundled dist/cli/main.js", [path.join(root, "dist/cli/main.js"), "exec", "--no-claude-settings"]]
  ]
  const times = subjects.map(() => [] as Array<number>)
  const cpu = subjects.map(() => [] as Array<number>)
  const rss = subjects.map(() => [] as Array<number>)
  const timeTool = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : undefined
  // CPU time from bash's `times` (the children's user and system time, to the millisecond): /usr/bin/time prints
  // centiseconds, each of user and system rounded, which made 207 ms read as 250 (3.1x for 2.6x). /usr/bin/time, when
  // present, still runs under bash for the peak RSS; its own ~1 ms of CPU is counted for every subject alike.
  const timed = (args: ReadonlyArray<string>) =>
    spawnSync("bash", [
      "-c",
      "\"$@\"; status=$?; times >&2; exit $status",
      "bench",
      ...(timeTool === undefined ? [] : [timeTool, "-f", "rss %M"]),
      process.execPath,
      ...args
    ], { cwd: dir, input: stdin, encoding: "utf8", env })
  for (let i = -1; i < RUNS; i++) {
    for (const [index, [name, args]] of subjects.entries()) {
      const started = performance.now()
      const result = timed(args)
      const elapsed = performance.now() - started
      // `times` prints the shell's own times, then its children's: "0m0.207s 0m0.031s".
      const children = /(\d+)m(\d+\.\d+)s (\d+)m(\d+\.\d+)s\s*$/.exec(result.stderr)
      const peak = /rss (\d+)/.exec(result.stderr)
      if (i >= 0 && children !== null) {
        const seconds = (minutes: string, rest: string) => Number(minutes) * 60 + Number(rest)
        cpu[index]!.push(1000 * (seconds(children[1]!, children[2]!) + seconds(children[3]!, children[4]!)))
        if (peak !== null) rss[index]!.push(Number(peak[1]) / 1024)
      }
      if (result.status !== 0) throw new Error(`${name} failed: ${result.stderr}`)
      if (name !== "node -e 0" && !result.stdout.includes("\"status\":\"success\"")) {
        throw new Error(`${name}: unexpected output ${result.stdout}`)
      }
      if (i >= 0) times[index]!.push(elapsed)
    }
  }
  fs.rmSync(dir, { recursive: true, force: true })
  report(
    `CLI cold start (median of ${RUNS}, wall, spawn to exit; load average ${
      os.loadavg()[0]!.toFixed(1)
    } on ${os.cpus().length} cores)`,
    subjects.map(([name], index) => {
      const ms = median(times[index]!)
      return [
        name,
        `${ms.toFixed(0)} ms`,
        index === 0
          ? "the floor"
          : `${(ms / median(times[0]!)).toFixed(1)}x node -e 0${index === 1 ? "; target <= 300 ms" : ""}`
      ] as const
    })
  )
  if (cpu[0]!.length > 0) {
    report(
      `CLI cold start: CPU time (user + system, children included) and peak RSS, median of ${RUNS} (bash's times; RSS from /usr/bin/time)`,
      subjects.map(([name], index) => {
        const ms = median(cpu[index]!)
        return [
          name,
          `${ms.toFixed(0)} ms CPU`,
          `${rss[index]!.length === 0 ? "" : `${median(rss[index]!).toFixed(0)} MiB RSS`}${
            index === 0 ? "; the floor" : `; ${(ms / median(cpu[0]!)).toFixed(1)}x node -e 0 (target <= 3x)`
          }`
        ] as const
      })
    )
  }
}
