/**
 * A timer that fires when nothing happened for `idleMs`: every {@link IdleWatchdog.touch} restarts
 * it. Paused while the consumer holds an event, so a slow consumer is not taken for a silent server.
 *
 * Used by `GeminiAdapter` to enforce `idleTimeoutMs` on each request; internal to this package.
 */
export class IdleWatchdog {
  readonly idleMs: number
  #onIdle: () => void
  #timer: ReturnType<typeof setTimeout> | undefined
  #running = false
  #fired = false

  constructor(idleMs: number, onIdle: () => void) {
    this.idleMs = idleMs
    this.#onIdle = onIdle
  }

  /** Whether the timer went off. */
  get fired(): boolean {
    return this.#fired
  }

  /** Starts (or restarts) counting. */
  start(): void {
    this.#running = true
    this.#arm()
  }

  /** Something arrived: restart the count, if running. */
  touch(): void {
    if (this.#running) this.#arm()
  }

  /** Stops counting until {@link IdleWatchdog.start} is called again. */
  pause(): void {
    this.#running = false
    this.#clear()
  }

  /** Stops for good and leaves no timer behind. */
  stop(): void {
    this.pause()
  }

  #arm(): void {
    this.#clear()
    if (this.#fired) return
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      this.#fired = true
      this.#running = false
      this.#onIdle()
    }, this.idleMs)
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
