import {
  type AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isAdapterError,
  isRetryableStatus,
} from '@agentx/core'
import { mapHttpError, mapStreamError, mapTransportError, type ProviderIdentity } from '@agentx/core/provider'

/** The provider name every error of this package carries (`AdapterError.provider`). */
export const OPENAI_PROVIDER = 'openai'

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

/** This package's {@link ProviderIdentity}, with the secrets to redact. */
export function openAIIdentity(secrets: readonly string[]): ProviderIdentity {
  return { name: OPENAI_PROVIDER, label: 'OpenAI', secrets, apiKeyEnv: 'OPENAI_API_KEY' }
}

/**
 * Turns anything the `openai` SDK threw into an {@link AdapterError}: HTTP errors through
 * `mapHttpError` (429 `rate_limit` with `retry-after-ms` / `retry-after`, 401 or `invalid_api_key`
 * → `authentication`, 403, 404, 400 → `invalid_request` or `context_length`, 503 and overloaded
 * 5xx → `overloaded`, a 429 `insufficient_quota` is not retryable since waiting adds no credit),
 * connection failures through `mapTransportError` (both from `@agentx/core/provider`, so wording
 * and retry rules are those of every adapter). An `AdapterError` passes through unchanged; the
 * SDK error is kept as a redacted `cause`.
 *
 * Called by {@link OpenAIAdapter} for every failure; exported for custom adapters on the same SDK.
 */
export function mapOpenAIError(
  error: unknown,
  provider: ProviderIdentity = openAIIdentity([]),
): AdapterError {
  if (isAdapterError(error)) return error
  const status = readStatus(error)
  if (status === undefined) return mapTransportError(provider, error)
  const body = readBody(error)
  const code = typeof body.code === 'string' ? body.code : undefined
  const type = typeof body.type === 'string' ? body.type : undefined
  const message = typeof body.message === 'string' ? body.message : messageOf(error)
  let kind: AdapterErrorKind = adapterErrorKindFromStatus(status)
  let retryable: boolean | undefined
  if (code === 'invalid_api_key') kind = 'authentication'
  else if (status === 400 && isContextLength(code, message)) kind = 'context_length'
  else if (status === 429 && (code === 'insufficient_quota' || type === 'insufficient_quota'))
    retryable = false
  else if (status >= 500 && /overloaded/i.test(message)) kind = 'overloaded'
  const requestId = (error as { requestID?: unknown }).requestID
  return mapHttpError(provider, {
    status,
    headers: readHeaders(error),
    code: code ?? type,
    message,
    kind,
    retryable,
    requestId: typeof requestId === 'string' ? requestId : undefined,
    cause: error,
  })
}

/**
 * Turns an error that arrived inside a stream (a Responses `error` event, `response.failed`, a
 * Chat Completions chunk with an `error` key) into an {@link AdapterError} through
 * `mapStreamError`: `server_error` → `server`, rate limits → `rate_limit` (`insufficient_quota`
 * not retryable), overload → `overloaded`, context length → `context_length`, invalid requests →
 * `invalid_request`, an invalid key → `authentication`, anything else `server`.
 */
export function mapOpenAIStreamError(provider: ProviderIdentity, body: OpenAIErrorBody): AdapterError {
  // OpenRouter and LiteLLM put the HTTP status the error stands for in `code` (401, '429').
  const status = statusCode(body.code)
  const code = typeof body.code === 'string' ? body.code : status === undefined ? undefined : String(status)
  const type = typeof body.type === 'string' ? body.type : undefined
  const message = typeof body.message === 'string' && body.message !== '' ? body.message : undefined
  let kind: AdapterErrorKind = 'server'
  let retryable: boolean | undefined
  if (isContextLength(code, message ?? '')) kind = 'context_length'
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
  else if (status !== undefined) {
    kind = adapterErrorKindFromStatus(status)
    retryable = isRetryableStatus(status) || kind === 'overloaded'
  } else if (/overloaded/i.test(`${code ?? ''} ${type ?? ''} ${message ?? ''}`)) kind = 'overloaded'
  else if (type === 'invalid_request_error' || (code?.startsWith('invalid_') ?? false))
    kind = 'invalid_request'
  const cause = new Error(message ?? 'no message')
  for (const [field, value] of Object.entries({ code, type, param: body.param })) {
    if (value !== undefined && value !== null)
      Object.defineProperty(cause, field, { value, enumerable: true })
  }
  return mapStreamError(provider, { kind, retryable, code: code ?? type, message, cause })
}

/** Whether an SDK error says that `previous_response_id` is unknown or expired (fall back to a replay). */
export function isUnknownPreviousResponse(error: unknown): boolean {
  const status = readStatus(error)
  if (status !== 400 && status !== 404) return false
  const body = readBody(error)
  if (body.code === 'previous_response_not_found') return true
  return body.param === 'previous_response_id'
}

/** An HTTP error status given as the error's `code` (a number, or three digits as a string). */
function statusCode(code: unknown): number | undefined {
  const status =
    typeof code === 'number'
      ? code
      : typeof code === 'string' && /^[45]\d\d$/.test(code)
        ? Number(code)
        : undefined
  return status !== undefined && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : undefined
}

function isContextLength(code: string | undefined, message: string): boolean {
  return (code !== undefined && CONTEXT_LENGTH_CODES.has(code)) || CONTEXT_LENGTH_TEXT.test(message)
}

function readStatus(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null | undefined)?.status
  return typeof status === 'number' && status >= 100 && status <= 599 ? status : undefined
}

function readBody(error: unknown): OpenAIErrorBody {
  const candidate = error as { error?: unknown; code?: unknown; type?: unknown; param?: unknown }
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

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message || error.name : String(error)
}
