/** What replaces a secret in any text an adapter shows. */
export const REDACTED = '[redacted]'

/** Secrets shorter than this are not searched for: replacing every `ab` of a text hides nothing. */
const MIN_SECRET_LENGTH = 4

/**
 * A bearer credential: long, made of token characters, with at least one digit. Help text such
 * as "send it as a Bearer token" or "Bearer <your key>" does not look like that and stays.
 */
const BEARER_CREDENTIAL = /\b(Bearer\s+)(?=[A-Za-z0-9._~+/-]*\d)([A-Za-z0-9._~+/-]{16,}=*)/g

/**
 * Replaces every occurrence of each secret (the API key) in `text` with `[redacted]`, longest
 * secret first, and also any credential-shaped value after `Bearer` (a key the adapter was not
 * told about, echoed by a proxy). Words that merely follow "Bearer" in prose are kept.
 *
 * Called by every adapter on every text that goes into an error message or cause.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text
  for (const secret of sortedSecrets(secrets)) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED)
  }
  return result.includes('Bearer') ? result.replace(BEARER_CREDENTIAL, `$1${REDACTED}`) : result
}

/**
 * {@link redactSecrets}, then at most `max` characters of the result (with `…` when cut).
 * Redacting first matters: cut first, a secret straddling the cut is no longer whole, and its
 * first part would be shown.
 */
export function redactAndCut(text: string, secrets: readonly string[], max: number): string {
  const redacted = redactSecrets(text, secrets)
  return redacted.length > max ? `${redacted.slice(0, max)}…` : redacted
}

/**
 * The `cause` an adapter error carries instead of what a vendor SDK threw: a plain `Error` with
 * the same `name`, message and stack, the diagnostic fields (`status`, `code`, `type`,
 * `requestID`, `param`, and the provider's error body `error` as JSON), and its own `cause`
 * copied the same way — every secret redacted. A string is redacted; `undefined` stays
 * `undefined`.
 *
 * Vendor error classes never reach callers, not even as a cause: SDK errors keep the request
 * and response (headers included) on themselves, and an `instanceof` check on them would tie
 * application code to one SDK copy.
 */
export function sanitizeCause(error: unknown, secrets: readonly string[]): unknown {
  return sanitize(error, sortedSecrets(secrets), 0)
}

const DIAGNOSTIC_FIELDS = ['status', 'code', 'type', 'requestID', 'param'] as const

function sanitize(error: unknown, secrets: readonly string[], depth: number): unknown {
  if (error === undefined || error === null) return error
  if (typeof error === 'string') return redactSecrets(error, secrets)
  if (typeof error !== 'object') return error
  const source = error as Record<string, unknown>
  const message = typeof source.message === 'string' ? source.message : safeJson(error)
  const copy = new Error(redactSecrets(message, secrets))
  copy.name = errorName(error) || 'Error'
  copy.stack = redactSecrets(
    typeof source.stack === 'string' ? source.stack : `${copy.name}: ${copy.message}`,
    secrets,
  )
  for (const field of DIAGNOSTIC_FIELDS) {
    const value = source[field]
    if (typeof value === 'string' || typeof value === 'number')
      Object.defineProperty(copy, field, {
        value: typeof value === 'string' ? redactSecrets(value, secrets) : value,
        enumerable: true,
      })
  }
  if (typeof source.error === 'object' && source.error !== null) {
    const body = safeJson(source.error)
    if (body.startsWith('{'))
      Object.defineProperty(copy, 'error', {
        value: JSON.parse(redactSecrets(body, secrets)),
        enumerable: true,
      })
  }
  if (source.cause !== undefined && depth < 5) copy.cause = sanitize(source.cause, secrets, depth + 1)
  return copy
}

function sortedSecrets(secrets: readonly string[]): string[] {
  return secrets
    .filter((secret) => typeof secret === 'string' && secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length)
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/**
 * An error's name: `name`, or the class name when `name` is the generic `Error` (SDK error
 * subclasses often leave it so). Internal to the toolkit.
 */
export function errorName(error: object): string {
  const name = (error as { name?: unknown }).name
  if (typeof name === 'string' && name !== 'Error') return name
  const className = (error as { constructor?: { name?: unknown } }).constructor?.name
  return typeof className === 'string' && className !== 'Object'
    ? className
    : typeof name === 'string'
      ? name
      : ''
}
