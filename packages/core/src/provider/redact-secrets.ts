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
 * The cause an error may carry: `error` itself when none of `secrets` shows anywhere in it (its
 * message, stack, own JSON, nested causes), otherwise a plain `Error` copy with the secrets
 * redacted from message and stack, keeping `name` and the diagnostic fields (`status`, `code`,
 * `type`, `requestID`, `param`) and a redacted copy of its own `cause`.
 *
 * Vendor SDK errors often keep the request (headers included) on themselves; this is what stops
 * the API key from reaching a log through `error.cause`.
 */
export function sanitizeCause(error: unknown, secrets: readonly string[]): unknown {
  return sanitize(error, sortedSecrets(secrets), 0)
}

function sanitize(error: unknown, secrets: readonly string[], depth: number): unknown {
  if (error === undefined || error === null || secrets.length === 0) return error
  if (typeof error === 'string') return redactSecrets(error, secrets)
  if (typeof error !== 'object' || !mentionsSecret(error, secrets, 0)) return error
  const source = error as Record<string, unknown>
  const message = typeof source.message === 'string' ? source.message : safeJson(error)
  const copy = new Error(redactSecrets(message, secrets))
  copy.name = typeof source.name === 'string' ? source.name : 'Error'
  copy.stack = redactSecrets(typeof source.stack === 'string' ? source.stack : '', secrets)
  for (const field of ['status', 'code', 'type', 'requestID', 'param'] as const) {
    const value = source[field]
    if (typeof value === 'string' || typeof value === 'number')
      Object.defineProperty(copy, field, {
        value: typeof value === 'string' ? redactSecrets(value, secrets) : value,
        enumerable: true,
      })
  }
  if (source.cause !== undefined && depth < 5) copy.cause = sanitize(source.cause, secrets, depth + 1)
  return copy
}

function mentionsSecret(value: unknown, secrets: readonly string[], depth: number): boolean {
  if (value === undefined || value === null || depth > 5) return false
  const texts: string[] = []
  if (typeof value === 'string') texts.push(value)
  else if (typeof value === 'object') {
    const { message, stack } = value as { message?: unknown; stack?: unknown }
    if (typeof message === 'string') texts.push(message)
    if (typeof stack === 'string') texts.push(stack)
    texts.push(safeJson(value))
  }
  if (texts.some((text) => secrets.some((secret) => text.includes(secret)))) return true
  return typeof value === 'object' && mentionsSecret((value as { cause?: unknown }).cause, secrets, depth + 1)
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
