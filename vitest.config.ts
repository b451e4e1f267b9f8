import * as path from "node:path"
import { defineConfig } from "vitest/config"

export default defineConfig({
  resolve: {
    alias: {
      "effect-tool-runtime/tools": path.resolve(__dirname, "src/Tools/index.ts"),
      "effect-tool-runtime/testing": path.resolve(__dirname, "src/testing/index.ts"),
      "effect-tool-runtime/ai": path.resolve(__dirname, "src/Integrations/index.ts"),
      "effect-tool-runtime": path.resolve(__dirname, "src/index.ts")
    }
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks"
  }
})
