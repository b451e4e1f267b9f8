/**
 * Jupyter notebooks (nbformat 4) as NotebookEdit and Read see them: parse, find a cell, apply an edit, serialise.
 *
 * The notebook is kept as the JSON it was (unknown fields, metadata and the other cells untouched) and written back
 * the way Jupyter writes it: the file's own indentation (Jupyter uses one space), keys in their order, and a final
 * newline when the file had one. A cell is named by its `id` (nbformat 4.5+) or, for notebooks without ids, by
 * `cell-N` (its 0-based index), as Claude Code names them.
 *
 * @since 0.3.0
 * @internal
 */
import * as crypto from "node:crypto"

/** A cell as stored: only the fields this module reads or writes are typed; the rest is kept as it was. */
export interface Cell {
  readonly cell_type: string
  readonly id?: string
  readonly source: string | ReadonlyArray<string>
  readonly metadata?: unknown
  readonly outputs?: ReadonlyArray<unknown>
  readonly execution_count?: number | null
  readonly [key: string]: unknown
}

/** A parsed notebook and how its file was laid out. */
export interface Notebook {
  readonly json: { readonly cells: ReadonlyArray<Cell>; readonly [key: string]: unknown }
  /** The file's indentation; undefined when it is written on one line. */
  readonly indent: string | undefined
  readonly finalNewline: boolean
}

/** One edit, as NotebookEdit's input says it. */
export interface NotebookChange {
  readonly cell_id?: string | undefined
  readonly new_source: string
  readonly cell_type?: "code" | "markdown" | undefined
  readonly edit_mode: "replace" | "insert" | "delete"
}

/** What an edit did. */
export interface Applied {
  readonly notebook: Notebook
  /** The id (or `cell-N`) of the cell replaced, inserted or deleted. */
  readonly cellId: string
  readonly cellType: string
}

/** The source of a cell as one string. */
export const sourceText = (cell: Cell): string => typeof cell.source === "string" ? cell.source : cell.source.join("")

/** A cell's name: its id, else `cell-N`. */
export const cellName = (cell: Cell, index: number): string => typeof cell.id === "string" ? cell.id : `cell-${index}`

/** Parses a notebook, or says (for the model) why it is not one. */
export const parseNotebook = (text: string): { readonly notebook: Notebook } | { readonly problem: string } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (e) {
    return { problem: `it is not valid JSON (${e instanceof Error ? e.message : String(e)})` }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) return { problem: "it is not a JSON object" }
  const cells = (json as { cells?: unknown }).cells
  if (!Array.isArray(cells)) return { problem: "it has no cells array (not an nbformat 4 notebook)" }
  for (const [index, cell] of cells.entries()) {
    const ok = typeof cell === "object" && cell !== null && typeof cell.cell_type === "string" &&
      (typeof cell.source === "string" ||
        (Array.isArray(cell.source) && cell.source.every((line: unknown) => typeof line === "string")))
    if (!ok) return { problem: `cell ${index} has no cell_type or no source` }
  }
  const indent = /^\{\r?\n([ \t]*)/.exec(text)?.[1]
  return { notebook: { json: json as Notebook["json"], indent, finalNewline: text.endsWith("\n") } }
}

/** The notebook as its file holds it. */
export const serialiseNotebook = (notebook: Notebook): string => {
  const body = notebook.indent === undefined
    ? JSON.stringify(notebook.json)
    : JSON.stringify(notebook.json, null, notebook.indent === "" ? 1 : notebook.indent)
  return notebook.finalNewline ? `${body}\n` : body
}

/** The index of the cell a name names, or undefined. */
export const findCell = (cells: ReadonlyArray<Cell>, name: string): number | undefined => {
  const byId = cells.findIndex((cell) => cell.id === name)
  if (byId >= 0) return byId
  const numbered = /^cell-(\d+)$/.exec(name)
  if (numbered !== null) {
    const index = Number(numbered[1])
    if (index < cells.length && typeof cells[index]!.id !== "string") return index
  }
  return undefined
}

/** Source as nbformat stores it: lines, each but the last with its newline. */
const sourceLines = (text: string): ReadonlyArray<string> => text === "" ? [] : text.split(/(?<=\n)/)

/** Whether this notebook's cells carry ids (nbformat 4.5 and later). */
const usesIds = (json: Notebook["json"]): boolean => {
  const major = json.nbformat
  const minor = json.nbformat_minor
  return (typeof major === "number" && major > 4) ||
    (major === 4 && typeof minor === "number" && minor >= 5) ||
    json.cells.some((cell) => typeof cell.id === "string")
}

const newId = (taken: ReadonlyArray<Cell>): string => {
  for (;;) {
    const id = crypto.randomBytes(4).toString("hex")
    if (!taken.some((cell) => cell.id === id)) return id
  }
}

/** A cell of `type` with `source`: a code cell without outputs, never run. */
const freshCell = (type: "code" | "markdown", source: string, id: string | undefined): Cell => ({
  cell_type: type,
  ...(id === undefined ? {} : { id }),
  metadata: {},
  source: sourceLines(source),
  ...(type === "code" ? { execution_count: null, outputs: [] } : {})
})

/** Applies an edit, or says (for the model) why it cannot. */
export const applyChange = (
  notebook: Notebook,
  change: NotebookChange,
  path: string
): Applied | { readonly problem: string } => {
  const cells = notebook.json.cells
  const at = change.cell_id === undefined ? undefined : findCell(cells, change.cell_id)
  if (change.cell_id !== undefined && at === undefined) {
    return { problem: `Cell with ID "${change.cell_id}" not found in notebook ${path}. Read the notebook for its ids.` }
  }
  const withCells = (next: ReadonlyArray<Cell>): Notebook => ({ ...notebook, json: { ...notebook.json, cells: next } })
  switch (change.edit_mode) {
    case "insert": {
      if (change.cell_type === undefined) return { problem: "cell_type is required when edit_mode is insert." }
      const id = usesIds(notebook.json) ? newId(cells) : undefined
      const position = at === undefined ? 0 : at + 1
      const next = [
        ...cells.slice(0, position),
        freshCell(change.cell_type, change.new_source, id),
        ...cells.slice(position)
      ]
      return { notebook: withCells(next), cellId: id ?? `cell-${position}`, cellType: change.cell_type }
    }
    case "delete": {
      if (at === undefined) return { problem: "cell_id is required when edit_mode is delete." }
      return {
        notebook: withCells(cells.filter((_, index) => index !== at)),
        cellId: cellName(cells[at]!, at),
        cellType: cells[at]!.cell_type
      }
    }
    case "replace": {
      if (at === undefined) return { problem: "cell_id is required when edit_mode is replace." }
      const old = cells[at]!
      const type = change.cell_type ?? old.cell_type
      const { execution_count: _count, outputs: _outputs, ...rest } = old
      // New source makes old outputs wrong: a code cell is cleared (as Jupyter does on edit); markdown has none.
      const replaced: Cell = {
        ...rest,
        cell_type: type,
        source: sourceLines(change.new_source),
        ...(type === "code" ? { execution_count: null, outputs: [] } : {})
      }
      return {
        notebook: withCells(cells.map((cell, index) => index === at ? replaced : cell)),
        cellId: cellName(old, at),
        cellType: type
      }
    }
  }
}

/** One output of a cell, as Read shows it. */
export type CellOutput =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Image"; readonly mediaType: "image/png" | "image/jpeg"; readonly base64: string }

const joined = (value: unknown): string =>
  typeof value === "string" ? value : Array.isArray(value) ? value.filter((v) => typeof v === "string").join("") : ""

/** A cell's outputs: stream text, results (images first when there are, else text/plain), errors with traceback. */
export const cellOutputs = (cell: Cell): ReadonlyArray<CellOutput> => {
  const outputs: Array<CellOutput> = []
  for (const output of cell.outputs ?? []) {
    if (typeof output !== "object" || output === null) continue
    const o = output as { output_type?: unknown; text?: unknown; data?: unknown; ename?: unknown; evalue?: unknown }
    if (o.output_type === "stream") outputs.push({ _tag: "Text", text: joined(o.text) })
    else if (o.output_type === "error") {
      outputs.push({ _tag: "Text", text: `${joined(o.ename)}: ${joined(o.evalue)}` })
    } else if (typeof o.data === "object" && o.data !== null) {
      const data = o.data as Record<string, unknown>
      const png = joined(data["image/png"]).replace(/\s/g, "")
      const jpeg = joined(data["image/jpeg"]).replace(/\s/g, "")
      if (png !== "") outputs.push({ _tag: "Image", mediaType: "image/png", base64: png })
      else if (jpeg !== "") outputs.push({ _tag: "Image", mediaType: "image/jpeg", base64: jpeg })
      const text = joined(data["text/plain"])
      if (text !== "") outputs.push({ _tag: "Text", text })
    }
  }
  return outputs
}
