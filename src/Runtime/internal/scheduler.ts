/**
 * Who waits for whom. Each call is a node; a node may start once every earlier node it conflicts with has finished.
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
 * The graph only records; the runtime waits. Each node has a "done" signal (a `Deferred`, made when somebody first
 * waits for it) that its call's fiber awaits for every predecessor ({@link DependencyGraph.whenDone}).
 *
 * A call whose executed input claims more than it was admitted with (a hook or a person rewrote it) is registered
 * again with {@link DependencyGraph.replan}: it gets as new predecessors every unfinished conflicting call before it
 * and every conflicting call already executing, and becomes a predecessor of the conflicting calls after it that are
 * not executing yet (each checks its predecessors once more right before it executes).
 *
 * {@link DependencyGraph.chainBehind} ranks ready calls for the permits: the call with the longest chain of calls
 * still waiting behind it goes first, so the critical path is never left waiting behind work that could wait.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type { Claim } from "../../Tool/Tool.js"

/** One scheduled call, and the bookkeeping that says when it may start. */
export interface Node {
  readonly index: number
  exclusive: boolean
  /** Every claim the call was registered with (the first plan's and any replan's). */
  claims: ReadonlyArray<Claim>
  /** The calls it waits for (finished or not: `finished` says which still hold it back). */
  readonly predecessors: Array<Node>
  /** Calls waiting for this one. */
  readonly dependents: Array<Node>
  /** Past its last admission check and executing: later calls can no longer be put before it. */
  started: boolean
  finished: boolean
  /** Its "done" signal, made when a call first waits for it. */
  done: Deferred.Deferred<void> | undefined
  /** The sets of the resource tree that hold this node, left when it finishes. */
  readonly memberships: Array<Set<Node>>
  /** {@link DependencyGraph.chainBehind}, as of graph version `chainAt` (negative while being computed). */
  chain: number
  chainAt: number
}

/** A fresh node. */
export const makeNode = (index: number, exclusive: boolean, claims: ReadonlyArray<Claim>): Node => ({
  index,
  exclusive,
  claims,
  predecessors: [],
  dependents: [],
  started: false,
  finished: false,
  done: undefined,
  memberships: [],
  chain: 0,
  chainAt: 0
})

/** Whether a node still waits for an unfinished predecessor. */
export const isWaiting = (node: Node): boolean => node.predecessors.some((other) => !other.finished)

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
  /** Starts at 1: a fresh node's `chainAt` of 0 is never current. */
  private version = 1

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
    this.version++
    return node.predecessors.length === 0
  }

  /** Marks a node finished and signals every call waiting for it. */
  finish(node: Node): void {
    node.finished = true
    this.live.delete(node)
    this.replanned.delete(node)
    this.sinceWorld.delete(node)
    for (const set of node.memberships) set.delete(node)
    node.memberships.length = 0
    if (node.done !== undefined) Deferred.unsafeDone(node.done, Exit.void)
  }

  /** Completes once `node` has finished. */
  whenDone(node: Node): Effect.Effect<void> {
    if (node.finished) return Effect.void
    node.done ??= Deferred.unsafeMake<void>(FiberId.none)
    return Deferred.await(node.done)
  }

  /** Completes once every predecessor of `node` has finished, including those a replan adds meanwhile. */
  predecessorsDone(node: Node, from = 0): Effect.Effect<void> {
    for (let i = from; i < node.predecessors.length; i++) {
      const other = node.predecessors[i]!
      if (!other.finished) return Effect.flatMap(this.whenDone(other), () => this.predecessorsDone(node, i + 1))
    }
    return Effect.void
  }

  /**
   * The length of the longest chain of unfinished calls that wait (directly or through each other) for `start`,
   * counting `start` itself. Memoised per graph version: computing it for every ready call costs the edges once.
   */
  chainBehind(start: Node): number {
    const version = this.version
    if (start.chainAt === version) return start.chain
    const stack: Array<Node> = [start]
    start.chainAt = -version
    while (stack.length > 0) {
      const node = stack[stack.length - 1]!
      let longest = 0
      let complete = true
      for (const dependent of node.dependents) {
        if (dependent.finished) continue
        if (dependent.chainAt === version) longest = Math.max(longest, dependent.chain)
        else if (dependent.chainAt !== -version) {
          dependent.chainAt = -version
          stack.push(dependent)
          complete = false
        }
        // A node on the stack is never its own dependent: the graph has no cycles; if it had, it would count 0.
      }
      if (!complete) continue
      node.chain = longest + 1
      node.chainAt = version
      stack.pop()
    }
    return start.chain
  }

  /** Changes with every registration: chains computed before it may be stale. */
  get epoch(): number {
    return this.version
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
    this.version++
    return isWaiting(node)
  }

  /** `waiter` waits for `other`. */
  private link(other: Node, waiter: Node): void {
    if (other.finished) return
    other.dependents.push(waiter)
    waiter.predecessors.push(other)
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
