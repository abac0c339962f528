/** Events buffered for a slow consumer before the producer is asked to wait. */
const HIGH_WATER = 1024
/** The producer resumes when the consumer has brought the buffer down to this. */
const LOW_WATER = 256

/**
 * A push-to-pull bridge with backpressure: one producer `push`es, one consumer iterates.
 *
 * Dequeueing is O(1) (a head index into the buffer, compacted now and then), so a consumer that
 * falls behind never makes the stream quadratic. The producer checks {@link EventStream.full} and
 * awaits {@link EventStream.drained} to keep the buffer bounded. `return()` on the iterator (an
 * early `break`) calls `onCancel` so the producer can stop.
 */
export class EventStream<T> implements AsyncIterable<T> {
  #buffer: T[] = []
  #head = 0
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
    return this.#buffer.length - this.#head
  }

  /** Whether the producer should wait for {@link EventStream.drained} before pushing more. */
  get full(): boolean {
    return this.#buffer.length - this.#head >= HIGH_WATER
  }

  push(value: T): void {
    if (this.#ended) return
    const resolve = this.#waiting
    if (resolve !== undefined) {
      this.#waiting = undefined
      this.#failWaiting = undefined
      resolve({ value, done: false })
    } else {
      this.#buffer.push(value)
    }
  }

  /** Resolves when the consumer has taken the buffer down to the low-water mark, or stopped. */
  drained(): Promise<void> {
    if (this.#ended || this.backlog <= LOW_WATER) return Promise.resolve()
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

  #take(): T {
    const value = this.#buffer[this.#head] as T
    this.#buffer[this.#head] = undefined as T
    this.#head += 1
    if (this.#head === this.#buffer.length) {
      // Caught up: reuse the array (its capacity stays) instead of allocating a new one.
      this.#buffer.length = 0
      this.#head = 0
    } else if (this.#head >= 4096 && this.#head * 2 >= this.#buffer.length) {
      this.#buffer = this.#buffer.slice(this.#head)
      this.#head = 0
    }
    if (this.#drained !== undefined && this.backlog <= LOW_WATER) this.#releaseProducer()
    return value
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

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#head < this.#buffer.length) return Promise.resolve({ value: this.#take(), done: false })
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
      },
      return: () => {
        if (!this.#ended) {
          this.#ended = true
          this.#buffer = []
          this.#head = 0
          this.#releaseProducer()
          this.#onCancel?.()
        }
        return Promise.resolve({ value: undefined, done: true })
      },
    }
  }
}
