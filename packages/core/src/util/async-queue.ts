/**
 * A push-to-pull bridge: producers `push` values, one consumer iterates them. `return()` on the
 * iterator (an early `break`) calls `onCancel` so the producer can stop.
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  #values: T[] = []
  #waiting: ((result: IteratorResult<T>) => void) | undefined
  #failWaiting: ((error: unknown) => void) | undefined
  #ended = false
  #error: { error: unknown } | undefined
  readonly #onCancel: (() => void) | undefined

  constructor(onCancel?: () => void) {
    this.#onCancel = onCancel
  }

  push(value: T): void {
    if (this.#ended) return
    if (this.#waiting) {
      const resolve = this.#waiting
      this.#waiting = undefined
      this.#failWaiting = undefined
      resolve({ value, done: false })
    } else {
      this.#values.push(value)
    }
  }

  /** Ends the iteration after the queued values; with `error`, the last `next()` rejects with it. */
  end(error?: { error: unknown }): void {
    if (this.#ended) return
    this.#ended = true
    this.#error = error
    if (this.#waiting && this.#values.length === 0) this.#settleWaiting()
  }

  #settleWaiting(): void {
    const resolve = this.#waiting
    const reject = this.#failWaiting
    this.#waiting = undefined
    this.#failWaiting = undefined
    if (this.#error && reject) {
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
        if (this.#values.length > 0) return Promise.resolve({ value: this.#values.shift()!, done: false })
        if (this.#ended) {
          if (this.#error) {
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
          this.#values = []
          this.#onCancel?.()
        }
        return Promise.resolve({ value: undefined, done: true })
      },
    }
  }
}
