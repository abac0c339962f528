/** How the kernel retries a failed model request (before its first event only). */
export interface RetryOptions {
  /** Retries after the first attempt; `0` disables retries. Default is `2`. */
  maxRetries?: number
  /** The first backoff delay, doubled each retry, with jitter. Default is `500`. */
  initialDelayMs?: number
  /** The longest delay; a `retryAfterMs` beyond it ends the retries. Default is `30000`. */
  maxDelayMs?: number
}

/** The defaults of {@link RetryOptions}. */
export const DEFAULT_RETRY: Required<RetryOptions> = {
  maxRetries: 2,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
}

/** The delay before retry `attempt` (1-based): exponential backoff with equal jitter. */
export function backoffDelay(
  attempt: number,
  options: Required<RetryOptions>,
  random: () => number = Math.random,
): number {
  const base = Math.min(options.maxDelayMs, options.initialDelayMs * 2 ** (attempt - 1))
  return Math.round(base / 2 + (random() * base) / 2)
}
