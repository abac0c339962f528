import {
  AdapterError,
  type AdapterErrorKind,
  adapterErrorKindFromStatus,
  isRetryableStatus,
  parseRetryAfterMs,
} from '@agentx/core'
import { redactSecrets } from '@agentx/core/provider'

const TYPE_KINDS: Record<string, AdapterErrorKind> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  billing_error: 'permission',
  permission_error: 'permission',
  not_found_error: 'not_found',
  rate_limit_error: 'rate_limit',
  timeout_error: 'timeout',
  api_error: 'server',
  overloaded_error: 'overloaded',
  conflict_error: 'server',
}

/** Replaces every occurrence of `secret` in `text` (the shared `redactSecrets` of `@agentx/core/provider`). */
export function redact(text: string, secret: string): string {
  return redactSecrets(text, [secret])
}

/** Reads `{ error: { type, message } }` from an Anthropic error body; tolerates anything else. */
function readErrorBody(text: string): { type: string | undefined; message: string | undefined } {
  try {
    const body = JSON.parse(text) as { error?: { type?: unknown; message?: unknown } }
    const type = typeof body.error?.type === 'string' ? body.error.type : undefined
    const message = typeof body.error?.message === 'string' ? body.error.message : undefined
    return { type, message }
  } catch {
    return { type: undefined, message: undefined }
  }
}

/** Maps an HTTP error response of the Anthropic API to an {@link AdapterError}, without the key. */
export function mapAnthropicHttpError(
  status: number,
  headers: Headers,
  bodyText: string,
  provider: string,
  apiKey: string,
): AdapterError {
  const { type, message } = readErrorBody(bodyText)
  let kind = adapterErrorKindFromStatus(status)
  if (type === 'overloaded_error') kind = 'overloaded'
  else if (type !== undefined && kind === 'unknown') kind = TYPE_KINDS[type] ?? 'unknown'
  if (
    kind === 'invalid_request' &&
    message !== undefined &&
    /prompt is too long|context window/i.test(message)
  ) {
    kind = 'context_length'
  }
  const detail = message === undefined ? redact(bodyText, apiKey).slice(0, 200) : redact(message, apiKey)
  const retryAfterMs = parseRetryAfterMs(headers)
  return new AdapterError(`Anthropic API error ${status}${type ? ` (${type})` : ''}: ${detail}`, {
    kind,
    provider,
    status,
    retryable: isRetryableStatus(status) || kind === 'overloaded',
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    cause: new Error(redact(bodyText, apiKey).slice(0, 500)),
  })
}

/** Maps an in-stream `event: error` frame to an {@link AdapterError}, without the key. */
export function mapAnthropicStreamError(data: string, provider: string, apiKey: string): AdapterError {
  const { type, message } = readErrorBody(data)
  const kind = (type !== undefined ? TYPE_KINDS[type] : undefined) ?? 'server'
  return new AdapterError(
    `Anthropic stream error${type ? ` (${type})` : ''}: ${redact(message ?? 'unknown error', apiKey)}`,
    {
      kind,
      provider,
      cause: new Error(redact(data, apiKey).slice(0, 500)),
    },
  )
}
