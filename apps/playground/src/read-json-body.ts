import type { IncomingMessage } from 'node:http'
import { AgentError, ValidationError } from '@agentx/core'

/** The largest request body the API reads, in bytes. */
export const MAX_BODY_BYTES = 1_000_000
/** How far past {@link MAX_BODY_BYTES} a body is still read (and dropped) to answer 413 cleanly. */
const DRAIN_FACTOR = 16

const strictUtf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Reads a request body as a JSON object. An empty body is `{}`. Rejects with `VALIDATION` for
 * invalid JSON or a non-object, `UNSUPPORTED_MEDIA_TYPE` when a body is not `application/json`
 * (which also forces a CORS preflight on any cross-origin attempt) and `PAYLOAD_TOO_LARGE` beyond
 * {@link MAX_BODY_BYTES}.
 */
export async function readJsonBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length
    // Past the limit the rest is read and dropped, so the client gets the 413 rather than a reset
    // connection (leaving the loop would destroy the request mid-upload); far past it, it is cut.
    if (size > MAX_BODY_BYTES * DRAIN_FACTOR) break
    if (size <= MAX_BODY_BYTES) chunks.push(chunk)
  }
  if (size > MAX_BODY_BYTES) {
    throw new AgentError(`The request body is larger than ${MAX_BODY_BYTES} bytes.`, 'PAYLOAD_TOO_LARGE')
  }
  if (size === 0) return {}
  const [mediaType = '', ...parameters] = (request.headers['content-type'] ?? '').split(';')
  if (mediaType.trim().toLowerCase() !== 'application/json') {
    throw new AgentError(
      'The request body must be JSON (Content-Type: application/json).',
      'UNSUPPORTED_MEDIA_TYPE',
    )
  }
  // JSON between systems is UTF-8 (RFC 8259); a body declared otherwise would be misread, so it is refused.
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=')
    const charset = value.trim().replace(/^"|"$/g, '').toLowerCase()
    if (name.trim().toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      throw new AgentError(
        `The request body must be UTF-8 JSON; charset=${charset} is not supported.`,
        'UNSUPPORTED_MEDIA_TYPE',
      )
    }
  }
  let text: string
  try {
    text = strictUtf8.decode(Buffer.concat(chunks))
  } catch (error) {
    // Decoding leniently would store U+FFFD in place of the bytes: the text silently changed.
    throw new AgentError('The request body is not valid UTF-8.', 'UNSUPPORTED_MEDIA_TYPE', { cause: error })
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ValidationError('The request body is not valid JSON.', { cause: error })
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ValidationError('The request body must be a JSON object.')
  }
  return value as Record<string, unknown>
}
