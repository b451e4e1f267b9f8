/**
 * Model-facing names of MCP tools: `mcp__<server>__<tool>`, characters outside `[A-Za-z0-9_-]` replaced by `_`,
 * shortened to 64 characters with a short stable hash, collisions resolved deterministically.
 */
import { createHash } from "node:crypto"

/** The longest tool name providers accept (Anthropic: `^[a-zA-Z0-9_-]{1,64}$`). */
export const MAX_NAME = 64

/** Replaces what tool names may not contain. */
export const sanitize = (text: string): string => text.replace(/[^A-Za-z0-9_-]/g, "_")

const hashOf = (text: string): string => createHash("sha1").update(text).digest("hex").slice(0, 8)

/**
 * `name` shortened to `MAX_NAME` with a hash of `key`. The `mcp__server__` prefix survives unless the server's name
 * is itself very long; rules still find such a tool by its full name, kept as an alias.
 */
const shorten = (name: string, key: string): string => {
  const suffix = `_${hashOf(key)}`
  if (name.length <= MAX_NAME) return name
  return `${name.slice(0, MAX_NAME - suffix.length)}${suffix}`
}

/** A name that had to change beyond sanitising, and why (reported to the person). */
export interface Renamed {
  readonly tool: string
  readonly name: string
  readonly reason: "too long" | "collision"
}

/**
 * Names for one server's tools, in the order given. Sorted by the server's own names first, so the same set always
 * gets the same names whatever order the server lists them in: the first of two tools that sanitise to the same name
 * keeps it, the second gets a hash suffix.
 */
export const assignNames = (
  server: string,
  tools: ReadonlyArray<string>,
  taken: ReadonlySet<string> = new Set()
): { readonly names: ReadonlyMap<string, string>; readonly renamed: ReadonlyArray<Renamed> } => {
  const prefix = `mcp__${sanitize(server)}__`
  const used = new Set(taken)
  const names = new Map<string, string>()
  const renamed: Array<Renamed> = []
  for (const tool of [...tools].sort()) {
    const plain = `${prefix}${sanitize(tool)}`
    let name = shorten(plain, `${server}\u0000${tool}`)
    if (name !== plain) renamed.push({ tool, name, reason: "too long" })
    if (used.has(name)) {
      const suffix = `_${hashOf(`${server}\u0000${tool}\u0000collision`)}`
      name = `${plain.slice(0, MAX_NAME - suffix.length)}${suffix}`
      renamed.push({ tool, name, reason: "collision" })
    }
    used.add(name)
    names.set(tool, name)
  }
  return { names, renamed }
}
