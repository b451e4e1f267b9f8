/**
 * Cost of previewing a streamed tool_use: the runtime's `assemble` (parses again only when the text has grown by a
 * quarter) side by side, in the same process, with parsing the whole text on every delta, for a small Edit and for a
 * 200 kB Write streamed in 2,000 deltas. CPU time per streamed block, median of runs.
 */
import { Effect, Schema, Stream } from "effect"
import { makeRegistry } from "../dist/Catalog/ToolRegistry.js"
import { assemble, parsePartial, ToolUsePart } from "../dist/Runtime/Preview.js"
import * as Tool from "../dist/Tool/Tool.js"
import { median, report } from "./stats.js"

const Write = Tool.make("Write", {
  description: "bench",
  input: Schema.Struct({ file_path: Schema.String, content: Schema.String }),
  touchesEnvironment: false
})
const registry = makeRegistry([{
  definition: Write.definition,
  service: Write.service({ call: () => Effect.succeed("") }) as Tool.AnyService
}])

const deltasOf = (json: string, count: number): ReadonlyArray<string> => {
  const size = Math.ceil(json.length / count)
  return Array.from({ length: Math.ceil(json.length / size) }, (_, i) => json.slice(i * size, (i + 1) * size))
}

const cpu = (f: () => void): number => {
  const start = process.cpuUsage()
  f()
  const used = process.cpuUsage(start)
  return (used.user + used.system) / 1000
}

const measure = (deltas: ReadonlyArray<string>, runs: number) => {
  let previews = 0
  const parts = Stream.make(
    ToolUsePart.Start({ id: "t", name: "Write" }),
    ...deltas.map((partialJson) => ToolUsePart.Delta({ id: "t", partialJson })),
    ToolUsePart.End({ id: "t" })
  )
  const ours = assemble(registry, parts, () => Effect.sync(() => void previews++)).pipe(Stream.runDrain)
  const oursMs: Array<number> = []
  const naiveMs: Array<number> = []
  for (let r = 0; r < runs; r++) {
    previews = 0
    oursMs.push(cpu(() => Effect.runSync(ours)))
    naiveMs.push(cpu(() => {
      let text = ""
      for (const delta of deltas) {
        text += delta
        parsePartial(text)
      }
    }))
  }
  return { ours: median(oursMs), naive: median(naiveMs), previews }
}

export const run = async (): Promise<void> => {
  const small = JSON.stringify({ file_path: "src/a.ts", content: "export const a = 1\n".repeat(15) })
  const large = JSON.stringify({
    file_path: "src/big.ts",
    content: "export const line = \"some text\"\n".repeat(6_250)
  })
  const s = measure(deltasOf(small, 30), 50)
  const l = measure(deltasOf(large, 2_000), 5)
  report("preview: CPU time per streamed tool_use (median)", [
    [`small (${small.length} B, 30 deltas) assemble`, `${s.ours.toFixed(2)} ms`, `${s.previews} previews`],
    ["small: parse on every delta", `${s.naive.toFixed(2)} ms`, ""],
    [
      `large (${Math.round(large.length / 1000)} kB, 2,000 deltas) assemble`,
      `${l.ours.toFixed(1)} ms`,
      `${l.previews} previews`
    ],
    ["large: parse on every delta", `${l.naive.toFixed(1)} ms`, `assemble is ${(l.naive / l.ours).toFixed(0)}x cheaper`]
  ])
}
