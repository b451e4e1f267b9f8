/**
 * Every operation of the LSP tool on real servers (typescript-language-server, pyright) over the fixture projects,
 * through the runtime: the locations answered are compared with positions computed here from the fixture text
 * (indexOf of the symbol), never with the server's own output. A Read deny rule hides what is in the denied file.
 */
import { describe, expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { call, configOf, fixtureWorkspace, locationsIn, positionOf, runtimeLayer } from "./support.js"

const dir = fixtureWorkspace()
const runtime = runtimeLayer(dir, configOf(dir, `LSP_TEST_MARKER=${randomUUID()}`), {
  deny: ["Read(./ts/src/secret.ts)"]
})
const lsp = (operation: string, file: string, at: { line: number; character: number }, query?: string) =>
  call("LSP", {
    operation,
    filePath: `${dir}/${file}`,
    line: at.line,
    character: at.character,
    ...(query === undefined ? {} : { query })
  })

describe.sequential("LSP tool, TypeScript", () => {
  const ts = (rel: string) => `ts/src/${rel}`
  const pos = (rel: string, needle: string, occurrence = 0) => positionOf(dir, ts(rel), needle, occurrence)

  layer(runtime, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect(
      "goToDefinition: the call of totalArea in main.ts leads to its declaration in shapes.ts",
      () =>
        Effect.gen(function*() {
          const result = yield* lsp("goToDefinition", ts("main.ts"), pos("main.ts", "totalArea(["))
          expect(result.status).toBe("success")
          expect(locationsIn(result.text)).toEqual([pos("shapes.ts", "totalArea(shapes").at])
          expect(result.text).toContain("export function totalArea(shapes: ReadonlyArray<Shape>): number {")
        }),
      90_000
    )

    it.effect("findReferences: the import, the call and the declaration of totalArea, nothing else", () =>
      Effect.gen(function*() {
        const result = yield* lsp("findReferences", ts("shapes.ts"), pos("shapes.ts", "totalArea"))
        expect([...locationsIn(result.text)].sort()).toEqual(
          [pos("main.ts", "totalArea"), pos("main.ts", "totalArea", 1), pos("shapes.ts", "totalArea")]
            .map((p) => p.at).sort()
        )
        expect(result.text).toMatch(/^Found 3 references in 2 files:/)
      }))

    it.effect("hover: the signature and the doc comment of totalArea", () =>
      Effect.gen(function*() {
        const result = yield* lsp("hover", ts("shapes.ts"), pos("shapes.ts", "totalArea"))
        expect(result.text).toContain("function totalArea(shapes: ReadonlyArray<Shape>): number")
        expect(result.text).toContain("Adds up the areas of the shapes.")
      }))

    it.effect("documentSymbol: every declaration of shapes.ts at its name, nested under its parent", () =>
      Effect.gen(function*() {
        const result = yield* lsp("documentSymbol", ts("shapes.ts"), { line: 1, character: 1 })
        const at = (needle: string, occurrence = 0) => {
          const p = pos("shapes.ts", needle, occurrence)
          return `${p.line}:${p.character}`
        }
        expect(result.text).toContain(`  Shape (Interface) ${at("Shape")}`)
        expect(result.text).toContain(`    area (Method) ${at("area")}`)
        expect(result.text).toContain(`  Square (Class) ${at("Square")}`)
        expect(result.text).toContain(`    area (Method) ${at("area", 1)}`)
        expect(result.text).toContain(`  totalArea (Function) ${at("totalArea")}`)
      }))

    it.effect("workspaceSymbol: the class Square where its declaration starts (tsserver gives the whole range)", () =>
      Effect.gen(function*() {
        const result = yield* lsp("workspaceSymbol", ts("main.ts"), { line: 1, character: 1 }, "Square")
        expect(result.text).toContain(`Square (Class) ${pos("shapes.ts", "export class Square").at}`)
      }))

    it.effect("goToImplementation: the interface Shape is implemented by the class Square", () =>
      Effect.gen(function*() {
        const result = yield* lsp("goToImplementation", ts("shapes.ts"), pos("shapes.ts", "Shape"))
        expect(locationsIn(result.text)).toEqual([pos("shapes.ts", "Square").at])
      }))

    it.effect("prepareCallHierarchy: the item at totalArea is the function totalArea", () =>
      Effect.gen(function*() {
        const result = yield* lsp("prepareCallHierarchy", ts("shapes.ts"), pos("shapes.ts", "totalArea"))
        expect(result.text).toContain(`totalArea (Function) ${pos("shapes.ts", "totalArea").at}`)
      }))

    it.effect("incomingCalls: report calls totalArea, at the call's position", () =>
      Effect.gen(function*() {
        const result = yield* lsp("incomingCalls", ts("shapes.ts"), pos("shapes.ts", "totalArea"))
        const call = pos("main.ts", "totalArea([")
        expect(result.text).toContain(
          `report (Function) ${pos("main.ts", "report").at} (calls at ${call.line}:${call.character})`
        )
        expect(locationsIn(result.text)).toEqual([pos("main.ts", "report").at])
      }))

    it.effect("outgoingCalls: report calls totalArea", () =>
      Effect.gen(function*() {
        const result = yield* lsp("outgoingCalls", ts("main.ts"), pos("main.ts", "report"))
        expect(locationsIn(result.text)).toContain(pos("shapes.ts", "totalArea").at)
      }))

    it.effect("a definition inside a file a Read deny rule covers is not shown, only counted", () =>
      Effect.gen(function*() {
        const result = yield* lsp("goToDefinition", ts("main.ts"), pos("main.ts", "secretToken.length"))
        expect(result.status).toBe("success")
        expect(result.text).not.toContain("secret.ts")
        expect(result.text).not.toContain("not for the model")
        expect(result.text).toContain("(1 more in files outside the workspace or that you may not read: not shown)")
        const references = yield* lsp("findReferences", ts("main.ts"), pos("main.ts", "secretToken.length"))
        expect(references.text).not.toContain("secret.ts")
        expect([...locationsIn(references.text)].sort()).toEqual(
          [pos("main.ts", "secretToken"), pos("main.ts", "secretToken", 1)].map((p) => p.at).sort()
        )
      }))

    it.effect("asking about the denied file itself is denied", () =>
      Effect.gen(function*() {
        const result = yield* lsp("hover", ts("secret.ts"), { line: 1, character: 14 })
        expect(result.status).toBe("denied")
      }))
  })
})

describe.sequential("LSP tool, Python", () => {
  const pos = (rel: string, needle: string, occurrence = 0) => positionOf(dir, `py/${rel}`, needle, occurrence)

  layer(runtime, { timeout: "120 seconds", excludeTestServices: true })((it) => {
    it.effect(
      "goToDefinition: the call of total_area in main.py leads to its definition in shapes.py",
      () =>
        Effect.gen(function*() {
          const result = yield* lsp("goToDefinition", "py/main.py", pos("main.py", "total_area(["))
          expect(locationsIn(result.text)).toEqual([pos("shapes.py", "total_area").at])
        }),
      90_000
    )

    it.effect("findReferences: the import, the call and the definition of total_area", () =>
      Effect.gen(function*() {
        const result = yield* lsp("findReferences", "py/shapes.py", pos("shapes.py", "total_area"))
        expect([...locationsIn(result.text)].sort()).toEqual(
          [pos("main.py", "total_area"), pos("main.py", "total_area", 1), pos("shapes.py", "total_area")]
            .map((p) => p.at).sort()
        )
      }))

    it.effect("hover: the signature and the docstring of total_area", () =>
      Effect.gen(function*() {
        const result = yield* lsp("hover", "py/shapes.py", pos("shapes.py", "total_area"))
        expect(result.text).toContain("def total_area(shapes: list[Shape]) -> float")
        expect(result.text).toContain("Adds up the areas of the shapes.")
      }))

    it.effect("documentSymbol: the classes, their methods and the function of shapes.py", () =>
      Effect.gen(function*() {
        const result = yield* lsp("documentSymbol", "py/shapes.py", { line: 1, character: 1 })
        const at = (needle: string, occurrence = 0) => {
          const p = pos("shapes.py", needle, occurrence)
          return `${p.line}:${p.character}`
        }
        expect(result.text).toContain(`Shape (Class) ${at("Shape")}`)
        expect(result.text).toContain(`Square (Class) ${at("Square")}`)
        expect(result.text).toContain(`area (Method) ${at("area", 1)}`)
        expect(result.text).toContain(`total_area (Function) ${at("total_area")}`)
      }))

    it.effect("workspaceSymbol: the class Square where it is defined", () =>
      Effect.gen(function*() {
        const result = yield* lsp("workspaceSymbol", "py/main.py", { line: 1, character: 1 }, "Square")
        expect(result.text).toContain(`Square (Class) ${pos("shapes.py", "Square").at}`)
      }))

    it.effect("goToImplementation: pyright does not offer it, and the tool says so", () =>
      Effect.gen(function*() {
        const result = yield* lsp("goToImplementation", "py/shapes.py", pos("shapes.py", "Shape"))
        expect(result.status).toBe("error")
        expect(result.text).toContain("The python language server does not support goToImplementation.")
      }))

    it.effect("prepareCallHierarchy, incomingCalls and outgoingCalls around total_area and report", () =>
      Effect.gen(function*() {
        const item = yield* lsp("prepareCallHierarchy", "py/shapes.py", pos("shapes.py", "total_area"))
        expect(item.text).toContain(`total_area (Function) ${pos("shapes.py", "total_area").at}`)
        const incoming = yield* lsp("incomingCalls", "py/shapes.py", pos("shapes.py", "total_area"))
        expect(locationsIn(incoming.text)).toEqual([pos("main.py", "report").at])
        const call = pos("main.py", "total_area([")
        expect(incoming.text).toContain(`(calls at ${call.line}:${call.character})`)
        const outgoing = yield* lsp("outgoingCalls", "py/main.py", pos("main.py", "report"))
        expect(locationsIn(outgoing.text)).toContain(pos("shapes.py", "total_area").at)
      }))
  })
})
