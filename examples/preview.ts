/**
 * A streamed Edit, previewed before its input is complete, and the activity line of each call.
 * `npm start` runs it after the demo (or: `npx tsx examples/preview.ts`).
 */
import { NodeContext } from "@effect/platform-node"
import { Console, Effect, Layer, Stream } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRegistry } from "../src/Catalog/ToolRegistry.js"
import { ToolHooks } from "../src/Hooks/ToolHooks.js"
import { Approver } from "../src/Permission/Approver.js"
import { PermissionPolicy } from "../src/Permission/PermissionPolicy.js"
import { activityOf } from "../src/Runtime/Activity.js"
import { ToolUsePart } from "../src/Runtime/Preview.js"
import { ToolRuntime } from "../src/Runtime/ToolRuntime.js"
import { FileState } from "../src/Session/FileState.js"
import { ResultStore } from "../src/Session/ResultStore.js"
import { Workspace } from "../src/Session/Workspace.js"
import { toText } from "../src/Tool/Presentation.js"
import * as Edit from "../src/Tools/Edit.js"

/** The chunks an Anthropic stream sends as `input_json_delta` for one Edit. */
const deltas = [
  "{\"file_path\": \"src/gre",
  "et.ts\", \"old_string\": \"\", \"new_",
  "string\": \"export const greet = (name: string) => ",
  "`Hello, ${name}`\\n\"}"
]

export const program = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  const handle = yield* ToolRuntime.start(Stream.make(
    ToolUsePart.Start({ id: "toolu_edit", name: "Edit" }),
    ...deltas.map((partialJson) => ToolUsePart.Delta({ id: "toolu_edit", partialJson })),
    ToolUsePart.End({ id: "toolu_edit" })
  ))
  yield* Stream.runForEach(handle.events, (event) => {
    switch (event._tag) {
      case "Previewed":
        return Console.log(`preview   ${toText(event.ui)}   (input so far: ${JSON.stringify(event.partialInput)})`)
      case "Started":
        return Console.log(`running   ${event.activity}`)
      case "Completed":
        return Console.log(`done      ${activityOf(registry, event.outcome)}: ${event.outcome.status}`)
      default:
        return Effect.void
    }
  })
  return yield* handle.await
})

const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "preview-example-")))
fs.mkdirSync(path.join(cwd, "src"))
const tools = Edit.layer.pipe(
  Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), FileState.layer()).pipe(Layer.provideMerge(NodeContext.layer)))
)
const registry = Layer.provide(ToolRegistry.layer([Edit.Edit]), tools)
export const runtime = ToolRuntime.layer.pipe(
  Layer.provideMerge(registry),
  Layer.provide([PermissionPolicy.toolOnly, Approver.allowAll, ToolHooks.none, ResultStore.layerMemory()])
)

if (import.meta.url === `file://${process.argv[1]}`) {
  Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(runtime))).then(
    () => console.log(fs.readFileSync(path.join(cwd, "src/greet.ts"), "utf8")),
    (error: unknown) => {
      console.error(error)
      process.exitCode = 1
    }
  )
}
