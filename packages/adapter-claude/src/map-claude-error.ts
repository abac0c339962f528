import {
  type AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isAdapterError,
} from '@agentx/core'
import { mapHttpError, mapStreamError, mapTransportError, type ProviderIdentity } from '@agentx/core/provider'

/** The provider name every error of this package carries (`AdapterError.provider`). */
export const CLAUDE_PROVIDER = 'claude'

/** What {@link mapClaudeError} knows besides the thrown value. */
export interface MapClaudeErrorContext {
  /** Secrets that must never appear in the mapped error (the API key). Default is none. */
  secrets?: readonly string[]
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
  status?: unknown
  headers?: unknown
  error?: unknown
  type?: unknown
  requestID?: unknown
}

/**
 * Turns anything a Claude request threw into an {@link AdapterError}: SDK `APIError`s by status
 * and `error.type` (429 → `rate_limit` with `retryAfterMs`, 529 / `overloaded_error` →
 * `overloaded`, 401, 403, 400 with "prompt is too long" → `context_length`, 404, 413, 5xx …) through
 * `mapHttpError`, connection failures through `mapTransportError` (both from
 * `@agentx/core/provider`, so the wording and retry rules are those of every adapter). Vendor
 * error classes never reach callers: the SDK error is kept as a redacted `cause`.
 *
 * Called by {@link ClaudeAdapter} for every failure; exported for custom adapters built on the same SDK.
 */
export function mapClaudeError(error: unknown, context: MapClaudeErrorContext = {}): AdapterError {
  const provider = claudeIdentity(context.secrets ?? [])
  if (isAdapterError(error)) return error
  const like = (typeof error === 'object' && error !== null ? error : {}) as AnthropicErrorLike
  const status = typeof like.status === 'number' ? like.status : undefined
  if (status === undefined) {
    if (like.name === 'APIError' && like.error !== undefined)
      return mapClaudeStreamError(provider, errorBody(like.error), error)
    return mapTransportError(provider, error)
  }
  const body = errorBody(like.error)
  const type =
    typeof like.type === 'string' ? like.type : typeof body.type === 'string' ? body.type : undefined
  const message = typeof body.message === 'string' ? body.message : undefined
  return mapHttpError(provider, {
    status,
    headers: isHeaders(like.headers) ? like.headers : undefined,
    code: type,
    message,
    kind: kindOf(status, type, message ?? ''),
    requestId: typeof like.requestID === 'string' ? like.requestID : undefined,
    cause: error,
  })
}

/**
 * The error of an `error` event in a started stream (`{"type":"error","error":{"type","message"}}`):
 * kind by `error.type` (`overloaded_error` → `overloaded`, `api_error` → `server`, unknown types
 * → `server`), retryable by kind.
 */
export function mapClaudeStreamError(
  provider: ProviderIdentity,
  body: Record<string, unknown>,
  cause: unknown,
): AdapterError {
  const type = typeof body.type === 'string' ? body.type : undefined
  const message = typeof body.message === 'string' ? body.message : undefined
  return mapStreamError(provider, {
    code: type,
    message,
    kind: kindOf(undefined, type, message ?? ''),
    cause: cause instanceof Error ? cause : new Error(JSON.stringify(cause)),
  })
}

/** This package's {@link ProviderIdentity}, with the secrets to redact. */
export function claudeIdentity(secrets: readonly string[]): ProviderIdentity {
  return { name: CLAUDE_PROVIDER, label: 'Claude', secrets, apiKeyEnv: 'ANTHROPIC_API_KEY' }
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

/** The `error` object of an Anthropic error body (`{ type: 'error', error: { type, message } }`). */
function errorBody(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return {}
  const inner = (value as { error?: unknown }).error
  return typeof inner === 'object' && inner !== null
    ? (inner as Record<string, unknown>)
    : (value as Record<string, unknown>)
}

function isHeaders(value: unknown): value is { get(name: string): string | null } {
  return typeof value === 'object' && value !== null && typeof (value as { get?: unknown }).get === 'function'
}
