/**
 * The run's concurrency cap: a fixed number of permits, handed out by priority.
 *
 * Effect's own `Semaphore` wakes every waiter when permits come back and lets them race for them, which costs
 * O(waiters) per release (quadratic for a turn with many ready calls) and gives them in no particular order. This
 * gate hands a released permit to exactly one waiter: the one with the highest priority (ties: the lowest order,
 * i.e. model order), and only once it can have all it asked for (an exclusive call asks for every permit, and the
 * permits it waits for are kept for it, so it cannot be starved by smaller requests behind it).
 *
 * Priorities are read from outside through `rank`, and may change while a waiter waits (the scheduler's graph grows
 * as the model streams calls in): whenever `epoch()` differs from the one the queue was ordered for, the waiters are
 * ranked again before the next permit is handed out.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** Whoever holds permits: the gate writes how many, so that releasing needs no count. */
export interface Holder {
  held: number
}

interface Waiter<H extends Holder> {
  readonly holder: H
  readonly need: number
  readonly order: number
  priority: number
  /** Waiting in the queue; false once granted or withdrawn (interrupted). */
  waiting: boolean
  readonly resume: (exit: Exit.Exit<void>) => void
}

/** A counting permit gate with a priority queue of waiters (a binary max-heap). */
export class PermitGate<H extends Holder> {
  private available: number
  private readonly queue: Array<Waiter<H>> = []
  /** Waiters still waiting (the queue also holds withdrawn ones until they reach its top). */
  private waiting = 0
  private rankedAt: number

  constructor(
    readonly capacity: number,
    private readonly rank: (holder: H) => number,
    private readonly epoch: () => number
  ) {
    this.available = capacity
    this.rankedAt = epoch()
  }

  /** Whether a call waits for permits. */
  get contended(): boolean {
    return this.waiting > 0
  }

  /** Takes `need` permits (at most the capacity) at once, when nobody waits and enough are free. */
  tryTake(holder: H, need: number): boolean {
    const n = Math.min(need, this.capacity)
    if (this.waiting > 0 || this.available < n) return false
    this.available -= n
    holder.held += n
    return true
  }

  /**
   * Takes `need` permits (at most the capacity), waiting in priority order for them. Interruptible: an interrupted
   * waiter leaves the queue; permits granted to a fiber interrupted before it saw them stay with its holder, for
   * {@link release}.
   */
  take(holder: H, need: number, order: number): Effect.Effect<void> {
    if (this.tryTake(holder, need)) return Effect.void
    return Effect.async<void>((resume) => {
      const waiter: Waiter<H> = {
        holder,
        need: Math.min(need, this.capacity),
        order,
        priority: this.rank(holder),
        waiting: true,
        resume
      }
      this.push(waiter)
      this.waiting++
      // It may outrank a waiter that was waiting for more permits than are free, and need fewer itself.
      this.grant()
      return Effect.sync(() => {
        if (!waiter.waiting) return
        waiter.waiting = false
        this.waiting--
        this.grant()
      })
    })
  }

  /** Gives back every permit the holder has. */
  release(holder: H): void {
    if (holder.held === 0) return
    this.available += holder.held
    holder.held = 0
    this.grant()
  }

  /** Hands free permits to the waiters at the top of the queue, one at a time, while the top one can be served. */
  private grant(): void {
    if (this.waiting === 0) return
    const epoch = this.epoch()
    if (epoch !== this.rankedAt) {
      this.rankedAt = epoch
      this.rerank()
    }
    while (this.queue.length > 0) {
      const top = this.queue[0]!
      if (!top.waiting) {
        this.pop()
        continue
      }
      if (top.need > this.available) return
      this.pop()
      top.waiting = false
      this.waiting--
      this.available -= top.need
      top.holder.held += top.need
      top.resume(Exit.void)
    }
  }

  private rerank(): void {
    const live = this.queue.filter((waiter) => waiter.waiting)
    for (const waiter of live) waiter.priority = this.rank(waiter.holder)
    this.queue.length = 0
    for (const waiter of live) this.push(waiter)
  }

  /** Whether `a` goes before `b`: higher priority, then lower order. */
  private before(a: Waiter<H>, b: Waiter<H>): boolean {
    return a.priority > b.priority || (a.priority === b.priority && a.order < b.order)
  }

  private push(waiter: Waiter<H>): void {
    const queue = this.queue
    let i = queue.length
    queue.push(waiter)
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.before(waiter, queue[parent]!)) break
      queue[i] = queue[parent]!
      i = parent
    }
    queue[i] = waiter
  }

  private pop(): void {
    const queue = this.queue
    const last = queue.pop()!
    if (queue.length === 0) return
    let i = 0
    for (;;) {
      const left = 2 * i + 1
      if (left >= queue.length) break
      const right = left + 1
      const child = right < queue.length && this.before(queue[right]!, queue[left]!) ? right : left
      if (!this.before(queue[child]!, last)) break
      queue[i] = queue[child]!
      i = child
    }
    queue[i] = last
  }
}
