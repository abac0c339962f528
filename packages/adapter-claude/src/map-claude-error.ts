import {
  AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isAgentError,
  isRetryableStatus,
  parseRetryAfterMs,
} from '@agentx/core'

/** The provider name every error of this package carries (`AdapterError.provider`). */
export const CLAUDE_PROVIDER = 'claude'

/** Why the adapter itself ended a request, when it did: the caller aborted, or the stream went idle. */
export type ClaudeStopCause =
  | { type: 'aborted'; reason: unknown }
  | { type: 'idle-timeout'; idleTimeoutMs: number }

/** What {@link mapClaudeError} knows besides the thrown value. */
export interface MapClaudeErrorContext {
  /** Secrets that must never appear in the mapped error (the API key). */
  secrets?: readonly string[]
  /** Set when the adapter aborted the request itself; wins over whatever the SDK threw. */
  stopCause?: ClaudeStopCause | undefined
  /** The last bytes received, quoted in the cause of a malformed-frame error. */
  excerpt?: string
}

/** The Anthropic `error.type` values and the kind each means. */
const KIND_BY_ERROR_TYPE: Readonly<Record<string, AdapterErrorKind>> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  billing_error: 'permission',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'context_length',
  rate_limit_error: 'rate_limit',
  timeout_error: 'timeout',
  api_error: 'server',
  overloaded_error: 'overloaded',
  conflict_error: 'server',
}

const CONTEXT_LENGTH_PATTERN = /prompt is too long|context (window|length)|too many tokens|maximum context/i

/** The fields of an `@anthropic-ai/sdk` `APIError` that mapping reads (duck-typed, so any SDK copy works). */
interface AnthropicErrorLike {
  name?: unknown
  message?: unknown
  status?: unknown
  headers?: unknown
  error?: unknown
  type?: unknown
  requestID?: unknown
}

/**
 * Turns anything a Claude request threw into an {@link AdapterError}: SDK `APIError`s by status and
 * `error.type` (429 → `rate_limit` with `retryAfterMs`, 529 / `overloaded_error` → `overloaded`, 401,
 * 403, 400, 404, 413, 5xx …), connection failures → `network`, SDK timeouts → `timeout`, and the
 * adapter's own abort / idle timeout. Vendor error classes never reach callers: the SDK error is
 * kept as `cause`, with every secret redacted.
 *
 * Called by {@link ClaudeAdapter} for every failure; exported for custom adapters built on the same SDK.
 */
export function mapClaudeError(error: unknown, context: MapClaudeErrorContext = {}): AdapterError {
  const secrets = (context.secrets ?? []).filter((secret) => secret.length > 0)
  const stop = context.stopCause
  if (stop?.type === 'aborted') {
    return new AdapterError('The Claude request was aborted.', {
      kind: 'aborted',
      provider: CLAUDE_PROVIDER,
      cause: redactCause(stop.reason ?? error, secrets),
    })
  }
  if (stop?.type === 'idle-timeout') {
    return new AdapterError(`Claude sent no data for ${stop.idleTimeoutMs} ms; the request was cancelled.`, {
      kind: 'timeout',
      provider: CLAUDE_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if (isAgentError(error) && error instanceof AdapterError) return error

  const like = (typeof error === 'object' && error !== null ? error : {}) as AnthropicErrorLike
  const name = typeof like.name === 'string' ? like.name : ''
  const rawMessage = typeof like.message === 'string' ? like.message : String(error)

  if (name === 'APIUserAbortError' || name === 'AbortError') {
    return new AdapterError('The Claude request was aborted.', {
      kind: 'aborted',
      provider: CLAUDE_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if (name === 'APIConnectionTimeoutError') {
    return new AdapterError('The Claude request timed out before a response arrived.', {
      kind: 'timeout',
      provider: CLAUDE_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if (name === 'APIConnectionError' || isConnectionFailure(error)) {
    return new AdapterError(
      `The connection to Claude failed: ${redact(describeConnectionFailure(error), secrets)}`,
      {
        kind: 'network',
        provider: CLAUDE_PROVIDER,
        cause: redactCause(error, secrets),
      },
    )
  }
  if (error instanceof SyntaxError) {
    const excerpt =
      context.excerpt === undefined ? '' : ` near ${JSON.stringify(redact(context.excerpt, secrets))}`
    return new AdapterError(`Claude sent a malformed stream frame${excerpt}.`, {
      kind: 'server',
      provider: CLAUDE_PROVIDER,
      cause: new ClaudeProtocolError(
        `Malformed server-sent event${excerpt}: ${error.message}`,
        redact(context.excerpt ?? '', secrets),
        error,
      ),
    })
  }

  const status = typeof like.status === 'number' ? like.status : undefined
  const body = like.error as { error?: { type?: unknown; message?: unknown } } | undefined
  const errorType =
    typeof like.type === 'string'
      ? like.type
      : typeof body?.error?.type === 'string'
        ? body.error.type
        : undefined
  const apiMessage = typeof body?.error?.message === 'string' ? body.error.message : undefined
  const isApiError =
    status !== undefined ||
    errorType !== undefined ||
    name === 'APIError' ||
    (name.endsWith('Error') && 'headers' in like)

  if (!isApiError) {
    return new AdapterError(`The Claude request failed: ${redact(rawMessage, secrets)}`, {
      kind: 'unknown',
      provider: CLAUDE_PROVIDER,
      retryable: false,
      cause: redactCause(error, secrets),
    })
  }

  const kind = kindOf(status, errorType, apiMessage ?? rawMessage)
  const headers = isHeaders(like.headers) ? like.headers : undefined
  const retryAfterMs = parseRetryAfterMs(headers)
  const shouldRetry = headers?.get('x-should-retry')
  const retryable =
    shouldRetry === 'true'
      ? true
      : shouldRetry === 'false'
        ? false
        : status === undefined
          ? undefined
          : isRetryableStatus(status) || kind === 'overloaded'
  const where = status === undefined ? 'in the stream' : `with HTTP ${status}`
  const detail = apiMessage ?? errorType ?? rawMessage
  const requestId = typeof like.requestID === 'string' ? ` (request id ${like.requestID})` : ''
  return new AdapterError(`Claude answered ${where}: ${redact(detail, secrets)}${requestId}`, {
    kind,
    provider: CLAUDE_PROVIDER,
    ...(status === undefined ? {} : { status }),
    ...(retryable === undefined ? {} : { retryable }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: redactCause(error, secrets),
  })
}

/** The malformed frame behind a `server` error: `excerpt` holds the last bytes received. */
export class ClaudeProtocolError extends Error {
  override name = 'ClaudeProtocolError'
  readonly excerpt: string

  constructor(message: string, excerpt: string, cause: unknown) {
    super(message, { cause })
    this.excerpt = excerpt
  }
}

function kindOf(
  status: number | undefined,
  errorType: string | undefined,
  message: string,
): AdapterErrorKind {
  if (errorType === 'overloaded_error' || status === 529) return 'overloaded'
  if (errorType === 'authentication_error' || status === 401) return 'authentication'
  if (status === 413) return 'context_length'
  if ((status === 400 || errorType === 'invalid_request_error') && CONTEXT_LENGTH_PATTERN.test(message))
    return 'context_length'
  if (status !== undefined) {
    const byStatus = adapterErrorKindFromStatus(status)
    if (byStatus !== 'unknown') return byStatus
  }
  if (errorType !== undefined && KIND_BY_ERROR_TYPE[errorType] !== undefined)
    return KIND_BY_ERROR_TYPE[errorType]
  // An in-stream error of a type this version does not know: the provider failed while answering.
  return status === undefined ? 'server' : 'unknown'
}

function isHeaders(value: unknown): value is { get(name: string): string | null } {
  return typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function'
}

const CONNECTION_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
])

/** undici's `TypeError: terminated` / `fetch failed` and socket errors, directly or in the cause chain. */
function isConnectionFailure(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { name?: unknown; message?: unknown; code?: unknown; cause?: unknown }
    if (typeof candidate.code === 'string' && CONNECTION_CODES.has(candidate.code)) return true
    if (
      candidate.name === 'TypeError' &&
      (candidate.message === 'terminated' || candidate.message === 'fetch failed')
    )
      return true
    if (candidate.name === 'SocketError') return true
    current = candidate.cause
  }
  return false
}

function describeConnectionFailure(error: unknown): string {
  const parts: string[] = []
  for (let current: unknown = error, depth = 0; current && depth < 5; depth++) {
    const candidate = current as { message?: unknown; code?: unknown; cause?: unknown }
    if (
      typeof candidate.message === 'string' &&
      candidate.message !== '' &&
      !parts.includes(candidate.message)
    )
      parts.push(candidate.message)
    if (typeof candidate.code === 'string' && !parts.includes(candidate.code)) parts.push(candidate.code)
    current = candidate.cause
  }
  return parts.join(': ') || 'connection error'
}

/** Replaces every occurrence of a secret with `[redacted]`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text
  for (const secret of secrets) if (secret.length > 0) result = result.split(secret).join('[redacted]')
  return result
}

/**
 * The cause to attach: the original error when no secret shows anywhere in it (message, stack,
 * body, nested causes), otherwise a plain copy with the secrets redacted.
 */
function redactCause(error: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0 || !mentionsSecret(error, secrets, 0)) return error
  if (!(error instanceof Error)) return redact(safeString(error), secrets)
  const copy = new Error(redact(error.message, secrets), {
    cause: redactCause((error as { cause?: unknown }).cause, secrets),
  })
  copy.name = error.name
  copy.stack = redact(error.stack ?? '', secrets)
  const like = error as AnthropicErrorLike
  if (typeof like.status === 'number') Object.assign(copy, { status: like.status })
  if (typeof like.type === 'string') Object.assign(copy, { type: like.type })
  if (typeof like.requestID === 'string') Object.assign(copy, { requestID: like.requestID })
  return copy
}

function mentionsSecret(value: unknown, secrets: readonly string[], depth: number): boolean {
  if (value === undefined || value === null || depth > 5) return false
  const texts: string[] = [safeString(value)]
  if (value instanceof Error) texts.push(value.message, value.stack ?? '')
  if (typeof value === 'object') texts.push(safeString((value as { error?: unknown }).error))
  if (texts.some((text) => secrets.some((secret) => text.includes(secret)))) return true
  return typeof value === 'object' && mentionsSecret((value as { cause?: unknown }).cause, secrets, depth + 1)
}

function safeString(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}
