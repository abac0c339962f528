/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. Leaves no timer behind. */
/** The longest delay `setTimeout`/`setInterval` honour (2^31 - 1 ms, about 24.8 days); Node.js runs a longer one after 1 ms. */
export const MAX_TIMER_MS = 2_147_483_647

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      },
      Math.min(ms, MAX_TIMER_MS),
    )
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Settles as `promise` does, or rejects with the signal's reason as soon as it aborts. The
 * promise itself goes on; a later rejection of it is handled here, never reported as unhandled.
 */
export function raceAbort<T>(promise: T | Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    Promise.resolve(promise).catch(() => undefined)
    return Promise.reject(signal.reason)
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}
