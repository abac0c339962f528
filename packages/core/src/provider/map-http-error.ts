import {
  AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isRetryableStatus,
  parseRetryAfterMs,
} from '../errors/adapter-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { redactAndCut, redactSecrets, sanitizeCause } from './redact-secrets.js'

/** Response headers as SDKs expose them: a `Headers`, or a plain record. */
export type HeadersLike = { get(name: string): string | null } | Record<string, string | string[] | undefined>

/** What a vendor's error mapping knows about a provider error, for {@link mapHttpError} and {@link mapStreamError}. */
export interface ProviderErrorDetails {
  /** The provider's own message. Default is none (the status or code is shown). */
  message?: string | undefined
  /** The provider's error type or code, shown in parentheses (`rate_limit_error`, `RESOURCE_EXHAUSTED`). Default is none. */
  code?: string | undefined
  /**
   * The kind, when the vendor knows better than the status (an invalid key answered with 400, a
   * too-long prompt, an overloaded 500). Default is the kind the status means
   * (`adapterErrorKindFromStatus`), or `server` inside a stream.
   */
  kind?: AdapterErrorKind | undefined
  /** Overrides the retryable flag (e.g. a quota that waiting does not refill). Default is derived. */
  retryable?: boolean | undefined
  /** How long to wait, when the body says it (Gemini `RetryInfo`). Default is read from the headers. */
  retryAfterMs?: number | undefined
  /** The provider's request id, quoted in the message. Default is none. */
  requestId?: string | undefined
  /** The vendor error, kept (redacted) as `cause`. */
  cause?: unknown
}

/** Details of an HTTP error answer: the status and headers as well. */
export interface HttpErrorDetails extends ProviderErrorDetails {
  status: number
  /** The response headers: `retry-after-ms`, `retry-after` and `x-should-retry` are read. Default is none. */
  headers?: HeadersLike | undefined
}

/**
 * Turns a provider's HTTP error answer into an {@link AdapterError}, the same way for every
 * adapter:
 *
 * - kind: the vendor's refinement, else what the status means (429 `rate_limit`, 503/529
 *   `overloaded`, 401 `authentication` …);
 * - retryable: the vendor's override, else `x-should-retry`, else 408, 409, 429, 5xx and
 *   `overloaded` (never `authentication`);
 * - `retryAfterMs`: the vendor's value, else `retry-after-ms` / `retry-after` (seconds or date);
 * - message: `<Label> answered HTTP <status> (<code>): <message>` plus one piece of advice for
 *   `authentication`, `not_found`, `permission` and `context_length`, and the request id; every
 *   secret redacted, the vendor error kept as a redacted `cause`.
 *
 * Called by each adapter's `map-*-error` once it has read the vendor's error fields.
 */
export function mapHttpError(provider: ProviderIdentity, details: HttpErrorDetails): AdapterError {
  const { status } = details
  const kind = details.kind ?? adapterErrorKindFromStatus(status)
  const shouldRetry = readHeader(details.headers, 'x-should-retry')
  const retryable =
    details.retryable ??
    (kind === 'authentication'
      ? false
      : shouldRetry === 'true'
        ? true
        : shouldRetry === 'false'
          ? false
          : isRetryableStatus(status) || kind === 'overloaded')
  const retryAfterMs = details.retryAfterMs ?? parseRetryAfterMs(details.headers)
  const message = `${provider.label} answered HTTP ${status}${describe(details, provider, kind)}`
  return new AdapterError(message, {
    kind,
    provider: provider.name,
    status,
    retryable,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: sanitizeCause(details.cause, provider.secrets ?? []),
  })
}

/**
 * Turns an error the provider reported inside a stream that had started (an `error` event, a
 * failed response) into an {@link AdapterError}: kind as given (default `server`), retryable by
 * kind, message `<Label> reported an error in the stream (<code>): <message>`.
 */
export function mapStreamError(provider: ProviderIdentity, details: ProviderErrorDetails): AdapterError {
  const kind = details.kind ?? 'server'
  return new AdapterError(
    `${provider.label} reported an error in the stream${describe(details, provider, kind)}`,
    {
      kind,
      provider: provider.name,
      ...(details.retryable === undefined ? {} : { retryable: details.retryable }),
      ...(details.retryAfterMs === undefined ? {} : { retryAfterMs: details.retryAfterMs }),
      cause: sanitizeCause(details.cause, provider.secrets ?? []),
    },
  )
}

/** One sentence of advice per kind, the same for every provider. */
export function adviceFor(kind: AdapterErrorKind, provider: ProviderIdentity): string {
  switch (kind) {
    case 'authentication':
      return `Check the API key (the apiKey option${provider.apiKeyEnv === undefined ? '' : ` or ${provider.apiKeyEnv}`}).`
    case 'permission':
      return 'Check that the API key may use this model and feature.'
    case 'not_found':
      return 'Check the model name and the base URL.'
    case 'context_length':
      return 'Shorten the conversation or the tool results.'
    default:
      return ''
  }
}

/** `(<code>): <message>. <advice> Request id: <id>.` with every secret redacted. */
function describe(details: ProviderErrorDetails, provider: ProviderIdentity, kind: AdapterErrorKind): string {
  const secrets = provider.secrets ?? []
  const code = details.code === undefined || details.code === '' ? '' : ` (${details.code})`
  const text = details.message === undefined || details.message.trim() === '' ? undefined : details.message
  const body = text === undefined ? '.' : `: ${asSentence(redactAndCut(text.trim(), secrets, 600))}`
  const advice = adviceFor(kind, provider)
  const requestId = details.requestId === undefined ? '' : ` Request id: ${details.requestId}.`
  return redactSecrets(`${code}${body}${advice === '' ? '' : ` ${advice}`}${requestId}`, secrets)
}

function asSentence(text: string): string {
  return /[.!?…]$/.test(text) ? text : `${text}.`
}

function readHeader(headers: HeadersLike | undefined, name: string): string | undefined {
  if (headers === undefined) return undefined
  if (typeof (headers as { get?: unknown }).get === 'function')
    return (headers as { get(name: string): string | null }).get(name) ?? undefined
  const record = headers as Record<string, string | string[] | undefined>
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name)
  const value = key === undefined ? undefined : record[key]
  return Array.isArray(value) ? value[0] : value
}
