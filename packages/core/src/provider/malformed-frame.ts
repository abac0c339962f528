import { AdapterError } from '../errors/adapter-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import { redactAndCut, redactSecrets } from './redact-secrets.js'

/** How much of a bad frame an error quotes. */
const EXCERPT_LENGTH = 200

/**
 * The `cause` of a malformed-frame {@link AdapterError}: what the provider sent, quoted.
 * `excerpt` is the frame's data (at most 200 characters, secrets redacted); `cause` is the parse
 * error, when there was one.
 */
export class ProviderProtocolError extends Error {
  override name = 'ProviderProtocolError'
  /** The start of the frame that could not be read. */
  readonly excerpt: string

  constructor(excerpt: string, cause?: unknown) {
    super(`Malformed stream frame: ${excerpt}`, cause === undefined ? undefined : { cause })
    this.excerpt = excerpt
  }
}

/**
 * The error for a stream frame an adapter cannot read (invalid JSON, not an object): kind
 * `server` (the provider's answer is broken, not the request, the key or the network), not
 * retryable (the same server would most likely send the same bytes again, and each retry is
 * billed), with a {@link ProviderProtocolError} quoting the frame as `cause`. Every adapter
 * answers a malformed frame with exactly this error.
 */
export function malformedFrameError(
  provider: ProviderIdentity,
  data: string,
  parseError?: unknown,
): AdapterError {
  const excerpt = redactAndCut(data, provider.secrets ?? [], EXCERPT_LENGTH)
  const reason =
    parseError instanceof Error ? redactSecrets(parseError.message, provider.secrets ?? []) : undefined
  return new AdapterError(`${provider.label} sent a malformed stream frame (protocol error).`, {
    kind: 'server',
    provider: provider.name,
    retryable: false,
    cause: new ProviderProtocolError(excerpt, reason === undefined ? undefined : new SyntaxError(reason)),
  })
}

/**
 * Parses the `data` of one stream frame as a JSON object; anything else throws
 * {@link malformedFrameError}. What every adapter's stream mapper calls first.
 */
export function parseJsonFrame(provider: ProviderIdentity, data: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(data)
  } catch (error) {
    throw malformedFrameError(provider, data, error)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformedFrameError(provider, data)
  return value as Record<string, unknown>
}
