/**
 * Fires `onIdle` once when a provider stays silent for `idleMs`: no byte since the request was
 * sent or since the last {@link IdleWatchdog.touch}.
 *
 * The time the caller holds an event does not count: between {@link IdleWatchdog.hold} and
 * {@link IdleWatchdog.release} the adapter reads nothing, so a slow consumer (a tool that runs
 * long, a UI that renders) is never taken for a silent server; counting starts again at
 * `release()`. Every adapter of this repository behaves this way.
 *
 * Built for hot paths: `touch`, `hold` and `release` only record a time or a flag. One timer per
 * request is armed at `start()` and re-armed only when it fires early, so a stream of 20 000
 * chunks costs no timer work per chunk. `Infinity` disables the watchdog.
 *
 * Used by {@link streamServerSentEvents}; exported for adapters that read their stream another way.
 */
export class IdleWatchdog {
  /** How long the provider may stay silent, in milliseconds. */
  readonly idleMs: number
  readonly #onIdle: () => void
  #timer: ReturnType<typeof setTimeout> | undefined
  /** The silence allowed now: `idleMs`, or less after {@link IdleWatchdog.shorten}. */
  #limitMs: number
  #lastActivity = 0
  #held = false
  #state: 'new' | 'running' | 'fired' | 'stopped' = 'new'
  readonly #check = (): void => this.#onTimer()

  constructor(idleMs: number, onIdle: () => void) {
    this.idleMs = idleMs
    this.#limitMs = idleMs
    this.#onIdle = onIdle
  }

  /** Whether the watchdog went off. */
  get fired(): boolean {
    return this.#state === 'fired'
  }

  /** Starts counting (call it as the request is sent). */
  start(): void {
    if (this.#state !== 'new') return
    this.#state = 'running'
    this.#lastActivity = performance.now()
    this.#arm(this.idleMs)
  }

  /** The provider sent something: the silence starts again from now. */
  touch(): void {
    this.#lastActivity = performance.now()
  }

  /** The caller holds an event: stop counting until {@link IdleWatchdog.release}. */
  hold(): void {
    this.#held = true
  }

  /** The caller asks for the next event: count from now. */
  release(): void {
    this.#held = false
    this.#lastActivity = performance.now()
  }

  /**
   * Allows at most `ms` more silence from now on (the response is complete and only its end is
   * awaited).
   */
  shorten(ms: number): void {
    if (this.#state !== 'running' || !(ms < this.#limitMs)) return
    this.#limitMs = ms
    this.#lastActivity = performance.now()
    this.#clear()
    this.#arm(ms)
  }

  /** Stops for good and leaves no timer behind. */
  stop(): void {
    if (this.#state !== 'fired') this.#state = 'stopped'
    this.#clear()
  }

  #onTimer(): void {
    this.#timer = undefined
    if (this.#state !== 'running') return
    if (this.#held) {
      // Only the caller can go on: a caller that dropped the stream must not keep the process alive.
      this.#arm(this.#limitMs)?.unref?.()
      return
    }
    const silentFor = performance.now() - this.#lastActivity
    if (silentFor < this.#limitMs) {
      this.#arm(this.#limitMs - silentFor)
      return
    }
    this.#state = 'fired'
    this.#onIdle()
  }

  #arm(ms: number): ReturnType<typeof setTimeout> | undefined {
    if (!Number.isFinite(ms)) return undefined
    this.#timer = setTimeout(this.#check, Math.max(1, Math.ceil(ms)))
    return this.#timer
  }

  #clear(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
