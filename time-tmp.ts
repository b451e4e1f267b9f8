import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { BashTool } from "./src/Tools/Bash.js"
import { ResultStore } from "./src/Runtime/ResultStore.js"
import { Workspace } from "./src/Tools/Workspace.js"
import * as PT from "./src/Tools/Shell/ProcessTree.js"
import { spawn } from "node:child_process"
const layer = BashTool.layer({}).pipe(Layer.provide(Layer.mergeAll(Workspace.layer({ cwd: "/tmp/ws1" }), ResultStore.layer("/tmp/ws1-store"))), Layer.provideMerge(NodeContext.layer))
const ctx = { toolUseId: "t1", toolName: "Bash", progress: () => Effect.void }
const raw = () => new Promise<void>((res) => { const c = spawn("bash", ["-c", "true"]); c.on("exit", () => res()) })
let t = performance.now(); for (let i = 0; i < 20; i++) PT.members({ pgid: 1, marker: "x" }); console.log("scan ms", (performance.now() - t) / 20)
t = performance.now(); for (let i = 0; i < 20; i++) await raw(); console.log("raw ms", (performance.now() - t) / 20)
await Effect.runPromise(Effect.gen(function*() {
  const bash = yield* BashTool
  for (let k = 0; k < 3; k++) {
  const t = performance.now()
  for (let i = 0; i < 20; i++) yield* Effect.scoped(bash.call({ command: "true" }, ctx))
  console.log("tool ms", (performance.now() - t) / 20)
  }
}).pipe(Effect.provide(layer)))
