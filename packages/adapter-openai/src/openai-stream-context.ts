import { AdapterError } from '@agentx/core'
import type { OpenAIErrorContext } from './map-openai-error.js'
import { redact } from './map-openai-error.js'
import type { ServerSentEvent } from './read-server-sent-events.js'

/** What a stream mapper needs besides the events: how to build errors. */
export interface OpenAIStreamContext {
  error: OpenAIErrorContext
}

/**
 * Parses the JSON of one event. A frame that is not JSON is a protocol error (rule A-ERR-007):
 * kind `unknown`, not retryable, with an excerpt of the frame in `cause`.
 */
export function parseEventData(
  event: ServerSentEvent,
  context: OpenAIStreamContext,
): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(event.data)
  } catch (error) {
    throw protocolError(`a frame that is not JSON`, event.data, context, error)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw protocolError('a frame that is not a JSON object', event.data, context)
  }
  return parsed as Record<string, unknown>
}

/** The error for a stream that ended before its terminal frame (rule A-ERR-006): retryable `network`. */
export function truncatedStreamError(terminal: string, context: OpenAIStreamContext): AdapterError {
  return new AdapterError(`The OpenAI stream ended before ${terminal}; the response is incomplete.`, {
    kind: 'network',
    provider: context.error.provider,
  })
}

function protocolError(
  what: string,
  data: string,
  context: OpenAIStreamContext,
  parseError?: unknown,
): AdapterError {
  const excerpt = redact(data.length > 200 ? `${data.slice(0, 200)}…` : data, context.error.secrets)
  const cause = new Error(`Malformed stream frame: ${excerpt}`)
  Object.defineProperty(cause, 'excerpt', { value: excerpt, enumerable: true })
  if (parseError instanceof Error)
    Object.defineProperty(cause, 'parseError', { value: parseError.message, enumerable: true })
  return new AdapterError(`OpenAI sent ${what} in the stream (protocol error).`, {
    kind: 'unknown',
    provider: context.error.provider,
    retryable: false,
    cause,
  })
}
