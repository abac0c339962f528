import {
  AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isAdapterError,
  isRetryableStatus,
  parseRetryAfterMs,
} from '@agentx/core'

/** The provider name every error of this package carries (`AdapterError.provider`). */
export const GEMINI_PROVIDER = 'gemini'

/** Why the adapter itself ended a request, when it did: the caller aborted, or the stream went idle. */
export type GeminiStopCause =
  | { type: 'aborted'; reason: unknown }
  | { type: 'idle-timeout'; idleTimeoutMs: number }

/** What {@link mapGeminiError} knows besides the thrown value. */
export interface MapGeminiErrorContext {
  /** Secrets that must never appear in the mapped error (the API key). Default is none. */
  secrets?: readonly string[]
  /** Set when the adapter ended the request itself; wins over whatever the SDK threw. */
  stopCause?: GeminiStopCause | undefined
  /** Headers of the HTTP response, when one arrived (for `Retry-After`). */
  responseHeaders?: Headers | undefined
  /** The last bytes received, quoted in the cause of a malformed-frame error. */
  excerpt?: string | undefined
}

/** The google.rpc status names of the Gemini API and the kind each means. */
const KIND_BY_RPC_STATUS: Readonly<Record<string, AdapterErrorKind>> = {
  INVALID_ARGUMENT: 'invalid_request',
  FAILED_PRECONDITION: 'invalid_request',
  OUT_OF_RANGE: 'invalid_request',
  UNAUTHENTICATED: 'authentication',
  PERMISSION_DENIED: 'permission',
  NOT_FOUND: 'not_found',
  RESOURCE_EXHAUSTED: 'rate_limit',
  ABORTED: 'server',
  INTERNAL: 'server',
  UNKNOWN: 'server',
  DATA_LOSS: 'server',
  UNAVAILABLE: 'overloaded',
  DEADLINE_EXCEEDED: 'timeout',
}

/** `google.rpc.ErrorInfo` reasons that mean the key itself is wrong, whatever the HTTP status. */
const AUTHENTICATION_REASONS: ReadonlySet<string> = new Set([
  'API_KEY_INVALID',
  'API_KEY_EXPIRED',
  'API_KEY_NOT_FOUND',
  'ACCESS_TOKEN_EXPIRED',
  'ACCESS_TOKEN_INVALID',
])

const CONTEXT_LENGTH_PATTERN =
  /input token count.*exceeds|exceeds the maximum number of tokens|context (window|length)|too many tokens/i
const API_KEY_PATTERN = /api key not valid|invalid api key|api key expired/i

/** Node network error codes that mean the connection failed or broke. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
])
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])

/** The body of a Gemini API error: `{ error: { code, message, status, details } }`. */
interface GeminiErrorBody {
  code?: unknown
  message?: unknown
  status?: unknown
  details?: unknown
}

/**
 * Turns anything a Gemini request threw into an {@link AdapterError}.
 *
 * `ApiError`s of `@google/genai` (HTTP errors and `data: {"error": …}` frames in the stream) map by
 * their google.rpc status and `ErrorInfo` reason: 429 `RESOURCE_EXHAUSTED` → `rate_limit` with
 * `retryAfterMs` from `RetryInfo.retryDelay` (or a `Retry-After` header), 400 `INVALID_ARGUMENT` →
 * `invalid_request` (but `API_KEY_INVALID` → `authentication`, a too-long prompt → `context_length`),
 * 403 → `permission`, 404 → `not_found`, 500 `INTERNAL` → `server`, 503 `UNAVAILABLE` →
 * `overloaded`. Connection failures and a stream cut mid-frame are retryable `network` errors,
 * timeouts `timeout`, an unparsable frame a non-retryable protocol error whose `cause` quotes it.
 * The adapter's own abort and idle timeout win over whatever the SDK threw.
 *
 * Vendor error classes never reach callers: the SDK error is kept as `cause`, with every secret
 * redacted from message, stack and cause (rule A-ERR-05).
 *
 * Called by `GeminiAdapter` for every failure; exported for custom adapters built on the same SDK.
 */
export function mapGeminiError(error: unknown, context: MapGeminiErrorContext = {}): AdapterError {
  const secrets = (context.secrets ?? []).filter((secret) => secret.length > 0)
  const stop = context.stopCause
  if (stop?.type === 'aborted') {
    return new AdapterError('The Gemini request was aborted.', {
      kind: 'aborted',
      provider: GEMINI_PROVIDER,
      cause: redactCause(stop.reason ?? error, secrets),
    })
  }
  if (stop?.type === 'idle-timeout') {
    return new AdapterError(`Gemini sent no data for ${stop.idleTimeoutMs} ms; the request was cancelled.`, {
      kind: 'timeout',
      provider: GEMINI_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if (isAdapterError(error)) return error

  const like = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown
    message?: unknown
    status?: unknown
    code?: unknown
    cause?: unknown
  }
  const name = typeof like.name === 'string' ? like.name : ''
  const rawMessage = typeof like.message === 'string' ? like.message : String(error)

  if (name === 'ApiError' && typeof like.status === 'number') {
    return mapApiError(like.status, rawMessage, error, secrets, context.responseHeaders)
  }
  if (name === 'AbortError' || name === 'TimeoutError') {
    // Neither the caller nor the idle watchdog aborted: `httpOptions.timeout` of the SDK did.
    return new AdapterError('The Gemini request timed out (httpOptions.timeout).', {
      kind: 'timeout',
      provider: GEMINI_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if (
    rawMessage.startsWith('Incomplete JSON segment at the end') ||
    rawMessage === 'Response body is empty'
  ) {
    return new AdapterError(
      'The Gemini stream was cut off in the middle of a frame; the response is incomplete.',
      {
        kind: 'network',
        provider: GEMINI_PROVIDER,
        cause: redactCause(error, secrets),
      },
    )
  }
  if (name === 'SyntaxError' || rawMessage.startsWith('exception parsing stream chunk')) {
    const excerpt = redact(context.excerpt ?? rawMessage, secrets)
    return new AdapterError('Gemini sent a stream frame that is not valid JSON (protocol error).', {
      kind: 'unknown',
      provider: GEMINI_PROVIDER,
      retryable: false,
      cause: new Error(`Malformed Gemini stream frame near: ${JSON.stringify(excerpt)}`, {
        cause: redactCause(error, secrets),
      }),
    })
  }
  const code = networkCode(error)
  if (code !== undefined && TIMEOUT_CODES.has(code)) {
    return new AdapterError(`The connection to Gemini timed out (${code}).`, {
      kind: 'timeout',
      provider: GEMINI_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  if ((code !== undefined && NETWORK_CODES.has(code)) || isFetchFailure(name, rawMessage)) {
    return new AdapterError(`The connection to Gemini failed${code === undefined ? '' : ` (${code})`}.`, {
      kind: 'network',
      provider: GEMINI_PROVIDER,
      cause: redactCause(error, secrets),
    })
  }
  return new AdapterError(`The Gemini request failed: ${redact(firstLine(rawMessage), secrets)}`, {
    kind: 'unknown',
    provider: GEMINI_PROVIDER,
    cause: redactCause(error, secrets),
  })
}

function mapApiError(
  status: number,
  rawMessage: string,
  error: unknown,
  secrets: readonly string[],
  headers: Headers | undefined,
): AdapterError {
  const body = parseErrorBody(rawMessage)
  const rpcStatus = typeof body?.status === 'string' ? body.status : undefined
  const providerMessage = typeof body?.message === 'string' ? body.message : firstLine(rawMessage)
  const reasons = errorInfoReasons(body?.details)

  // The HTTP status decides, as for every provider; the rpc status only for statuses core does not know.
  let kind: AdapterErrorKind = adapterErrorKindFromStatus(status)
  if (kind === 'unknown' && rpcStatus !== undefined) kind = KIND_BY_RPC_STATUS[rpcStatus] ?? 'unknown'
  if (kind === 'invalid_request' && CONTEXT_LENGTH_PATTERN.test(providerMessage)) kind = 'context_length'
  if (reasons.some((reason) => AUTHENTICATION_REASONS.has(reason)) || API_KEY_PATTERN.test(providerMessage)) {
    kind = 'authentication'
  }

  const retryAfterMs = retryDelayMs(body?.details) ?? (headers ? parseRetryAfterMs(headers) : undefined)
  const label = [String(status), rpcStatus].filter((part) => part !== undefined).join(' ')
  return new AdapterError(`Gemini API error ${label}: ${redact(providerMessage, secrets)}`, {
    kind,
    provider: GEMINI_PROVIDER,
    status,
    retryable: kind === 'authentication' ? false : isRetryableStatus(status) || kind === 'overloaded',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: redactCause(error, secrets),
  })
}

/** The JSON error body inside an `ApiError` message (`{…}` or `got status: X. {…}`). */
function parseErrorBody(message: string): GeminiErrorBody | undefined {
  const start = message.indexOf('{')
  if (start < 0) return undefined
  try {
    const parsed: unknown = JSON.parse(message.slice(start))
    if (typeof parsed !== 'object' || parsed === null) return undefined
    const inner = (parsed as { error?: unknown }).error
    if (typeof inner === 'object' && inner !== null) return inner as GeminiErrorBody
    return parsed as GeminiErrorBody
  } catch {
    return undefined
  }
}

function detailsOfType(details: unknown, typeSuffix: string): Record<string, unknown>[] {
  if (!Array.isArray(details)) return []
  return details.filter(
    (detail): detail is Record<string, unknown> =>
      typeof detail === 'object' &&
      detail !== null &&
      typeof (detail as Record<string, unknown>)['@type'] === 'string' &&
      ((detail as Record<string, unknown>)['@type'] as string).endsWith(typeSuffix),
  )
}

function errorInfoReasons(details: unknown): string[] {
  return detailsOfType(details, 'google.rpc.ErrorInfo')
    .map((detail) => detail.reason)
    .filter((reason): reason is string => typeof reason === 'string')
}

/** `RetryInfo.retryDelay` is a protobuf Duration in JSON form: `"34.4s"`. */
function retryDelayMs(details: unknown): number | undefined {
  for (const detail of detailsOfType(details, 'google.rpc.RetryInfo')) {
    const delay = detail.retryDelay
    if (typeof delay === 'string') {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(delay.trim())
      if (match?.[1] !== undefined) return Math.round(Number(match[1]) * 1000)
    }
    if (typeof delay === 'object' && delay !== null) {
      const seconds = Number((delay as { seconds?: unknown }).seconds ?? 0)
      const nanos = Number((delay as { nanos?: unknown }).nanos ?? 0)
      if (Number.isFinite(seconds) && Number.isFinite(nanos)) return Math.round(seconds * 1000 + nanos / 1e6)
    }
  }
  return undefined
}

function networkCode(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

function isFetchFailure(name: string, message: string): boolean {
  return (
    name === 'TypeError' &&
    (message === 'fetch failed' || message === 'terminated' || /socket|network/i.test(message))
  )
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? ''
  return line.length > 500 ? `${line.slice(0, 500)}…` : line
}

/** Replaces every secret in `text`. */
function redact(text: string, secrets: readonly string[]): string {
  let result = text
  for (const secret of secrets) if (secret.length > 0) result = result.split(secret).join('[redacted]')
  return result
}

/**
 * The cause to keep: the original when it contains no secret, else a plain `Error` copy with the
 * secret removed from message, stack and nested causes.
 */
function redactCause(cause: unknown, secrets: readonly string[], depth = 0): unknown {
  if (secrets.length === 0 || cause === undefined || cause === null) return cause
  if (typeof cause === 'string') return redact(cause, secrets)
  if (typeof cause !== 'object') return cause
  if (!containsSecret(cause, secrets)) return cause
  const source = cause as {
    name?: unknown
    message?: unknown
    stack?: unknown
    status?: unknown
    cause?: unknown
  }
  const copy = new Error(redact(typeof source.message === 'string' ? source.message : '', secrets))
  copy.name = typeof source.name === 'string' ? source.name : 'Error'
  copy.stack = redact(typeof source.stack === 'string' ? source.stack : '', secrets)
  if (typeof source.status === 'number') Object.assign(copy, { status: source.status })
  if (source.cause !== undefined && depth < 5) copy.cause = redactCause(source.cause, secrets, depth + 1)
  return copy
}

function containsSecret(value: object, secrets: readonly string[]): boolean {
  const texts: string[] = []
  let current: unknown = value
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const { message, stack } = current as { message?: unknown; stack?: unknown }
    if (typeof message === 'string') texts.push(message)
    if (typeof stack === 'string') texts.push(stack)
    try {
      texts.push(JSON.stringify(current) ?? '')
    } catch {
      // A cyclic cause: message and stack were checked.
    }
    current = (current as { cause?: unknown }).cause
  }
  return texts.some((text) => secrets.some((secret) => text.includes(secret)))
}
