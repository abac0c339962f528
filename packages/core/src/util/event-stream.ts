/** Events buffered for a slow consumer before the producer is asked to wait. */
const HIGH_WATER = 1024
/** The producer resumes when the consumer has brought the buffer down to this. */
const LOW_WATER = 256

/**
 * A push-to-pull bridge with backpressure: one producer `push`es, one consumer iterates.
 *
 * The buffer is a ring (O(1) push and dequeue, no array shifting; it only grows, by doubling, up to
 * what the producer buffers before respecting {@link EventStream.full}), so a consumer that falls behind never makes the
 * stream quadratic. The producer checks {@link EventStream.full} and awaits
 * {@link EventStream.drained} to keep the buffer bounded. The stream is its own iterator (one
 * consumer); `return()` (an early `break`) calls `onCancel` so the producer can stop.
 */
export class EventStream<T> implements AsyncIterableIterator<T> {
  /** Ring storage; its length is a power of two. It starts small (most replies are consumed as they come) and doubles when needed. */
  #ring: Array<T | undefined> = new Array(16)
  #head = 0
  #size = 0
  #waiting: ((result: IteratorResult<T>) => void) | undefined
  #failWaiting: ((error: unknown) => void) | undefined
  #drained: (() => void) | undefined
  #ended = false
  #error: { error: unknown } | undefined
  readonly #onCancel: (() => void) | undefined

  constructor(onCancel?: () => void) {
    this.#onCancel = onCancel
  }

  /** Events pushed and not yet taken by the consumer. */
  get backlog(): number {
    return this.#size
  }

  /** Whether the producer should wait for {@link EventStream.drained} before pushing more. */
  get full(): boolean {
    return this.#size >= HIGH_WATER
  }

  push(value: T): void {
    if (this.#ended) return
    const resolve = this.#waiting
    if (resolve !== undefined) {
      this.#waiting = undefined
      this.#failWaiting = undefined
      resolve({ value, done: false })
      return
    }
    if (this.#size === this.#ring.length) this.#grow()
    this.#ring[(this.#head + this.#size) & (this.#ring.length - 1)] = value
    this.#size += 1
  }

  /** Resolves when the consumer has taken the buffer down to the low-water mark, or stopped. */
  drained(): Promise<void> {
    if (this.#ended || this.#size <= LOW_WATER) return Promise.resolve()
    return new Promise((resolve) => {
      this.#drained = resolve
    })
  }

  /** Ends the iteration after the buffered values; with `error`, the last `next()` rejects with it. */
  end(error?: { error: unknown }): void {
    if (this.#ended) return
    this.#ended = true
    this.#error = error
    this.#releaseProducer()
    if (this.#waiting !== undefined) this.#settleWaiting()
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#size > 0) return Promise.resolve({ value: this.#take(), done: false })
    if (this.#ended) {
      if (this.#error !== undefined) {
        const { error } = this.#error
        this.#error = undefined
        return Promise.reject(error)
      }
      return Promise.resolve({ value: undefined, done: true })
    }
    return new Promise<IteratorResult<T>>((resolve, reject) => {
      this.#waiting = resolve
      this.#failWaiting = reject
    })
  }

  return(): Promise<IteratorResult<T>> {
    if (!this.#ended) {
      this.#ended = true
      this.#ring = new Array(1)
      this.#head = 0
      this.#size = 0
      this.#releaseProducer()
      this.#onCancel?.()
    }
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  #take(): T {
    const ring = this.#ring
    const value = ring[this.#head] as T
    ring[this.#head] = undefined
    this.#head = (this.#head + 1) & (ring.length - 1)
    this.#size -= 1
    if (this.#drained !== undefined && this.#size <= LOW_WATER) this.#releaseProducer()
    return value
  }

  /** Doubles the ring (the copy is amortised O(1) per push). */
  #grow(): void {
    const ring = this.#ring
    const grown: Array<T | undefined> = new Array(ring.length * 2)
    for (let i = 0; i < this.#size; i++) grown[i] = ring[(this.#head + i) & (ring.length - 1)]
    this.#ring = grown
    this.#head = 0
  }

  #releaseProducer(): void {
    const resolve = this.#drained
    this.#drained = undefined
    resolve?.()
  }

  #settleWaiting(): void {
    const resolve = this.#waiting
    const reject = this.#failWaiting
    this.#waiting = undefined
    this.#failWaiting = undefined
    if (this.#error !== undefined && reject !== undefined) {
      const { error } = this.#error
      this.#error = undefined
      reject(error)
    } else {
      resolve?.({ value: undefined, done: true })
    }
  }
}
