/**
 * Who waits for whom. Each call is a node; a node starts once every earlier node it conflicts with has finished.
 * The whole policy is a readers/writer idea per resource, kept incremental so a turn of n calls costs O(n) when
 * resources are few:
 *
 * - a write waits for the resource's last writer and for every reader since it; a read waits for the last writer;
 * - resources are hierarchical (`file:/a` overlaps `file:/a/b`): a claim also looks at overlapping resources;
 * - the world claim (`*`) waits for the last world call and every call since; every call waits for the last world
 *   call.
 *
 * Waiting on the *last* conflicting node is enough: that node itself waited for the ones before it.
 */
import type { Claim } from "../../Tool/Tool.js"

/** One scheduled call, and the bookkeeping that says when it may start. */
export interface Node {
  readonly index: number
  readonly exclusive: boolean
  /** How many unfinished calls it still waits for. */
  pending: number
  /** Calls waiting for this one. */
  readonly dependents: Array<Node>
  finished: boolean
}

/** A fresh node. */
export const makeNode = (index: number, exclusive: boolean): Node => ({ index, exclusive, pending: 0, dependents: [], finished: false })

interface ResourceEntry {
  lastWriter: Node | undefined
  readers: Array<Node>
}

/** How calls are made to wait: by their claims, or by Claude Code's consecutive-safe batches. */
export type SchedulingMode = "conflict-aware" | "batched"

const overlaps = (a: string, b: string): boolean =>
  a === b || (a.startsWith(b) && (b.endsWith("/") || a[b.length] === "/")) || (b.startsWith(a) && (a.endsWith("/") || b[a.length] === "/"))

/** Incremental dependency tracking for one run. */
export class DependencyGraph {
  private readonly resources = new Map<string, ResourceEntry>()
  private lastWorld: Node | undefined = undefined
  private sinceWorld: Array<Node> = []

  /**
   * Registers a node (in model order) and links it to the unfinished nodes it must wait for; true when it may start
   * at once. In batched mode the caller passes no claims: a concurrency-safe call claims nothing, any other call is
   * exclusive.
   */
  add(node: Node, claims: ReadonlyArray<Claim>): boolean {
    for (const other of this.waitsFor(node, claims)) {
      if (other.finished) continue
      other.dependents.push(node)
      node.pending++
    }
    return node.pending === 0
  }

  /** Marks a node finished; returns the nodes that may start now. */
  finish(node: Node): ReadonlyArray<Node> {
    node.finished = true
    const ready: Array<Node> = []
    for (const dependent of node.dependents) {
      if (--dependent.pending === 0) ready.push(dependent)
    }
    return ready
  }

  private waitsFor(node: Node, claims: ReadonlyArray<Claim>): ReadonlyArray<Node> {
    const waits = new Set<Node>()
    if (node.exclusive) {
      if (this.lastWorld !== undefined) waits.add(this.lastWorld)
      for (const other of this.sinceWorld) waits.add(other)
      this.lastWorld = node
      this.sinceWorld = []
      this.resources.clear()
      return [...waits]
    }
    if (this.lastWorld !== undefined) waits.add(this.lastWorld)
    this.sinceWorld.push(node)
    for (const claim of claims) {
      for (const [resource, entry] of this.resources) {
        if (!overlaps(resource, claim.resource)) continue
        if (entry.lastWriter !== undefined) waits.add(entry.lastWriter)
        if (claim.access === "write") for (const reader of entry.readers) waits.add(reader)
      }
    }
    for (const claim of claims) {
      const entry = this.resources.get(claim.resource)
      if (claim.access === "write") {
        this.resources.set(claim.resource, { lastWriter: node, readers: [] })
      } else if (entry === undefined) {
        this.resources.set(claim.resource, { lastWriter: undefined, readers: [node] })
      } else if (entry.readers[entry.readers.length - 1] !== node) {
        entry.readers.push(node)
      }
    }
    waits.delete(node)
    return [...waits]
  }
}

/** Whether a call must run alone: it claims the world (conflict-aware), or is not concurrency-safe (batched). */
export const isExclusive = (mode: SchedulingMode, claims: ReadonlyArray<Claim>, concurrencySafe: boolean): boolean =>
  mode === "batched" ? !concurrencySafe : claims.some((claim) => claim.resource === "*")

/** Two claim lists conflict: overlapping resources, at least one write; the world conflicts with everything. */
export const conflicts = (a: ReadonlyArray<Claim>, b: ReadonlyArray<Claim>): boolean =>
  a.some((x) => x.resource === "*") ||
  b.some((y) => y.resource === "*") ||
  a.some((x) => b.some((y) => overlaps(x.resource, y.resource) && (x.access === "write" || y.access === "write")))
