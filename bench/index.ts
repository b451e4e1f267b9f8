/**
 * `npm run bench`: every benchmark in turn, printing numbers. Benchmarks never assert: numbers go in the notes.
 * `npm run bench -- pipeline scheduler` runs only the named ones. Each ends with its time and the machine's load
 * average (1, 5, 15 minutes) as it finished: ratios beside a peer hold better than absolute figures on a busy machine,
 * but both move.
 */
import * as os from "node:os"

const all = [
  "pipeline",
  "scheduler",
  "permissions",
  "files",
  "bash",
  "toolsearch",
  "cli",
  "mcp",
  "webfetch",
  "preview",
  "messages",
  "loop",
  "lsp",
  "durable"
] as const

const wanted = process.argv.slice(2)
for (const name of all) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  const started = performance.now()
  const module = (await import(`./${name}.ts`)) as { readonly run: () => Promise<void> }
  await module.run()
  const load = os.loadavg().map((average) => average.toFixed(2)).join(" ")
  console.log(
    `  (${name}: ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s; load average ${load} on ${os.cpus().length} cores)`
  )
}
