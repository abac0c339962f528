import { AgentError, isAgentError } from './agent-error.js'

/** What went wrong in a model request. */
export type AdapterErrorKind =
  | 'rate_limit'
  | 'overloaded'
  | 'authentication'
  | 'permission'
  | 'invalid_request'
  | 'not_found'
  | 'context_length'
  | 'server'
  | 'network'
  | 'timeout'
  | 'aborted'
  | 'unknown'

const RETRYABLE_KINDS: ReadonlySet<AdapterErrorKind> = new Set([
  'rate_limit',
  'overloaded',
  'server',
  'network',
  'timeout',
])

/** Options of {@link AdapterError}. */
export interface AdapterErrorOptions {
  kind: AdapterErrorKind
  /** The adapter's `getName()`. */
  provider: string
  /** The HTTP status, when there was one. */
  status?: number
  /** Default is `true` for `rate_limit`, `overloaded`, `server`, `network` and `timeout`. */
  retryable?: boolean
  /** How long the provider asked to wait before trying again. */
  retryAfterMs?: number
  cause?: unknown
}

/**
 * A failed model request, thrown by adapters and, after retries, by `send`.
 *
 * Its message never contains an API key (rule A-ERR-009).
 */
export class AdapterError extends AgentError {
  override name = 'AdapterError'
  readonly kind: AdapterErrorKind
  readonly provider: string
  readonly status?: number
  readonly retryAfterMs?: number

  constructor(message: string, options: AdapterErrorOptions) {
    super(message, `ADAPTER_${options.kind.toUpperCase()}`, {
      cause: options.cause,
      retryable: options.retryable ?? RETRYABLE_KINDS.has(options.kind),
    })
    this.kind = options.kind
    this.provider = options.provider
    if (options.status !== undefined) this.status = options.status
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      kind: this.kind,
      provider: this.provider,
      ...(this.status === undefined ? {} : { status: this.status }),
      ...(this.retryAfterMs === undefined ? {} : { retryAfterMs: this.retryAfterMs }),
    }
  }
}

/** Whether `value` is an {@link AdapterError}, from this or any other copy of `@agentx/core`. */
export function isAdapterError(value: unknown): value is AdapterError {
  return isAgentError(value) && typeof (value as { kind?: unknown }).kind === 'string' && 'provider' in value
}

/** The kind an HTTP status means, per DESIGN: 408 timeout, 409/5xx server, 429 rate limit, 529/503 overloaded. */
export function adapterErrorKindFromStatus(status: number): AdapterErrorKind {
  if (status === 400 || status === 422) return 'invalid_request'
  if (status === 401) return 'authentication'
  if (status === 403) return 'permission'
  if (status === 404) return 'not_found'
  if (status === 408) return 'timeout'
  if (status === 413) return 'context_length'
  if (status === 429) return 'rate_limit'
  if (status === 503 || status === 529) return 'overloaded'
  if (status === 409 || status >= 500) return 'server'
  return 'unknown'
}

/** Whether a status is worth retrying: 408, 409, 429 and every 5xx. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500
}

/**
 * Reads how long to wait from response headers: `retry-after-ms`, then `retry-after` in seconds
 * or as an HTTP date. Returns `undefined` when neither says.
 */
export function parseRetryAfterMs(
  headers: { get(name: string): string | null } | Record<string, string | string[] | undefined> | undefined,
  now: number = Date.now(),
): number | undefined {
  if (!headers) return undefined
  const read = (name: string): string | undefined => {
    if (typeof (headers as { get?: unknown }).get === 'function') {
      return (headers as { get(name: string): string | null }).get(name) ?? undefined
    }
    const record = headers as Record<string, string | string[] | undefined>
    const key = Object.keys(record).find((k) => k.toLowerCase() === name)
    const value = key === undefined ? undefined : record[key]
    return Array.isArray(value) ? value[0] : value
  }
  // A negative or malformed value says nothing (RFC 9110 allows only non-negative seconds or an
  // HTTP date): the caller's own backoff applies, as the providers' SDKs do.
  const ms = read('retry-after-ms')?.trim()
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Number(ms)
  const value = read('retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.round(Number(value) * 1000)
  // An HTTP date names its day and month in letters; `Date.parse` reads '-5' as a year.
  if (!/[a-z]/i.test(value)) return undefined
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}
