import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type AnyMessage, ConfigurationError, isAdapterError, ValidationError } from '@agentx/core'
import {
  type FakeProvider,
  openAIChatDialect,
  openAIResponsesDialect,
  startFakeProvider,
} from '@agentx/contract-tests'
import OpenAI from 'openai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fixture, json, sse } from '../test/openai-fixtures.js'
import { deltas, messageOf, run } from '../test/stream-helpers.js'
import { createOpenAIAdapter } from './create-openai-adapter.js'
import { OpenAIAdapter } from './openai-adapter.js'

const KEY = 'sk-proj-SECRET0123456789abcdef'
const options = { model: 'gpt-test', history: [] as AnyMessage[] }

let responses: FakeProvider
let chat: FakeProvider

beforeAll(async () => {
  responses = await startFakeProvider({ dialect: openAIResponsesDialect })
  chat = await startFakeProvider({ dialect: openAIChatDialect })
})
afterAll(async () => {
  await Promise.all([responses.close(), chat.close()])
})
afterEach(() => {
  responses.reset()
  chat.reset()
})

describe('OpenAIAdapter construction', () => {
  it('is named openai, defaults to the Responses API and performs no I/O', () => {
    const adapter = createOpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL })
    expect(adapter.getName()).toBe('openai')
    expect(adapter.api).toBe('responses')
    expect(responses.requests).toHaveLength(0)
    // OpenAI has no default model: only the configured one is shown as session.model.
    expect(adapter.defaultModel).toBeUndefined()
    expect(
      createOpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL, model: 'gpt-x' }).defaultModel,
    ).toBe('gpt-x')
  })

  it('rejects bad options with a ValidationError that names the option and the provider', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ api: 'completions' }, 'api'],
      [{ idleTimeoutMs: 0 }, 'idleTimeoutMs'],
      [{ baseURL: 'not a url' }, 'baseURL'],
      [{ model: '' }, 'model'],
      [{ apiVersion: '' }, 'apiVersion'],
    ]
    for (const [options, option] of cases) {
      expect(() => new OpenAIAdapter({ apiKey: KEY, ...options })).toThrow(ValidationError)
      expect(() => new OpenAIAdapter({ apiKey: KEY, ...options })).toThrow(
        `Invalid ${option} for the OpenAI adapter (provider 'openai')`,
      )
    }
  })

  it('streams the Responses API through a gateway base URL: the base URL never switches the API', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'via gateway' }], stopReason: 'end_turn' },
    })
    const adapter = new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL })
    expect(adapter.api).toBe('responses')
    const { events } = await run(adapter.stream('Hi', options))
    expect(deltas(events)).toBe('via gateway')
    expect(responses.requests[0]?.received.url).toBe('/v1/responses')
  })

  it('sends an API version as the api-version query parameter, from the option or OPENAI_API_VERSION', async () => {
    const saved = process.env.OPENAI_API_VERSION
    try {
      process.env.OPENAI_API_VERSION = '2025-04-01-preview'
      responses.enqueue(
        { response: { blocks: [{ type: 'text', text: 'a' }], stopReason: 'end_turn' } },
        { response: { blocks: [{ type: 'text', text: 'b' }], stopReason: 'end_turn' } },
      )
      await run(new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', options))
      await run(
        new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL, apiVersion: 'v2' }).stream(
          'Hi',
          options,
        ),
      )
      expect(responses.requests.map((request) => request.received.url)).toEqual([
        '/v1/responses?api-version=2025-04-01-preview',
        '/v1/responses?api-version=v2',
      ])
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_VERSION
      else process.env.OPENAI_API_VERSION = saved
    }
  })

  it('takes the base URL from OPENAI_BASE_URL when no baseURL is given', async () => {
    const saved = process.env.OPENAI_BASE_URL
    try {
      process.env.OPENAI_BASE_URL = chat.baseURL
      chat.enqueue({ response: { blocks: [{ type: 'text', text: 'env' }], stopReason: 'end_turn' } })
      const { events } = await run(new OpenAIAdapter({ api: 'chat', apiKey: KEY }).stream('Hi', options))
      expect(deltas(events)).toBe('env')
      process.env.OPENAI_BASE_URL = 'nope'
      expect(() => new OpenAIAdapter({ apiKey: KEY })).toThrow(
        'Invalid OPENAI_BASE_URL for the OpenAI adapter',
      )
    } finally {
      if (saved === undefined) delete process.env.OPENAI_BASE_URL
      else process.env.OPENAI_BASE_URL = saved
    }
  })

  it('refuses an unknown option, naming the closest one (baseUrl would send every request to OpenAI)', () => {
    expect(() => new OpenAIAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' } as never)).toThrow(
      ConfigurationError,
    )
    expect(() => new OpenAIAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' } as never)).toThrow(
      "Unknown OpenAIAdapter option 'baseUrl' — did you mean 'baseURL'?",
    )
    expect(() => new OpenAIAdapter(null as never)).toThrow(
      'OpenAIAdapter options must be an object, got null.',
    )
  })

  it('requires a key for OpenAI itself but not for a custom baseURL', async () => {
    const saved = process.env.OPENAI_API_KEY
    const savedBase = process.env.OPENAI_BASE_URL
    delete process.env.OPENAI_API_KEY
    delete process.env.OPENAI_BASE_URL
    try {
      expect(() => new OpenAIAdapter()).toThrow(ConfigurationError)
      expect(() => new OpenAIAdapter()).toThrow(/OPENAI_API_KEY/)
      const local = new OpenAIAdapter({ api: 'chat', baseURL: chat.baseURL, model: 'llama3.2' })
      chat.enqueue({ response: { blocks: [{ type: 'text', text: 'hi' }], stopReason: 'end_turn' } })
      const { events } = await run(local.stream('Hi', { model: '', history: [] }))
      expect(deltas(events)).toBe('hi')
      expect(chat.requests[0]!.received.headers.authorization).toBeUndefined()
      expect(JSON.parse(chat.requests[0]!.received.body).model).toBe('llama3.2')
    } finally {
      if (saved !== undefined) process.env.OPENAI_API_KEY = saved
      if (savedBase !== undefined) process.env.OPENAI_BASE_URL = savedBase
    }
  })

  it('reads the key from OPENAI_API_KEY', async () => {
    const saved = process.env.OPENAI_API_KEY
    process.env.OPENAI_API_KEY = 'sk-from-env'
    try {
      responses.enqueue({ response: { blocks: [{ type: 'text', text: 'hi' }], stopReason: 'end_turn' } })
      await run(new OpenAIAdapter({ baseURL: responses.baseURL }).stream('Hi', options))
      expect(responses.requests[0]!.decoded.apiKey).toBe('sk-from-env')
    } finally {
      if (saved === undefined) delete process.env.OPENAI_API_KEY
      else process.env.OPENAI_API_KEY = saved
    }
  })

  it('uses a given client but still never lets the SDK retry', async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: responses.baseURL, maxRetries: 5 })
    responses.enqueue({ httpError: { kind: 'server' } }, { httpError: { kind: 'server' } })
    const { error } = await run(new OpenAIAdapter({ client }).stream('Hi', options))
    expect(error).toMatchObject({ kind: 'server', status: 500, retryable: true })
    expect(responses.requests).toHaveLength(1)
  })

  it('sends max_completion_tokens to OpenAI itself and lets stream_options be switched off', async () => {
    // A client for api.openai.com whose fetch is redirected to the loopback server.
    const client = new OpenAI({
      apiKey: KEY,
      baseURL: 'https://api.openai.com/v1',
      fetch: (url, init) => fetch(String(url).replace('https://api.openai.com', chat.origin), init),
    })
    chat.enqueue({ response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } })
    await run(
      new OpenAIAdapter({ api: 'chat', client }).stream('Hi', {
        ...options,
        maxOutputTokens: 100,
        providerOptions: { openai: { stream_options: null, user: 'u-1' } },
      }),
    )
    const body = JSON.parse(chat.requests[0]!.received.body)
    expect(body.max_completion_tokens).toBe(100)
    expect(body).not.toHaveProperty('max_tokens')
    expect(body).not.toHaveProperty('stream_options')
    expect(body.user).toBe('u-1')
  })

  it('warns through the logger when a resume falls back to a replay', async () => {
    const warnings: unknown[] = []
    const logger = {
      debug() {},
      info() {},
      error() {},
      warn: (message: string, data?: unknown) => warnings.push({ message, data }),
    }
    responses.enqueue(
      { httpError: { kind: 'unknown_resume' } },
      { response: { blocks: [{ type: 'text', text: 'ok' }], stopReason: 'end_turn' } },
    )
    const { failed } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL, logger }).stream('Hi', {
        ...options,
        resume: 'resp_gone',
      }),
    )
    expect(failed).toBe(false)
    expect(warnings).toEqual([
      {
        message: expect.stringContaining('replaying'),
        data: { previousResponseId: 'resp_gone', messages: 0 },
      },
    ])
    expect(responses.requests.map((request) => request.decoded.resume)).toEqual(['resp_gone', undefined])
  })

  it('refuses providerOptions that set a field the adapter owns, before any request', async () => {
    const { error } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', {
        ...options,
        providerOptions: { openai: { model: 'other' } },
      }),
    )
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toMatch(
      /^providerOptions\.openai\.model cannot be set for the OpenAI adapter/,
    )
    expect(responses.requests).toHaveLength(0)
  })

  it('fails a request without any model with kind invalid_request and sends nothing', async () => {
    const { error } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', { model: '', history: [] }),
    )
    expect(error).toMatchObject({ kind: 'invalid_request', retryable: false })
    expect(responses.requests).toHaveLength(0)
  })
})

describe('OpenAIAdapter structured output', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
    required: ['city', 'days'],
  }
  const closed = { ...schema, additionalProperties: false }
  const loose = {
    type: 'object',
    properties: { city: { type: 'string' }, note: { type: 'string' } },
    required: ['city'],
  }
  const answer = (text: string) => ({
    response: { blocks: [{ type: 'text' as const, text }], stopReason: 'end_turn' as const, deltaSize: 5 },
  })
  const bodyOf = (server: FakeProvider, index: number) =>
    JSON.parse(server.requests[index]?.received.body ?? 'null') as Record<string, unknown>

  it('Responses: sends text.format json_schema with the name, strict when the schema qualifies, and keeps verbosity', async () => {
    responses.enqueue(answer('{"city":"Oslo","days":3}'), answer('{"city":"Oslo"}'), answer('Plain.'))
    const adapter = new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL })
    const { events } = await run(
      adapter.stream('Plan', {
        ...options,
        output: { name: 'trip', schema },
        providerOptions: { openai: { text: { verbosity: 'low' } } },
      }),
    )
    await run(adapter.stream('Plan', { ...options, output: { name: 'trip', schema: loose } }))
    await run(adapter.stream('Plan', options))
    expect(bodyOf(responses, 0).text).toEqual({
      verbosity: 'low',
      format: { type: 'json_schema', name: 'trip', schema: closed, strict: true },
    })
    expect(bodyOf(responses, 1).text).toEqual({
      format: { type: 'json_schema', name: 'trip', schema: loose, strict: false },
    })
    expect(bodyOf(responses, 2)).not.toHaveProperty('text')
    expect(messageOf(events).content).toMatchObject([{ type: 'text', text: '{"city":"Oslo","days":3}' }])
  })

  it('Chat Completions: sends response_format json_schema with the name, strict when the schema qualifies', async () => {
    chat.enqueue(answer('{"city":"Oslo","days":3}'), answer('{"city":"Oslo"}'), answer('Plain.'))
    const adapter = new OpenAIAdapter({ api: 'chat', apiKey: KEY, baseURL: chat.baseURL })
    const { events } = await run(adapter.stream('Plan', { ...options, output: { name: 'trip', schema } }))
    await run(adapter.stream('Plan', { ...options, output: { name: 'trip', schema: loose } }))
    await run(adapter.stream('Plan', options))
    expect(bodyOf(chat, 0).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'trip', schema: closed, strict: true },
    })
    expect(bodyOf(chat, 1).response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'trip', schema: loose, strict: false },
    })
    expect(bodyOf(chat, 2)).not.toHaveProperty('response_format')
    expect(deltas(events)).toBe('{"city":"Oslo","days":3}')
  })

  it('refuses a format in providerOptions.openai next to output, and a malformed output, before any request', async () => {
    const output = { name: 'trip', schema }
    const cases: Array<['responses' | 'chat', Record<string, unknown>, string]> = [
      [
        'responses',
        { output, providerOptions: { openai: { text: { format: { type: 'json_object' } } } } },
        "providerOptions.openai.text.format cannot be set together with output for the OpenAI adapter (provider 'openai')",
      ],
      [
        'responses',
        { output, providerOptions: { openai: { text: 'json' } } },
        "Invalid providerOptions.openai.text for the OpenAI adapter (provider 'openai')",
      ],
      [
        'chat',
        { output, providerOptions: { openai: { response_format: { type: 'json_object' } } } },
        "providerOptions.openai.response_format cannot be set together with output for the OpenAI adapter (provider 'openai')",
      ],
      ['chat', { output: { schema } }, "Invalid output for the OpenAI adapter (provider 'openai')"],
      [
        'responses',
        { output: { name: 'trip' } },
        "Invalid output for the OpenAI adapter (provider 'openai')",
      ],
    ]
    for (const [api, extra, message] of cases) {
      const server = api === 'chat' ? chat : responses
      const { error } = await run(
        new OpenAIAdapter({ api, apiKey: KEY, baseURL: server.baseURL }).stream('Hi', {
          ...options,
          ...extra,
        }),
      )
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toContain(message)
    }
    expect(responses.requests).toHaveLength(0)
    expect(chat.requests).toHaveLength(0)
  })
})

describe('OpenAIAdapter errors', () => {
  const adapter = (): OpenAIAdapter => new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL })

  it.each([
    [{ kind: 'authentication' as const }, { kind: 'authentication', status: 401, retryable: false }],
    [{ kind: 'permission' as const }, { kind: 'permission', status: 403, retryable: false }],
    [{ kind: 'not_found' as const }, { kind: 'not_found', status: 404, retryable: false }],
    [{ kind: 'invalid_request' as const }, { kind: 'invalid_request', status: 400, retryable: false }],
    [{ kind: 'context_length' as const }, { kind: 'context_length', status: 400, retryable: false }],
    [{ kind: 'server' as const }, { kind: 'server', status: 500, retryable: true }],
    [
      { kind: 'server' as const, status: 502 },
      { kind: 'server', status: 502, retryable: true },
    ],
    [{ kind: 'overloaded' as const }, { kind: 'overloaded', status: 503, retryable: true }],
    [
      { kind: 'server' as const, status: 409 },
      { kind: 'server', status: 409, retryable: true },
    ],
    [
      { kind: 'server' as const, status: 408 },
      { kind: 'timeout', status: 408, retryable: true },
    ],
  ])('maps HTTP %o to %o, with one request only', async (httpError, expected) => {
    responses.enqueue({ httpError })
    const { error, events } = await run(adapter().stream('Hi', options))
    expect(events).toEqual([])
    expect(isAdapterError(error)).toBe(true)
    expect(error).toMatchObject({ ...expected, provider: 'openai' })
    expect(responses.requests).toHaveLength(1)
  })

  it('maps the chat context-length message of a compatible server to context_length', async () => {
    chat.enqueue({
      httpError: { kind: 'invalid_request', message: "This model's maximum context length is 8192 tokens." },
    })
    const { error } = await run(
      new OpenAIAdapter({ api: 'chat', apiKey: KEY, baseURL: chat.baseURL }).stream('Hi', options),
    )
    expect(error).toMatchObject({ kind: 'context_length', status: 400 })
  })

  it('reads retry-after-ms, retry-after seconds and HTTP dates on a 429', async () => {
    responses.enqueue(
      json(429, fixture('rate-limit-429.json'), { 'retry-after-ms': '1500' }),
      json(429, fixture('rate-limit-429.json'), { 'retry-after': '7' }),
      json(429, fixture('rate-limit-429.json'), {
        'retry-after': new Date(Date.now() + 30_000).toUTCString(),
      }),
    )
    const rawAdapter = new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL })
    const first = (await run(rawAdapter.stream('Hi', options))).error
    const second = (await run(rawAdapter.stream('Hi', options))).error
    const third = (await run(rawAdapter.stream('Hi', options))).error as { retryAfterMs: number }
    expect(first).toMatchObject({ kind: 'rate_limit', status: 429, retryable: true, retryAfterMs: 1500 })
    expect(second).toMatchObject({ kind: 'rate_limit', retryAfterMs: 7000 })
    expect(third.retryAfterMs).toBeGreaterThan(20_000)
    expect(third.retryAfterMs).toBeLessThanOrEqual(30_000)
    expect(responses.requests).toHaveLength(3)
  })

  it('marks a 429 insufficient_quota as not retryable', async () => {
    responses.enqueue(
      json(
        429,
        JSON.stringify({
          error: {
            message: 'You exceeded your current quota.',
            type: 'insufficient_quota',
            param: null,
            code: 'insufficient_quota',
          },
        }),
      ),
    )
    const { error } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', options),
    )
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: false })
  })

  it('never puts the API key in the message, cause, stack or JSON of an error', async () => {
    responses.enqueue(
      json(
        401,
        JSON.stringify({
          error: {
            message: `Incorrect API key provided: ${KEY}.`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        }),
      ),
    )
    const { error } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', options),
    )
    expect(error).toMatchObject({ kind: 'authentication' })
    const all = [
      String(error),
      (error as Error).stack,
      JSON.stringify(error),
      String((error as Error).cause),
      JSON.stringify((error as Error).cause),
      ((error as Error).cause as Error | undefined)?.stack,
    ].join('\n')
    expect(all).not.toContain(KEY)
    expect((error as Error).message).toContain('[redacted]')
  })

  it('reports a refused connection as a retryable network error', async () => {
    const closed = await startFakeProvider({ dialect: openAIResponsesDialect })
    const baseURL = closed.baseURL
    await closed.close()
    const { error } = await run(new OpenAIAdapter({ apiKey: KEY, baseURL }).stream('Hi', options))
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('reports a reset mid-stream as a retryable network error after the deltas', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { truncateAfterFrame: 6, truncateMode: 'reset' },
    })
    const { events, error } = await run(adapter().stream('Hi', options))
    expect(deltas(events)).toBe('abcd')
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('reports a stream that ends before response.completed as a retryable network error', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { truncateAfterFrame: 9 },
    })
    const { events, error } = await run(adapter().stream('Hi', options))
    expect(deltas(events)).toBe('abcdefgh')
    expect(events.some((event) => event.type === 'message')).toBe(false)
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('reports a malformed frame as the shared protocol error (server, not retryable) with an excerpt', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { malformedFrame: 5 },
    })
    const { error } = await run(adapter().stream('Hi', options))
    expect(error).toMatchObject({
      name: 'AdapterError',
      kind: 'server',
      retryable: false,
      message: 'OpenAI sent a malformed stream frame (protocol error).',
    })
    expect(String((error as Error).cause)).toContain('response.output_text.delta')
  })

  it('throws an in-stream error event with its kind after the earlier deltas', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { errorFrameAfter: 6 },
      streamError: { kind: 'rate_limit' },
    })
    const { events, error } = await run(adapter().stream('Hi', options))
    expect(deltas(events)).toBe('abcd')
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true })
  })

  it('maps response.failed to an error of its code', async () => {
    responses.enqueue(
      sse(
        'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_f","status":"in_progress","output":[]}}\n\n' +
          'event: response.failed\ndata: {"type":"response.failed","sequence_number":1,"response":{"id":"resp_f","status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}}\n\n',
      ),
    )
    const { error } = await run(
      new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL }).stream('Hi', options),
    )
    expect(error).toMatchObject({ kind: 'server', retryable: true })
  })

  it('fails clearly when a server answers JSON instead of a stream', async () => {
    chat.enqueue(json(200, '{"id":"chatcmpl-1","choices":[]}'))
    const { error } = await run(
      new OpenAIAdapter({ api: 'chat', apiKey: KEY, baseURL: chat.baseURL }).stream('Hi', options),
    )
    expect(error).toMatchObject({ kind: 'unknown', retryable: false, status: 200 })
    expect((error as Error).message).toMatch(/instead of an event stream/)
  })
})

describe('OpenAIAdapter abort and timeouts', () => {
  const adapter = (idleTimeoutMs = 60_000): OpenAIAdapter =>
    new OpenAIAdapter({ apiKey: KEY, baseURL: responses.baseURL, idleTimeoutMs })

  it('sends nothing for an already-aborted signal', async () => {
    const controller = new AbortController()
    controller.abort()
    const { error } = await run(adapter().stream('Hi', { ...options, signal: controller.signal }))
    expect(error).toMatchObject({ kind: 'aborted', retryable: false })
    expect(responses.requests).toHaveLength(0)
  })

  it('aborts mid-stream: kind aborted, nothing after, the connection closed', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { pauseBeforeFrame: 7, pauseMs: Number.POSITIVE_INFINITY },
    })
    const controller = new AbortController()
    const seen: string[] = []
    let caught: unknown
    try {
      for await (const event of adapter().stream('Hi', { ...options, signal: controller.signal })) {
        seen.push(event.type)
        if (event.type === 'text-delta') controller.abort()
      }
    } catch (error) {
      caught = error
    }
    expect(caught).toMatchObject({ kind: 'aborted' })
    expect(seen).toEqual(['text-delta'])
    await responses.waitForDisconnect()
    expect(responses.requests[0]!.disconnected).toBe(true)
  })

  it('closes the connection when the consumer breaks early', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { pauseBeforeFrame: 7, pauseMs: Number.POSITIVE_INFINITY },
    })
    for await (const event of adapter().stream('Hi', options)) if (event.type === 'text-delta') break
    await responses.waitForDisconnect()
    expect(responses.disconnects).toBe(1)
  })

  it('fails a stalled stream with kind timeout after idleTimeoutMs and releases the connection', async () => {
    responses.enqueue({
      response: { blocks: [{ type: 'text', text: 'abcdefgh' }], stopReason: 'end_turn', deltaSize: 2 },
      delivery: { pauseBeforeFrame: 6, pauseMs: Number.POSITIVE_INFINITY },
    })
    const { events, error } = await run(adapter(150).stream('Hi', options))
    expect(deltas(events)).toBe('abcd')
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
    await responses.waitForDisconnect()
  })

  it('ends the stream soon after the terminal event even if the server keeps the body open', async () => {
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      response.write(fixture('chat-text.sse.txt')) // ends with data: [DONE], but the body stays open
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    try {
      const adapter = new OpenAIAdapter({ api: 'chat', apiKey: KEY, baseURL: `http://127.0.0.1:${port}/v1` })
      const { events, failed } = await run(adapter.stream('Hi', options))
      expect(failed).toBe(false)
      expect(events.at(-1)).toMatchObject({ type: 'message', stopReason: 'end_turn' })
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })

  it('keeps the connection until the server finishes a complete response', async () => {
    responses.enqueue({ response: { blocks: [{ type: 'text', text: 'done' }], stopReason: 'end_turn' } })
    const { failed } = await run(adapter().stream('Hi', options))
    expect(failed).toBe(false)
    expect(responses.requests[0]!.finished).toBe(true)
    expect(responses.disconnects).toBe(0)
  })
})
