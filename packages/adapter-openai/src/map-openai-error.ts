import { AdapterError, adapterErrorKindFromStatus, isAgentError, parseRetryAfterMs } from '@agentx/core'
import type { AdapterErrorKind } from '@agentx/core'

/** What {@link mapOpenAIError} needs to know about the request that failed. */
export interface OpenAIErrorContext {
  /** The adapter's `getName()`, used as `AdapterError.provider`. */
  provider: string
  /** Values that must never appear in an error (the API key). */
  secrets: readonly string[]
  /** Why the request was stopped by the adapter, if it was. */
  stopped?: 'aborted' | 'timeout' | undefined
  /** The caller's abort reason (kept as `cause` of an `aborted` error). */
  abortReason?: unknown
  /** The idle timeout, for the message of a `timeout` error. */
  idleTimeoutMs?: number
}

/** The `error` object of an OpenAI error body or stream event (`{ message, type, code, param }`). */
export interface OpenAIErrorBody {
  message?: unknown
  type?: unknown
  code?: unknown
  param?: unknown
}

const CONTEXT_LENGTH_CODES = new Set(['context_length_exceeded', 'string_above_max_length', 'input_too_long'])
const CONTEXT_LENGTH_TEXT =
  /context.{0,3}length|context window|maximum context|reduce the length|prompt is too long|too many tokens in (?:the )?(?:prompt|input|messages)/i

/**
 * Turns anything the OpenAI SDK (or the stream) threw into an {@link AdapterError}.
 *
 * Called by the adapter around every request. The SDK's error never reaches the caller: `cause`
 * is a plain `Error` with the provider's message, `status`, `code`, `type`, `param` and request
 * id, with every secret replaced by `[redacted]` (rule A-ERR-009). An {@link AdapterError} passes
 * through unchanged.
 *
 * Kinds: the adapter's own abort → `aborted`, idle timeout or `APIConnectionTimeoutError` →
 * `timeout`, connection failures and resets → `network` (retryable); HTTP errors by status
 * (429 `rate_limit` with `retry-after-ms` / `retry-after`, 401 `authentication`, 403
 * `permission`, 404 `not_found`, 400 `invalid_request` or `context_length`, 503 `overloaded`,
 * other 5xx `server`); `invalid_api_key` is `authentication` whatever the status, and a 429
 * `insufficient_quota` is a `rate_limit` that is not retryable (waiting does not add credit).
 */
export function mapOpenAIError(error: unknown, context: OpenAIErrorContext): AdapterError {
  const { provider } = context
  if (context.stopped === undefined && isAgentError(error) && error instanceof AdapterError) return error
  if (context.stopped === 'aborted') {
    return new AdapterError('The OpenAI request was aborted.', {
      kind: 'aborted',
      provider,
      cause: context.abortReason,
    })
  }
  if (context.stopped === 'timeout') {
    const after = context.idleTimeoutMs === undefined ? '' : ` in ${context.idleTimeoutMs} ms`
    return new AdapterError(`OpenAI sent nothing${after}; the request was cancelled (idle timeout).`, {
      kind: 'timeout',
      provider,
      cause: sanitizedCause(error, context.secrets),
    })
  }
  const name = errorName(error)
  if (
    name === 'APIUserAbortError' ||
    name === 'AbortError' ||
    (error as Error | undefined)?.name === 'AbortError'
  ) {
    return new AdapterError('The OpenAI request was aborted.', {
      kind: 'aborted',
      provider,
      cause: context.abortReason,
    })
  }
  if (name === 'APIConnectionTimeoutError') {
    return new AdapterError('The OpenAI request timed out.', {
      kind: 'timeout',
      provider,
      cause: sanitizedCause(error, context.secrets),
    })
  }
  const status = readStatus(error)
  if (status !== undefined) return fromHttpError(error, status, context)
  if (name === 'APIConnectionError' || isNetworkFailure(error)) {
    return new AdapterError(`Could not reach OpenAI: ${redact(describe(error), context.secrets)}`, {
      kind: 'network',
      provider,
      cause: sanitizedCause(error, context.secrets),
    })
  }
  return new AdapterError(`The OpenAI request failed: ${redact(describe(error), context.secrets)}`, {
    kind: 'unknown',
    provider,
    retryable: false,
    cause: sanitizedCause(error, context.secrets),
  })
}

/**
 * Turns an error that arrived inside a stream (Responses `error` event, `response.failed`, or a
 * Chat Completions chunk with an `error` key) into an {@link AdapterError}: `server_error` →
 * `server`, rate limits → `rate_limit`, overload → `overloaded`, context length →
 * `context_length`, invalid requests → `invalid_request`, anything else `unknown`.
 */
export function mapOpenAIStreamError(body: OpenAIErrorBody, context: OpenAIErrorContext): AdapterError {
  const code = typeof body.code === 'string' ? body.code : undefined
  const type = typeof body.type === 'string' ? body.type : undefined
  const message = typeof body.message === 'string' && body.message !== '' ? body.message : 'no message'
  let kind: AdapterErrorKind = 'unknown'
  let retryable: boolean | undefined
  if (isContextLength(code, message)) kind = 'context_length'
  else if (code === 'invalid_api_key' || type === 'authentication_error') kind = 'authentication'
  else if (code === 'insufficient_quota' || type === 'insufficient_quota') {
    kind = 'rate_limit'
    retryable = false
  } else if (
    code === 'rate_limit_exceeded' ||
    type === 'rate_limit_error' ||
    type === 'tokens' ||
    type === 'requests'
  )
    kind = 'rate_limit'
  else if (/overloaded/i.test(`${code ?? ''} ${type ?? ''} ${message}`)) kind = 'overloaded'
  else if (code === 'server_error' || type === 'server_error' || type === 'api_error') kind = 'server'
  else if (type === 'invalid_request_error' || (code?.startsWith('invalid_') ?? false))
    kind = 'invalid_request'
  const label = code ?? type
  return new AdapterError(
    `OpenAI reported an error in the stream${label ? ` (${label})` : ''}: ${redact(message, context.secrets)}`,
    {
      kind,
      provider: context.provider,
      ...(retryable === undefined ? {} : { retryable }),
      cause: makeCause(redact(message, context.secrets), { code, type, param: body.param }),
    },
  )
}

/** Whether an SDK error says that `previous_response_id` is unknown or expired (fall back to a replay). */
export function isUnknownPreviousResponse(error: unknown): boolean {
  const status = readStatus(error)
  if (status !== 400 && status !== 404) return false
  const body = readBody(error)
  if (body.code === 'previous_response_not_found') return true
  return body.param === 'previous_response_id'
}

function fromHttpError(error: unknown, status: number, context: OpenAIErrorContext): AdapterError {
  const body = readBody(error)
  const code = typeof body.code === 'string' ? body.code : undefined
  const type = typeof body.type === 'string' ? body.type : undefined
  const providerMessage = typeof body.message === 'string' ? body.message : describe(error)
  // A proxy's HTML error page can be long; the start says enough.
  const message = redact(truncate(providerMessage, 600), context.secrets)
  let kind = adapterErrorKindFromStatus(status)
  let retryable: boolean | undefined
  if (code === 'invalid_api_key') kind = 'authentication'
  else if (status === 400 && isContextLength(code, providerMessage)) kind = 'context_length'
  else if (status === 429 && (code === 'insufficient_quota' || type === 'insufficient_quota'))
    retryable = false
  else if (status >= 500 && /overloaded/i.test(providerMessage)) kind = 'overloaded'
  const retryAfterMs = parseRetryAfterMs(readHeaders(error))
  const requestId = readRequestId(error)
  const hint = HINTS[kind] ?? ''
  return new AdapterError(`OpenAI answered ${status}${code ? ` (${code})` : ''}: ${message}${hint}`, {
    kind,
    provider: context.provider,
    status,
    ...(retryable === undefined ? {} : { retryable }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: makeCause(message, { status, code, type, param: body.param, requestId }),
  })
}

const HINTS: Partial<Record<AdapterErrorKind, string>> = {
  authentication: ' Check the API key (apiKey option or OPENAI_API_KEY).',
  context_length: ' Shorten the conversation or the tool results.',
  not_found: ' Check the model name and the baseURL.',
}

function isContextLength(code: string | undefined, message: string): boolean {
  return (code !== undefined && CONTEXT_LENGTH_CODES.has(code)) || CONTEXT_LENGTH_TEXT.test(message)
}

function readStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null | undefined)?.status
  return typeof status === 'number' && status >= 100 && status <= 599 ? status : undefined
}

function readBody(error: unknown): OpenAIErrorBody {
  const candidate = error as {
    error?: unknown
    code?: unknown
    type?: unknown
    param?: unknown
    message?: unknown
  }
  const inner = candidate?.error
  if (inner !== null && typeof inner === 'object') {
    const nested = (inner as { error?: unknown }).error
    return (nested !== null && typeof nested === 'object' ? nested : inner) as OpenAIErrorBody
  }
  return { code: candidate?.code, type: candidate?.type, param: candidate?.param }
}

function readHeaders(error: unknown): { get(name: string): string | null } | undefined {
  const headers = (error as { headers?: unknown } | null | undefined)?.headers
  return headers !== null && typeof headers === 'object' && typeof (headers as Headers).get === 'function'
    ? (headers as Headers)
    : undefined
}

function readRequestId(error: unknown): string | undefined {
  const id = (error as { requestID?: unknown } | null | undefined)?.requestID
  return typeof id === 'string' ? id : undefined
}

function errorName(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined
  return error.constructor?.name && error.constructor.name !== 'Error' ? error.constructor.name : error.name
}

function isNetworkFailure(error: unknown): boolean {
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    if (
      typeof code === 'string' &&
      /^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|UND_ERR_)/.test(code)
    ) {
      return true
    }
    if (current instanceof TypeError && /terminated|fetch failed|network/i.test(current.message)) return true
    current = current.cause
  }
  return false
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message || error.name
  return String(error)
}

/** Replaces every secret (and anything shaped like a bearer token) in `text`. */
export function redact(text: string, secrets: readonly string[]): string {
  let result = text
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.split(secret).join('[redacted]')
  }
  return result.replace(/(Bearer\s+)[^\s"',]+/gi, '$1[redacted]')
}

function sanitizedCause(error: unknown, secrets: readonly string[]): Error | undefined {
  if (error === undefined) return undefined
  const cause = makeCause(redact(describe(error), secrets), {})
  cause.name = errorName(error) ?? 'Error'
  return cause
}

function makeCause(message: string, fields: Record<string, unknown>): Error {
  const cause = new Error(message)
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) Object.defineProperty(cause, key, { value, enumerable: true })
  }
  return cause
}
