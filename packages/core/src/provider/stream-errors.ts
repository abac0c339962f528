import { AdapterError } from '../errors/adapter-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { redactAndCut, sanitizeCause } from './redact-secrets.js'

/**
 * The error of a request the caller aborted (kind `aborted`, not retryable). `reason` is the
 * signal's reason, kept as `cause` as it is: it is the caller's own value.
 */
export function abortedError(provider: ProviderIdentity, reason?: unknown): AdapterError {
  return new AdapterError(`The ${provider.label} request was aborted.`, {
    kind: 'aborted',
    provider: provider.name,
    cause: reason,
  })
}

/** The error of a request cancelled because the provider sent nothing for `idleTimeoutMs` (kind `timeout`, retryable). */
export function idleTimeoutError(
  provider: ProviderIdentity,
  idleTimeoutMs: number,
  cause?: unknown,
): AdapterError {
  return new AdapterError(
    `${provider.label} sent nothing for ${idleTimeoutMs} ms; the request was cancelled (idle timeout).`,
    { kind: 'timeout', provider: provider.name, cause: sanitizeCause(cause, provider.secrets ?? []) },
  )
}

/**
 * The error of a stream that ended before its terminal event (`terminal`, e.g. `message_stop`):
 * kind `network`, retryable. A truncated response is never a success.
 */
export function incompleteStreamError(provider: ProviderIdentity, terminal: string): AdapterError {
  return new AdapterError(
    `The ${provider.label} stream ended before ${terminal}: the response is incomplete.`,
    { kind: 'network', provider: provider.name },
  )
}

/**
 * The error of a successful HTTP answer that is not an event stream (a server that does not
 * stream, a proxy's page): kind `unknown`, not retryable, the start of the body quoted.
 */
export function notAStreamError(
  provider: ProviderIdentity,
  status: number,
  contentType: string,
  body: string,
): AdapterError {
  const excerpt = redactAndCut(body, provider.secrets ?? [], 200)
  return new AdapterError(
    `${provider.label} answered HTTP ${status} with ${contentType || 'no content type'} instead of an event stream; the server may not support streaming: ${excerpt}`,
    { kind: 'unknown', provider: provider.name, status, retryable: false },
  )
}
