import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { BashTool } from "./src/Tools/Bash.js"
import { ResultStore } from "./src/Runtime/ResultStore.js"
import { Workspace } from "./src/Tools/Workspace.js"
const layer = BashTool.layer({ killGrace: "500 millis" }).pipe(Layer.provide(Layer.mergeAll(Workspace.layer({ cwd: "/tmp/ws1" }), ResultStore.layer("/tmp/ws1-store"))), Layer.provideMerge(NodeContext.layer))
const ctx = { toolUseId: "t1", toolName: "Bash", progress: (p: unknown) => Effect.sync(() => console.log("progress", p)) }
const go = (command: string, timeout?: number) => Effect.gen(function*() {
  const bash = yield* BashTool
  const t = Date.now()
  const r = yield* Effect.either(Effect.scoped(bash.call({ command, ...(timeout ? { timeout } : {}) }, ctx)))
  console.log(JSON.stringify(command), Date.now() - t, "ms", r._tag === "Right" ? { ...r.right, output: r.right.output.slice(0, 200) } : r.left)
})
Effect.runPromise(Effect.gen(function*() {
  yield* go("echo a; echo b >&2; echo c")
  yield* go("false")
  yield* go("grep nomatch /etc/hostname")
  yield* go("sleep 100 & echo started")
  yield* go("trap '' TERM; sleep 1000", 300)
  yield* go("setsid sleep 1000 & nohup sleep 1000 >/dev/null 2>&1 & echo $$", 300)
  yield* go("cut -d' ' -f5 /proc/$$/stat; echo $$")
  yield* go("for i in 1 2 3; do echo line $i; sleep 0.6; done")
  yield* go("echo $EFFECT_TOOL_RUNTIME_CALL; cat")
  yield* go("if then")
}).pipe(Effect.provide(layer)))
