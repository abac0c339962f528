import { AdapterError } from '@agentx/core'
import { ApiError } from '@google/genai'
import { describe, expect, it } from 'vitest'
import { geminiIdentity, mapGeminiError, mapGeminiStreamError } from './map-gemini-error.js'

const apiError = (status: number, body: unknown, prefix = ''): ApiError =>
  new ApiError({ status, message: `${prefix}${JSON.stringify(body)}` })

describe('mapGeminiError', () => {
  it('reads RetryInfo.retryDelay in its string and object forms', () => {
    const details = (retryDelay: unknown) => ({
      error: {
        code: 429,
        message: 'quota',
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }],
      },
    })
    expect(mapGeminiError(apiError(429, details('2s'))).retryAfterMs).toBe(2000)
    expect(mapGeminiError(apiError(429, details({ seconds: 1, nanos: 500_000_000 }))).retryAfterMs).toBe(1500)
  })

  it('maps an SDK ApiError (got status: …) through the shared HTTP mapping', () => {
    const error = mapGeminiError(
      apiError(
        500,
        { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } },
        'got status: INTERNAL. ',
      ),
    )
    expect(error).toMatchObject({ kind: 'server', status: 500, retryable: true, provider: 'gemini' })
    expect(error.message).toBe('Gemini answered HTTP 500 (INTERNAL): Internal error.')
  })

  it('maps an error frame of the stream by its code and rpc status, worded as an in-stream error', () => {
    const error = mapGeminiStreamError(geminiIdentity([]), {
      code: 503,
      message: 'The model is overloaded.',
      status: 'UNAVAILABLE',
    })
    expect(error).toMatchObject({ kind: 'overloaded', retryable: true, provider: 'gemini' })
    expect(error.message).toBe(
      'Gemini reported an error in the stream (503 UNAVAILABLE): The model is overloaded.',
    )
  })

  it('uses the rpc status only where the HTTP status says nothing', () => {
    const error = mapGeminiError(
      apiError(499, { error: { code: 499, message: 'x', status: 'DEADLINE_EXCEEDED' } }),
    )
    expect(error.kind).toBe('timeout')
  })

  it('maps Node network failures by their code, looking through causes', () => {
    const reset = new TypeError('fetch failed', {
      cause: Object.assign(new Error('socket'), { code: 'ECONNRESET' }),
    })
    const bodyTimeout = new TypeError('fetch failed', {
      cause: Object.assign(new Error('Body Timeout Error'), { code: 'UND_ERR_BODY_TIMEOUT' }),
    })
    expect(mapGeminiError(reset)).toMatchObject({ kind: 'network', retryable: true })
    expect(mapGeminiError(bodyTimeout)).toMatchObject({ kind: 'timeout', retryable: true })
    expect(mapGeminiError(new TypeError('terminated'))).toMatchObject({ kind: 'network', retryable: true })
  })

  it('returns an AdapterError unchanged and wraps anything else as unknown', () => {
    const own = new AdapterError('x', { kind: 'network', provider: 'gemini' })
    expect(mapGeminiError(own)).toBe(own)
    expect(mapGeminiError('weird')).toMatchObject({ kind: 'unknown', retryable: false })
  })

  it('redacts every secret from the message and from a cause that contains it', () => {
    const secret = 'AIzaSy-secret-123456'
    const error = mapGeminiError(new Error(`boom with ${secret}`, { cause: new Error(`inner ${secret}`) }), {
      secrets: [secret],
    })
    const cause = error.cause as Error & { cause: Error }
    expect(error.message).not.toContain(secret)
    expect(cause.message).toBe('boom with [redacted]')
    expect(cause.stack).not.toContain(secret)
    expect(cause.cause.message).toBe('inner [redacted]')
  })
})
