/**
 * Bounded memory for a command's output: the first `headBytes` and the last `tailBytes`, whatever the total.
 * The full output goes elsewhere (the ResultStore) as it arrives; this keeps what a person and the model see.
 *
 * @since 0.1.0
 */

/**
 * What a buffer holds once the output has ended.
 *
 * @since 0.1.0
 * @category models
 */
export interface BufferedOutput {
  /** The whole output when nothing was dropped, else its head. */
  readonly head: string
  /** The tail when bytes were dropped between head and tail, else empty. */
  readonly tail: string
  readonly totalBytes: number
  /** Bytes between head and tail that memory did not keep. */
  readonly omittedBytes: number
}

const decoder = new TextDecoder()

/** The chunks as one buffer (Node's `Buffer.concat`, a Uint8Array). */
const concat = (chunks: ReadonlyArray<Uint8Array>, length: number): Uint8Array => Buffer.concat(chunks, length)

/**
 * A head buffer plus a tail ring. One reader appends, in order, buffers it will not write to again (they are kept
 * by reference, not copied).
 *
 * @since 0.1.0
 * @category models
 */
export class OutputBuffer {
  private readonly headChunks: Array<Uint8Array> = []
  private headLength = 0
  private tailChunks: Array<Uint8Array> = []
  private tailLength = 0
  private total = 0

  constructor(readonly headBytes: number, readonly tailBytes: number) {}

  /** Bytes appended so far. */
  get totalBytes(): number {
    return this.total
  }

  /** Appends a chunk: it fills the head first, then the tail ring, whose oldest chunks fall out. */
  append(chunk: Uint8Array): void {
    this.total += chunk.length
    let rest = chunk
    if (this.headLength < this.headBytes) {
      const take = Math.min(rest.length, this.headBytes - this.headLength)
      this.headChunks.push(rest.subarray(0, take))
      this.headLength += take
      rest = rest.subarray(take)
    }
    if (rest.length === 0 || this.tailBytes === 0) return
    if (rest.length >= this.tailBytes) {
      this.tailChunks = [rest.subarray(rest.length - this.tailBytes)]
      this.tailLength = this.tailBytes
      return
    }
    // Kept by reference: the reader hands over fresh buffers and never writes to them again.
    this.tailChunks.push(rest)
    this.tailLength += rest.length
    while (this.tailLength - this.tailChunks[0]!.length >= this.tailBytes) {
      this.tailLength -= this.tailChunks.shift()!.length
    }
  }

  /** Everything appended so far, when it all fits in the head; for spilling what came before a file existed. */
  headSoFar(): Uint8Array {
    return concat(this.headChunks, this.headLength)
  }

  /** The last `count` lines (at most 4 KB of them), for progress reports. */
  latestLines(count: number): ReadonlyArray<string> {
    const source = this.tailLength > 0
      ? concat(this.tailChunks, this.tailLength)
      : concat(this.headChunks, this.headLength)
    const text = decoder.decode(source.subarray(Math.max(0, source.length - 4096)))
    const lines = text.split("\n")
    if (lines.at(-1) === "") lines.pop()
    return lines.slice(-count)
  }

  /** The buffered output. Text is decoded as UTF-8; a character cut at a boundary becomes U+FFFD. */
  snapshot(): BufferedOutput {
    const head = decoder.decode(concat(this.headChunks, this.headLength))
    const tailBytes = concat(this.tailChunks, this.tailLength)
    const kept = this.headLength + Math.min(this.tailLength, this.tailBytes)
    const omittedBytes = this.total - kept
    if (omittedBytes === 0) {
      return { head: head + decoder.decode(tailBytes), tail: "", totalBytes: this.total, omittedBytes: 0 }
    }
    return {
      head,
      tail: decoder.decode(tailBytes.subarray(Math.max(0, tailBytes.length - this.tailBytes))),
      totalBytes: this.total,
      omittedBytes
    }
  }
}
