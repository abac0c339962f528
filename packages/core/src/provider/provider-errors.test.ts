import { createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { AdapterError } from '../errors/adapter-error.js'
import { ValidationError } from '../errors/validation-error.js'
import { malformedFrameError, parseJsonFrame, ProviderProtocolError } from './malformed-frame.js'
import { mapHttpError, mapStreamError } from './map-http-error.js'
import { describeConnectionFailure, mapTransportError } from './map-transport-error.js'
import type { ProviderIdentity } from './provider-identity.js'
import {
  checkSendOptions,
  conflictingOutputOption,
  DEFAULT_IDLE_TIMEOUT_MS,
  readBaseUrl,
  readIdleTimeoutMs,
  readProviderOptions,
  unsupportedOption,
} from './provider-options.js'

const KEY = 'key-0123456789-abcdefghijklmnop'
const acme: ProviderIdentity = { name: 'acme', label: 'Acme', secrets: [KEY], apiKeyEnv: 'ACME_API_KEY' }

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

describe('mapHttpError', () => {
  it('maps by status, derives retryable, reads retry-after and words the message one way', () => {
    const error = mapHttpError(acme, {
      status: 429,
      headers: new Headers({ 'retry-after': '7' }),
      code: 'rate_limit_error',
      message: 'Slow down',
      requestId: 'req_9',
    })
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      retryable: true,
      retryAfterMs: 7_000,
      provider: 'acme',
    })
    expect(error.message).toBe('Acme answered HTTP 429 (rate_limit_error): Slow down. Request id: req_9.')
  })

  it('gives the same advice for authentication, permission, not_found and context_length', () => {
    expect(mapHttpError(acme, { status: 401 }).message).toBe(
      'Acme answered HTTP 401. Check the API key (the apiKey option or ACME_API_KEY).',
    )
    expect(mapHttpError(acme, { status: 404, message: 'no such model' }).message).toBe(
      'Acme answered HTTP 404: no such model. Check the model name and the base URL.',
    )
    expect(mapHttpError(acme, { status: 403 }).message).toContain('Check that the API key may use this model')
    expect(mapHttpError(acme, { status: 400, kind: 'context_length' }).message).toContain(
      'Shorten the conversation',
    )
  })

  it('honours x-should-retry and a vendor override, and never retries an invalid key', () => {
    expect(mapHttpError(acme, { status: 500, headers: { 'X-Should-Retry': 'false' } }).retryable).toBe(false)
    expect(
      mapHttpError(acme, { status: 400, headers: new Headers({ 'x-should-retry': 'true' }) }).retryable,
    ).toBe(true)
    expect(mapHttpError(acme, { status: 429, retryable: false }).retryable).toBe(false)
    expect(mapHttpError(acme, { status: 400, kind: 'authentication' })).toMatchObject({
      kind: 'authentication',
      retryable: false,
    })
    expect(mapHttpError(acme, { status: 500, kind: 'overloaded' }).retryable).toBe(true)
  })

  it('redacts the key from the message and keeps the vendor error as a redacted cause', () => {
    const vendor = new Error(`401 invalid key ${KEY}`)
    const error = mapHttpError(acme, { status: 401, message: `invalid key ${KEY}`, cause: vendor })
    expect(error.message).not.toContain(KEY)
    expect(error.message).toContain('[redacted]')
    expect(String((error.cause as Error).message)).not.toContain(KEY)
  })
})

describe('mapStreamError', () => {
  it('is a server error by default, retryable by kind, worded as an in-stream error', () => {
    expect(mapStreamError(acme, { code: 'api_error', message: 'boom' })).toMatchObject({
      kind: 'server',
      retryable: true,
      message: 'Acme reported an error in the stream (api_error): boom.',
    })
    expect(mapStreamError(acme, { kind: 'overloaded' })).toMatchObject({
      kind: 'overloaded',
      retryable: true,
    })
    expect(mapStreamError(acme, { kind: 'invalid_request', message: 'x' }).retryable).toBe(false)
  })
})

describe('mapTransportError', () => {
  it('describes a refused connection once: the code is not repeated', async () => {
    const port = await closedPort()
    const failure = await fetch(`http://127.0.0.1:${port}/`).catch((error: unknown) => error)
    const error = mapTransportError(acme, failure)
    expect(error).toMatchObject({ kind: 'network', retryable: true, provider: 'acme' })
    expect(error.message).toMatch(/^The connection to Acme failed: .*ECONNREFUSED/)
    expect(error.message.match(/ECONNREFUSED/g)).toHaveLength(1)
    expect(error.message).not.toContain('fetch failed')
  })

  it('names a code that the message does not mention, and recognises timeouts', () => {
    const reset = new TypeError('terminated', {
      cause: Object.assign(new Error('other side closed'), { name: 'SocketError', code: 'UND_ERR_SOCKET' }),
    })
    expect(describeConnectionFailure(reset)).toEqual({
      kind: 'network',
      code: 'UND_ERR_SOCKET',
      detail: 'other side closed (UND_ERR_SOCKET)',
    })
    const sdk = Object.assign(new Error('Request timed out.'), { name: 'APIConnectionTimeoutError' })
    expect(mapTransportError(acme, sdk)).toMatchObject({ kind: 'timeout', retryable: true })
    expect(describeConnectionFailure(new Error('nothing to do with sockets'))).toBeUndefined()
  })

  it('maps anything else to a non-retryable unknown error without the key', () => {
    const error = mapTransportError(acme, new RangeError(`bad value ${KEY}\nsecond line`))
    expect(error).toMatchObject({ kind: 'unknown', retryable: false })
    expect(error.message).toBe('The Acme request failed: bad value [redacted]')
  })
})

describe('malformed frames', () => {
  it('are non-retryable server errors quoting the frame, the same for every adapter', () => {
    const error = malformedFrameError(acme, `{"type":"delta","te ${KEY}`, new SyntaxError('Unexpected end'))
    expect(error).toMatchObject({ kind: 'server', retryable: false, provider: 'acme' })
    expect(error.message).toBe('Acme sent a malformed stream frame (protocol error).')
    const cause = error.cause as ProviderProtocolError
    expect(cause).toBeInstanceOf(ProviderProtocolError)
    expect(cause.excerpt).toBe('{"type":"delta","te [redacted]')
    expect((cause.cause as Error).message).toBe('Unexpected end')
  })

  it('parseJsonFrame accepts JSON objects only', () => {
    expect(parseJsonFrame(acme, '{"a":1}')).toEqual({ a: 1 })
    for (const data of ['{"a":', '[1]', '"text"', 'null']) {
      expect(() => parseJsonFrame(acme, data)).toThrow(AdapterError)
    }
  })
})

describe('option validation', () => {
  it('reads idleTimeoutMs one way: default, positive number or Infinity, else a ValidationError naming option and provider', () => {
    expect(readIdleTimeoutMs(acme, undefined)).toBe(DEFAULT_IDLE_TIMEOUT_MS)
    expect(readIdleTimeoutMs(acme, 250)).toBe(250)
    expect(readIdleTimeoutMs(acme, Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY)
    for (const bad of [0, -1, Number.NaN, '1000', null]) {
      let error: unknown
      try {
        readIdleTimeoutMs(acme, bad)
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        /^Invalid idleTimeoutMs for the Acme adapter \(provider 'acme'\)/,
      )
    }
  })

  it('reads providerOptions one way: the provider entry, a plain object, without reserved fields', () => {
    expect(readProviderOptions(acme, undefined)).toEqual({})
    expect(readProviderOptions(acme, { other: 1 })).toEqual({})
    expect(readProviderOptions(acme, { acme: { top_k: 3 } })).toEqual({ top_k: 3 })
    expect(() => readProviderOptions(acme, { acme: 'fast' })).toThrow(
      'Invalid providerOptions.acme for the Acme adapter (provider \'acme\'): expected an object of request fields, got "fast".',
    )
    expect(() => readProviderOptions(acme, { acme: [] })).toThrow(ValidationError)
    expect(() => readProviderOptions(acme, { acme: { model: 'x' } }, ['model'])).toThrow(
      /providerOptions\.acme\.model cannot be set for the Acme adapter \(provider 'acme'\)/,
    )
  })

  it('reads a base URL from the option, else from the environment, and names the bad source', () => {
    const previous = process.env.ACME_BASE_URL
    try {
      process.env.ACME_BASE_URL = 'http://gateway.internal:8080'
      expect(readBaseUrl(acme, 'baseURL', undefined, 'ACME_BASE_URL')).toBe('http://gateway.internal:8080')
      expect(readBaseUrl(acme, 'baseURL', 'https://x.example', 'ACME_BASE_URL')).toBe('https://x.example')
      process.env.ACME_BASE_URL = 'not a url'
      expect(() => readBaseUrl(acme, 'baseURL', undefined, 'ACME_BASE_URL')).toThrow(/Invalid ACME_BASE_URL/)
      expect(() => readBaseUrl(acme, 'baseURL', 'ftp://x', 'ACME_BASE_URL')).toThrow(/Invalid baseURL/)
    } finally {
      if (previous === undefined) delete process.env.ACME_BASE_URL
      else process.env.ACME_BASE_URL = previous
    }
  })

  it('words an unsupported option with the option, the provider and the way out', () => {
    expect(unsupportedOption(acme, 'temperature', 'use apiVersion 1.').message).toBe(
      "temperature is not supported by the Acme adapter (provider 'acme'): use apiVersion 1.",
    )
  })

  it('checks the structured output of a send one way: { name, schema } with a schema object', () => {
    const schema = { type: 'object', properties: {} }
    expect(() => checkSendOptions(acme, {})).not.toThrow()
    expect(() => checkSendOptions(acme, { output: { name: 'result', schema } })).not.toThrow()
    for (const bad of [
      null,
      'json',
      { name: 'result' },
      { name: 'result', schema: [] },
      { name: '', schema },
      { schema },
    ]) {
      expect(() => checkSendOptions(acme, { output: bad })).toThrow(
        /^Invalid output for the Acme adapter \(provider 'acme'\): expected an object \{ name, schema \} with a JSON Schema object as schema, got /,
      )
    }
    expect(() => checkSendOptions(acme, { output: [] })).toThrow(ValidationError)
  })

  it('words a providerOptions field that conflicts with output, naming the field and the provider', () => {
    const error = conflictingOutputOption(acme, 'text.format')
    expect(error).toBeInstanceOf(ValidationError)
    expect(error.message).toBe(
      "providerOptions.acme.text.format cannot be set together with output for the Acme adapter (provider 'acme'): the adapter sends it for output; leave one of them out.",
    )
  })
})

describe('texts cut short', () => {
  // A key across the cut: cut first and redacted after, its first part would be shown.
  const straddling = (cut: number): string => `${'x'.repeat(cut - 10)}${KEY} and more`
  const leaks = (text: string): boolean => text.includes(KEY.slice(0, 10))

  it('are redacted before they are cut: no part of a key at the cut shows', async () => {
    const { notAStreamError } = await import('./stream-errors.js')
    const http = mapHttpError(acme, { status: 400, message: straddling(600) })
    const page = notAStreamError(acme, 200, 'text/html', straddling(200))
    const transport = mapTransportError(acme, new Error(straddling(500)))
    const frame = malformedFrameError(acme, straddling(200))
    for (const error of [http, page, transport]) {
      expect(leaks(error.message), error.message).toBe(false)
      expect(error.message).toContain('[redacted]')
    }
    const excerpt = (frame.cause as ProviderProtocolError).excerpt
    expect(leaks(excerpt), excerpt).toBe(false)
    expect(excerpt).toMatch(/\[redacted\]/)
  })
})
