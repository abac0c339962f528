import {
  type AdapterMessage,
  AdapterError,
  type AnyMessage,
  ConfigurationError,
  isAdapterError,
  ValidationError,
} from '@agentx/core'
import { collect } from '@agentx/core/testing'
import { GoogleGenAI } from '@google/genai'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { fixture, type GeminiTestServer, sseOf, startGeminiTestServer } from '../test/gemini-test-server.js'
import { DEFAULT_GEMINI_MODEL, GeminiAdapter } from './gemini-adapter.js'

const API_KEY = 'g-test-key-5f1e9a'
let server: GeminiTestServer

beforeAll(async () => {
  server = await startGeminiTestServer()
})
afterAll(async () => {
  await server.close()
})
afterEach(() => {
  server.reset()
})

function adapter(extra: Partial<ConstructorParameters<typeof GeminiAdapter>[0]> = {}): GeminiAdapter {
  return new GeminiAdapter({ apiKey: API_KEY, baseURL: server.baseUrl, ...extra })
}

async function failure(
  iterable: AsyncIterable<AdapterMessage>,
): Promise<{ events: AdapterMessage[]; error: AdapterError }> {
  const events: AdapterMessage[] = []
  try {
    for await (const event of iterable) events.push(event)
  } catch (error) {
    if (!isAdapterError(error)) throw error
    return { events, error }
  }
  throw new Error(`expected the stream to fail, got ${JSON.stringify(events)}`)
}

const message = (seq: number, type: AnyMessage['type'], content: AnyMessage['content']): AnyMessage => ({
  id: `m${seq}`,
  sessionId: 's1',
  seq,
  type,
  content,
  timestamp: '2026-01-01T00:00:00.000Z',
})

describe('GeminiAdapter streaming', () => {
  it('streams the recorded text response in wire order and reports usage once, before the single final message', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    const events = await collect(
      adapter().stream('Why is the sky blue?', { model: 'gemini-2.5-flash', history: [] }),
    )

    const deltas = events.filter((event) => event.type === 'text-delta').map((event) => event.text)
    expect(deltas).toHaveLength(3)
    expect(deltas[1]).toContain('– red has the longest wavelength')
    const final = events.at(-1)
    expect(final).toEqual({
      type: 'message',
      content: [{ type: 'text', text: deltas.join('') }],
      stopReason: 'max_tokens',
    })
    expect(events.filter((event) => event.type === 'usage')).toEqual([
      {
        type: 'usage',
        usage: { inputTokens: 7, outputTokens: 153 + 45, reasoningTokens: 45, totalTokens: 7 + 153 + 45 },
      },
    ])
    expect(events.at(-2)?.type).toBe('usage')
  })

  it('sends the request the SDK documents: v1 stream path, x-goog-api-key, contents and config', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    await collect(
      adapter().stream('Hello', {
        model: 'gemini-x',
        history: [],
        systemPrompt: 'Be brief.',
        maxOutputTokens: 64,
        temperature: 0.2,
        tools: [
          {
            name: 'weather',
            description: 'Current weather',
            inputSchema: {
              type: 'object',
              properties: { location: { type: 'string' } },
              required: ['location'],
            },
          },
        ],
        providerOptions: { gemini: { thinkingConfig: { includeThoughts: true, thinkingBudget: 512 } } },
      }),
    )
    const [request] = server.requests
    expect(request?.method).toBe('POST')
    expect(request?.url).toBe('/v1/models/gemini-x:streamGenerateContent?alt=sse')
    expect(request?.headers['x-goog-api-key']).toBe(API_KEY)
    expect(request?.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello' }] }],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'weather',
              description: 'Current weather',
              parametersJsonSchema: {
                type: 'object',
                properties: { location: { type: 'string' } },
                required: ['location'],
              },
            },
          ],
        },
      ],
      generationConfig: {
        maxOutputTokens: 64,
        temperature: 0.2,
        thinkingConfig: { includeThoughts: true, thinkingBudget: 512 },
      },
    })
  })

  it('uses the adapter model when the request names none, and the v1beta path when asked', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    await collect(
      adapter({ model: 'gemini-2.5-pro', httpOptions: { apiVersion: 'v1beta' } }).stream('Hi', {
        model: '',
        history: [],
      }),
    )
    expect(server.requests[0]?.url).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse')
    // The kernel shows the same default as session.model.
    expect(adapter({ model: 'gemini-2.5-pro' }).defaultModel).toBe('gemini-2.5-pro')
    expect(new GeminiAdapter({ apiKey: API_KEY }).defaultModel).toBe(DEFAULT_GEMINI_MODEL)
  })

  it('takes the base URL and API version from apiVersion, GOOGLE_GEMINI_BASE_URL and GOOGLE_GENAI_API_VERSION', async () => {
    const saved = { base: process.env.GOOGLE_GEMINI_BASE_URL, version: process.env.GOOGLE_GENAI_API_VERSION }
    try {
      process.env.GOOGLE_GEMINI_BASE_URL = server.baseUrl
      process.env.GOOGLE_GENAI_API_VERSION = 'beta'
      server.enqueue({ sse: fixture('text-max-tokens.sse') }, { sse: fixture('text-max-tokens.sse') })
      await collect(new GeminiAdapter({ apiKey: API_KEY }).stream('Hi', { model: 'm', history: [] }))
      await collect(
        new GeminiAdapter({ apiKey: API_KEY, apiVersion: 'v1alpha' }).stream('Hi', {
          model: 'm',
          history: [],
        }),
      )
      expect(server.requests.map((request) => request.url)).toEqual([
        '/v1beta/models/m:streamGenerateContent?alt=sse',
        '/v1alpha/models/m:streamGenerateContent?alt=sse',
      ])
      process.env.GOOGLE_GEMINI_BASE_URL = 'gemini.internal'
      expect(() => new GeminiAdapter({ apiKey: API_KEY })).toThrow(
        "Invalid GOOGLE_GEMINI_BASE_URL for the Gemini adapter (provider 'gemini')",
      )
    } finally {
      for (const [name, value] of [
        ['GOOGLE_GEMINI_BASE_URL', saved.base],
        ['GOOGLE_GENAI_API_VERSION', saved.version],
      ] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })

  it('yields the same events when every byte arrives on its own (UTF-8 sequences split)', async () => {
    server.enqueue({ sse: fixture('thinking.sse') }, { sse: fixture('thinking.sse'), chunkBytes: 1 })
    const whole = await collect(adapter().stream('27*453?', { model: 'm', history: [] }))
    const split = await collect(adapter().stream('27*453?', { model: 'm', history: [] }))
    expect(split).toEqual(whole)
  })

  it('streams thought parts as thinking and keeps both thought signatures for the round trip', async () => {
    server.enqueue({ sse: fixture('thinking.sse') })
    const events = await collect(adapter().stream('27*453?', { model: 'gemini-2.5-pro', history: [] }))
    expect(events.filter((event) => event.type === 'thinking-delta').map((event) => event.text)).toEqual([
      '**Weighing the question**\n\nThe user asks for 27 * 453.',
      ' 27 * 453 = 12231.',
    ])
    expect(events.at(-1)).toEqual({
      type: 'message',
      stopReason: 'end_turn',
      content: [
        {
          type: 'thinking',
          text: '**Weighing the question**\n\nThe user asks for 27 * 453. 27 * 453 = 12231.',
          signature: 'dGhvdWdodC1zaWc=',
        },
        {
          type: 'text',
          text: '27 × 453 = 12 231 ✓',
          providerMetadata: { gemini: { thoughtSignature: 'dGV4dC1zaWc=' } },
        },
      ],
    })
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 12, outputTokens: 69, reasoningTokens: 60, totalTokens: 81 },
    })
  })

  it('gives a Gemini 3 function call without id a stable synthetic id and keeps its thought signature', async () => {
    server.enqueue({ sse: fixture('tool-call-gemini3.sse') }, { sse: fixture('tool-call-gemini3.sse') })
    const first = await collect(
      adapter().stream('Weather in SF?', { model: 'gemini-3-pro-preview', history: [] }),
    )
    const second = await collect(
      adapter().stream('Weather in SF?', { model: 'gemini-3-pro-preview', history: [] }),
    )
    const call = first.find((event) => event.type === 'tool-call')
    expect(call).toEqual({
      type: 'tool-call',
      id: 'gemini-call-b36LacjwM668nsEP2tbsgQQ-0',
      name: 'weather',
      input: { location: 'San Francisco' },
    })
    expect(second.find((event) => event.type === 'tool-call')).toEqual(call)
    expect(first.at(-1)).toEqual({
      type: 'message',
      stopReason: 'tool_use',
      content: [
        {
          type: 'tool_use',
          id: 'gemini-call-b36LacjwM668nsEP2tbsgQQ-0',
          name: 'weather',
          input: { location: 'San Francisco' },
          providerMetadata: {
            gemini: { syntheticId: true, thoughtSignature: 'EqUCCqICAb4+9vsh8Pd5c2lnbmF0dXJl' },
          },
        },
      ],
    })
  })

  it('assembles parallel function calls with their ids in order and reports cached tokens', async () => {
    server.enqueue({ sse: fixture('parallel-tool-calls.sse') })
    const events = await collect(
      adapter().stream('Paris and Rome?', { model: 'gemini-3-flash', history: [] }),
    )
    expect(events.map((event) => event.type)).toEqual([
      'text-delta',
      'tool-call',
      'tool-call',
      'usage',
      'message',
    ])
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      { type: 'tool-call', id: 'fc-paris', name: 'weather', input: { location: 'Paris' } },
      { type: 'tool-call', id: 'fc-rome', name: 'weather', input: { location: 'Rome', unit: 'celsius' } },
    ])
    expect(events[3]).toEqual({
      type: 'usage',
      usage: { inputTokens: 40, outputTokens: 22, cacheReadTokens: 32, totalTokens: 62 },
    })
    const final = events[4]
    expect(final?.type === 'message' && final.stopReason).toBe('tool_use')
    expect(final?.type === 'message' && final.content.map((block) => block.type)).toEqual([
      'text',
      'tool_use',
      'tool_use',
    ])
  })

  it('maps a SAFETY finish to content_filter and keeps the text streamed before it', async () => {
    server.enqueue({ sse: fixture('safety-block.sse') })
    const events = await collect(adapter().stream('…', { model: 'm', history: [] }))
    expect(events.at(-1)).toEqual({
      type: 'message',
      content: [
        { type: 'text', text: 'I can start with', providerMetadata: { gemini: { finishReason: 'SAFETY' } } },
      ],
      stopReason: 'content_filter',
    })
  })

  it('maps a blocked prompt (promptFeedback, no candidates) to content_filter', async () => {
    server.enqueue({
      sse: sseOf({
        promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
        usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
      }),
    })
    const events = await collect(adapter().stream('…', { model: 'm', history: [] }))
    expect(events).toEqual([
      { type: 'usage', usage: { inputTokens: 9, outputTokens: 0, totalTokens: 9 } },
      { type: 'message', content: [], stopReason: 'content_filter' },
    ])
  })

  it('reports no usage at all when Gemini sends none, and captures usage from a trailing chunk', async () => {
    server.enqueue(
      {
        sse: sseOf({
          candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }],
        }),
      },
      {
        sse: sseOf(
          { candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] },
          { usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4 } },
        ),
      },
    )
    const none = await collect(adapter().stream('x', { model: 'm', history: [] }))
    expect(none.some((event) => event.type === 'usage')).toBe(false)
    const trailing = await collect(adapter().stream('x', { model: 'm', history: [] }))
    expect(trailing.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 },
    })
  })

  it('maps unknown finish reasons to other and malformed function calls to error', async () => {
    const finishing = (finishReason: string): { sse: string } => ({
      sse: sseOf({ candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason }] }),
    })
    server.enqueue(finishing('LANGUAGE'), finishing('MALFORMED_FUNCTION_CALL'), finishing('RECITATION'))
    const reasons: unknown[] = []
    for (let i = 0; i < 3; i++) {
      const events = await collect(adapter().stream('x', { model: 'm', history: [] }))
      const final = events.at(-1)
      reasons.push(final?.type === 'message' ? final.stopReason : undefined)
    }
    expect(reasons).toEqual(['other', 'error', 'content_filter'])
  })

  it("keeps Gemini's own finish reason in providerMetadata when the stop reason does not say it all", async () => {
    server.enqueue({
      sse: sseOf({
        candidates: [
          { content: { role: 'model', parts: [{ text: 'x' }] }, finishReason: 'AGENTX_NEW_REASON' },
        ],
      }),
    })
    const events = await collect(adapter().stream('x', { model: 'm', history: [] }))
    expect(events.at(-1)).toEqual({
      type: 'message',
      content: [
        { type: 'text', text: 'x', providerMetadata: { gemini: { finishReason: 'AGENTX_NEW_REASON' } } },
      ],
      stopReason: 'other',
    })
  })
})

describe('GeminiAdapter structured output', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string' }, note: { type: 'string', maxLength: 40 } },
    required: ['city'],
  }
  const json = '{"city":"Oslo"}'
  const reply = () =>
    sseOf(
      { candidates: [{ content: { role: 'model', parts: [{ text: json.slice(0, 6) }] }, index: 0 }] },
      {
        candidates: [
          { content: { role: 'model', parts: [{ text: json.slice(6) }] }, finishReason: 'STOP', index: 0 },
        ],
        usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 4, totalTokenCount: 9 },
      },
    )

  it('sends responseMimeType application/json and the schema as responseJsonSchema, unchanged, next to the other config', async () => {
    server.enqueue({ sse: reply() }, { sse: reply() })
    const events = await collect(
      adapter().stream('Where?', {
        model: 'gemini-x',
        history: [],
        maxOutputTokens: 64,
        output: { name: 'place', schema },
        providerOptions: {
          gemini: { responseMimeType: 'application/json', thinkingConfig: { thinkingBudget: 0 } },
        },
      }),
    )
    await collect(adapter().stream('Where?', { model: 'gemini-x', history: [] }))
    expect(server.requests[0]?.body.generationConfig).toEqual({
      maxOutputTokens: 64,
      thinkingConfig: { thinkingBudget: 0 },
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    })
    const plain = (server.requests[1]?.body.generationConfig ?? {}) as Record<string, unknown>
    expect(plain).not.toHaveProperty('responseMimeType')
    expect(plain).not.toHaveProperty('responseJsonSchema')
    expect(events.at(-1)).toMatchObject({ type: 'message', content: [{ type: 'text', text: json }] })
  })

  it('refuses providerOptions.gemini that set the output another way, and a malformed output, before any request', async () => {
    const output = { name: 'place', schema }
    const cases: Array<[Record<string, unknown>, string]> = [
      [
        { output, providerOptions: { gemini: { responseJsonSchema: schema } } },
        "providerOptions.gemini.responseJsonSchema cannot be set together with output for the Gemini adapter (provider 'gemini')",
      ],
      [
        { output, providerOptions: { gemini: { responseSchema: { type: 'OBJECT' } } } },
        "providerOptions.gemini.responseSchema cannot be set together with output for the Gemini adapter (provider 'gemini')",
      ],
      [
        { output, providerOptions: { gemini: { responseMimeType: 'text/x.enum' } } },
        "providerOptions.gemini.responseMimeType cannot be set together with output for the Gemini adapter (provider 'gemini')",
      ],
      [
        { output: { name: 'place', schema: [] } },
        "Invalid output for the Gemini adapter (provider 'gemini')",
      ],
    ]
    for (const [extra, text] of cases) {
      let error: unknown
      try {
        await collect(adapter().stream('x', { model: 'gemini-x', history: [], ...extra }))
      } catch (caught) {
        error = caught
      }
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toContain(text)
    }
    expect(server.requests).toHaveLength(0)
  })
})

describe('GeminiAdapter history', () => {
  it('replays user/model turns, system messages, images and tool calls paired with results by name and id', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    const history: AnyMessage[] = [
      message(0, 'system', 'Answer in French.'),
      message(1, 'user', [
        { type: 'text', text: 'What is in this picture, and the weather?' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ]),
      message(2, 'agent', [
        { type: 'thinking', text: 'Look, then call tools.', signature: 'sig-think' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'fc-1', name: 'weather', input: { location: 'Paris' } },
        {
          type: 'tool_use',
          id: 'gemini-call-r1-1',
          name: 'clock',
          input: {},
          providerMetadata: { gemini: { syntheticId: true, thoughtSignature: 'sig-clock' } },
        },
      ]),
      message(3, 'tool', [
        { type: 'tool_result', toolUseId: 'fc-1', content: '18°C' },
        {
          type: 'tool_result',
          toolUseId: 'gemini-call-r1-1',
          content: [{ type: 'text', text: 'boom' }],
          isError: true,
        },
      ]),
      message(4, 'agent', [{ type: 'text', text: 'Un chat, 18°C.' }]),
    ]
    await collect(
      adapter().stream([{ type: 'image', mediaType: 'image/jpeg', url: 'https://example.com/cat.jpg' }], {
        model: 'm',
        history,
        systemPrompt: 'You are helpful.',
      }),
    )
    const body = server.requests[0]?.body
    expect(body?.systemInstruction).toEqual({
      parts: [{ text: 'You are helpful.' }, { text: 'Answer in French.' }],
    })
    expect(body?.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'What is in this picture, and the weather?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'model',
        parts: [
          { text: 'Look, then call tools.', thought: true, thoughtSignature: 'sig-think' },
          { text: 'Let me check.' },
          { functionCall: { id: 'fc-1', name: 'weather', args: { location: 'Paris' } } },
          { functionCall: { name: 'clock', args: {} }, thoughtSignature: 'sig-clock' },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc-1', name: 'weather', response: { output: '18°C' } } },
          { functionResponse: { name: 'clock', response: { error: 'boom' } } },
        ],
      },
      { role: 'model', parts: [{ text: 'Un chat, 18°C.' }] },
      {
        role: 'user',
        parts: [{ fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.jpg' } }],
      },
    ])
  })

  it('leaves out empty thinking without a signature (Gemini refuses a part without data)', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    const history: AnyMessage[] = [
      message(0, 'user', 'Hi'),
      message(1, 'agent', [
        { type: 'thinking', text: '' },
        { type: 'thinking', text: '', providerMetadata: { claude: { redactedData: 'opaque' } } },
        { type: 'thinking', text: 'Said something.' },
        { type: 'text', text: 'Hello.' },
      ]),
    ]
    await collect(adapter().stream('Again', { model: 'm', history }))
    expect(server.requests[0]?.body?.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Said something.', thought: true }, { text: 'Hello.' }] },
      { role: 'user', parts: [{ text: 'Again' }] },
    ])
  })

  it('leaves out tool calls no result answers, and sends images returned by tools after the function responses', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    const history: AnyMessage[] = [
      message(0, 'user', 'Draw a chart, then check the weather.'),
      message(1, 'agent', [
        { type: 'tool_use', id: 'fc-chart', name: 'chart', input: { kind: 'bar' } },
        { type: 'tool_use', id: 'fc-weather', name: 'weather', input: { location: 'Oslo' } },
      ]),
    ]
    await collect(
      adapter().stream(
        [
          {
            type: 'tool_result',
            toolUseId: 'fc-chart',
            content: [
              { type: 'text', text: 'chart ready' },
              { type: 'image', mediaType: 'image/png', url: 'data:image/png;base64,AAAA' },
            ],
          },
        ],
        { model: 'm', history },
      ),
    )
    expect(server.requests[0]?.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Draw a chart, then check the weather.' }] },
      { role: 'model', parts: [{ functionCall: { id: 'fc-chart', name: 'chart', args: { kind: 'bar' } } }] },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc-chart', name: 'chart', response: { output: 'chart ready' } } },
          { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
        ],
      },
    ])
  })

  it('rejects a tool result that answers no tool call with a ValidationError, before sending anything', async () => {
    const error = await collect(
      adapter().stream([{ type: 'tool_result', toolUseId: 'nowhere', content: 'x' }], {
        model: 'm',
        history: [],
      }),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as Error).message).toContain('nowhere')
    expect(server.requests).toHaveLength(0)
  })
})

describe('GeminiAdapter errors', () => {
  it('maps 429 RESOURCE_EXHAUSTED to rate_limit with RetryInfo as retryAfterMs, without retrying in the SDK', async () => {
    server.enqueue({ status: 429, json: fixture('error-429-retry-info.json') })
    const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      retryable: true,
      retryAfterMs: 34_400,
      provider: 'gemini',
    })
    expect(error.message).toContain('RESOURCE_EXHAUSTED')
    expect(server.requests).toHaveLength(1)
  })

  it('takes retryAfterMs from a Retry-After header when there is no RetryInfo', async () => {
    server.enqueue({
      status: 429,
      json: '{"error":{"code":429,"message":"slow down","status":"RESOURCE_EXHAUSTED"}}',
      headers: { 'retry-after': '3' },
    })
    const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(error).toMatchObject({ kind: 'rate_limit', retryAfterMs: 3000 })
  })

  it.each([
    [400, fixture('error-400-api-key-invalid.json'), 'authentication', false],
    [
      400,
      '{"error":{"code":400,"message":"Invalid JSON payload","status":"INVALID_ARGUMENT"}}',
      'invalid_request',
      false,
    ],
    [
      400,
      '{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}',
      'context_length',
      false,
    ],
    [403, '{"error":{"code":403,"message":"denied","status":"PERMISSION_DENIED"}}', 'permission', false],
    [404, fixture('error-404-model.json'), 'not_found', false],
    [500, '{"error":{"code":500,"message":"Internal error","status":"INTERNAL"}}', 'server', true],
    [
      503,
      '{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}',
      'overloaded',
      true,
    ],
  ] as const)(
    'maps HTTP %i (%#) to the right kind and retryable flag',
    async (status, json, kind, retryable) => {
      server.enqueue({ status, json })
      const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
      expect(error).toMatchObject({ kind, status, retryable, provider: 'gemini' })
      expect(server.requests).toHaveLength(1)
    },
  )

  it.each([
    [500, '{"error": {"code": 500, "mess', 'server'],
    [503, 'Service Unavailable', 'overloaded'],
  ] as const)(
    'maps HTTP %i whose body is labelled JSON but is not (a proxy, a cut body) by its status',
    async (status, json, kind) => {
      server.enqueue({ status, json })
      const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
      // Before, kind unknown, not retryable, no status: the SDK's JSON parse error was mapped.
      expect(error).toMatchObject({ kind, status, retryable: true, provider: 'gemini' })
      expect((error as Error).message).toMatch(/not valid JSON/)
    },
  )

  it('delivers the events before an in-stream error frame, then throws it typed', async () => {
    server.enqueue({
      sse:
        sseOf({ candidates: [{ content: { role: 'model', parts: [{ text: 'partial' }] } }] }) +
        'data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}\n\n',
    })
    const { events, error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(events).toEqual([{ type: 'text-delta', text: 'partial' }])
    expect(error).toMatchObject({
      kind: 'overloaded',
      retryable: true,
      message: 'Gemini reported an error in the stream (503 UNAVAILABLE): The model is overloaded.',
    })
  })

  for (const ending of ['\n', '']) {
    it(`reads a bare {"error": …} object mid-stream (no data: prefix${ending ? '' : ', no line ending'}) as Gemini's error`, async () => {
      server.enqueue({
        sse:
          sseOf({ candidates: [{ content: { role: 'model', parts: [{ text: 'Hel' }] } }] }) +
          `{"error": {"code": 500, "message": "Internal error", "status": "INTERNAL"}}${ending}`,
      })
      const { events, error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
      expect(events).toEqual([{ type: 'text-delta', text: 'Hel' }])
      expect(error).toMatchObject({ kind: 'server', retryable: true, provider: 'gemini' })
      expect((error as Error).message).toContain('Internal error')
    })
  }

  it('treats a stream that ends cleanly before a finish reason as a retryable network error, never a success', async () => {
    server.enqueue({ sse: fixture('truncated.sse') })
    const { events, error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(events).toEqual([{ type: 'text-delta', text: 'The answer is' }])
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('treats a connection reset mid-stream as a retryable network error', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse'), resetAfterFrame: 1 })
    const { events, error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(events.map((event) => event.type)).toEqual(['text-delta'])
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('treats a frame cut in half at the end of the body as a retryable network error', async () => {
    server.enqueue({ sse: `${fixture('truncated.sse')}data: {"candidates":[{"content":` })
    const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('turns a malformed frame into the shared protocol error (server, not retryable) quoting it in the cause', async () => {
    server.enqueue({ sse: 'data: {"candidates":[{"content"::: nope}\n\n' })
    const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(error).toMatchObject({
      kind: 'server',
      retryable: false,
      message: 'Gemini sent a malformed stream frame (protocol error).',
    })
    expect(error.cause).toMatchObject({ excerpt: '{"candidates":[{"content"::: nope}' })
  })

  it('maps a refused connection to a retryable network error', async () => {
    const closed = await startGeminiTestServer()
    const baseURL = closed.baseUrl
    await closed.close()
    const { error } = await failure(
      new GeminiAdapter({ apiKey: API_KEY, baseURL }).stream('x', { model: 'm', history: [] }),
    )
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('never puts the API key in the message, stack, cause or JSON of an error', async () => {
    server.enqueue({
      status: 400,
      json: JSON.stringify({
        error: { code: 400, message: `API key not valid: ${API_KEY}`, status: 'INVALID_ARGUMENT' },
      }),
    })
    const { error } = await failure(adapter().stream('x', { model: 'm', history: [] }))
    expect(error.kind).toBe('authentication')
    const cause = error.cause as Error
    const texts = [
      error.message,
      error.stack,
      JSON.stringify(error),
      cause.message,
      cause.stack,
      JSON.stringify(cause),
    ]
    for (const text of texts) expect(text ?? '').not.toContain(API_KEY)
  })
})

describe('GeminiAdapter abort and timeouts', () => {
  it('rejects an already-aborted signal with kind aborted and sends no request', async () => {
    const { error } = await failure(
      adapter().stream('x', { model: 'm', history: [], signal: AbortSignal.abort() }),
    )
    expect(error.kind).toBe('aborted')
    expect(server.requests).toHaveLength(0)
  })

  it('ends with kind aborted when aborted mid-stream, yields nothing after, and closes the connection', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse'), stallAfterFrame: 1 })
    const controller = new AbortController()
    const events: AdapterMessage[] = []
    const disconnected = server.waitForDisconnect()
    const run = (async () => {
      for await (const event of adapter().stream('x', {
        model: 'm',
        history: [],
        signal: controller.signal,
      })) {
        events.push(event)
        controller.abort()
      }
    })()
    await expect(run).rejects.toMatchObject({ kind: 'aborted', provider: 'gemini' })
    expect(events.map((event) => event.type)).toEqual(['text-delta'])
    await disconnected
  })

  it('closes the connection when the consumer breaks out early', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse'), stallAfterFrame: 1 })
    const disconnected = server.waitForDisconnect()
    for await (const event of adapter().stream('x', { model: 'm', history: [] })) {
      expect(event.type).toBe('text-delta')
      break
    }
    await disconnected
  })

  it('fails with kind timeout when no byte arrives for idleTimeoutMs, and releases the connection', async () => {
    server.enqueue({ sse: fixture('text-max-tokens.sse'), stallAfterFrame: 1 })
    const disconnected = server.waitForDisconnect()
    const { events, error } = await failure(
      adapter({ idleTimeoutMs: 200 }).stream('x', { model: 'm', history: [] }),
    )
    expect(events.map((event) => event.type)).toEqual(['text-delta'])
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
    await disconnected
  })

  it('also times out when the response never starts', async () => {
    server.enqueue({ stall: true })
    const { error } = await failure(adapter({ idleTimeoutMs: 200 }).stream('x', { model: 'm', history: [] }))
    expect(error.kind).toBe('timeout')
  })

  it('maps the SDK request deadline (httpOptions.timeout) to kind timeout', async () => {
    server.enqueue({ stall: true })
    const { error } = await failure(
      adapter({ httpOptions: { timeout: 150 }, idleTimeoutMs: 30_000 }).stream('x', {
        model: 'm',
        history: [],
      }),
    )
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
  })

  it('goes through a custom fetch given in httpOptions', async () => {
    const seen: string[] = []
    const customFetch: typeof fetch = (input, init) => {
      seen.push(String(input))
      return fetch(input, init)
    }
    server.enqueue({ sse: fixture('text-max-tokens.sse') })
    await collect(adapter({ httpOptions: { fetch: customFetch } }).stream('x', { model: 'm', history: [] }))
    expect(seen).toEqual([`${server.baseUrl}/v1/models/m:streamGenerateContent?alt=sse`])
  })

  it('keeps two concurrent streams on one adapter apart', async () => {
    server.enqueue({ sse: fixture('thinking.sse') }, { sse: fixture('parallel-tool-calls.sse') })
    const shared = adapter()
    const [a, b] = await Promise.all([
      collect(shared.stream('a', { model: 'm', history: [] })),
      collect(shared.stream('b', { model: 'm', history: [] })),
    ])
    const kinds = [a, b].map((events) => events.some((event) => event.type === 'tool-call'))
    expect(kinds.sort()).toEqual([false, true])
  })
})

describe('GeminiAdapter construction', () => {
  it('is named gemini and performs no I/O when constructed', () => {
    const before = server.requests.length
    expect(adapter().getName()).toBe('gemini')
    expect(server.requests.length).toBe(before)
  })

  it('reads the key from GEMINI_API_KEY or GOOGLE_API_KEY and explains a missing one', () => {
    const saved = { gemini: process.env.GEMINI_API_KEY, google: process.env.GOOGLE_API_KEY }
    try {
      delete process.env.GEMINI_API_KEY
      delete process.env.GOOGLE_API_KEY
      expect(() => new GeminiAdapter()).toThrow(ConfigurationError)
      expect(() => new GeminiAdapter()).toThrow(/GEMINI_API_KEY/)
      process.env.GEMINI_API_KEY = 'from-env'
      expect(new GeminiAdapter().getName()).toBe('gemini')
      delete process.env.GEMINI_API_KEY
      process.env.GOOGLE_API_KEY = 'from-google-env'
      expect(new GeminiAdapter().getName()).toBe('gemini')
    } finally {
      if (saved.gemini === undefined) delete process.env.GEMINI_API_KEY
      else process.env.GEMINI_API_KEY = saved.gemini
      if (saved.google === undefined) delete process.env.GOOGLE_API_KEY
      else process.env.GOOGLE_API_KEY = saved.google
    }
  })

  it('sends the key from the environment', async () => {
    const saved = process.env.GEMINI_API_KEY
    process.env.GEMINI_API_KEY = 'env-key-123'
    try {
      server.enqueue({ sse: fixture('truncated.sse') })
      await failure(new GeminiAdapter({ baseURL: server.baseUrl }).stream('x', { model: 'm', history: [] }))
      expect(server.requests[0]?.headers['x-goog-api-key']).toBe('env-key-123')
    } finally {
      if (saved === undefined) delete process.env.GEMINI_API_KEY
      else process.env.GEMINI_API_KEY = saved
    }
  })

  it('prefers GEMINI_API_KEY over GOOGLE_API_KEY when both are set', async () => {
    const saved = { gemini: process.env.GEMINI_API_KEY, google: process.env.GOOGLE_API_KEY }
    process.env.GEMINI_API_KEY = 'gemini-env-key'
    process.env.GOOGLE_API_KEY = 'google-env-key'
    try {
      server.enqueue({ sse: fixture('truncated.sse') })
      await failure(new GeminiAdapter({ baseURL: server.baseUrl }).stream('x', { model: 'm', history: [] }))
      expect(server.requests[0]?.headers['x-goog-api-key']).toBe('gemini-env-key')
    } finally {
      for (const [name, value] of [
        ['GEMINI_API_KEY', saved.gemini],
        ['GOOGLE_API_KEY', saved.google],
      ] as const) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
    }
  })

  it('uses a ready client as is, but without its own retries and without leaking its key', async () => {
    const client = new GoogleGenAI({
      apiKey: API_KEY,
      httpOptions: { baseUrl: server.baseUrl, retryOptions: { attempts: 3, initialDelay: 0.01 } },
    })
    server.enqueue(
      {
        status: 503,
        json: `{"error":{"code":503,"message":"overloaded for ${API_KEY}","status":"UNAVAILABLE"}}`,
      },
      { sse: fixture('text-max-tokens.sse') },
    )
    const { error } = await failure(new GeminiAdapter({ client }).stream('x', { model: 'm', history: [] }))
    expect(error).toMatchObject({ kind: 'overloaded', retryable: true })
    expect(server.requests).toHaveLength(1)
    expect(JSON.stringify([error.message, error.stack, (error.cause as Error).message])).not.toContain(
      API_KEY,
    )
    expect(() => new GeminiAdapter({ client, apiKey: 'other' })).toThrow(ValidationError)
    expect(() => new GeminiAdapter({ client, apiKey: 'other' })).toThrow(
      "apiKey is not supported by the Gemini adapter (provider 'gemini')",
    )
  })

  it('rejects provider options it cannot honour before sending anything', async () => {
    const bad = [
      { gemini: 'fast' },
      { gemini: { toolConfig: { functionCallingConfig: { streamFunctionCallArguments: true } } } },
    ]
    for (const providerOptions of bad) {
      const error = await collect(adapter().stream('x', { model: 'm', history: [], providerOptions })).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toContain("the Gemini adapter (provider 'gemini')")
    }
    expect(server.requests).toHaveLength(0)
  })

  it('refuses options that would make it retry or that contradict each other', () => {
    expect(() => adapter({ httpOptions: { retryOptions: { attempts: 3 } } })).toThrow(ValidationError)
    expect(() => adapter({ idleTimeoutMs: 0 })).toThrow(
      "Invalid idleTimeoutMs for the Gemini adapter (provider 'gemini')",
    )
    expect(() => adapter({ httpOptions: { baseUrl: 'http://127.0.0.1:1' } })).toThrow(
      /Invalid baseURL .* the same value as httpOptions\.baseUrl/,
    )
  })

  it('refuses an unknown option, naming the closest one (a typo would be ignored without a word)', () => {
    expect(() => adapter({ modle: 'gemini-2.5-flash' } as never)).toThrow(ConfigurationError)
    expect(() => adapter({ baseUrl: 'http://127.0.0.1:1' } as never)).toThrow(
      "Unknown GeminiAdapter option 'baseUrl' — did you mean 'baseURL'?",
    )
  })
})
