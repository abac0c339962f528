import {
  type AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isAdapterError,
} from '@agentx/core'
import { mapHttpError, mapStreamError, mapTransportError } from '@agentx/core/provider'
import type { HeadersLike, ProviderIdentity } from '@agentx/core/provider'

/** The provider name every error of this package carries (`AdapterError.provider`). */
export const GEMINI_PROVIDER = 'gemini'

/** What {@link mapGeminiError} knows besides the thrown value. */
export interface MapGeminiErrorContext {
  /** Secrets that must never appear in the mapped error (the API key). Default is none. */
  secrets?: readonly string[]
  /** Headers of the HTTP response, when one arrived (for `Retry-After`). Default is none. */
  responseHeaders?: HeadersLike | undefined
  /**
   * Status of the HTTP response, when one arrived. An error response whose body the SDK could not
   * read (labelled JSON but not JSON: a proxy's page, a cut body) is then mapped by this status.
   */
  responseStatus?: number | undefined
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

/** The body of a Gemini API error: `{ error: { code, message, status, details } }`. */
interface GeminiErrorBody {
  code?: unknown
  message?: unknown
  status?: unknown
  details?: unknown
}

/** This package's {@link ProviderIdentity}, with the secrets to redact. */
export function geminiIdentity(secrets: readonly string[]): ProviderIdentity {
  return { name: GEMINI_PROVIDER, label: 'Gemini', secrets, apiKeyEnv: 'GEMINI_API_KEY' }
}

/**
 * Turns anything a Gemini request threw into an {@link AdapterError}.
 *
 * `ApiError`s of `@google/genai` map through `mapHttpError` by their HTTP status, refined by the
 * google.rpc status and `ErrorInfo` reason: 429 `RESOURCE_EXHAUSTED` → `rate_limit` with
 * `retryAfterMs` from `RetryInfo.retryDelay` (or a `Retry-After` header), 400 `INVALID_ARGUMENT` →
 * `invalid_request` (but `API_KEY_INVALID` → `authentication`, a too-long prompt →
 * `context_length`), 403 → `permission`, 404 → `not_found`, 500 `INTERNAL` → `server`, 503
 * `UNAVAILABLE` → `overloaded`. Connection failures and SDK deadlines map through
 * `mapTransportError`; an error response whose body the SDK could not parse (labelled JSON, but a
 * proxy's page or a cut body) maps by `context.responseStatus`. Both come from `@agentx/core/provider`, so the wording and retry rules
 * are those of every adapter; the SDK error is kept as a redacted `cause`.
 *
 * Called by `GeminiAdapter` for every failure; exported for custom adapters built on the same SDK.
 */
export function mapGeminiError(error: unknown, context: MapGeminiErrorContext = {}): AdapterError {
  const provider = geminiIdentity(context.secrets ?? [])
  if (isAdapterError(error)) return error
  const like = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: unknown
    message?: unknown
    status?: unknown
  }
  if (like.name !== 'ApiError' || typeof like.status !== 'number') {
    const status = context.responseStatus
    if (status === undefined || status < 400) return mapTransportError(provider, error)
    return mapHttpError(provider, {
      status,
      ...describeBody(status, undefined, 'The error response body was not valid JSON.'),
      headers: context.responseHeaders,
      cause: error,
    })
  }
  const rawMessage = typeof like.message === 'string' ? like.message : ''
  const body = parseErrorBody(rawMessage)
  return mapHttpError(provider, {
    status: like.status,
    ...describeBody(like.status, body, firstLine(rawMessage)),
    headers: context.responseHeaders,
    cause: error,
  })
}

/**
 * The error of a `data: {"error": {…}}` frame in a started stream: kind from its `code` (an HTTP
 * status) and google.rpc status, as for an HTTP error, worded as an in-stream error.
 */
export function mapGeminiStreamError(provider: ProviderIdentity, error: unknown): AdapterError {
  const body = (
    typeof error === 'object' && error !== null ? error : { message: String(error) }
  ) as GeminiErrorBody
  const status = typeof body.code === 'number' ? body.code : 500
  const described = describeBody(status, body, 'The stream reported an error.')
  return mapStreamError(provider, {
    ...described,
    code: [String(status), described.code].filter((part) => part !== undefined).join(' '),
    cause: Object.assign(new Error(described.message), { status, error: body }),
  })
}

/** Kind, code, message and retry advice of a Gemini error body with `status`. */
function describeBody(
  status: number,
  body: GeminiErrorBody | undefined,
  fallbackMessage: string,
): { kind: AdapterErrorKind; code: string | undefined; message: string; retryAfterMs: number | undefined } {
  const rpcStatus = typeof body?.status === 'string' ? body.status : undefined
  const message = typeof body?.message === 'string' ? body.message : fallbackMessage
  const reasons = errorInfoReasons(body?.details)
  // The HTTP status decides, as for every provider; the rpc status only for statuses core does not know.
  let kind: AdapterErrorKind = adapterErrorKindFromStatus(status)
  if (kind === 'unknown' && rpcStatus !== undefined) kind = KIND_BY_RPC_STATUS[rpcStatus] ?? 'unknown'
  if (kind === 'invalid_request' && CONTEXT_LENGTH_PATTERN.test(message)) kind = 'context_length'
  if (reasons.some((reason) => AUTHENTICATION_REASONS.has(reason)) || API_KEY_PATTERN.test(message))
    kind = 'authentication'
  return { kind, code: rpcStatus, message, retryAfterMs: retryDelayMs(body?.details) }
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

/** The first line; `mapHttpError` cuts it short after redacting secrets (cut first, part of a key would show). */
function firstLine(text: string): string {
  return text.split('\n', 1)[0] ?? ''
}
