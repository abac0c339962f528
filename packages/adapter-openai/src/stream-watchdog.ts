/**
 * Owns the cancellation of one model request: the caller's `AbortSignal`, an idle timer (no byte
 * for `idleTimeoutMs` → abort) and the final release of the connection.
 *
 * Created by the adapter for each `stream()` call; `signal` goes to the SDK request, `touch()` is
 * called on every chunk of the body, `dispose()` in the generator's `finally` (it aborts the
 * request if it is still open, so `break` and errors close the HTTP connection, and clears every
 * timer and listener).
 */
export class StreamWatchdog {
  /** Why the request ended early, if it did. */
  reason: 'aborted' | 'timeout' | undefined
  readonly signal: AbortSignal
  idleTimeoutMs: number
  readonly #controller = new AbortController()
  readonly #callerSignal: AbortSignal | undefined
  readonly #onCallerAbort = (): void => this.#stop('aborted')
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(callerSignal: AbortSignal | undefined, idleTimeoutMs: number) {
    this.signal = this.#controller.signal
    this.idleTimeoutMs = idleTimeoutMs
    this.#callerSignal = callerSignal
    if (callerSignal?.aborted) {
      this.#stop('aborted')
      return
    }
    callerSignal?.addEventListener('abort', this.#onCallerAbort, { once: true })
    this.touch()
  }

  /** The caller's abort reason, when the caller aborted. */
  get callerReason(): unknown {
    return this.#callerSignal?.reason
  }

  /** Restarts the idle timer: the provider just sent something. */
  touch(): void {
    if (this.reason !== undefined || !Number.isFinite(this.idleTimeoutMs)) return
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#stop('timeout'), this.idleTimeoutMs)
  }

  /**
   * Shortens the idle timeout to at most `ms` from now on: the response is complete, and the rest
   * of the body (normally nothing) is not worth waiting long for.
   */
  shorten(ms: number): void {
    this.idleTimeoutMs = Math.min(this.idleTimeoutMs, ms)
    this.touch()
  }

  /** Releases everything: timer, listener, and the connection if it is still open. */
  dispose(): void {
    this.#clearTimer()
    this.#callerSignal?.removeEventListener('abort', this.#onCallerAbort)
    if (!this.#controller.signal.aborted) this.#controller.abort()
  }

  #stop(reason: 'aborted' | 'timeout'): void {
    if (this.reason !== undefined) return
    this.reason = reason
    this.#clearTimer()
    this.#controller.abort()
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }
}
