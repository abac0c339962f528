import { AdapterError } from '../errors/adapter-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { errorName, redactAndCut, redactSecrets, sanitizeCause } from './redact-secrets.js'

/** What broke on the way to the provider, from {@link describeConnectionFailure}. */
export interface ConnectionFailure {
  /** `timeout` when the connection or a read timed out, else `network`. */
  kind: 'network' | 'timeout'
  /** The system or undici error code, when there is one (`ECONNRESET`, `UND_ERR_SOCKET` …). */
  code: string | undefined
  /** What happened, in one clause that names the code once: `connect ECONNREFUSED 127.0.0.1:9`. */
  detail: string
}

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
])
const TIMEOUT_CODES: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
])
/** Error names of connection failures (undici and the Stainless SDKs of Anthropic and OpenAI). */
const NETWORK_NAMES: ReadonlySet<string> = new Set(['SocketError', 'APIConnectionError'])
const TIMEOUT_NAMES: ReadonlySet<string> = new Set([
  'APIConnectionTimeoutError',
  'ConnectTimeoutError',
  'HeadersTimeoutError',
  'BodyTimeoutError',
])
/** Messages that say only that something failed: a deeper cause says what. */
const GENERIC_MESSAGES: ReadonlySet<string> = new Set([
  'fetch failed',
  'terminated',
  'Connection error.',
  'Request timed out.',
  'network error',
])

/**
 * Recognises a failed or broken connection anywhere in an error's cause chain (undici's
 * `TypeError: fetch failed` / `terminated`, socket errors, system codes, the SDKs' connection
 * errors) and describes it in one clause in which nothing is repeated. Returns `undefined` for
 * anything else.
 */
export function describeConnectionFailure(error: unknown): ConnectionFailure | undefined {
  let kind: ConnectionFailure['kind'] | undefined
  let code: string | undefined
  const messages: string[] = []
  let current: unknown = error
  for (let depth = 0; depth < 6 && typeof current === 'object' && current !== null; depth++) {
    const { message, code: rawCode } = current as { message?: unknown; code?: unknown }
    const name = errorName(current)
    if (typeof rawCode === 'string') {
      if (TIMEOUT_CODES.has(rawCode)) kind = 'timeout'
      else if (NETWORK_CODES.has(rawCode)) kind ??= 'network'
      if (TIMEOUT_CODES.has(rawCode) || NETWORK_CODES.has(rawCode)) code ??= rawCode
    }
    if (TIMEOUT_NAMES.has(name)) kind = 'timeout'
    else if (NETWORK_NAMES.has(name)) kind ??= 'network'
    else if (name === 'TypeError' && (message === 'fetch failed' || message === 'terminated'))
      kind ??= 'network'
    if (typeof message === 'string' && message.trim() !== '') messages.push(message.trim())
    current = (current as { cause?: unknown }).cause
  }
  if (kind === undefined) return undefined
  const specific = messages.filter((message) => !GENERIC_MESSAGES.has(message))
  let detail = specific.at(-1) ?? messages.at(-1) ?? (kind === 'timeout' ? 'timed out' : 'connection failed')
  if (code !== undefined && !detail.includes(code)) detail = `${detail} (${code})`
  return { kind, code, detail }
}

/**
 * Turns an error that is not a provider answer into an {@link AdapterError}: a failed or broken
 * connection is `network` (or `timeout`), retryable, worded `The connection to <Label> failed:
 * <detail>`; a timeout of the SDK's own deadline is `timeout`; anything else is `unknown`, not
 * retryable. Secrets are redacted from message and cause.
 *
 * The last step of every adapter's error mapping, after the vendor's own error classes.
 */
export function mapTransportError(provider: ProviderIdentity, error: unknown): AdapterError {
  const secrets = provider.secrets ?? []
  const cause = sanitizeCause(error, secrets)
  const failure = describeConnectionFailure(error)
  if (failure !== undefined) {
    const verb = failure.kind === 'timeout' ? 'timed out' : 'failed'
    return new AdapterError(
      `The connection to ${provider.label} ${verb}: ${redactSecrets(failure.detail, secrets)}.`,
      { kind: failure.kind, provider: provider.name, cause },
    )
  }
  const name = (error as { name?: unknown } | null | undefined)?.name
  if (name === 'TimeoutError' || name === 'AbortError') {
    // Neither the caller nor the idle watchdog stopped it: a deadline of the SDK or of fetch did.
    return new AdapterError(`The ${provider.label} request timed out.`, {
      kind: 'timeout',
      provider: provider.name,
      cause,
    })
  }
  const message = error instanceof Error ? error.message || error.name : String(error)
  const firstLine = message.split('\n', 1)[0] ?? ''
  return new AdapterError(`The ${provider.label} request failed: ${redactAndCut(firstLine, secrets, 500)}`, {
    kind: 'unknown',
    provider: provider.name,
    retryable: false,
    cause,
  })
}
