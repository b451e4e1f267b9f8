import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolRuntime } from "../../../src/Runtime/ToolRuntime.js"
import { FileAccess } from "../../../src/Session/FileAccess.js"
import { FileState } from "../../../src/Session/FileState.js"
import { Workspace } from "../../../src/Session/Workspace.js"
import { testRuntime } from "../../../src/testing/index.js"
import * as FileTools from "../../../src/Tools/FileTools.js"
import { layer as NotebookEditLive, NotebookEdit } from "../../../src/Tools/NotebookEdit.js"
import { tempDir, text, use } from "./helpers.js"

const tools = [...FileTools.tools, NotebookEdit] as const
const runtime = (cwd: string, access?: Layer.Layer<FileAccess>) => {
  const live = Layer.merge(FileTools.layer, NotebookEditLive).pipe(
    Layer.provide(Layer.mergeAll(Workspace.layer({ cwd }), FileState.layer())),
    Layer.provide(access === undefined ? NodeContext.layer : Layer.merge(NodeContext.layer, access))
  )
  return testRuntime(tools, live)
}
const run = (name: string, input: unknown) => Effect.flatMap(ToolRuntime, (rt) => rt.executeOne(use(name, input)))

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
const notebook = {
  cells: [
    { cell_type: "markdown", id: "intro", metadata: {}, source: ["# Title\n", "Some text"] },
    {
      cell_type: "code",
      id: "plot",
      metadata: { tags: ["keep"] },
      execution_count: 3,
      source: ["print(1)\n", "plot()"],
      outputs: [
        { output_type: "stream", name: "stdout", text: ["1\n"] },
        { output_type: "display_data", data: { "image/png": png, "text/plain": ["<Figure>"] }, metadata: {} }
      ]
    }
  ],
  metadata: { kernelspec: { name: "python3" } },
  nbformat: 4,
  nbformat_minor: 5
}
const jupyter = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`

describe("NotebookEdit and Read of notebooks", () => {
  it.effect("Read shows cells with ids, text outputs and image outputs as image blocks", () => {
    const cwd = tempDir("nb-")
    fs.writeFileSync(path.join(cwd, "a.ipynb"), jupyter(notebook))
    return Effect.gen(function*() {
      const read = yield* run("Read", { file_path: path.join(cwd, "a.ipynb") })
      expect(read.status).toBe("success")
      const content = read.result.content as ReadonlyArray<{ type: string; text?: string; source?: { data: string } }>
      expect(content[0]).toEqual({
        type: "text",
        text: "<cell id=\"intro\"><cell_type>markdown</cell_type># Title\nSome text</cell id=\"intro\">"
      })
      expect(content[1]).toEqual({ type: "text", text: "<cell id=\"plot\">print(1)\nplot()</cell id=\"plot\">" })
      expect(content[2]).toEqual({ type: "text", text: "1\n" })
      expect(content[3]).toMatchObject({
        type: "image",
        source: { type: "base64", media_type: "image/png", data: png }
      })
      expect(content[4]).toEqual({ type: "text", text: "<Figure>" })
    }).pipe(Effect.provide(runtime(cwd)))
  })

  it.effect("refuses an edit before a Read and after a change; replaces, inserts and deletes after one", () => {
    const cwd = tempDir("nb-")
    const file = path.join(cwd, "a.ipynb")
    fs.writeFileSync(file, jupyter(notebook))
    return Effect.gen(function*() {
      const early = yield* run("NotebookEdit", { notebook_path: file, cell_id: "plot", new_source: "x" })
      expect(early.status).toBe("error")
      expect(text(early)).toContain("has not been read yet")
      yield* run("Read", { file_path: file })

      const replaced = yield* run("NotebookEdit", { notebook_path: file, cell_id: "plot", new_source: "y = 2\nz" })
      expect(text(replaced)).toBe("Updated cell plot with y = 2\nz")
      const afterReplace = JSON.parse(fs.readFileSync(file, "utf8"))
      expect(afterReplace.cells[1]).toEqual({
        cell_type: "code",
        id: "plot",
        metadata: { tags: ["keep"] },
        source: ["y = 2\n", "z"],
        execution_count: null,
        outputs: []
      })
      expect(afterReplace.cells[0]).toEqual(notebook.cells[0])

      const inserted = yield* run("NotebookEdit", {
        notebook_path: file,
        cell_id: "intro",
        new_source: "## Part",
        cell_type: "markdown",
        edit_mode: "insert"
      })
      expect(inserted.status).toBe("success")
      const afterInsert = JSON.parse(fs.readFileSync(file, "utf8"))
      expect(afterInsert.cells.map((c: { cell_type: string }) => c.cell_type)).toEqual(["markdown", "markdown", "code"])
      expect(afterInsert.cells[1].id).toMatch(/^[0-9a-f]{8}$/)

      const noType = yield* run("NotebookEdit", { notebook_path: file, new_source: "x", edit_mode: "insert" })
      expect(text(noType)).toContain("cell_type is required when edit_mode is insert")
      const missing = yield* run("NotebookEdit", { notebook_path: file, cell_id: "nope", new_source: "" })
      expect(text(missing)).toContain("Cell with ID \"nope\" not found")

      const deleted = yield* run("NotebookEdit", {
        notebook_path: file,
        cell_id: "intro",
        new_source: "",
        edit_mode: "delete"
      })
      expect(text(deleted)).toBe("Deleted cell intro")
      expect(JSON.parse(fs.readFileSync(file, "utf8")).cells.length).toBe(2)

      fs.writeFileSync(file, jupyter({ ...notebook, metadata: {} }))
      const stale = yield* run("NotebookEdit", { notebook_path: file, cell_id: "plot", new_source: "q" })
      expect(text(stale)).toContain("modified since it was last read")

      const outside = yield* run("NotebookEdit", { notebook_path: "/etc/x.ipynb", cell_id: "a", new_source: "q" })
      expect(outside.status).not.toBe("success")
      const notNotebook = path.join(cwd, "b.py")
      fs.writeFileSync(notNotebook, "x")
      expect(text(yield* run("NotebookEdit", { notebook_path: notNotebook, new_source: "q" }))).toContain(
        "not a Jupyter notebook"
      )
    }).pipe(Effect.provide(runtime(cwd)))
  })

  it.effect("goes through the FileAccess in context (a memory file system), never the disk", () => {
    const file = "/mem/work/n.ipynb"
    return Effect.gen(function*() {
      yield* run("Read", { file_path: file })
      const edited = yield* run("NotebookEdit", { notebook_path: file, cell_id: "cell-0", new_source: "b" })
      expect(text(edited)).toBe("Updated cell cell-0 with b")
      expect(fs.existsSync(file)).toBe(false)
      const again = yield* run("Read", { file_path: file })
      expect(JSON.stringify(again.result.content)).toContain("<cell id=\\\"cell-0\\\">b</cell id=\\\"cell-0\\\">")
    }).pipe(Effect.provide(runtime(
      "/mem/work",
      FileAccess.layerMemory({
        files: {
          [file]: jupyter({
            cells: [{ cell_type: "code", metadata: {}, source: "a", outputs: [], execution_count: null }],
            metadata: {},
            nbformat: 4,
            nbformat_minor: 4
          })
        }
      })
    )))
  })

  // Any sequence of edits keeps a valid notebook whose other cells are byte-identical to before, by an oracle that
  // applies the same edits to a plain array.
  const cellArb = fc.record({
    kind: fc.constantFrom("code", "markdown"),
    source: fc.array(fc.stringMatching(/^[a-z =\n]{0,6}$/), { maxLength: 3 })
  })
  const editArb = fc.record({
    mode: fc.constantFrom("replace", "insert", "delete"),
    at: fc.nat(6),
    source: fc.stringMatching(/^[a-z\n]{0,8}$/),
    type: fc.option(fc.constantFrom("code", "markdown"), { nil: undefined })
  })
  it.effect.prop("any edit sequence keeps nbformat JSON and leaves the other cells byte-identical", {
    cells: fc.array(cellArb, { minLength: 1, maxLength: 5 }),
    edits: fc.array(editArb, { minLength: 1, maxLength: 6 })
  }, ({ cells, edits }) => {
    const cwd = tempDir("nbprop-")
    const file = path.join(cwd, "p.ipynb")
    const initial = cells.map((c, i) => ({
      cell_type: c.kind,
      id: `c${i}`,
      metadata: { n: i },
      source: c.source,
      ...(c.kind === "code"
        ? { execution_count: i, outputs: [{ output_type: "stream", name: "stdout", text: "o" }] }
        : {})
    }))
    fs.writeFileSync(file, jupyter({ cells: initial, metadata: {}, nbformat: 4, nbformat_minor: 5 }))
    return Effect.gen(function*() {
      yield* run("Read", { file_path: file })
      let model: Array<Record<string, unknown>> = initial.map((c) => ({ ...c }))
      for (const edit of edits) {
        const target = model[edit.at] as { id: string; cell_type: string } | undefined
        const input = {
          notebook_path: file,
          new_source: edit.source,
          edit_mode: edit.mode,
          ...(target === undefined ? {} : { cell_id: target.id }),
          ...(edit.type === undefined ? {} : { cell_type: edit.type })
        }
        const outcome = yield* run("NotebookEdit", input)
        const lines = edit.source === "" ? [] : edit.source.split(/(?<=\n)/)
        if (edit.mode === "insert") {
          if (edit.type === undefined) {
            expect(outcome.status).toBe("error")
            continue
          }
          expect(outcome.status).toBe("success")
          const written = JSON.parse(fs.readFileSync(file, "utf8")).cells as Array<{ id: string }>
          const position = target === undefined ? 0 : edit.at + 1
          const cell: Record<string, unknown> = {
            cell_type: edit.type,
            id: written[position]!.id,
            metadata: {},
            source: lines,
            ...(edit.type === "code" ? { execution_count: null, outputs: [] } : {})
          }
          model = [...model.slice(0, position), cell, ...model.slice(position)]
        } else if (target === undefined) {
          expect(outcome.status).toBe("error")
        } else if (edit.mode === "delete") {
          expect(outcome.status).toBe("success")
          model = model.filter((_, i) => i !== edit.at)
        } else {
          expect(outcome.status).toBe("success")
          const type = edit.type ?? target.cell_type
          const { execution_count: _e, outputs: _o, ...rest } = model[edit.at]!
          model[edit.at] = {
            ...rest,
            cell_type: type,
            source: lines,
            ...(type === "code" ? { execution_count: null, outputs: [] } : {})
          }
        }
        // The whole file is what Jupyter would write for the oracle's cells: untouched cells keep their bytes.
        expect(fs.readFileSync(file, "utf8")).toBe(
          jupyter({ cells: model, metadata: {}, nbformat: 4, nbformat_minor: 5 })
        )
      }
    }).pipe(Effect.provide(runtime(cwd)))
  }, { fastCheck: { numRuns: 12 }, timeout: 30_000 })
})
