import { anthropicMessagesDialect, type FakeProvider, startFakeProvider } from '@agentx/contract-tests'
import type { AdapterMessage, AdapterStreamOptions, AnyMessage, ContentBlock } from '@agentx/core'
import { AdapterError, ConfigurationError, isAdapterError, ValidationError } from '@agentx/core'
import { Anthropic } from '@anthropic-ai/sdk'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { frameOf, jsonError, readFixture, sse } from './__fixtures__/claude-fixtures.js'
import {
  ClaudeAdapter,
  type ClaudeAdapterOptions,
  DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS,
  DEFAULT_CLAUDE_MODEL,
} from './claude-adapter.js'

const API_KEY = 'fake-anthropic-key-0123456789-secret'

let server: FakeProvider

beforeAll(async () => {
  server = await startFakeProvider({ dialect: anthropicMessagesDialect })
})
afterAll(async () => {
  await server.close()
})
afterEach(() => {
  server.reset()
})

/** The JSON body of the `index`-th request the server received. */
function bodyOf(index: number): Record<string, unknown> {
  return JSON.parse(server.requests[index]?.received.body ?? 'null') as Record<string, unknown>
}

function adapter(options: Omit<ClaudeAdapterOptions, 'apiKey' | 'baseURL'> = {}): ClaudeAdapter {
  return new ClaudeAdapter({ apiKey: API_KEY, baseURL: server.baseURL, ...options })
}

async function collect(iterable: AsyncIterable<AdapterMessage>): Promise<AdapterMessage[]> {
  const events: AdapterMessage[] = []
  for await (const event of iterable) events.push(event)
  return events
}

/** Collects events until the stream throws; returns both. */
async function collectUntilError(
  iterable: AsyncIterable<AdapterMessage>,
): Promise<{ events: AdapterMessage[]; error: unknown }> {
  const events: AdapterMessage[] = []
  try {
    for await (const event of iterable) events.push(event)
  } catch (error) {
    return { events, error }
  }
  throw new Error('expected the stream to fail')
}

const base: AdapterStreamOptions = { model: 'claude-sonnet-5-5', history: [] }

function message(
  seq: number,
  type: AnyMessage['type'],
  content: string | ContentBlock[],
  extra: Partial<AnyMessage> = {},
): AnyMessage {
  return {
    id: `m${seq}`,
    sessionId: 's1',
    seq,
    type,
    content,
    timestamp: '2026-11-23T10:00:00.000Z',
    ...extra,
  }
}

describe('ClaudeAdapter streaming', () => {
  it('streams text deltas in wire order, then one usage and one message (SDK basic_response fixture)', async () => {
    server.enqueue(sse(readFixture('text.sse')))
    const events = await collect(adapter().stream('Hello', base))
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hello' },
      { type: 'text-delta', text: ' there' },
      { type: 'text-delta', text: '!' },
      { type: 'usage', usage: { inputTokens: 11, outputTokens: 6, totalTokens: 17 } },
      {
        type: 'message',
        content: [{ type: 'text', text: 'Hello there!' }],
        stopReason: 'end_turn',
        providerMetadata: {
          claude: {
            messageId: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
            model: 'claude-opus-4-8',
            stopReason: 'end_turn',
          },
        },
      },
    ])
  })

  it('assembles a tool_use block from input_json_delta fragments and emits it once', async () => {
    server.enqueue(sse(readFixture('tool-use.sse')))
    const events = await collect(adapter().stream('Weather in Paris?', base))
    const calls = events.filter((event) => event.type === 'tool-call')
    expect(calls).toEqual([
      {
        type: 'tool-call',
        id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
        name: 'get_weather',
        input: { location: 'Paris' },
      },
    ])
    const final = events.at(-1)
    expect(final).toMatchObject({
      type: 'message',
      stopReason: 'tool_use',
      content: [
        { type: 'text', text: "I'll check the current weather in Paris for you." },
        {
          type: 'tool_use',
          id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
          name: 'get_weather',
          input: { location: 'Paris' },
        },
      ],
    })
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 377,
        outputTokens: 65,
        cacheReadTokens: 0,
        cacheWriteTokens: 0,
        totalTokens: 442,
      },
    })
  })

  it('keeps parallel tool calls apart, parses escapes split across fragments, and turns empty arguments into {}', async () => {
    server.enqueue(sse(readFixture('parallel-tools.sse')))
    const events = await collect(adapter().stream('Paris and Tokyo?', base))
    expect(events.filter((event) => event.type === 'tool-call')).toEqual([
      {
        type: 'tool-call',
        id: 'toolu_01Paris',
        name: 'get_weather',
        input: { city: 'Paris', note: 'a "quoted" é' },
      },
      { type: 'tool-call', id: 'toolu_02Tokyo', name: 'get_time', input: {} },
    ])
    expect(events.at(-1)).toMatchObject({ type: 'message', stopReason: 'tool_use' })
  })

  it('yields the identical event sequence when the server splits the bytes at every position', async () => {
    server.enqueue(
      sse(readFixture('parallel-tools.sse')),
      sse(readFixture('parallel-tools.sse'), { chunkBytes: 1 }),
    )
    const whole = await collect(adapter().stream('x', base))
    const split = await collect(adapter().stream('x', base))
    expect(split).toEqual(whole)
    expect(
      whole
        .filter((event) => event.type === 'text-delta')
        .map((event) => (event as { text: string }).text)
        .join(''),
    ).toBe('Checking both cities — über-fast ✈️.')
  })

  it('streams thinking, keeps the signature in the block, and counts cache reads and writes as input', async () => {
    server.enqueue(sse(readFixture('thinking-cache.sse')))
    const events = await collect(adapter().stream('27 * 453?', base))
    expect(events.filter((event) => event.type === 'thinking-delta')).toEqual([
      { type: 'thinking-delta', text: 'Let me solve this step by step:\n\n1. First break down 27 * 453' },
      { type: 'thinking-delta', text: '\n2. 453 = 400 + 50 + 3' },
    ])
    expect(events.find((event) => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: {
        inputTokens: 2125,
        outputTokens: 120,
        cacheReadTokens: 2000,
        cacheWriteTokens: 100,
        reasoningTokens: 90,
        totalTokens: 2245,
      },
    })
    expect(events.at(-1)).toMatchObject({
      type: 'message',
      stopReason: 'end_turn',
      content: [
        {
          type: 'thinking',
          text: 'Let me solve this step by step:\n\n1. First break down 27 * 453\n2. 453 = 400 + 50 + 3',
          signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds',
        },
        { type: 'text', text: '27 * 453 = 12,231' },
      ],
    })
  })

  it('maps refusal to content_filter, keeps the raw reason and details, and ignores unknown event types', async () => {
    server.enqueue(sse(readFixture('refusal.sse')))
    const events = await collect(adapter().stream('x', base))
    expect(events.at(-1)).toEqual({
      type: 'message',
      content: [{ type: 'text', text: "I can't help" }],
      stopReason: 'content_filter',
      providerMetadata: {
        claude: {
          messageId: 'msg_01Refusal',
          model: 'claude-sonnet-5-5',
          stopReason: 'refusal',
          stopDetails: { type: 'refusal', category: 'cyber' },
        },
      },
    })
  })

  it('maps an unknown stop reason to other with the raw value kept, and reports no usage when Claude sent none', async () => {
    server.enqueue(sse(readFixture('unknown-stop-no-usage.sse')))
    const events = await collect(adapter().stream('x', base))
    expect(events.some((event) => event.type === 'usage')).toBe(false)
    expect(events).toEqual([
      { type: 'text-delta', text: 'Hi' },
      {
        type: 'message',
        content: [{ type: 'text', text: 'Hi' }],
        stopReason: 'other',
        providerMetadata: {
          claude: { messageId: 'msg_01NoUsage', model: 'claude-sonnet-5-5', stopReason: 'brand_new_reason' },
        },
      },
    ])
  })

  it('keeps redacted thinking and citations as provider metadata and sends them back unchanged', async () => {
    server.enqueue(sse(readFixture('redacted-citations.sse')), sse(readFixture('text.sse')))
    const events = await collect(adapter().stream('Sky?', base))
    const final = events.at(-1) as Extract<AdapterMessage, { type: 'message' }>
    expect(final.content).toEqual([
      {
        type: 'thinking',
        text: '',
        providerMetadata: {
          claude: { redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
        },
      },
      {
        type: 'text',
        text: 'The sky is blue.',
        providerMetadata: {
          claude: {
            citations: [
              {
                type: 'char_location',
                cited_text: 'The sky is blue.',
                document_index: 0,
                document_title: 'Facts',
                start_char_index: 0,
                end_char_index: 16,
              },
            ],
          },
        },
      },
    ])
    const history = [message(0, 'user', 'Sky?'), message(1, 'agent', structuredClone(final.content))]
    await collect(adapter().stream('Thanks', { ...base, history }))
    expect(bodyOf(1).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Sky?' }] },
      {
        role: 'assistant',
        content: [
          {
            type: 'redacted_thinking',
            data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP',
          },
          {
            type: 'text',
            text: 'The sky is blue.',
            citations: [
              {
                type: 'char_location',
                cited_text: 'The sky is blue.',
                document_index: 0,
                document_title: 'Facts',
                start_char_index: 0,
                end_char_index: 16,
              },
            ],
          },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
    ])
  })

  it('yields fresh objects: mutating a yielded tool input changes nothing in the final message', async () => {
    server.enqueue(sse(readFixture('tool-use.sse')))
    const events: AdapterMessage[] = []
    for await (const event of adapter().stream('x', base)) {
      if (event.type === 'tool-call') (event.input as Record<string, unknown>).location = 'mutated'
      events.push(event)
    }
    expect(events.at(-1)).toMatchObject({ content: [{}, { input: { location: 'Paris' } }] })
  })
})

describe('ClaudeAdapter requests', () => {
  it('sends auth, the streaming flag, model, max_tokens, system prompt, tools and the history in order', async () => {
    server.enqueue(sse(readFixture('text.sse')))
    const history: AnyMessage[] = [
      message(0, 'user', [
        { type: 'text', text: 'Look at these' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
        { type: 'image', mediaType: 'image/jpeg', url: 'https://example.com/cat.jpg' },
      ]),
      message(1, 'agent', [
        { type: 'thinking', text: 'Two images.', signature: 'sig_abc' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } },
        { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'png' } },
      ]),
      message(2, 'tool', [
        { type: 'tool_result', toolUseId: 'toolu_1', content: 'a cat' },
        {
          type: 'tool_result',
          toolUseId: 'toolu_2',
          content: [{ type: 'text', text: 'a png' }],
          isError: true,
        },
      ]),
      message(3, 'agent', [{ type: 'text', text: 'A cat in a PNG.' }]),
    ]
    await collect(
      adapter().stream('And now?', {
        ...base,
        history,
        systemPrompt: 'Be brief.',
        tools: [
          {
            name: 'lookup',
            description: 'Looks things up',
            inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
          },
        ],
      }),
    )
    const request = server.requests[0]?.received
    expect(request?.method).toBe('POST')
    expect(request?.url).toBe('/v1/messages')
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`)
    expect(request?.headers['x-stainless-retry-count']).toBe('0')
    expect(request?.headers['anthropic-version']).toBe('2026-10-21')
    expect(bodyOf(0)).toEqual({
      model: 'claude-sonnet-5-5',
      max_tokens: DEFAULT_CLAUDE_MAX_OUTPUT_TOKENS,
      stream: true,
      system: 'Be brief.',
      tools: [
        {
          name: 'lookup',
          description: 'Looks things up',
          input_schema: { type: 'object', properties: { q: { type: 'string' } } },
        },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look at these' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Two images.', signature: 'sig_abc' },
            { type: 'text', text: 'Let me check.' },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } },
            { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'png' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a cat' },
            {
              type: 'tool_result',
              tool_use_id: 'toolu_2',
              content: [{ type: 'text', text: 'a png' }],
              is_error: true,
            },
          ],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'A cat in a PNG.' }] },
        { role: 'user', content: [{ type: 'text', text: 'And now?' }] },
      ],
    })
  })

  it('declares the tools a history used as unavailable when the request offers none (the API refuses tool blocks without tools)', async () => {
    const history: AnyMessage[] = [
      message(0, 'user', 'Refund order 7'),
      message(1, 'agent', [
        { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: '7' } },
        { type: 'tool_use', id: 'toolu_2', name: 'transfer_to_billing', input: {} },
        { type: 'tool_use', id: 'toolu_3', name: 'lookup', input: { q: '8' } },
      ]),
      message(2, 'tool', [
        { type: 'tool_result', toolUseId: 'toolu_1', content: 'paid' },
        { type: 'tool_result', toolUseId: 'toolu_2', content: 'transferred' },
        { type: 'tool_result', toolUseId: 'toolu_3', content: 'open' },
      ]),
    ]
    const unavailable = (name: string) => ({
      name,
      description: 'Not available in this part of the conversation. Do not call it.',
      input_schema: { type: 'object', properties: {} },
    })
    server.enqueue(sse(readFixture('text.sse')))
    await collect(adapter().stream('Go on', { ...base, history }))
    expect(bodyOf(0)).toMatchObject({
      tools: [unavailable('lookup'), unavailable('transfer_to_billing')],
      tool_choice: { type: 'none' },
    })
    // An empty tool list is no tools either; a tool_choice the caller set is kept.
    server.enqueue(sse(readFixture('text.sse')))
    await collect(
      adapter().stream('Go on', {
        ...base,
        history,
        tools: [],
        providerOptions: { claude: { tool_choice: { type: 'auto' } } },
      }),
    )
    expect(bodyOf(1)).toMatchObject({
      tools: [unavailable('lookup'), unavailable('transfer_to_billing')],
      tool_choice: { type: 'auto' },
    })
    // Offered tools are sent as they are; a history without tool blocks declares nothing.
    server.enqueue(sse(readFixture('text.sse')))
    await collect(
      adapter().stream('Go on', {
        ...base,
        history,
        tools: [{ name: 'refund', description: 'Refunds', inputSchema: { type: 'object' } }],
      }),
    )
    expect(bodyOf(2).tools).toEqual([
      { name: 'refund', description: 'Refunds', input_schema: { type: 'object' } },
    ])
    expect(bodyOf(2)).not.toHaveProperty('tool_choice')
    server.enqueue(sse(readFixture('text.sse')))
    await collect(adapter().stream('Hi', { ...base, history: [message(0, 'user', 'Hello')] }))
    expect(bodyOf(3)).not.toHaveProperty('tools')
    expect(bodyOf(3)).not.toHaveProperty('tool_choice')
  })

  it('leaves thinking off for tool results that answer a turn without thinking (a handoff mid-send), and only then', async () => {
    const thinking = { type: 'enabled', budget_tokens: 2048 }
    const call = (first: ContentBlock[]): AnyMessage[] => [
      message(0, 'user', 'Refund order 7'),
      message(1, 'agent', [
        ...first,
        { type: 'tool_use', id: 'call_1', name: 'transfer_to_billing', input: {} },
      ]),
    ]
    const results: ContentBlock[] = [{ type: 'tool_result', toolUseId: 'call_1', content: 'Transferred.' }]
    const send = async (history: AnyMessage[], prompt: string | ContentBlock[]) => {
      server.enqueue(sse(readFixture('text.sse')))
      await collect(
        adapter().stream(prompt, {
          ...base,
          history,
          tools: [{ name: 'refund', description: 'Refunds', inputSchema: { type: 'object' } }],
          providerOptions: { claude: { thinking } },
        }),
      )
      return bodyOf(server.requests.length - 1)
    }
    // Another provider's turn (no thinking block): Claude would answer 400.
    expect(await send(call([]), results)).not.toHaveProperty('thinking')
    // Results and a new question in one user turn are still an answer to that turn.
    expect(await send([...call([]), message(2, 'tool', results)], 'Go on')).not.toHaveProperty('thinking')
    // Once a reply followed the results, a new question turns thinking on again.
    const answered = [...call([]), message(2, 'tool', results), message(3, 'agent', 'Refunded.')]
    expect((await send(answered, 'Thanks')).thinking).toEqual(thinking)
    // Claude's own turn, thinking first: kept.
    const own = await send(
      call([{ type: 'thinking', text: 'Billing handles it.', signature: 'sig_1' }]),
      results,
    )
    expect(own.thinking).toEqual(thinking)
    // A plain question: kept.
    expect((await send([], 'Hi')).thinking).toEqual(thinking)
  })

  it('passes providerOptions.claude as request fields and headers, growing max_tokens above a thinking budget', async () => {
    server.enqueue(sse(readFixture('thinking-cache.sse')))
    await collect(
      adapter({ maxOutputTokens: 2000 }).stream('Think', {
        ...base,
        providerOptions: {
          claude: {
            thinking: { type: 'enabled', budget_tokens: 4096 },
            tool_choice: { type: 'auto' },
            metadata: { user_id: 'u-42' },
            headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
          },
          openai: { ignored: true },
        },
      }),
    )
    expect(server.requests[0]?.received.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
    const body = bodyOf(0)
    expect(body).toMatchObject({
      max_tokens: 6096,
      thinking: { type: 'enabled', budget_tokens: 4096 },
      tool_choice: { type: 'auto' },
      metadata: { user_id: 'u-42' },
    })
    expect(body).not.toHaveProperty('headers')
    expect(body).not.toHaveProperty('openai')
  })

  it('refuses temperature, top_p and top_k before the request on API version 2026-10-21, which rejects them', async () => {
    for (const options of [
      { temperature: 0.2 },
      { providerOptions: { claude: { top_k: 5 } } },
      { providerOptions: { claude: { top_p: 0.9 } } },
    ]) {
      const error = await collect(adapter().stream('x', { ...base, ...options })).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toMatch(
        /^(temperature|providerOptions\.claude\.top_[kp]) is not supported by the Claude adapter \(provider 'claude'\): Claude API version 2026-10-21 .* apiVersion: '2023-06-01'/,
      )
    }
    expect(server.requests).toHaveLength(0)
  })

  it('sends temperature with an API version that takes it, in the anthropic-version header', async () => {
    server.enqueue(sse(readFixture('text.sse')))
    await collect(adapter({ apiVersion: '2023-06-01' }).stream('x', { ...base, temperature: 0.2 }))
    expect(server.requests[0]?.received.headers['anthropic-version']).toBe('2023-06-01')
    expect(bodyOf(0)).toMatchObject({ temperature: 0.2 })
  })

  it('uses the constructor model and maxOutputTokens when the send names none', async () => {
    server.enqueue(sse(readFixture('text.sse')), sse(readFixture('text.sse')))
    await collect(
      adapter({ model: 'claude-haiku-5-5', maxOutputTokens: 1234 }).stream('x', { ...base, model: '' }),
    )
    await collect(
      new ClaudeAdapter({ apiKey: API_KEY, baseURL: server.baseURL }).stream('x', {
        ...base,
        model: '',
        maxOutputTokens: 99,
      }),
    )
    expect([0, 1].map((index) => [bodyOf(index).model, bodyOf(index).max_tokens])).toEqual([
      ['claude-haiku-5-5', 1234],
      [DEFAULT_CLAUDE_MODEL, 99],
    ])
    // The kernel shows the same default as session.model.
    expect(adapter({ model: 'claude-haiku-5-5' }).defaultModel).toBe('claude-haiku-5-5')
    expect(new ClaudeAdapter({ apiKey: API_KEY }).defaultModel).toBe(DEFAULT_CLAUDE_MODEL)
  })

  it('rejects providerOptions that would override the fields the adapter owns, before any request', async () => {
    const error = await collect(
      adapter().stream('x', { ...base, providerOptions: { claude: { messages: [] } } }),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ValidationError)
    expect(server.requests).toHaveLength(0)
  })

  it('uses an injected client as is, but never lets it retry', async () => {
    const client = new Anthropic({ apiKey: 'sk-injected-key-000', baseURL: server.baseURL, maxRetries: 5 })
    server.enqueue(
      jsonError(500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } }),
    )
    const { error } = await collectUntilError(new ClaudeAdapter({ client }).stream('x', base))
    expect(error).toMatchObject({ kind: 'server', status: 500, retryable: true, provider: 'claude' })
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]?.received.headers.authorization).toBe('Bearer sk-injected-key-000')
  })
})

describe('ClaudeAdapter structured output', () => {
  const schema = {
    type: 'object',
    properties: { city: { type: 'string', minLength: 1 }, days: { type: 'integer' } },
    required: ['city', 'days'],
  }
  const output = { name: 'trip', schema }

  it('sends output as output_config.format (json_schema, objects closed) and streams the JSON as text', async () => {
    server.enqueue({
      response: {
        blocks: [{ type: 'text', text: '{"city":"Oslo","days":3}' }],
        stopReason: 'end_turn',
        deltaSize: 5,
      },
    })
    const events = await collect(adapter().stream('Plan a trip', { ...base, output }))
    expect(bodyOf(0).output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: { city: { type: 'string', description: '{minLength: 1}' }, days: { type: 'integer' } },
          required: ['city', 'days'],
          additionalProperties: false,
        },
      },
    })
    expect(events.at(-1)).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: '{"city":"Oslo","days":3}' }],
      stopReason: 'end_turn',
    })
    expect(events.filter((event) => event.type === 'text-delta').length).toBeGreaterThan(1)
  })

  it('keeps the other output_config fields of providerOptions.claude, and sends none without output', async () => {
    server.enqueue(sse(readFixture('text.sse')), sse(readFixture('text.sse')))
    await collect(
      adapter().stream('x', {
        ...base,
        output,
        providerOptions: { claude: { output_config: { effort: 'low' } } },
      }),
    )
    await collect(adapter().stream('x', base))
    expect(bodyOf(0).output_config).toMatchObject({ effort: 'low', format: { type: 'json_schema' } })
    expect(bodyOf(1)).not.toHaveProperty('output_config')
  })

  it('refuses a format in providerOptions.claude next to output, and a malformed output, before any request', async () => {
    const cases: Array<[Partial<AdapterStreamOptions>, string]> = [
      [
        {
          output,
          providerOptions: { claude: { output_config: { format: { type: 'json_schema', schema } } } },
        },
        "providerOptions.claude.output_config.format cannot be set together with output for the Claude adapter (provider 'claude')",
      ],
      [
        { output, providerOptions: { claude: { output_format: { type: 'json_schema', schema } } } },
        "providerOptions.claude.output_format cannot be set together with output for the Claude adapter (provider 'claude')",
      ],
      [
        { output, providerOptions: { claude: { output_config: 'fast' } } },
        "Invalid providerOptions.claude.output_config for the Claude adapter (provider 'claude')",
      ],
      [
        { output: { name: 'trip', schema: 'object' } as never },
        "Invalid output for the Claude adapter (provider 'claude')",
      ],
      [
        { output: { name: 'trip', schema: { type: 'object', additionalProperties: { type: 'string' } } } },
        "output.schema is not supported by the Claude adapter (provider 'claude')",
      ],
    ]
    for (const [options, message] of cases) {
      const { error } = await collectUntilError(adapter().stream('x', { ...base, ...options }))
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toContain(message)
    }
    expect(server.requests).toHaveLength(0)
  })
})

describe('ClaudeAdapter construction', () => {
  it('refuses an unknown option, naming the closest one (a typo would be ignored without a word)', () => {
    expect(() => new ClaudeAdapter({ apiKey: 'k', baseUrl: 'http://127.0.0.1:1' } as never)).toThrow(
      ConfigurationError,
    )
    expect(() => new ClaudeAdapter({ apiKey: 'k', maxTokens: 10 } as never)).toThrow(
      "Unknown ClaudeAdapter option 'maxTokens'",
    )
    expect(() => new ClaudeAdapter({ apiKey: 'k', baseUrl: 'x' } as never)).toThrow(
      "Unknown ClaudeAdapter option 'baseUrl' — did you mean 'baseURL'?",
    )
  })

  it('reads the key from ANTHROPIC_API_KEY and fails with a ConfigurationError naming it when absent', () => {
    const saved = process.env.ANTHROPIC_API_KEY
    try {
      delete process.env.ANTHROPIC_API_KEY
      expect(() => new ClaudeAdapter()).toThrow(ConfigurationError)
      expect(() => new ClaudeAdapter()).toThrow(/ANTHROPIC_API_KEY/)
      process.env.ANTHROPIC_API_KEY = 'sk-from-env'
      expect(new ClaudeAdapter().getName()).toBe('claude')
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY
      else process.env.ANTHROPIC_API_KEY = saved
    }
  })

  it('rejects invalid options from the constructor with a ValidationError naming the option, without any request', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ idleTimeoutMs: 0 }, 'idleTimeoutMs'],
      [{ maxOutputTokens: 1.5 }, 'maxOutputTokens'],
      [{ model: ' ' }, 'model'],
      [{ baseURL: 'ftp://x' }, 'baseURL'],
      [{ apiVersion: '' }, 'apiVersion'],
    ]
    for (const [options, option] of cases) {
      expect(() => new ClaudeAdapter({ apiKey: API_KEY, ...options })).toThrow(ValidationError)
      expect(() => new ClaudeAdapter({ apiKey: API_KEY, ...options })).toThrow(
        `Invalid ${option} for the Claude adapter (provider 'claude')`,
      )
    }
    expect(server.requests).toHaveLength(0)
  })

  it('takes the base URL from ANTHROPIC_BASE_URL when no baseURL is given', async () => {
    const saved = process.env.ANTHROPIC_BASE_URL
    try {
      process.env.ANTHROPIC_BASE_URL = server.baseURL
      server.enqueue(sse(readFixture('text.sse')))
      const events = await collect(new ClaudeAdapter({ apiKey: API_KEY }).stream('x', base))
      expect(events.at(-1)).toMatchObject({
        type: 'message',
        content: [{ type: 'text', text: 'Hello there!' }],
      })
      expect(server.requests).toHaveLength(1)
      process.env.ANTHROPIC_BASE_URL = 'not a url'
      expect(() => new ClaudeAdapter({ apiKey: API_KEY })).toThrow(
        'Invalid ANTHROPIC_BASE_URL for the Claude adapter',
      )
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_BASE_URL
      else process.env.ANTHROPIC_BASE_URL = saved
    }
  })
})

describe('ClaudeAdapter errors', () => {
  const cases: Array<{
    name: string
    status: number
    type: string
    message?: string
    kind: string
    retryable: boolean
  }> = [
    { name: '400', status: 400, type: 'invalid_request_error', kind: 'invalid_request', retryable: false },
    {
      name: '400 prompt too long',
      status: 400,
      type: 'invalid_request_error',
      message: 'prompt is too long: 210000 tokens > 200000 maximum',
      kind: 'context_length',
      retryable: false,
    },
    { name: '401', status: 401, type: 'authentication_error', kind: 'authentication', retryable: false },
    { name: '403', status: 403, type: 'permission_error', kind: 'permission', retryable: false },
    { name: '404', status: 404, type: 'not_found_error', kind: 'not_found', retryable: false },
    { name: '413', status: 413, type: 'request_too_large', kind: 'context_length', retryable: false },
    { name: '500', status: 500, type: 'api_error', kind: 'server', retryable: true },
    { name: '503', status: 503, type: 'api_error', kind: 'overloaded', retryable: true },
    { name: '529', status: 529, type: 'overloaded_error', kind: 'overloaded', retryable: true },
  ]
  for (const entry of cases) {
    it(`maps HTTP ${entry.name} to kind ${entry.kind} (retryable: ${entry.retryable}) without retrying`, async () => {
      server.enqueue(
        jsonError(entry.status, {
          type: 'error',
          error: { type: entry.type, message: entry.message ?? `${entry.type} happened` },
          request_id: 'req_1',
        }),
      )
      const { events, error } = await collectUntilError(adapter().stream('x', base))
      expect(events).toEqual([])
      expect(isAdapterError(error)).toBe(true)
      expect(error).toMatchObject({
        kind: entry.kind,
        status: entry.status,
        retryable: entry.retryable,
        provider: 'claude',
      })
      expect(server.requests).toHaveLength(1)
    })
  }

  it('maps 429 to rate_limit with retryAfterMs from retry-after (seconds and HTTP date)', async () => {
    const rateLimited = {
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Number of requests has exceeded your rate limit' },
    }
    server.enqueue(
      jsonError(429, rateLimited, { 'retry-after': '7' }),
      jsonError(429, rateLimited, { 'retry-after': new Date(Date.now() + 120_000).toUTCString() }),
    )
    const first = await collectUntilError(adapter().stream('x', base))
    expect(first.error).toMatchObject({
      kind: 'rate_limit',
      status: 429,
      retryable: true,
      retryAfterMs: 7000,
    })
    const second = await collectUntilError(adapter().stream('x', base))
    const retryAfterMs = (second.error as AdapterError).retryAfterMs ?? 0
    expect(retryAfterMs).toBeGreaterThan(100_000)
    expect(retryAfterMs).toBeLessThanOrEqual(120_000)
    expect(server.requests).toHaveLength(2)
  })

  it('honours x-should-retry: false on a 5xx', async () => {
    server.enqueue(
      jsonError(
        500,
        { type: 'error', error: { type: 'api_error', message: 'no' } },
        { 'x-should-retry': 'false' },
      ),
    )
    const { error } = await collectUntilError(adapter().stream('x', base))
    expect(error).toMatchObject({ kind: 'server', retryable: false })
  })

  it('delivers the events before a mid-stream error frame, then throws overloaded', async () => {
    server.enqueue(sse(readFixture('error-overloaded.sse')))
    const { events, error } = await collectUntilError(adapter().stream('x', base))
    expect(events).toEqual([{ type: 'text-delta', text: 'Partial answer' }])
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({ kind: 'overloaded', retryable: true, provider: 'claude' })
    expect((error as AdapterError).status).toBeUndefined()
  })

  it('treats a stream that ends without message_stop as a retryable network error, never a success', async () => {
    server.enqueue(sse(readFixture('truncated.sse')))
    const { events, error } = await collectUntilError(adapter().stream('x', base))
    expect(events).toEqual([{ type: 'text-delta', text: 'This reply is cut' }])
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('maps a connection reset mid-stream to a retryable network error', async () => {
    const text = readFixture('text.sse')
    server.enqueue(
      sse(text, { truncateAfterFrame: frameOf(text, 'content_block_stop'), truncateMode: 'reset' }),
    )
    const { events, error } = await collectUntilError(adapter().stream('x', base))
    expect(events.every((event) => event.type === 'text-delta')).toBe(true)
    expect(error).toMatchObject({ kind: 'network', retryable: true })
  })

  it('maps a malformed frame to the shared protocol error: server, not retryable, the bad bytes quoted', async () => {
    const text = readFixture('text.sse').replace(
      'data: {"type":"content_block_stop","index":0}',
      'data: {"type":"content_block_st',
    )
    server.enqueue(sse(text))
    const { events, error } = await collectUntilError(adapter().stream('x', base))
    expect(events.map((event) => event.type)).toEqual(['text-delta', 'text-delta', 'text-delta'])
    expect(error).toBeInstanceOf(AdapterError)
    expect(error).toMatchObject({
      kind: 'server',
      retryable: false,
      message: 'Claude sent a malformed stream frame (protocol error).',
    })
    expect((error as AdapterError).cause).toMatchObject({ excerpt: '{"type":"content_block_st' })
  })

  it('never puts the API key in an error message, stack, cause or JSON, even when the body echoes it', async () => {
    server.enqueue(
      jsonError(401, {
        type: 'error',
        error: { type: 'authentication_error', message: `invalid x-api-key: ${API_KEY}` },
      }),
    )
    const { error } = await collectUntilError(adapter().stream('x', base))
    const adapterError = error as AdapterError
    expect(adapterError.kind).toBe('authentication')
    const cause = adapterError.cause as Error
    const texts = [
      adapterError.message,
      adapterError.stack ?? '',
      JSON.stringify(adapterError),
      cause.message,
      cause.stack ?? '',
      JSON.stringify(cause),
    ]
    for (const text of texts) expect(text).not.toContain(API_KEY)
    expect(adapterError.message).toContain('[redacted]')
  })

  it('fails with kind timeout and closes the connection when the stream stalls longer than idleTimeoutMs', async () => {
    const text = readFixture('text.sse')
    server.enqueue(
      sse(text, {
        pauseBeforeFrame: frameOf(text, 'content_block_delta'),
        pauseMs: Number.POSITIVE_INFINITY,
      }),
    )
    const { error } = await collectUntilError(adapter({ idleTimeoutMs: 150 }).stream('x', base))
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, provider: 'claude' })
    await server.waitForDisconnect()
  })

  it('keeps a slow stream alive as long as bytes (even pings the SDK skips) keep arriving within idleTimeoutMs', async () => {
    const text = readFixture('text.sse')
    server.enqueue(
      sse(text, { pauseBeforeFrame: frameOf(text, 'content_block_start'), pauseMs: 700, heartbeatMs: 60 }),
    )
    const events = await collect(adapter({ idleTimeoutMs: 400 }).stream('x', base))
    expect(events.at(-1)).toMatchObject({
      type: 'message',
      content: [{ type: 'text', text: 'Hello there!' }],
    })
  })

  it('fails with kind timeout when no response headers arrive within idleTimeoutMs', async () => {
    server.enqueue(
      sse(readFixture('text.sse'), {
        pauseBeforeFrame: 0,
        pauseMs: Number.POSITIVE_INFINITY,
        holdHeaders: true,
      }),
    )
    const { error } = await collectUntilError(adapter({ idleTimeoutMs: 150 }).stream('x', base))
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
    await server.waitForDisconnect()
  })
})

describe('ClaudeAdapter abort', () => {
  it('rejects an already-aborted signal with kind aborted and sends no request', async () => {
    const controller = new AbortController()
    controller.abort()
    const { error } = await collectUntilError(adapter().stream('x', { ...base, signal: controller.signal }))
    expect(error).toMatchObject({ kind: 'aborted', retryable: false })
    expect(server.requests).toHaveLength(0)
  })

  it('ends with kind aborted mid-stream, yields nothing after, and closes the connection', async () => {
    const text = readFixture('text.sse')
    server.enqueue(
      sse(text, { pauseBeforeFrame: frameOf(text, 'content_block_stop'), pauseMs: Number.POSITIVE_INFINITY }),
    )
    const controller = new AbortController()
    const events: AdapterMessage[] = []
    let error: unknown
    try {
      for await (const event of adapter().stream('x', { ...base, signal: controller.signal })) {
        events.push(event)
        if (events.length === 1) controller.abort()
      }
    } catch (caught) {
      error = caught
    }
    expect(events).toEqual([{ type: 'text-delta', text: 'Hello' }])
    expect(error).toMatchObject({ kind: 'aborted' })
    await server.waitForDisconnect()
  })

  it('closes the connection when the caller breaks out early', async () => {
    const text = readFixture('text.sse')
    server.enqueue(
      sse(text, { pauseBeforeFrame: frameOf(text, 'content_block_stop'), pauseMs: Number.POSITIVE_INFINITY }),
    )
    for await (const event of adapter().stream('x', base)) {
      expect(event.type).toBe('text-delta')
      break
    }
    await server.waitForDisconnect()
  })
})
