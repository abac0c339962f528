import { AdapterError } from '@agentx/core'
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai'
import { describe, expect, it } from 'vitest'
import {
  isUnknownPreviousResponse,
  mapOpenAIError,
  mapOpenAIStreamError,
  openAIIdentity,
} from './map-openai-error.js'

const context = openAIIdentity(['sk-secret-key-123'])

function httpError(status: number, body: unknown, headers: Record<string, string> = {}): APIError {
  return APIError.generate(status, body as object, undefined, new Headers(headers))
}

describe('mapOpenAIError', () => {
  it('maps SDK connection and timeout errors through the shared transport mapping', () => {
    const reset = Object.assign(new TypeError('terminated'), {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    })
    expect(mapOpenAIError(new APIConnectionError({ message: 'Connection error.' }), context)).toMatchObject({
      kind: 'network',
      retryable: true,
    })
    expect(mapOpenAIError(reset, context)).toMatchObject({
      kind: 'network',
      retryable: true,
      message: 'The connection to OpenAI failed: other side closed (UND_ERR_SOCKET).',
    })
    expect(mapOpenAIError(new APIConnectionTimeoutError(), context)).toMatchObject({
      kind: 'timeout',
      retryable: true,
    })
  })

  it('passes an AdapterError through', () => {
    const original = new AdapterError('cut', { kind: 'network', provider: 'openai' })
    expect(mapOpenAIError(original, context)).toBe(original)
  })

  it('keeps request id, code and type in a cause that is not the SDK error, and redacts secrets', () => {
    const error = mapOpenAIError(
      httpError(
        401,
        {
          error: {
            message: 'Incorrect API key provided: sk-secret-key-123',
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        },
        { 'x-request-id': 'req_42' },
      ),
      context,
    )
    expect(error).toMatchObject({ kind: 'authentication', status: 401, retryable: false })
    expect(error.cause).not.toBeInstanceOf(APIError)
    expect(error.cause).toMatchObject({ requestID: 'req_42', code: 'invalid_api_key', status: 401 })
    expect(error.message).toBe(
      'OpenAI answered HTTP 401 (invalid_api_key): Incorrect API key provided: [redacted]. Check the API key (the apiKey option or OPENAI_API_KEY). Request id: req_42.',
    )
    expect(JSON.stringify({ message: error.message, cause: String(error.cause) })).not.toContain(
      'sk-secret-key-123',
    )
  })

  it('truncates a long non-JSON error page', () => {
    const error = mapOpenAIError(httpError(502, `<html>${'x'.repeat(5000)}</html>`), context)
    expect(error).toMatchObject({ kind: 'server', status: 502, retryable: true })
    expect(error.message.length).toBeLessThan(800)
  })

  it('recognises an unknown previous_response_id, and only that', () => {
    const unknown = httpError(400, {
      error: {
        message: "Previous response with id 'resp_1' not found.",
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    })
    expect(isUnknownPreviousResponse(unknown)).toBe(true)
    expect(
      isUnknownPreviousResponse(httpError(400, { error: { message: 'bad', code: 'unsupported_parameter' } })),
    ).toBe(false)
    expect(isUnknownPreviousResponse(new APIConnectionError({ message: 'x' }))).toBe(false)
  })
})

describe('mapOpenAIStreamError', () => {
  it.each([
    [{ code: 'server_error', message: 'The server had an error' }, 'server', true],
    [{ type: 'server_error', message: 'The server is currently overloaded' }, 'overloaded', true],
    [{ code: 'rate_limit_exceeded', message: 'slow down' }, 'rate_limit', true],
    [{ code: 'insufficient_quota', message: 'no credit' }, 'rate_limit', false],
    [{ code: 'context_length_exceeded', message: 'too long' }, 'context_length', false],
    [{ type: 'invalid_request_error', message: 'bad image' }, 'invalid_request', false],
    [{ code: 'something_else', message: '?' }, 'server', true],
    // OpenRouter / LiteLLM: the HTTP status the error stands for, as a number or as digits.
    [{ code: 401, message: 'No auth credentials found' }, 'authentication', false],
    [{ code: 402, message: 'Insufficient credits' }, 'unknown', false],
    [{ code: 403, message: 'Flagged by moderation' }, 'permission', false],
    [{ code: 429, message: 'Rate limited upstream' }, 'rate_limit', true],
    [{ code: '429', message: 'Rate limited' }, 'rate_limit', true],
    [{ code: 400, message: "This model's maximum context length is 8192 tokens" }, 'context_length', false],
    [{ code: 502, message: 'Provider returned error' }, 'server', true],
    [{ code: 503, message: 'No provider available' }, 'overloaded', true],
  ])('maps %o to %s (retryable %s)', (body, kind, retryable) => {
    expect(mapOpenAIStreamError(context, body)).toMatchObject({ kind, retryable, provider: 'openai' })
  })
})
