import * as os from "node:os"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

/**
 * Tests that spawn the CLI, real servers or `npm`, or run the Bash corpus end to end: the `e2e` project. Everything
 * else is `unit` (`npx vitest run --project unit`). `npm test` runs both.
 */
const e2e = [
  "test/cli/**/*.test.ts",
  "test/Mcp/**/*.test.ts",
  "test/package.test.ts",
  "test/demo.test.ts",
  "test/readme.mcp.test.ts",
  "test/**/*.e2e.test.ts"
]

// vitest's default is one fork fewer than the cores, one on a 2-core machine; the suite spends much of its time
// waiting on child processes, so two at least.
const maxWorkers = Math.max(2, os.availableParallelism() - 1)

export default defineConfig({
  resolve: {
    alias: {
      "effect-tool-runtime/tools": path.resolve(__dirname, "src/Tools/index.ts"),
      "effect-tool-runtime/testing": path.resolve(__dirname, "src/testing/index.ts"),
      "effect-tool-runtime/ai": path.resolve(__dirname, "src/Integrations/index.ts"),
      "effect-tool-runtime/durable": path.resolve(__dirname, "src/Durable/index.ts"),
      "effect-tool-runtime": path.resolve(__dirname, "src/index.ts")
    }
  },
  test: {
    setupFiles: ["test/support/setup.ts"],
    pool: "forks",
    // vitest 3 decides at the pool, for every project, whether a worker process serves one file or many; each
    // project's own `poolOptions.forks.isolate` then decides whether a file gets a fresh module graph. Workers
    // serve many files; the projects say which want fresh modules.
    poolOptions: { forks: { isolate: false } },
    maxWorkers,
    // As many workers from start to end: a non-isolated run with fewer minWorkers than maxWorkers ended with
    // tinypool's "Terminating worker thread" (the failure vitest-dev/vitest#8564 traces to retiring idle workers).
    minWorkers: maxWorkers,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: e2e,
          // vitest's own default timeouts (5 s a test), as a user's project has them: a slow test says so itself.
          // One module graph per worker, not a fresh one per file: importing effect and src again for each of some
          // hundred files was more than half the run's CPU. A file must not lean on another's leftovers
          // (test/support/setup.ts undoes the one thing @effect/vitest leaves behind).
          poolOptions: { forks: { isolate: false } }
        }
      },
      {
        extends: true,
        // Child processes, installs and servers: each file's beforeAll may build dist/ or install a package. Each
        // file imports its modules afresh (the worker process is shared, see the pool above).
        test: {
          name: "e2e",
          include: e2e,
          testTimeout: 60_000,
          hookTimeout: 300_000,
          poolOptions: { forks: { isolate: true } }
        }
      }
    ]
  }
})
