import { isAdapterError, isAgentError } from '@agentx/core'
import { redact } from './load-providers.js'

/** The JSON form of an error as the API sends it: never a stack, a cause or a secret. */
export interface ErrorView {
  name: string
  code: string
  message: string
  retryable: boolean
  /** The {@link AdapterError} kind (`rate_limit`, `aborted`, …) for provider errors. */
  kind?: string
  provider?: string
  status?: number
  retryAfterMs?: number
}

/** Serialises any thrown value for the browser, with every secret value replaced by `[redacted]`. */
export function serializeError(error: unknown, secrets: readonly string[]): ErrorView {
  if (isAgentError(error)) {
    const view: ErrorView = {
      name: error.name,
      code: error.code,
      message: redact(error.message, secrets),
      retryable: error.retryable,
    }
    if (isAdapterError(error)) {
      view.kind = error.kind
      view.provider = error.provider
      if (error.status !== undefined) view.status = error.status
      if (error.retryAfterMs !== undefined) view.retryAfterMs = error.retryAfterMs
    }
    return view
  }
  const message = error instanceof Error ? error.message : String(error)
  return { name: 'Error', code: 'INTERNAL', message: redact(message, secrets), retryable: false }
}

/** The HTTP status an error answers with outside of an event stream. */
export function statusOf(error: unknown): number {
  if (!isAgentError(error)) return 500
  switch (error.code) {
    case 'VALIDATION':
      return 400
    case 'NOT_FOUND':
      return 404
    case 'SESSION_BUSY':
    case 'SESSION_STATE':
      return 409
    case 'PAYLOAD_TOO_LARGE':
      return 413
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415
    case 'CONFIGURATION':
      return 503
    default:
      return 500
  }
}
