/**
 * Who waits for whom. Each call is a node; a node starts once every earlier node it conflicts with has finished.
 * The whole policy is a readers/writer idea per resource:
 *
 * - a write waits for the resource's last writer and for every reader since it; a read waits for the last writer;
 * - resources are hierarchical (`file:/a` overlaps `file:/a/b`): a claim also looks at the resources above it (their
 *   last writers and readers) and below it (the unfinished writers, and for a write the readers, under it);
 * - the world claim (`*`) waits for the last world call and every call since; every call waits for the last world
 *   call.
 *
 * Waiting on the *last* conflicting node is enough: that node itself waited for the ones before it. Resources live
 * in a tree of path segments, so registering a call costs O(claims x depth) plus the conflicts it really has: the
 * cost per call stays flat however long the turn (`bench/scheduler`).
 *
 * A call whose executed input claims more than it was admitted with (a hook or a person rewrote it) is registered
 * again with {@link DependencyGraph.replan}: it waits for every unfinished conflicting call before it and every
 * conflicting call already executing, and the conflicting calls after it that are not executing yet wait for it
 * (each checks its dependencies once more right before it executes).
 */
import type { Claim } from "../../Tool/Tool.js"

/** One scheduled call, and the bookkeeping that says when it may start. */
export interface Node {
  readonly index: number
  exclusive: boolean
  /** Every claim the call was registered with (the first plan's and any replan's). */
  claims: ReadonlyArray<Claim>
  /** How many unfinished calls it still waits for. */
  pending: number
  /** Calls waiting for this one. */
  readonly dependents: Array<Node>
  /** Past its last admission check and executing: later calls can no longer be put before it. */
  started: boolean
  finished: boolean
  /** The sets of the resource tree that hold this node, left when it finishes. */
  readonly memberships: Array<Set<Node>>
}

/** A fresh node. */
export const makeNode = (index: number, exclusive: boolean, claims: ReadonlyArray<Claim>): Node => ({
  index,
  exclusive,
  claims,
  pending: 0,
  dependents: [],
  started: false,
  finished: false,
  memberships: []
})

/** How calls are made to wait: by their claims, or by Claude Code's consecutive-safe batches. */
export type SchedulingMode = "conflict-aware" | "batched"

/** One resource path segment in the tree. */
class Resource {
  readonly children = new Map<string, Resource>()
  lastWriter: Node | undefined = undefined
  /** Unfinished readers of exactly this resource since its last writer. */
  readonly readers = new Set<Node>()
  /** Unfinished writers strictly below this resource. */
  readonly writersBelow = new Set<Node>()
  /** Unfinished readers strictly below this resource. */
  readonly readersBelow = new Set<Node>()
  constructor(readonly parent: Resource | undefined) {}
}

/** `file:/a/b` -> `file:`, `a`, `b`; one trailing `/` names the same resource as without it. */
const segmentsOf = (resource: string): ReadonlyArray<string> =>
  (resource.length > 1 && resource.endsWith("/") ? resource.slice(0, -1) : resource).split("/")

const overlaps = (a: string, b: string): boolean =>
  a === b || (a.startsWith(b) && (b.endsWith("/") || a[b.length] === "/")) ||
  (b.startsWith(a) && (a.endsWith("/") || b[a.length] === "/"))

/** Two registrations conflict: either is exclusive, or they overlap on a resource and one of them writes. */
const conflictsWith = (node: Node, claims: ReadonlyArray<Claim>, exclusive: boolean): boolean =>
  exclusive || node.exclusive ||
  claims.some((x) =>
    node.claims.some((y) => (x.access === "write" || y.access === "write") && overlaps(x.resource, y.resource))
  )

/** Incremental dependency tracking for one run. */
export class DependencyGraph {
  private root = new Resource(undefined)
  private lastWorld: Node | undefined = undefined
  private readonly sinceWorld = new Set<Node>()
  /** Unfinished calls, for replanning (rare): the only place that looks at every call. */
  private readonly live = new Set<Node>()
  /** Unfinished calls that were replanned: every later call checks them directly, not through the tree. */
  private readonly replanned = new Set<Node>()

  /**
   * Registers a node (in model order) and links it to the unfinished nodes it must wait for; true when it may start
   * at once. In batched mode the caller passes no claims: a concurrency-safe call claims nothing, any other call is
   * exclusive.
   */
  add(node: Node): boolean {
    this.live.add(node)
    const waits = this.waitsFor(node)
    for (const other of this.replanned) {
      if (other !== node && conflictsWith(other, node.claims, node.exclusive)) waits.add(other)
    }
    for (const other of waits) this.link(other, node)
    return node.pending === 0
  }

  /** Marks a node finished; returns the nodes that may start now. */
  finish(node: Node): ReadonlyArray<Node> {
    node.finished = true
    this.live.delete(node)
    this.replanned.delete(node)
    this.sinceWorld.delete(node)
    for (const set of node.memberships) set.delete(node)
    node.memberships.length = 0
    const ready: Array<Node> = []
    for (const dependent of node.dependents) {
      if (--dependent.pending === 0) ready.push(dependent)
    }
    return ready
  }

  /**
   * Registers wider claims for a node that was already admitted (its executed input differs from the one it was
   * scheduled with). It waits for every unfinished conflicting node before it and every conflicting node already
   * executing; conflicting nodes after it that are not executing yet wait for it. True when it must now wait.
   */
  replan(node: Node, claims: ReadonlyArray<Claim>, exclusive: boolean): boolean {
    for (const other of this.live) {
      if (other === node || other.finished || !conflictsWith(other, claims, exclusive)) continue
      if (other.index < node.index || other.started) this.link(other, node)
      else this.link(node, other)
    }
    node.claims = [...node.claims, ...claims]
    node.exclusive = node.exclusive || exclusive
    this.replanned.add(node)
    return node.pending > 0
  }

  /** `waiter` waits for `other`. */
  private link(other: Node, waiter: Node): void {
    if (other.finished) return
    other.dependents.push(waiter)
    waiter.pending++
  }

  private waitsFor(node: Node): Set<Node> {
    const waits = new Set<Node>()
    if (this.lastWorld !== undefined && !this.lastWorld.finished) waits.add(this.lastWorld)
    if (node.exclusive) {
      for (const other of this.sinceWorld) waits.add(other)
      this.lastWorld = node
      this.sinceWorld.clear()
      this.root = new Resource(undefined)
      return waits
    }
    this.sinceWorld.add(node)
    node.memberships.push(this.sinceWorld)
    const targets = node.claims.map((claim) => this.resource(claim.resource))
    node.claims.forEach((claim, i) => {
      const target = targets[i]!
      const write = claim.access === "write"
      for (let at: Resource | undefined = target; at !== undefined; at = at.parent) {
        if (at.lastWriter !== undefined && !at.lastWriter.finished) waits.add(at.lastWriter)
        if (write) { for (const reader of at.readers) waits.add(reader) }
      }
      for (const writer of target.writersBelow) waits.add(writer)
      if (write) { for (const reader of target.readersBelow) waits.add(reader) }
    })
    // Registered only after every claim looked: a call's own claims never make it wait for itself.
    node.claims.forEach((claim, i) => {
      const target = targets[i]!
      if (claim.access === "write") {
        target.lastWriter = node
        target.readers.clear()
      } else {
        this.join(node, target.readers)
      }
      for (let above = target.parent; above !== undefined; above = above.parent) {
        this.join(node, claim.access === "write" ? above.writersBelow : above.readersBelow)
      }
    })
    waits.delete(node)
    return waits
  }

  private join(node: Node, set: Set<Node>): void {
    if (set.has(node)) return
    set.add(node)
    node.memberships.push(set)
  }

  private resource(name: string): Resource {
    let at = this.root
    for (const segment of segmentsOf(name)) {
      let next = at.children.get(segment)
      if (next === undefined) {
        next = new Resource(at)
        at.children.set(segment, next)
      }
      at = next
    }
    return at
  }
}

/**
 * Whether a call must run alone. The one meaning of the traits and claims for scheduling:
 *
 * - conflict-aware: the claims decide. A call runs alone exactly when it claims the world (`*`); otherwise it waits
 *   only for conflicting claims. `concurrencySafe` only shapes the default claims of a tool that declares none
 *   (safe: nothing; otherwise: the world).
 * - batched: `concurrencySafe` decides. Consecutive concurrency-safe calls run together; any other call runs alone.
 *   Claims are not read.
 *
 * `readOnly` is never read by the scheduler (it is a permission input).
 */
export const isExclusive = (mode: SchedulingMode, claims: ReadonlyArray<Claim>, concurrencySafe: boolean): boolean =>
  mode === "batched" ? !concurrencySafe : claims.some((claim) => claim.resource === "*")

/**
 * Whether claims `wider` ask for anything `admitted` does not already cover (same or enclosing resource, enough
 * access).
 */
export const widens = (admitted: ReadonlyArray<Claim>, wider: ReadonlyArray<Claim>): boolean =>
  wider.some((claim) =>
    !admitted.some((held) =>
      (held.resource === "*" || held.resource === claim.resource ||
        (claim.resource.startsWith(held.resource) &&
          (held.resource.endsWith("/") || claim.resource[held.resource.length] === "/"))) &&
      (held.access === "write" || claim.access === "read")
    )
  )
