import { describe, expect, it } from 'vitest'
import { REDACTED, redactSecrets, sanitizeCause } from './redact-secrets.js'

const KEY = 'sk-test-0123456789abcdefghij'

describe('redactSecrets', () => {
  it('replaces every occurrence of each secret, the longest first', () => {
    const longer = `${KEY}-extended`
    expect(redactSecrets(`key ${KEY} and ${longer} and ${KEY}`, [KEY, longer])).toBe(
      `key ${REDACTED} and ${REDACTED} and ${REDACTED}`,
    )
  })

  it('redacts a credential-shaped bearer value it was not told about', () => {
    expect(redactSecrets('header Authorization: Bearer abcDEF0123456789ghijklmnop was refused', [])).toBe(
      `header Authorization: Bearer ${REDACTED} was refused`,
    )
  })

  it('keeps the word after "Bearer" in help text', () => {
    const help = [
      'Send the key as a Bearer token in the Authorization header.',
      'Use "Authorization: Bearer <your key>".',
      'Bearer authentication failed for this project; rotate your credentials.',
    ]
    for (const text of help) expect(redactSecrets(text, [KEY])).toBe(text)
  })

  it('ignores secrets too short to mean anything', () => {
    expect(redactSecrets('a b c', ['a', ''])).toBe('a b c')
  })
})

describe('sanitizeCause', () => {
  it('turns any error into a plain Error copy, so that no vendor class or request object reaches the caller', () => {
    class VendorError extends Error {
      override name = 'VendorError'
      readonly request = { headers: { authorization: 'Bearer …' } }
    }
    const error = Object.assign(new VendorError('HTTP 500'), { status: 500, code: 'api_error' })
    const copy = sanitizeCause(error, [KEY]) as Error & Record<string, unknown>
    expect(copy).not.toBe(error)
    expect(copy).not.toBeInstanceOf(VendorError)
    expect(copy).toMatchObject({ name: 'VendorError', message: 'HTTP 500', status: 500, code: 'api_error' })
    expect(copy.request).toBeUndefined()
  })

  it('redacts a secret from the message, the error body and the nested causes, keeping the diagnostics', () => {
    const inner = new Error(`socket closed for ${KEY}`)
    const error = Object.assign(new Error('request failed', { cause: inner }), {
      status: 401,
      requestID: 'req_1',
      error: { type: 'authentication_error', message: `invalid key ${KEY}` },
    })
    error.name = 'AuthenticationError'
    const copy = sanitizeCause(error, [KEY]) as Error & { status: number; requestID: string; error: unknown }
    expect(copy.name).toBe('AuthenticationError')
    expect(copy.status).toBe(401)
    expect(copy.requestID).toBe('req_1')
    expect(copy.error).toEqual({ type: 'authentication_error', message: `invalid key ${REDACTED}` })
    expect((copy.cause as Error).message).toBe(`socket closed for ${REDACTED}`)
    const everything = [copy.message, copy.stack, JSON.stringify(copy), (copy.cause as Error).stack].join(
      '\n',
    )
    expect(everything).not.toContain(KEY)
  })

  it('redacts a string cause', () => {
    expect(sanitizeCause(`key=${KEY}`, [KEY])).toBe(`key=${REDACTED}`)
  })
})
